"""The cost of reading back neutralised spreadsheet cells (issue 33) in CSV/TSV judgments.

``read_delimited`` takes the ``'`` the app's exports put before a formula cell
off again; a column is scanned for a leading ``'`` and only a column that has
one goes through the regular expression. This compares the reader with the
same read without that step (the code before), on a seeded grades file.

    python benchmarks/delimited_restore.py [--rows 2000000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import polars as pl

from rankscope.data import delimited


def grades_csv(rows: int, quoted: bool) -> bytes:
    """``query_id,doc_id,rater,grade`` rows (seed 7); ``quoted``: one in 1,000 ids starts
    with ``'=`` (what an export writes for a formula-like id)."""
    rng = np.random.default_rng(7)
    docs = [f"d{i}" for i in range(rows)]
    if quoted:
        for i in range(0, rows, 1000):
            docs[i] = "'=" + docs[i]
    frame = pl.DataFrame({"query_id": [f"q{i % 5000}" for i in range(rows)], "doc_id": docs,
                          "rater": ["r1"] * rows,
                          "grade": rng.integers(0, 4, rows).astype(str)})
    return frame.write_csv().encode()


def best(call, data: bytes, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        call(data)
        times.append(time.perf_counter() - started)
    return min(times)


def before(data: bytes) -> pl.DataFrame:
    raw = pl.read_csv(data, separator=",", infer_schema=False, comment_prefix="#")
    raw.null_count().sum_horizontal().item()
    return raw


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for quoted in (False, True):
        data = grades_csv(args.rows, quoted)
        old = best(before, data, args.repeat)
        new = best(lambda d: delimited.read_delimited(d, "csv", "grades.csv"), data,
                   args.repeat)
        label = "1 in 1,000 ids quoted" if quoted else "no quoted cell"
        print(f"{args.rows:,} rows, {label}: before {old:.3f} s, now {new:.3f} s, "
              f"ratio {new / old:.2f}")


if __name__ == "__main__":
    main()
