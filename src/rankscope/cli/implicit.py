"""``rankscope judgments implicit LOG... --model M``: judgments from what users clicked."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rankscope.judgments.clicks.log import ClickLog

__all__ = ["add_implicit_parser", "read_log"]

_DESCRIPTION = (
    "Fit a click model on a click log and write judgments (query_id, doc_id, rater, grade, "
    "plus the model's estimate, impressions and clicks), rater implicit:MODEL. LOG is a plain "
    "click log (CSV/TSV/JSONL/JSON/Parquet: session_id,query_id,doc_id,position,clicked"
    "[,purchased]; one row per result shown, position 1 = the top) or UBI 1.x events and "
    "queries (JSON Lines or JSON; give both files, in any order). Models: ctr (clicks / "
    "impressions), coec (clicks over expected clicks, the position prior from the same log), "
    "pbm (position-based model, EM), sdbn (simplified DBN). See docs/judgments.md.")


def add_implicit_parser(actions: Any) -> None:
    """Add ``implicit`` to the ``judgments`` subcommands."""
    from rankscope.cli.options import CUTOFF, add_data_format, add_output, integer, number

    p: argparse.ArgumentParser = actions.add_parser(
        "implicit", help="judgments from a click log (CTR, COEC, PBM, SDBN)",
        description=_DESCRIPTION,
        examples=["rankscope demo init demo && rankscope judgments implicit demo/clicks.csv "
                  "--model sdbn -o implicit.csv",
                  "rankscope judgments implicit demo/clicks.csv --model pbm --prior prior.csv "
                  "-f jsonl -o implicit.jsonl"])
    p.add_argument("logs", nargs="+", metavar="LOG",
                   help="a plain click log, or UBI events and queries")
    p.add_argument("--model", required=True, choices=("ctr", "coec", "pbm", "sdbn"),
                   help="the click model")
    p.add_argument("--min-impressions", type=integer(1), default=10, metavar="N",
                   help="pairs shown fewer than N times get no judgment (default 10)")
    p.add_argument("--depth", type=CUTOFF, metavar="K",
                   help="only results shown at positions 1..K count (default: all)")
    p.add_argument("--grades", default="quantiles", metavar="SPEC",
                   help="estimates -> grades: quantiles[:Q,...] (default: the quartiles, "
                        "grades 0-3), thresholds:T,... (a grade per threshold exceeded) or "
                        "raw (the estimate is the grade)")
    p.add_argument("--purchase-weight", type=number(0), default=1.0, metavar="W",
                   help="a purchased result's click weighs W clicks (default 1)")
    ubi = p.add_argument_group("UBI logs")
    ubi.add_argument("--click-action", action="append", metavar="NAME",
                     help="action_name counted as a click (repeatable; default click, "
                          "click_through)")
    ubi.add_argument("--purchase-action", action="append", metavar="NAME",
                     help="action_name counted as a purchase: a click weighing "
                          "--purchase-weight (repeatable; default purchase)")
    ubi.add_argument("--impression-action", action="append", metavar="NAME",
                     help="action_name saying a result was shown, for searches without "
                          "query_response_hit_ids (repeatable; default impression)")
    ubi.add_argument("--ordinal-base", type=int, choices=(0, 1), default=1,
                     help="the position.ordinal of the top result (default 1, as in UBI's "
                          "schema)")
    ubi.add_argument("--queries", metavar="FILE",
                     help="a query set (query_id<TAB>text, TREC topics or irds:NAME): judge "
                          "under its ids; searches whose text is not in it are left out")
    p.add_argument("--input-format", help="format of a plain log (default: from its name)")
    p.add_argument("--rater", help="rater name (default implicit:MODEL)")
    p.add_argument("--max-iter", type=integer(1), default=1000,
                   help="EM iterations at most (pbm)")
    add_output(p, "--prior", dest="prior", default=None,
               help="also write the position prior (coec: each position's CTR; pbm: its "
                    "examination probability) as CSV")
    add_output(p)
    add_data_format(p, "csv, tsv, jsonl, json, parquet or trec (the grades only)")
    p.set_defaults(handler=run)


def _kind(path: str, fmt: str | None) -> str:
    """``plain``, or ``events`` / ``queries`` for a UBI file (from its first record)."""
    import json

    from rankscope.data._io import read_text
    from rankscope.data.formats import guess_format
    from rankscope.judgments.clicks.ubi import is_ubi_record

    kind = (fmt or guess_format(path)).lower()
    if kind not in ("json", "jsonl", "trec"):  # csv, tsv, parquet: the plain format
        return "plain"
    data = read_text(path)[0]
    head = data.lstrip()
    first: Any = None
    if head.startswith(b"["):
        try:
            records = json.loads(data)
        except json.JSONDecodeError:
            return "plain"  # the reader names the bad line
        first = records[0] if isinstance(records, list) and records else None
    else:
        line = next((x for x in data.splitlines() if x.strip()), b"")
        try:
            first = json.loads(line)
        except json.JSONDecodeError:
            return "plain"
    ubi = is_ubi_record(first)
    if ubi is None and isinstance(first, dict) and len(first) == 1 \
            and next(iter(first)) in ("index", "create"):
        # an OpenSearch bulk export: the second line is the first document
        lines = [x for x in data.splitlines() if x.strip()]
        ubi = is_ubi_record(json.loads(lines[1])) if len(lines) > 1 else None
    return ubi or "plain"


def _query_ids(path: str) -> dict[str, str]:
    """``{text: query_id}`` of a query set (a text given twice is an error)."""
    from rankscope.errors import InputError
    from rankscope.search.queries import read_queries

    out: dict[str, str] = {}
    for item in read_queries(path):
        text = " ".join(item.text.split())
        if text in out and out[text] != item.query_id:
            raise InputError(f"queries {out[text]!r} and {item.query_id!r} have the same text: "
                             "UBI searches could not be told apart", source=path, value=text)
        out[text] = item.query_id
    return out


def read_log(args: argparse.Namespace) -> ClickLog:
    """The click log of the command line: one plain file, or UBI events (and queries)."""
    from rankscope.errors import OptionError
    from rankscope.judgments.clicks.log import read_click_log
    from rankscope.judgments.clicks.ubi import (
        CLICK_ACTIONS,
        IMPRESSION_ACTIONS,
        PURCHASE_ACTIONS,
        read_ubi,
    )

    kinds = [(_kind(p, args.input_format), p) for p in args.logs]
    plain = [p for k, p in kinds if k == "plain"]
    ubi_only = [o for o, v in (("--click-action", args.click_action),
                               ("--purchase-action", args.purchase_action),
                               ("--impression-action", args.impression_action),
                               ("--queries", args.queries)) if v]
    if plain:
        if len(args.logs) > 1:
            raise OptionError(f"{plain[0]} is a plain click log: give it alone (UBI logs are "
                              "an events file and a queries file)")
        if ubi_only or args.ordinal_base != 1:
            raise OptionError(f"{', '.join(ubi_only) or '--ordinal-base'} applies to UBI logs; "
                              f"{plain[0]} is a plain click log")
        return read_click_log(plain[0], format=args.input_format)
    events = [p for k, p in kinds if k == "events"]
    queries = [p for k, p in kinds if k == "queries"]
    if len(events) > 1 or len(queries) > 1:
        raise OptionError("give one UBI events file and one UBI queries file")
    return read_ubi(
        events[0] if events else None, queries[0] if queries else None,
        click_actions=args.click_action or CLICK_ACTIONS,
        purchase_actions=args.purchase_action or PURCHASE_ACTIONS,
        impression_actions=args.impression_action or IMPRESSION_ACTIONS,
        ordinal_base=args.ordinal_base,
        query_ids=_query_ids(args.queries) if args.queries else None,
    )


def run(args: argparse.Namespace) -> int:
    """Write the implicit judgments; a summary and the notes on stderr."""
    from rankscope.errors import OptionError
    from rankscope.judgments.clicks.implicit import GradeMapping, implicit_judgments

    mapping = GradeMapping.parse(args.grades)  # a bad spelling fails before reading
    if args.prior and args.model not in ("coec", "pbm"):
        raise OptionError(f"{args.model} has no position prior (coec and pbm have one)")
    log = read_log(args)
    options = {"max_iter": args.max_iter} if args.model == "pbm" else {}
    judged = implicit_judgments(
        log, args.model, min_impressions=args.min_impressions, depth=args.depth,
        purchase_weight=args.purchase_weight, grades=mapping, rater=args.rater, **options)
    fmt = args.format or ("csv" if args.output == "-" else None)
    judged.write(args.output, format=fmt)
    if args.prior and judged.fit.prior is not None:
        from rankscope.cli.parsing import write_text

        write_text(args.prior, judged.fit.prior.write_csv())
    err = sys.stderr
    name = "rankscope judgments implicit"
    if judged.mapping.kind == "raw":
        grades = "the estimates as grades"
    else:
        cuts = ", ".join(f"{c:.4g}" for c in judged.cuts)
        grades = f"{judged.scale} scale, cut points {cuts}"
    err.write(f"{name}: {judged.frame.height} judgments ({judged.rater}; {grades}) from "
              f"{log.n_pages} result pages of {log.n_queries} queries\n")
    fit = judged.fit
    if fit.iterations is not None:
        state = "converged" if fit.converged else "not converged"
        err.write(f"{name}: EM {fit.iterations} iterations, {state}\n")
    for note in judged.notes:
        err.write(f"{name}: note: {note}\n")
    return 0
