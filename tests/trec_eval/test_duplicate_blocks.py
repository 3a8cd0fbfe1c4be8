"""trec_eval's duplicate rule when the run's query blocks are not in byte order.

Such a file is ranked block by block (``Ranking.blocks``) and its duplicate
proof starts as soon as the keys are known; the outcome must not depend on
the order of the blocks. The in-order file is the reference (its path is the
one the golden outputs check).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .util import ours

QRELS = "q2 0 a 1\nq2 0 b 0\nq10 0 c 1\nq10 0 d 2\nq3 0 e 1\n"


def _run(blocks: list[str], dup: str | None) -> str:
    rows = {
        "q10": ["c", "x", "d", "y"],
        "q2": ["a", "z", "b"],
        "q3": ["e", "w"],
    }
    lines = []
    for q in blocks:
        docs = list(rows[q])
        if q == dup:
            docs.insert(2, docs[0])  # the same document twice in this query
        lines += [f"{q} Q0 {d} {i} {10 - i}.0 r" for i, d in enumerate(docs)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("dup", [None, "q10", "q2", "q3"])
@pytest.mark.parametrize("flags", [[], ["-q"], ["-c", "-q"]])
def test_block_order_changes_nothing(tmp_path: Path, dup: str | None, flags: list[str]) -> None:
    qrels = tmp_path / "qrels"
    qrels.write_text(QRELS)
    in_order, shuffled = tmp_path / "in_order", tmp_path / "shuffled"
    in_order.write_text(_run(["q10", "q2", "q3"], dup))  # byte order: q10 < q2 < q3
    shuffled.write_text(_run(["q3", "q2", "q10"], dup))
    expected = ours([*flags, str(qrels), str(in_order)])
    got = ours([*flags, str(qrels), str(shuffled)])
    assert (got.status, got.stdout, got.stderr) == (expected.status, expected.stdout,
                                                     expected.stderr)
    if dup is not None:
        assert "duplicate docs" in expected.stderr
