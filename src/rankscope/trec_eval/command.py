"""``rankscope trec_eval``: trec_eval 10.0's command, same output, same exit status.

The steps follow trec_eval's ``main``: read options (``-v`` and bad ``-m``
stop here), print help if asked, read the rel_info file, the results file and
the z-score file (in that order, so the same error is reported first), mark
``official`` if no measure was asked for, read each measure's parameters,
evaluate every query, print.
"""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TextIO

import numpy as np
import numpy.typing as npt

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
from rankscope.engine.kernels_trec import relstrings
from rankscope.engine.trec_compute import COMPUTE, Settings
from rankscope.engine.trec_lists import TrecLists, build_lists
from rankscope.engine.trec_stats import QueryStats
from rankscope.trec_eval.catalog import MEASURES, NICKNAMES, Bound, bind
from rankscope.trec_eval.exits import TrecEvalExit, quit_in_file
from rankscope.trec_eval.failures import first_failure
from rankscope.trec_eval.helptext import help_text
from rankscope.trec_eval.options import USAGE, Options, parse_args
from rankscope.trec_eval.report import PerQuery, Summary, write_report

__all__ = ["run"]

_REL_FORMATS = ("qrels", "prefs", "qrels_prefs", "qrels_jg")


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
        self._emit(sys.stdout, text)

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
        io.err(stop.stderr)
        io.flush()
        return stop.status
    except BrokenPipeError:
        return 0
    io.flush()
    return 0


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
    del results_data, rel_data  # free the files before ranking
    zscores = parse_zscores(opts.zscore_file, encoding) if opts.zscore_file else None
    if not opts.marked:
        opts.marked.update(NICKNAMES["official"])
    bounds = [bind(m, opts.measure_params.get(m.name)) for m in MEASURES if m.name in opts.marked]
    per, n_qrels_queries, num_rel_all = _evaluate(opts, rel_info, run_table, bounds)
    info = Summary(
        run_id=run_table.run_id, summary=opts.summary, per_query=opts.query,
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


def _evaluate(
    opts: Options, rel_info: QrelsTable, run_table: RunTable, bounds: list[Bound]
) -> tuple[PerQuery, int, int]:
    """Per-query values of every bound measure, the qrels query count, -c's num_rel."""
    frame = rel_info.frame
    n_qrels_queries = int(frame.get_column("query_id").n_unique())
    num_rel_all = int((frame.get_column("rel") > 0).sum()) if "rel" in frame.columns else 0
    if opts.rel_format == "qrels_jg":
        from rankscope.trec_eval.measures_jg import evaluate_jg

        return evaluate_jg(opts, rel_info, run_table, bounds), n_qrels_queries, num_rel_all
    if opts.rel_format in ("prefs", "qrels_prefs"):
        from rankscope.trec_eval.measures_prefs import evaluate_prefs

        return evaluate_prefs(opts, rel_info, run_table, bounds), n_qrels_queries, num_rel_all
    lists = build_lists(rel_info, run_table, opts.evaluation(), max_ret=opts.max_ret,
                        only_query=opts.debug_query)
    return evaluate_qrels(opts, lists, bounds), n_qrels_queries, num_rel_all


def evaluate_qrels(opts: Options, lists: TrecLists, bounds: list[Bound]) -> PerQuery:
    """Compute the qrels-format measures and find where trec_eval would stop."""
    st = QueryStats(lists)
    settings = Settings(n_docs=opts.n_docs)
    back = lists.in_query_order()

    def sort(per_query: npt.NDArray[Any]) -> npt.NDArray[Any]:
        return per_query if back is None else per_query[back]

    in_run = sort(lists.in_run)
    stand_in = (~in_run).astype(np.float64) if opts.complete else np.zeros(lists.n)
    query_ids = lists.query_ids if back is None else [lists.query_ids[i] for i in back.tolist()]
    per = PerQuery(query_ids, stand_in)
    for bound in bounds:
        spec = bound.spec
        if spec.name == "num_q":
            per.columns["num_q"] = [np.ones(lists.n)]
        elif spec.name == "relstring":
            texts = relstrings(st, bound)
            per.relstrings = texts if back is None else [texts[i] for i in back.tolist()]
        elif spec.source == "qrels" and not (spec.name == "utility" and len(bound.values) != 4):
            per.columns[spec.name] = [sort(v) for v in COMPUTE[spec.name](st, bound, settings)]
        elif spec.value != "runid":
            per.columns[spec.name] = [np.zeros(lists.n) for _ in bound.names]
    # trec_eval cannot allocate its level counts (and fails without a message)
    # when the first query it ranks has only negative judgments.
    first_all_negative = lists.n > 0 and bool(sort(st.max_rel)[0] < 0)

    def problem(q: int) -> str | None:
        return _qrels_problem(lists, q if back is None else int(back[q]),
                              q == 0 and first_all_negative)

    per.failure = first_failure(opts, query_ids, in_run, bounds, problem, "qrels")
    return per


def _qrels_problem(lists: TrecLists, q: int, no_levels: bool) -> str | None:
    if lists.run_dup[q] is not None:
        return f"trec_eval.form_res_qrels: duplicate docs {lists.run_dup[q]}"
    if lists.qrels_dup[q] is not None:
        return f"trec_eval.form_res_rels: duplicate docs {lists.qrels_dup[q]}\n"
    if no_levels:
        return ""
    return None
