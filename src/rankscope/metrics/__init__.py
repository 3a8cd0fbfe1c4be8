"""Metric definitions (data, no computation), the registry and the name parser.

Build metrics with the factories below or by name with :func:`parse_metric`;
compute them with :func:`rankscope.evaluate`. Every registry (families, names,
trec_eval's measures in :mod:`rankscope.metrics.trec_eval_names`) is complete
once this package is imported.
"""

from rankscope.metrics import compatibility as _compatibility  # noqa: F401 - registers Compat
from rankscope.metrics import cwl as _cwl  # noqa: F401 - registers BPM, INST, SDCG, NERR...
from rankscope.metrics import diagnostics as _diagnostics  # noqa: F401 - Accuracy, NumQ
from rankscope.metrics import intent_aware as _intent_aware  # noqa: F401 - ERR_IA, alpha_nDCG
from rankscope.metrics import similarity as _similarity  # noqa: F401 - registers RBO, Jaccard
from rankscope.metrics.base import FAMILIES, Family, Metric, Param, make_metric
from rankscope.metrics.binary import (
    average_precision,
    bpref,
    f_measure,
    hits,
    precision,
    r_precision,
    recall,
    recall_capped,
    reciprocal_rank,
    success,
)
from rankscope.metrics.counts import judged, num_rel, num_rel_ret, num_ret
from rankscope.metrics.graded import best, cumulative_gain, dcg, err, ndcg, rbp
from rankscope.metrics.parser import known_names, parse_metric, parse_metrics

__all__ = [
    "FAMILIES",
    "Family",
    "Metric",
    "Param",
    "average_precision",
    "best",
    "bpref",
    "cumulative_gain",
    "dcg",
    "err",
    "f_measure",
    "hits",
    "judged",
    "known_names",
    "make_metric",
    "ndcg",
    "num_rel",
    "num_rel_ret",
    "num_ret",
    "parse_metric",
    "parse_metrics",
    "precision",
    "r_precision",
    "rbp",
    "recall",
    "recall_capped",
    "reciprocal_rank",
    "success",
]

# Registered after the core families they build on: ir_measures' set measures, trec_eval's
# own measures, other tools' variants, and the spellings only one tool uses (SetF(beta=x),
# ndcg_score...).
from rankscope.metrics import conventions_names as _conventions_names  # noqa: F401
from rankscope.metrics import ir_measures_names as _ir_names  # noqa: F401 - IPrec, SetAP
from rankscope.metrics import trec_eval_names as _trec_eval_names  # noqa: F401
from rankscope.metrics import variants as _variants  # noqa: F401
