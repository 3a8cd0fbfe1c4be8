"""How well each click model recovers what a click log was simulated from, and how fast.

Two seeded worlds from the tests' design (tests/judgments/click_simulation.py:
20 queries x 8 documents, 600 sessions each, 70% of them on a fixed
"production" ranking unrelated to relevance, 30% shuffled; 96,000 results
shown), one drawn from PBM (examination 1/r^0.9), one from SDBN; and the demo
collection's click log (scripts/make_demo_clicks.py) against the human grades it
was drawn from. For each model: the mean and worst per-query Kendall tau
between its estimates and the truth (attractiveness for the PBM world, a * s for
the SDBN world), and the time to fit (median of 3, after one warm-up).

Run: ``python benchmarks/implicit_recovery.py`` (the figures are in
docs/judgments.md, "Implicit judgments").
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl
from scipy.stats import kendalltau

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "judgments"))

from click_simulation import GAMMA, design  # noqa: E402

from rankscope.judgments.clicks import MODELS, read_click_log, simulate_clicks  # noqa: E402


def _timed(model: str, log) -> tuple[object, float]:
    fit = MODELS[model](log)
    times = []
    for _ in range(3):
        start = time.perf_counter()
        fit = MODELS[model](log)
        times.append(time.perf_counter() - start)
    return fit, statistics.median(times)


def world(kind: str) -> None:
    pages, truth = design(seed=1 if kind == "pbm" else 2)
    log = simulate_clicks(pages, truth, model=kind, examination=GAMMA, seed=3 if kind == "pbm"
                          else 4)
    column = "attractiveness" if kind == "pbm" else "relevance"
    print(f"\n{kind.upper()} world: {log}")
    print(f"{'model':6} {'mean tau':>9} {'worst':>7} {'fit (s)':>8}")
    for model in MODELS:
        fit, seconds = _timed(model, log)
        joined = fit.pairs.join(truth, on=["query_id", "doc_id"])  # type: ignore[attr-defined]
        taus = [kendalltau(g.get_column("value"), g.get_column(column)).statistic
                for _, g in joined.group_by("query_id")]
        print(f"{model:6} {np.mean(taus):9.3f} {np.min(taus):7.3f} {seconds:8.3f}")


def demo() -> None:
    data = ROOT / "src" / "rankscope" / "demo_data"
    log = read_click_log(data / "clicks.csv.gz")
    grades = pl.read_csv(data / "qrels.txt", separator=" ", has_header=False,
                         new_columns=["query_id", "it", "doc_id", "grade"],
                         schema_overrides={"query_id": pl.String, "doc_id": pl.String})
    print(f"\ndemo log: {log}")
    print("Kendall tau-b of each model's estimate with the human grade, pairs shown >= N times")
    print(f"{'model':6} {'N=10':>14} {'N=50':>14}")
    for model in MODELS:
        fit, _ = _timed(model, log)
        cells = []
        for n in (10, 50):
            kept = fit.pairs.filter(pl.col("impressions") >= n)  # type: ignore[attr-defined]
            both = kept.drop_nulls("value").join(grades, on=["query_id", "doc_id"])
            tau = kendalltau(both.get_column("value"), both.get_column("grade")).statistic
            cells.append(f"{tau:.3f} ({both.height})")
        print(f"{model:6} {cells[0]:>14} {cells[1]:>14}")


if __name__ == "__main__":
    world("pbm")
    world("sdbn")
    demo()
