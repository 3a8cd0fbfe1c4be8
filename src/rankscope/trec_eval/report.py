"""From per-query values to trec_eval's output: ``-c`` fix-ups, ``-Z``, summaries.

trec_eval works query by query: compute every measure, patch the ``-c``
stand-in queries, convert to z-scores, add to the running totals and print the
query's lines; a fatal error at a query leaves the earlier queries' lines on
stdout. :func:`write_report` reproduces that order from whole arrays, then
prints the summary ("all") lines: means, sums, geometric means, ``num_q``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from rankscope.data.trec_dialect import Zscores
from rankscope.engine.ranking import FloatArray
from rankscope.trec_eval.catalog import Bound
from rankscope.trec_eval.exits import TrecEvalExit
from rankscope.trec_eval.output import fixed, long_text, value_lines

__all__ = ["Failure", "PerQuery", "Summary", "write_report"]

MISSING_ZSCORE = -1000000.0
LOG_MIN_GEO_MEAN = math.log(0.00001)


@dataclass(frozen=True)
class Failure:
    """trec_eval stops at query ``index`` (evaluation order) with this error."""

    index: int
    error: TrecEvalExit
    keep_output: bool = True  # False after abort(): stdout's buffer is lost


@dataclass
class PerQuery:
    """Every requested value for every evaluated query.

    ``columns`` maps a measure's table name to one array per printed value
    (named by the measure's :class:`Bound`); ``relstrings`` holds the
    ``relstring`` text per query when requested.
    """

    query_ids: list[str]
    stand_in: FloatArray
    columns: dict[str, list[FloatArray]] = field(default_factory=dict)
    relstrings: list[str] | None = None
    failure: Failure | None = None


@dataclass(frozen=True)
class Summary:
    """What the summary needs besides the per-query values."""

    run_id: str
    summary: bool
    per_query: bool
    complete: bool
    n_qrels_queries: int
    num_rel_complete: int
    zscores: Zscores | None


def _stand_in_patch(bound: Bound, name: str) -> bool:
    # trec_eval matches these by the printed name: 'utility_2,...' is not patched
    return name in ("num_ret", "utility", "rbp_resid") or name.startswith("unj")


def _zscore(values: dict[str, FloatArray], qids: list[str], z: Zscores) -> None:
    """Convert in place as trec_eval's te_convert_to_zscore does, quirks included."""
    groups: list[tuple[str, int, int]] = []
    for i, (qid, _) in enumerate(z.keys):
        if not groups or groups[-1][0] != qid:
            groups.append((qid, i, i))
        groups[-1] = (qid, groups[-1][1], i + 1)
    names = list(values)
    for q, qid in enumerate(qids):
        group = _search(groups, qid)
        for name in names:
            column = values[name]
            if group is None:
                column[q] = MISSING_ZSCORE
                continue
            _, start, end = group
            found = _search_entry(z, start, end, name)
            if found is None:
                column[q] = MISSING_ZSCORE
            elif z.stddev[found] != 0.0:
                column[q] = (column[q] - z.mean[found]) / z.stddev[found]
            else:
                column[q] = 0.0 if column[q] == z.mean[found] else MISSING_ZSCORE


def _search(groups: list[tuple[str, int, int]], qid: str) -> tuple[str, int, int] | None:
    # trec_eval's binary search starts with end = count and so may look one past
    # the end; past the last query there is nothing (trec_eval reads garbage).
    start, end = 0, len(groups)
    while start <= end:
        cur = (start + end) // 2
        if cur >= len(groups):
            return None
        key = groups[cur][0]
        if qid < key:
            end = cur - 1
        elif qid > key:
            start = cur + 1
        else:
            return groups[cur]
    return None


def _search_entry(z: Zscores, first: int, stop: int, name: str) -> int | None:
    start, end = 0, stop - first
    while start <= end:
        cur = (start + end) // 2
        index = first + cur
        if index >= len(z.keys):  # one past the file's last line
            return None
        key = z.keys[index][1]  # one past the query's lines is the next query's first
        if name < key:
            end = cur - 1
        elif name > key:
            start = cur + 1
        else:
            return index
    return None


def write_report(
    per: PerQuery, bounds: list[Bound], info: Summary, write: Callable[[str], None]
) -> None:
    """Print per-query lines (``-q``) and the summary; raise at a query's failure."""
    n_eval = len(per.query_ids) if per.failure is None else per.failure.index
    flat: dict[str, FloatArray] = {}
    for bound in bounds:
        if bound.spec.value in ("runid", "string"):
            continue
        for name, column in zip(bound.names, per.columns[bound.name], strict=True):
            column = column.astype(np.float64, copy=True)
            if _stand_in_patch(bound, name):
                column[per.stand_in > 0] = 0.0
            flat[name] = column
    if info.zscores is not None:
        _zscore(flat, per.query_ids, info.zscores)
    zmode = info.zscores is not None
    qids = per.query_ids
    if per.failure is not None and not per.failure.keep_output:
        raise per.failure.error
    if info.per_query and n_eval:
        blocks: list[list[str]] = []
        for bound in bounds:
            spec = bound.spec
            if not spec.per_query:
                continue
            if spec.value == "string":
                texts = per.relstrings or [""] * len(qids)
                texts = [("" if per.stand_in[q] and bound.names[0] == "relstring" else t)
                         for q, t in enumerate(texts)]
                head = f"{bound.names[0]:<22}\t"
                blocks.append([f"{head}{q}\t'{t}'\n" for q, t in zip(qids, texts, strict=True)])
                continue
            for name in bound.names:
                blocks.append(value_lines(name, qids[:n_eval], flat[name][:n_eval].tolist(),
                                          integer=spec.value == "long", zscore=zmode))
        for q in range(n_eval):
            write("".join(block[q] for block in blocks))
    if per.failure is not None:
        raise per.failure.error
    if n_eval == 0:
        raise TrecEvalExit("trec_eval: No queries with both results and relevance info\n", 7)
    if info.summary:
        write(_summary(bounds, flat, n_eval, info))


def _summary(bounds: list[Bound], flat: dict[str, FloatArray], n_eval: int,
             info: Summary) -> str:
    n_q = info.n_qrels_queries if info.complete else n_eval
    zmode = info.zscores is not None
    out: list[str] = []
    for bound in bounds:
        spec = bound.spec
        if spec.summary == "none":
            if spec.value == "runid":
                out.append(f"{'runid':<22}\tall\t{info.run_id}\n")
            continue
        for name in bound.names:
            column = flat[name]
            total = float(np.cumsum(column)[-1]) if column.size else 0.0
            if spec.summary == "num_q":
                value = float(n_q)
            elif spec.summary == "num_rel" and info.complete:
                value = float(info.num_rel_complete)
            elif spec.summary in ("sum", "num_rel"):
                value = total
            elif spec.summary == "gm":
                if info.complete:
                    total += (n_q - n_eval) * LOG_MIN_GEO_MEAN
                value = math.exp(total / n_q) if n_q > 0 else total
            else:
                value = total / n_q if n_q else total
            prefix = "Z" if zmode else ""
            if spec.value == "long" and not zmode:
                out.append(f"{name:<22}\tall\t{long_text(value)}\n")
            else:
                out.append(f"{prefix}{name:<22}\tall\t{fixed(value)}\n")
    return "".join(out)
