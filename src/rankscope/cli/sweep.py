"""``rankscope sweep ENDPOINT.toml QUERIES --qrels QRELS --grid KEY=V1,V2 -m METRIC``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["register", "run"]

EXAMPLES = ["rankscope demo init demo && rankscope sweep demo/endpoint.toml demo/queries.tsv "
            "--qrels demo/qrels.txt --grid weights.title=1,2,4 "
            "--grid tokenizer='unicode61,porter unicode61' -m nDCG@10 -m P@5 -o demo/sweep"]
"""Runnable on the demo collection (the test of every --help runs it)."""
OUTPUT_FILES = ("sweep.csv", "sweep.json", "holes.csv")


def register(sub: Any, name: str, help_text: str) -> None:
    """Add the ``sweep`` subcommand."""
    p: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text, examples=EXAMPLES,
        description="Send QUERIES to the endpoint ENDPOINT.toml once per configuration of a "
        "grid of settings, and rank the configurations by the first metric. Each --grid "
        "KEY=V1,V2,... sets a dotted key of the endpoint file (weights.title, tokenizer, k1, "
        "b, params.qf, any key of any kind) or a template placeholder ({{boost}}, or boost "
        "when the template uses it); values are TOML scalars where they parse (4, 0.5, true, "
        "\"a b\"), else strings; a value with a comma goes in a TOML array (KEY='[\"a,b\", "
        "\"c\"]'). The grid is the cross product of the --grid options; the base is the "
        "file as written. A configuration's numbers are exactly those of `rankscope snapshot` "
        "of its endpoint file and `rankscope evaluate` of that run; each is compared with the "
        "base by a paired test, the p-values corrected across the configurations (Holm by "
        "default), and the holes (unjudged results in the top k) are counted. The endpoint "
        "file is never written. Exit 0 done, 2 bad input, 3 a query failed for good (what "
        "was measured before is in the store).")
    p.add_argument("endpoint", help="endpoint TOML file (the base configuration)")
    p.add_argument("queries", help="queries: TSV (query_id<TAB>text), TREC topics, or "
                                   "irds:NAME (an ir_datasets collection's queries)")
    p.add_argument("--qrels", required=True,
                   help="judgments (a file or irds:NAME)")
    p.add_argument("--grid", action="append", required=True, metavar="KEY=V1,V2",
                   help="a key and its values (repeatable: the grid is the cross product)")
    p.add_argument("-m", "--metric", action="append", dest="metrics", required=True,
                   help="metric (repeatable; the first orders the table)")
    p.add_argument("--depth", type=int, default=None,
                   help="results kept per query (default 10, as rankscope snapshot)")
    p.add_argument("-k", type=int, default=10,
                   help="where the holes are counted: unjudged results in the top k "
                        "(default 10)")
    p.add_argument("--store", metavar="DB",
                   help="keep every configuration's snapshot in this store, named after its "
                        "values")
    p.add_argument("-o", "--output", metavar="DIR",
                   help="write every configuration's run (config-NN.run) and endpoint file "
                        "(config-NN.toml), the table (sweep.csv, sweep.json) and the holes "
                        "to grade (holes.csv) into this directory")
    p.add_argument("-f", "--format", choices=("table", "json", "csv"), default="table",
                   help="what is printed: a table (default), JSON ({\"configurations\": "
                        "[{\"values\", \"means\", ...}]}) or CSV")
    p.add_argument("--test", choices=("t", "wilcoxon", "permutation", "bootstrap"),
                   default="t", help="paired test against the base (default t)")
    p.add_argument("--correction", choices=("holm", "bonferroni", "bh", "none"),
                   default="holm",
                   help="adjustment of the p-values across the configurations (default holm)")
    p.add_argument("--alpha", type=float, default=0.05,
                   help="significance level (default 0.05)")
    p.add_argument("--concurrency", type=int,
                   help="queries in flight (default: the file's, else 4); configurations "
                        "run one after another")
    p.add_argument("--sample", type=int, metavar="N",
                   help="measure N configurations drawn at random from the grid (and the "
                        "base), for grids too large to measure whole")
    p.add_argument("--seed", type=int, default=0,
                   help="with --sample: the seed of the draw (default 0: the same draw "
                        "every time)")
    p.add_argument("--quiet", action="store_true", help="no progress")
    p.set_defaults(handler=run)


def _check_output(args: argparse.Namespace, stems: list[str]) -> Path | None:
    """The output directory; refused when it would write over an input."""
    from rankscope.errors import OptionError

    if not args.output:
        return None
    folder = Path(args.output)
    if folder.exists() and not folder.is_dir():
        raise OptionError(f"-o {args.output}: not a directory (-o names the directory the "
                          "runs and the table go to)")
    inputs = {Path(p).resolve() for p in (args.endpoint, args.queries, args.qrels, args.store)
              if p and not str(p).startswith("irds:") and "://" not in str(p)}
    for name in [*OUTPUT_FILES, *stems]:
        if (folder / name).resolve() in inputs:
            raise OptionError(f"-o {args.output} would write over the input {folder / name}: "
                              "give another directory")
    try:  # before any request: a directory that cannot be made fails now, not at the end
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        from rankscope.errors import OutputWriteError

        raise OutputWriteError(str(exc.strerror or exc), target=str(folder)) from None
    return folder


def run(args: argparse.Namespace) -> int:
    """Run the sweep and print it; returns the exit code."""
    import tomllib
    import warnings

    from rankscope import progress
    from rankscope.data.tables import Qrels
    from rankscope.errors import (
        ConfigError,
        IncompleteError,
        OptionError,
        RankscopeWarning,
        SearchRequestError,
    )
    from rankscope.search.config import load_endpoint
    from rankscope.search.queries import read_queries
    from rankscope.services.sweep import configurations, read_axes, run_sweep

    if args.quiet:
        progress.set_enabled(False)
    for option, value, low in (("--depth", args.depth, 1), ("-k", args.k, 1),
                               ("--concurrency", args.concurrency, 1)):
        if value is not None and value < low:
            raise OptionError(f"{option} must be >= {low}, not {value}")
    if not 0 < args.alpha < 1:
        raise OptionError(f"--alpha must be in (0, 1), not {args.alpha}")
    config = load_endpoint(args.endpoint)
    data = tomllib.loads(Path(args.endpoint).read_text(encoding="utf-8"))
    data["name"] = config.name
    axes = read_axes(config, args.grid)
    found = configurations(data, config, axes, sample=args.sample, seed=args.seed)
    folder = _check_output(args, [f"config-{c.number:02d}.{ext}" for c in found
                                  for ext in ("run", "toml")])
    queries = read_queries(args.queries)
    qrels = Qrels.read(args.qrels)
    store = None
    if args.store:
        from rankscope.store.db import open_store

        store = open_store(args.store)
    depth = args.depth or 10
    concurrency = args.concurrency or config.concurrency
    try:
        with progress.step_bar(len(found) * len(queries), f"sweep {config.name}",
                               unit="query", lines=True) as advance:
            sweep = run_sweep(
                found, queries, qrels, args.metrics, axes=axes, depth=depth, k=args.k,
                store=store, out_dir=folder, concurrency=concurrency, test=args.test,
                correction=args.correction, alpha=args.alpha,
                query_set_name=(args.queries if args.queries.startswith("irds:")
                                else Path(args.queries).stem),
                query_set_source=args.queries, advance=advance)
    except SearchRequestError as exc:
        raise IncompleteError(f"sweep stopped: {exc}") from None
    except ConfigError as exc:
        raise ConfigError(f"sweep: {exc}") from None
    finally:
        if store is not None:
            store.close()
    if args.sample is not None:
        size = 1
        for axis in axes:
            size *= len(axis.values)
        sweep.sample = {"of": size, "seed": args.seed}
    for message in sweep.warnings:
        warnings.warn(message, RankscopeWarning, stacklevel=1)
    if folder is not None:
        _write_outputs(folder, sweep)
    if args.format == "json":
        from rankscope.services.sweep import json_text

        sys.stdout.write(json_text(sweep))
    elif args.format == "csv":
        sys.stdout.write(csv_text(sweep))
    else:
        sys.stdout.write(table_text(sweep, args.qrels))
    return 0


def _write_outputs(folder: Path, sweep: Any) -> None:
    from rankscope.data._io import write_bytes
    from rankscope.judgments.io import write_judgments_frame
    from rankscope.services.sweep import json_text

    write_bytes(folder / "sweep.csv", csv_text(sweep).encode("utf-8"))
    write_bytes(folder / "sweep.json", json_text(sweep).encode("utf-8"))
    write_judgments_frame(sweep.holes, str(folder / "holes.csv"))


def _value(value: Any) -> str:
    from rankscope.search.variants import format_value

    return "-" if value is None else format_value(value)


def _rows(sweep: Any) -> tuple[list[str], list[list[str]]]:
    """The table's header and rows, best first (numbers as text, 4 decimals)."""
    keys = [a.key for a in sweep.axes]
    header = ["config", *keys]
    for metric in sweep.metrics:
        header += [metric, "interval", "vs base", "adj. p"]
    header += [f"holes@{sweep.k}"]
    rows = []
    for m in sweep.ranked():
        values = m.configuration.values
        row = [m.label + (" base" if m.configuration.base else ""),
               *[_value(values.get(k)) for k in keys]]
        for metric in sweep.metrics:
            mean = m.result.means.get(metric)
            low_high = m.result.interval.get(metric)
            c = sweep.comparison(m, metric)
            mark = "*" if c is not None and c.significant(sweep.alpha) else ""
            row += ["-" if mean is None else f"{mean:.4f}",
                    "-" if low_high is None else f"[{low_high[0]:.4f}, {low_high[1]:.4f}]",
                    "-" if c is None else f"{c.delta:+.4f}",
                    "-" if c is None or c.p_adjusted != c.p_adjusted
                    else f"{c.p_adjusted:.4g}{mark}"]
        row.append(f"{m.coverage.ungraded.height}/{m.coverage.positions}")
        rows.append(row)
    return header, rows


