"""``rankscope trec_eval``: trec_eval 10.0's command, same output, same exit status.

The steps follow trec_eval's ``main``: read options (``-v`` and bad ``-m``
stop here), print help if asked, read the rel_info file, the results file and
the z-score file (in that order, so the same error is reported first), mark
``official`` if no measure was asked for, read each measure's parameters,
evaluate every query, print.
"""

from __future__ import annotations

import contextlib
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import TextIO

import numpy as np
import polars as pl

from rankscope.data.tables import Qrels, Run
from rankscope.data.trec_dialect import (
    Blob,
    QrelsTable,
    RunTable,
    decode_choice,
    parse_qrels,
    parse_results,
    parse_zscores,
    read_input,
)
from rankscope.engine.c_math import c_log
from rankscope.engine.context import Context
from rankscope.engine.kernel_values import compute
from rankscope.engine.kernels_trec import MIN_GEO_MEAN, relstrings
from rankscope.engine.qrels_index import qrels_index
from rankscope.engine.ranking import RankedLists, rank
from rankscope.metrics.base import Metric
from rankscope.trec_eval.catalog import MEASURES, NICKNAMES, Bound, bind, metrics_of
from rankscope.trec_eval.exits import TrecEvalExit, quit_in_file
from rankscope.trec_eval.failures import first_failure
from rankscope.trec_eval.helptext import help_text
from rankscope.trec_eval.options import USAGE, Options, parse_args
from rankscope.trec_eval.report import PerQuery, Summary, write_report

__all__ = ["run"]

_REL_FORMATS = ("qrels", "prefs", "qrels_prefs", "qrels_jg")
WRITE_FAILED = 4
"""The exit status when standard output cannot be written (a full disk), where trec_eval
exits 0 having lost its output; 4 is rankscope's code for an output not written."""


class _Output:
    """stdout and stderr, written as the bytes trec_eval would write.

    Ids are decoded with one encoding (UTF-8, or Latin-1 for other bytes) and
    encoded back with it, whatever the terminal's locale.
    """

    def __init__(self) -> None:
        self.encoding = "utf-8"

    def _emit(self, stream: TextIO, text: str) -> None:
        buffer = getattr(stream, "buffer", None)
        if buffer is None:
            stream.write(text)
            return
        stream.flush()
        buffer.write(text.encode(self.encoding, errors="surrogateescape"))

    def out(self, text: str) -> None:
        try:
            self._emit(sys.stdout, text)
        except BrokenPipeError:
            raise
        except OSError as exc:  # trec_eval says nothing and exits 0: the numbers would be lost
            raise TrecEvalExit(f"trec_eval: cannot write standard output: "
                               f"{exc.strerror or exc}\n", WRITE_FAILED) from None

    def err(self, text: str) -> None:
        self._emit(sys.stderr, text)

    def flush(self) -> None:
        sys.stdout.flush()
        sys.stderr.flush()


def run(argv: list[str]) -> int:
    """Run trec_eval with ``argv`` (without the program name); returns the exit status."""
    io = _Output()
    try:
        _main(argv, io)
    except TrecEvalExit as stop:
        if stop.status == WRITE_FAILED:
            _drop_stdout()
        io.err(stop.stderr)
        with contextlib.suppress(OSError):
            io.flush()
        return stop.status
    except BrokenPipeError:
        return 0
    io.flush()
    return 0


