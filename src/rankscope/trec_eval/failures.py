"""Where trec_eval would stop: the first query whose evaluation fails, and why.

trec_eval evaluates queries in order and measures in table order; the first
failure ends the program (exit status 4) after the earlier queries' lines
were printed. Failures: a qrels query the run lacks (without ``-c``), a
measure of another rel_info format, duplicates found when ranking a query,
``utility`` without four coefficients, and the preference checks.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from rankscope.trec_eval.catalog import Bound
from rankscope.trec_eval.exits import TrecEvalExit
from rankscope.trec_eval.options import Options
from rankscope.trec_eval.report import Failure

__all__ = ["FORMAT_ERRORS", "first_failure"]

FORMAT_ERRORS = {
    "qrels": "trec_eval.form_res_qrels: rel_info format not qrels or results format not "
             "trec_results\n",
    "prefs": "trec_eval.form_prefs_info: prefs_info format not (prefs or qrels_prefs) or "
             "results format not trec_results\n",
    "qrels_jg": "trec_eval: rel_info format not qrels_jg or results format not trec_results\n",
}


def first_failure(
    opts: Options, query_ids: list[str], in_run: npt.NDArray[np.bool_], bounds: list[Bound],
    problem: Callable[[int], str | None], source: str,
) -> Failure | None:
    """The first query (and message) at which trec_eval would stop, if any.

    ``problem(q)`` is the error the format's ranking step reports for query
    q (duplicates...); ``source`` is the rel_info format family being read.
    """
    n = in_run.size
    missing = np.flatnonzero(~in_run) if not opts.complete else np.zeros(0, np.int64)
    ranked = [b for b in bounds if b.spec.source != "none"]
    candidates = [int(missing[0])] if missing.size else []
    always = any(
        b.spec.source != source or (b.name == "utility" and len(b.values) != 4) for b in ranked
    )
    if ranked and always:
        candidates.append(0)
    if ranked:
        first_bad = next((q for q in range(n) if problem(q) is not None), None)
        if first_bad is not None:
            candidates.append(first_bad)
    if not candidates or n == 0:
        return None
    q = min(candidates)
    if missing.size and q == int(missing[0]):
        message = f"trec_eval: result qid '{query_ids[q]}' not found in qrels\n"
        return Failure(q, TrecEvalExit(message, 4))
    for b in ranked:
        if b.spec.source != source:
            text = FORMAT_ERRORS[b.spec.source]
        else:
            found = problem(q)
            if found is None and b.name == "utility" and len(b.values) != 4:
                found = "trec_eval.calc_utility: improper number of coefficients\n"
            if found is None:
                continue
            text = found
        message = f"{text}trec_eval: Can't calculate measure '{b.name}'\n"
        return Failure(q, TrecEvalExit(message, 4))
    return None

