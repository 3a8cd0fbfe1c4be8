"""Regenerate the bundled sample data (seeded, so the files never change).

A small TREC-style collection: 50 topics, graded judgments 0-3 from pooling,
and two runs ("bm25" and "bm25_rerank") of 100 documents per topic. The
reranked run is better on average but not on every topic, so the comparison
is interesting. Run: python scripts/make_sample_data.py
"""

from __future__ import annotations

import random
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "src" / "rankscope" / "sample_data"


def main() -> None:
    rng = random.Random(20261121)
    topics = [str(t) for t in range(401, 451)]
    qrels_lines: list[str] = []
    runs: dict[str, list[str]] = {"bm25": [], "bm25_rerank": []}
    for t in topics:
        docs = [f"LA{rng.randint(10000, 99999):05d}-{rng.randint(1, 400):04d}" for _ in range(400)]
        docs = list(dict.fromkeys(docs))
        grades = {d: max(0, min(3, int(rng.gauss(0.2, 1.1)))) for d in docs}
        pool: set[str] = set(rng.sample(docs, k=min(len(docs), rng.randint(10, 40))))
        for name, skill in (("bm25", 0.9), ("bm25_rerank", 1.3 + rng.uniform(-0.6, 0.4))):
            scored = []
            for d in docs:
                signal = grades[d] * skill + rng.gauss(0, 1.4)
                scored.append((round(signal + 10, 4), d))
            scored.sort(key=lambda x: (-x[0], x[1]))
            pool.update(d for _, d in scored[: rng.randint(15, 40)])  # TREC-style pooling
            for rank, (score, d) in enumerate(scored[:100], start=1):
                runs[name].append(f"{t} Q0 {d} {rank} {score:.4f} {name}")
        for d in sorted(pool):
            qrels_lines.append(f"{t} 0 {d} {grades[d]}")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "qrels.txt").write_text("\n".join(qrels_lines) + "\n")
    (OUT / "run_a.txt").write_text("\n".join(runs["bm25"]) + "\n")
    (OUT / "run_b.txt").write_text("\n".join(runs["bm25_rerank"]) + "\n")


if __name__ == "__main__":
    main()