def table_text(sweep: Any, qrels: str) -> str:
    """The sweep as the default table, with the correction and the verdict stated."""
    header, rows = _rows(sweep)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    drawn = ("" if sweep.sample is None else f" (drawn at random from the grid's "
             f"{sweep.sample['of']:,}, seed {sweep.sample['seed']}, and the base)")
    lines = [f"sweep of {sweep.endpoint} ({sweep.kind}): {len(sweep.measured)} configurations"
             f"{drawn} x {sweep.n_queries} queries, depth {sweep.depth}, judgments {qrels}"]
    for row in [header, *rows]:
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    lines.append(f"{sweep.correction_said}; * = significant at {sweep.alpha:g}; intervals: 95% "
                 f"bootstrap of the mean; holes: unjudged results of the top {sweep.k} over "
                 "all its positions")
    lines.append(sweep.verdict())
    return "\n".join(lines) + "\n"


def csv_text(sweep: Any) -> str:
    """The table as CSV (full precision)."""
    import csv
    import io

    keys = [a.key for a in sweep.axes]
    header = ["config", "base", *keys]
    for metric in sweep.metrics:
        header += [metric, f"{metric} low", f"{metric} high", f"{metric} delta",
                   f"{metric} p", f"{metric} p adjusted"]
    header += ["holes", "positions", f"{sweep.metrics[0]} if holes relevant", "snapshot"]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for m in sweep.ranked():
        values = m.configuration.values
        row: list[Any] = [m.label, m.configuration.base,
                          *[_value(values.get(k)) for k in keys]]
        for metric in sweep.metrics:
            low_high = m.result.interval.get(metric) or (None, None)
            c = sweep.comparison(m, metric)
            row += [m.result.means.get(metric), *low_high,
                    *((None, None, None) if c is None else (c.delta, c.p_value, c.p_adjusted))]
        row += [m.coverage.ungraded.height, m.coverage.positions, m.if_relevant,
                m.snapshot_id]
        writer.writerow(["" if v is None else repr(v) if isinstance(v, float) else v
                         for v in row])
    return out.getvalue()
