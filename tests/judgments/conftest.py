"""Helpers for the judgments tests: small tables written as tuples."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl
import pytest

from rankscope.judgments import Judgments


def judgments(
    rows: Sequence[tuple[str, str, str, float | None]], *, scale: str | None = None
) -> Judgments:
    """Judgments from ``(query, doc, rater, grade)`` tuples (None = not graded)."""
    frame = pl.DataFrame(
        {
            "query_id": [r[0] for r in rows],
            "doc_id": [r[1] for r in rows],
            "rater": [r[2] for r in rows],
            "grade": [None if r[3] is None else float(r[3]) for r in rows],
        },
        schema={"query_id": pl.String, "doc_id": pl.String, "rater": pl.String,
                "grade": pl.Float64},
    )
    return Judgments(frame, scale=scale)


@pytest.fixture
def make_judgments():
    return judgments
