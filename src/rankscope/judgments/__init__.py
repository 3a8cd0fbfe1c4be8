"""Raters' judgments: scales, aggregation, transformers, agreement, coverage.

Search teams do not get qrels from the sky: several people grade each result,
on a binary, graded (0-3) or detail (1-10) scale, some results stay ungraded,
and graders disagree. This package turns that into metrics the way the
judging platform of seed 004 does, plus the tools around it::

    from rankscope.judgments import Judgments, agreement, coverage, evaluate_judgments

    j = Judgments.read("grades.csv", scale="graded")   # query_id,doc_id,rater,grade
    agreement(j).alpha["ordinal"]                       # can we trust them?
    qrels = j.aggregate("mean")                         # Qrels, null = ungraded
    coverage(j, "run.txt", 10).overall                  # how much of the top 10 is graded
    evaluate_judgments(j, "run.txt", ["P@10", "nDCG@10"], unjudged="null")
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

from rankscope._lazy import lazy_exports

# what evaluating with judgments needs (every comparison plans its metrics through
# judgments.evaluation); agreement and coverage load on first use (3-8 ms of a
# command's start before its first run file is read)
from rankscope.judgments.aggregate import (
    STRATEGIES,
    aggregate,
    aggregate_frame,
    tie_rate,
    tie_rate_by_query,
)
from rankscope.judgments.evaluation import JudgmentPlan, evaluate_judgments, plan_evaluation
from rankscope.judgments.scales import BINARY, DETAIL, GRADED, SCALES, TREC, Scale, get_scale
from rankscope.judgments.table import Judgments, as_judgments
from rankscope.judgments.transform import DEFAULT_RULES, parse_rules, transform

_EXPORTS = {
    **dict.fromkeys(("Agreement", "FleissKappa", "agreement", "cohen_kappa", "fleiss_kappa",
                     "krippendorff_alpha", "percent_agreement"),
                    "rankscope.judgments.agreement"),
    **dict.fromkeys(("Coverage", "coverage"), "rankscope.judgments.coverage"),
}

if TYPE_CHECKING:
    from rankscope.judgments.agreement import (
        Agreement,
        FleissKappa,
        agreement,
        cohen_kappa,
        fleiss_kappa,
        krippendorff_alpha,
        percent_agreement,
    )
    from rankscope.judgments.coverage import Coverage, coverage

__all__ = [
    "BINARY",
    "DEFAULT_RULES",
    "DETAIL",
    "GRADED",
    "SCALES",
    "STRATEGIES",
    "TREC",
    "Agreement",
    "Coverage",
    "FleissKappa",
    "JudgmentPlan",
    "Judgments",
    "Scale",
    "aggregate",
    "aggregate_frame",
    "agreement",
    "as_judgments",
    "cohen_kappa",
    "coverage",
    "evaluate_judgments",
    "fleiss_kappa",
    "get_scale",
    "krippendorff_alpha",
    "parse_rules",
    "percent_agreement",
    "plan_evaluation",
    "tie_rate",
    "tie_rate_by_query",
    "transform",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)


class _Package(types.ModuleType):
    """This package, whose ``agreement`` and ``coverage`` stay the functions once their
    modules load (importing a submodule binds it on its package under its own name)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and _EXPORTS.get(name) == value.__name__:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
