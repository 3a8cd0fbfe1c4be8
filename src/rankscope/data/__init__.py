"""Columnar tables (:class:`Qrels`, :class:`Run`) and their readers and writers."""

from rankscope.data.formats import FORMATS
from rankscope.data.tables import Qrels, Run, as_qrels, as_run

__all__ = ["FORMATS", "Qrels", "Run", "as_qrels", "as_run"]
