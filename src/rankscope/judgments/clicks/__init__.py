"""Implicit judgments from what users clicked: click logs, click models, grades.

Read a log (the plain ``session_id,query_id,doc_id,position,clicked`` format
with :func:`read_click_log`, or UBI 1.x queries and events with
:func:`read_ubi`), fit a click model (:func:`ctr`, :func:`coec`, :func:`pbm`,
:func:`sdbn`) and map its estimates to grades with
:func:`implicit_judgments`::

    from rankscope.judgments.clicks import implicit_judgments, read_click_log

    log = read_click_log("clicks.csv")
    judged = implicit_judgments(log, "sdbn", min_impressions=10)
    judged.write("implicit.csv")          # query_id,doc_id,rater,grade,probability,...
    judged.to_judgments()                 # one rater, implicit:sdbn, on the graded scale

:func:`simulate_clicks` draws a log from a click model with known parameters.
"""

from rankscope.judgments.clicks.implicit import (
    MODELS,
    GradeMapping,
    ImplicitJudgments,
    implicit_judgments,
)
from rankscope.judgments.clicks.log import ClickLog, read_click_log
from rankscope.judgments.clicks.models import ClickModelFit, coec, ctr, pbm, sdbn
from rankscope.judgments.clicks.simulate import simulate_clicks
from rankscope.judgments.clicks.ubi import read_ubi

__all__ = [
    "MODELS",
    "ClickLog",
    "ClickModelFit",
    "GradeMapping",
    "ImplicitJudgments",
    "coec",
    "ctr",
    "implicit_judgments",
    "pbm",
    "read_click_log",
    "read_ubi",
    "sdbn",
    "simulate_clicks",
]
