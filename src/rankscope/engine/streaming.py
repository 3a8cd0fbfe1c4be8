"""Bounded-memory evaluation: stream a run through the engine a few queries at a time.

A run of a hundred million lines does not fit in memory as a table, but its
queries are independent: once every line of a query has been read, the query
can be ranked and scored and its lines dropped. :func:`evaluate_streaming`
reads the run file in chunks of about ``chunk_bytes`` bytes, holds back the
last (possibly incomplete) query of each chunk, and sends the complete
queries through the very same :func:`~rankscope.engine.ranking.rank` and
kernels as :func:`rankscope.evaluate`, so the numbers are identical.

Limits, stated plainly:

* the run must be a plain TREC file **grouped by query** (every query's lines
  together, as retrieval systems write them); a query that reappears after
  another query's lines is an error naming the line. To group an arbitrary
  run with one pass of an external sort (bounded memory, spills to disk)::

      LC_ALL=C sort -s -k1,1 --buffer-size=1G run.txt > run.grouped.txt

* the qrels are read whole (they are small next to runs);
* memory is about ``12 x chunk_bytes`` plus the largest single query plus the
  per-query results (one float per query and metric), whatever the run's size.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any, Unpack

import numpy as np
import polars as pl

from rankscope.data._io import PathLike
from rankscope.data.tables import Qrels, Run, as_qrels
from rankscope.data.trec import iter_trec_chunks
from rankscope.engine.assemble import QueryAccount, assemble_result
from rankscope.engine.conventions import resolve_plan
from rankscope.engine.evaluate import MetricsArg, compute_ranked, rank_plan
from rankscope.engine.options import EvalOptions, OptionFields
from rankscope.errors import InputError, OptionError
from rankscope.metrics.conventions import Resolved
from rankscope.result import EvaluationResult

__all__ = ["DEFAULT_MEMORY", "evaluate_streaming", "query_batches"]

DEFAULT_MEMORY = 2 << 30
"""Default memory budget: 2 GiB."""

_EXPANSION = 12  # bytes of working memory per byte of TREC text, measured


def query_batches(
    path: PathLike, *, chunk_bytes: int
) -> Iterator[tuple[pl.DataFrame, int, int]]:
    """Complete queries of a grouped TREC run, a chunk at a time.

    Yields ``(frame, first_row, bytes_read)``: a run frame (``query_id``,
    ``doc_id``, ``score``) holding only whole queries, the index of its first
    row among all data rows of the file, and the bytes consumed so far.
    """
    pending: pl.DataFrame | None = None
    first_row = 0
    consumed = 0
    for frame, n_bytes in iter_trec_chunks(path, "run", chunk_bytes=chunk_bytes):
        consumed += n_bytes
        if pending is not None and pending.height:
            frame = pl.concat([pending, frame], rechunk=True)
        if frame.height == 0:
            pending = frame
            continue
        # the trailing run of the last query may continue in the next chunk
        trailing = frame.get_column("query_id").reverse().rle_id().eq(0).sum()
        tail = frame.height - int(trailing)
        if tail == 0:
            pending = frame
            continue
        yield frame.head(tail), first_row, consumed
        first_row += tail
        pending = frame.slice(tail)
    if pending is not None and pending.height:
        yield pending, first_row, consumed


def _chunk_bytes(memory: int) -> int:
    if memory <= 0:
        raise OptionError(f"memory budget must be positive, not {memory}")
    return max(1 << 12, memory // _EXPANSION)


def evaluate_streaming(
    qrels: Any,
    run: PathLike,
    metrics: MetricsArg,
    *,
    per_query: bool = False,
    run_name: str | None = None,
    memory: int = DEFAULT_MEMORY,
    options: EvalOptions | None = None,
    **option_fields: Unpack[OptionFields],
) -> EvaluationResult:
    """Evaluate a run file of any size in bounded memory (see the module docstring).

    Parameters are those of :func:`rankscope.evaluate`, except that ``run``
    must be the path of a plain TREC run grouped by query, plus:

    memory : int, default 2 GiB
        Working-memory budget in bytes; the run is read in chunks of
        ``memory / 12`` bytes.

    Returns
    -------
    EvaluationResult
        Exactly what :func:`rankscope.evaluate` returns for the same inputs.

    Raises
    ------
    InputError
        When a query's lines are not together in the file (with its line).
    """
    opts = EvalOptions.merged(options, option_fields)
    plan = resolve_plan(metrics, opts)
    qrels_t: Qrels = as_qrels(qrels)
    source = os.fspath(run)
    chunk = _chunk_bytes(memory)
    size = os.path.getsize(source) if os.path.isfile(source) else 0

    from rankscope.data.trec import _locator_for
    from rankscope.progress import byte_bar

    locate_file = _locator_for(run)
    judged = qrels_t.frame.filter(pl.col("grade").is_not_null())
    top = judged.get_column("grade").max()
    top_grade = float(top) if top is not None else 0.0  # type: ignore[arg-type]
    seen: set[str] = set()
    ids: list[str] = []
    blocks: list[np.ndarray] = []
    done = 0
    with byte_bar(size, f"evaluating {os.path.basename(source)}") as advance:
        for frame, first_row, consumed in query_batches(run, chunk_bytes=chunk):
            _check_grouped(frame, first_row, seen, source, locate_file)
            batch = Run(
                frame,
                name="streaming",
                source=source,
                on_duplicate=opts.on_duplicate,
                _locate=_shifted(locate_file, first_row),
                _defer_duplicates="error",  # looked for beside the kernels (compute raises)
                _trusted=True,  # the TREC reader checked every value
            )
            # only this batch's judgments, with the whole qrels' highest grade
            wanted = batch.frame.get_column("query_id").unique().implode()
            part = Qrels(judged.filter(pl.col("query_id").is_in(wanted)), source=qrels_t.source)
            ranked = rank_plan(part, batch, plan, opts, queries="intersection",
                               max_grade=top_grade)
            if ranked.lists.n_queries:
                blocks.append(compute_ranked(ranked))
                ids.extend(ranked.lists.query_ids)
            advance(consumed - done)
            done = consumed
    tag = run_name or _first_tag(run) or source
    return _assemble(qrels_t, plan, ids, blocks, seen, opts, tag, per_query, top_grade)


def _shifted(locate: Callable[[int], int | None], base: int) -> Callable[[int], int | None]:
    """A locator for a batch whose first row is the file's data row ``base``."""
    return lambda row: locate(base + row)


