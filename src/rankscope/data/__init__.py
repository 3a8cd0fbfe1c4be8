"""Columnar tables (:class:`Qrels`, :class:`Run`) and their readers and writers."""

from rankscope.data.formats import FORMATS, as_qrels, as_run
from rankscope.data.tables import Qrels, Run

__all__ = ["FORMATS", "Qrels", "Run", "as_qrels", "as_run"]