def _drop_stdout() -> None:
    """Leave what stdout buffers unwritten (it cannot be), so no later flush fails again."""
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _main(argv: list[str], io: _Output) -> None:
    write = io.out
    opts = parse_args(argv)
    if opts.help:
        write(help_text(opts.marked, opts.rel_format, opts.results_format))
        return
    if len(opts.files) != 2:
        raise TrecEvalExit(USAGE, 1)
    rel_path, results_path = opts.files
    if opts.rel_format not in _REL_FORMATS:
        raise TrecEvalExit(f"trec_eval: Illegal rel_format '{opts.rel_format}'\n", 2)
    rel_data = read_input(rel_path, "qrels")
    if rel_data is None:
        raise quit_in_file(_cannot_read(opts.rel_format, rel_path), rel_path)
    results_data = None
    if opts.results_format == "trec_results":
        results_data = read_input(results_path, "results", stdin_allowed=True)
    # The run's layout (for its fast reader) is checked beside the qrels reading.
    checking = ThreadPoolExecutor(max_workers=1)
    layout = None if results_data is None else checking.submit(results_data.layout)
    checking.shutdown(wait=False)
    encoding = decode_choice(*(b for b in (rel_data, results_data) if b is not None))
    io.encoding = encoding
    rel_info = _read_rel_info(opts.rel_format, rel_data, rel_path, encoding)
    # the qrels' file map goes before the run is read: its resident pages are not held
    # beside the run's frame (640 MB at the 10^7 `j1000-url` qrels)
    del rel_data
    if opts.results_format != "trec_results":
        raise TrecEvalExit(
            f"trec_eval: Illegal retrieval results format '{opts.results_format}'\n", 2
        )
    if results_data is None:
        raise quit_in_file(
            f"trec_eval.get_results: Cannot read results file '{results_path}'", results_path
        )
    queries = None
    if opts.rel_format == "qrels" and opts.debug_query is None:
        queries = rel_info.frame.get_column("query_id").unique().sort()
    run_table = parse_results(results_data, results_path, encoding, queries, layout)
    del results_data  # free the run's file before ranking
    zscores = parse_zscores(opts.zscore_file, encoding) if opts.zscore_file else None
    if not opts.marked:
        opts.marked.update(NICKNAMES["official"])
    bounds = [bind(m, opts.measure_params.get(m.name)) for m in MEASURES if m.name in opts.marked]
    # _evaluate is handed the only reference to the qrels: they go once the run is
    # ranked, not held beside the measures (about 200 MB at 7 M judgments)
    # and of the run (its frame goes once ranked, 800 MB at 10^7 lines)
    held = [rel_info]
    held_run = [run_table]
    run_id = run_table.run_id
    del rel_info, run_table
    per, n_qrels_queries, num_rel_all = _evaluate(opts, held, held_run, bounds)
    info = Summary(
        run_id=run_id, summary=opts.summary, per_query=opts.query,
        complete=opts.complete, n_qrels_queries=n_qrels_queries,
        num_rel_complete=num_rel_all, zscores=zscores,
    )
    write_report(per, bounds, info, write)


def _cannot_read(rel_format: str, path: str) -> str:
    reader = {"qrels": "get_qrels", "qrels_jg": "get_qrels_jg", "prefs": "get_prefs",
              "qrels_prefs": "get_qrels_prefs"}[rel_format]
    what = {"qrels": "qrels", "qrels_jg": "qrels_jg", "prefs": "prefs",
            "qrels_prefs": "qrels_prefs"}[rel_format]
    return f"trec_eval.{reader}: Cannot read {what} file '{path}'"


def _read_rel_info(rel_format: str, data: Blob, path: str, encoding: str) -> QrelsTable:
    if rel_format == "qrels":
        return parse_qrels(data, path, encoding)
    from rankscope.data.trec_dialect_prefs import parse_rel_info

    return parse_rel_info(rel_format, data, path, encoding)


def tables(rel_info: QrelsTable, run: RunTable) -> tuple[Qrels, Run]:
    """The engine's tables of trec_eval's files (read and checked by its dialect).

    Duplicates are left to the query holding them, as trec_eval does.
    """
    frame = rel_info.frame
    query = pl.col("query_id")
    coded = run.frame.schema["query_id"]
    if isinstance(coded, pl.Enum):
        # the run was read against the qrels' sorted distinct ids: their query ids as codes
        # of the same list (2 bytes a judgment, not a string: 95 MB less at 7 M judgments,
        # held through the ranking; each judgment's query index is then its code's)
        query = query.cast(coded)
    grades = frame.select(query, "doc_id", pl.col("rel").cast(pl.Float64).alias("grade"))
    qrels = Qrels(grades, _trusted=True, _defer_duplicates="report")
    ranked = Run(run.frame, name=run.run_id, _trusted=True, _defer_duplicates="report")
    return qrels, ranked