def _first_tag(path: PathLike) -> str | None:
    """The run tag of the first data line (the default run name, as Run.read uses)."""
    with open(path, "rb") as handle:
        for line in handle:
            fields = line.split()
            if fields and not fields[0].startswith(b"#") and len(fields) == 6:
                return fields[5].decode("utf-8", errors="replace")
    return None


def _check_grouped(
    frame: pl.DataFrame, first_row: int, seen: set[str], source: str, locate: Any
) -> None:
    ids = frame.get_column("query_id")
    seg = ids.rle_id().to_numpy()
    starts = np.concatenate(([0], np.flatnonzero(np.diff(seg)) + 1)).astype(np.int64)
    names = ids.gather(starts).to_list()
    for start, name in zip(starts.tolist(), names, strict=True):
        if name in seen:
            raise InputError(
                f"query {name!r} appears again after other queries: streaming needs the run "
                "grouped by query (LC_ALL=C sort -s -k1,1 groups it)",
                source=source,
                line=locate(first_row + start),
                value=name,
            )
        seen.add(name)


def _assemble(
    qrels: Qrels,
    plan: list[Resolved],
    ids: list[str],
    blocks: list[np.ndarray],
    run_queries: set[str],
    opts: EvalOptions,
    run_name: str,
    per_query: bool,
    top_grade: float,
) -> EvaluationResult:
    """Per-query values of all batches, plus empty rankings, as one result."""
    metric_list = [found.metric for found in plan]
    width = len(metric_list)
    graded = qrels.frame.filter(pl.col("grade").is_not_null())
    qrels_queries = set(graded.get_column("query_id").unique().to_list())
    missing = sorted(qrels_queries - run_queries)
    if missing and opts.queries != "intersection":
        # Queries the run lacks score as empty rankings, as in the local engine.
        empty = Run(pl.DataFrame(schema={"query_id": pl.String, "doc_id": pl.String,
                                         "score": pl.Float64}), name="empty")
        ranked = rank_plan(qrels, empty, plan, opts, queries="qrels", max_grade=top_grade)
        values = compute_ranked(ranked)
        where = {q: i for i, q in enumerate(ranked.lists.query_ids)}
        blocks.append(values[np.array([where[q] for q in missing], dtype=np.int64)])
        ids.extend(missing)
    all_values = np.concatenate(blocks) if blocks else np.zeros((0, width))
    order = sorted(range(len(ids)), key=ids.__getitem__)
    all_values = all_values[np.array(order, dtype=np.int64)] if order else all_values
    query_ids = [ids[i] for i in order]
    in_run = np.fromiter((q in run_queries for q in query_ids), dtype=bool, count=len(query_ids))
    return assemble_result(
        [found.label for found in plan], metric_list, query_ids, all_values,
        options=opts, run_name=run_name, account=QueryAccount.of(qrels_queries, run_queries),
        in_run=in_run, per_query=per_query,
    )
