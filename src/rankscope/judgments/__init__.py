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

from rankscope.judgments.aggregate import (
    STRATEGIES,
    aggregate,
    aggregate_frame,
    tie_rate,
    tie_rate_by_query,
)
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
from rankscope.judgments.evaluation import JudgmentPlan, evaluate_judgments, plan_evaluation
from rankscope.judgments.scales import BINARY, DETAIL, GRADED, SCALES, TREC, Scale, get_scale
from rankscope.judgments.table import Judgments, as_judgments
from rankscope.judgments.transform import DEFAULT_RULES, parse_rules, transform

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