def _evaluate(
    opts: Options, held: list[QrelsTable], held_run: list[RunTable], bounds: list[Bound]
) -> tuple[PerQuery, int, int]:
    """Per-query values of every bound measure, the qrels query count, -c's num_rel.

    ``held`` and ``held_run`` hold the caller's only references to the qrels and
    the run, taken out here.
    """
    rel_info, run_table = held.pop(), held_run.pop()
    frame = rel_info.frame
    n_qrels_queries = int(frame.get_column("query_id").n_unique())
    num_rel_all = int((frame.get_column("rel") > 0).sum()) if "rel" in frame.columns else 0
    if opts.rel_format == "qrels_jg":
        from rankscope.trec_eval.measures_jg import evaluate_jg

        return evaluate_jg(opts, rel_info, run_table, bounds), n_qrels_queries, num_rel_all
    if opts.rel_format in ("prefs", "qrels_prefs"):
        from rankscope.trec_eval.measures_prefs import evaluate_prefs

        return evaluate_prefs(opts, rel_info, run_table, bounds), n_qrels_queries, num_rel_all
    qrels, run = tables(rel_info, run_table)
    # the file's table goes before the ranking: the engine's qrels share its ids, and its
    # integer levels (8 bytes a judgment, 57 MB at 7 M) are not held beside the matching
    del rel_info, frame
    ev = opts.evaluation()
    qrels_index(qrels).last_ranking()  # one run: the keyed judgments go with its ranking
    lists = rank(qrels, run, ties=ev.ties, unjudged=ev.unjudged, queries="qrels", levels=True,
                 stand_in=opts.complete, max_ret=opts.max_ret, only_query=opts.debug_query)
    # trec_eval cannot allocate its level counts (and fails without a message)
    # when the first query it ranks has only negative judgments (a level's sign is its
    # grade's: the grades are the levels as floats)
    first_all_negative = bool(lists.n_queries) and not bool(
        (_grades_of(qrels, lists.query_ids[0]) >= 0).any())
    # nothing below reads the qrels: their frames and index (weakly keyed) go now,
    # nor the run's frame, ids or scores (no qrels measure of trec_eval's reads a
    # document id or score; the duplicates search holds its own until done)
    del qrels, run_table, run
    lists.let_go_of_run()
    per = evaluate_qrels(opts, lists, bounds)

    def problem(q: int) -> str | None:
        return _qrels_problem(lists, q, q == 0 and first_all_negative)

    per.failure = first_failure(opts, per.query_ids, lists.in_run, bounds, problem, "qrels")
    return per, n_qrels_queries, num_rel_all


def _grades_of(qrels: Qrels, query_id: str) -> pl.Series:
    """The grades ``qrels`` gives ``query_id``."""
    return qrels.held.filter(pl.col("query_id") == query_id).get_column("grade")


def evaluate_qrels(opts: Options, lists: RankedLists, bounds: list[Bound]) -> PerQuery:
    """Compute the qrels-format measures of ``lists`` (trec_eval's levels), query by query."""
    n = lists.n_queries
    stand_in = (~lists.in_run).astype(np.float64) if opts.complete else np.zeros(n)
    per = PerQuery(list(lists.query_ids), stand_in)
    wanted: list[tuple[Bound, int, int]] = []
    metrics: list[Metric] = []
    for bound in bounds:
        spec = bound.spec
        found = None
        if spec.source == "qrels" and not (spec.name == "utility" and len(bound.values) != 4):
            found = metrics_of(bound, opts.level, opts.n_docs)
        if found is not None:
            wanted.append((bound, len(metrics), len(found)))
            metrics.extend(found)
        elif spec.name == "num_q":
            per.columns["num_q"] = [np.ones(n)]
        elif spec.name == "relstring":
            per.relstrings = relstrings(Context(lists), bound.values[0])
        elif spec.value != "runid":
            per.columns[spec.name] = [np.zeros(n) for _ in bound.names]
    values = compute(lists, metrics, unjudged="nonrelevant")
    for bound, first, count in wanted:
        columns = [values[:, j].copy() for j in range(first, first + count)]
        if bound.spec.summary == "gm":  # trec_eval keeps log(max(value, 1e-5)) per query
            columns = [c_log(np.where(c > MIN_GEO_MEAN, c, MIN_GEO_MEAN)) for c in columns]
        per.columns[bound.name] = columns
    return per


def _qrels_problem(lists: RankedLists, q: int, no_levels: bool) -> str | None:
    if lists.run_duplicates[q] is not None:
        return f"trec_eval.form_res_qrels: duplicate docs {lists.run_duplicates[q]}"
    if lists.qrels_duplicates is not None and lists.qrels_duplicates[q] is not None:
        return f"trec_eval.form_res_rels: duplicate docs {lists.qrels_duplicates[q]}\n"
    if no_levels:
        return ""
    return None
