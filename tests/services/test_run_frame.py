"""A snapshot's run handed to the dashboards as columns is the run its TREC export holds:
the same rows, order and scores as writing :func:`trec_lines` and reading the text back,
ties (equal engine scores) included; a document twice in a query refused alike."""

from __future__ import annotations

import random

import polars as pl
import pytest

from rankscope.data.tables import Run
from rankscope.errors import DuplicateDocumentError
from rankscope.services.snapshot_hits import run_from_lines
from rankscope.services.snapshot_runs import engine_run_frame, frame_lines, trec_lines


def _snapshot(seed: int) -> list[tuple[str, list[tuple[str, float | None]]]]:
    """Queries (some without hits) of random lengths, engine scores tied, missing or rising,
    ids sharing prefixes."""
    rng = random.Random(seed)
    out = []
    for q in range(rng.randint(1, 30)):
        docs = rng.sample(range(40), rng.choice([0, 1, 3, 10, 25]))
        hits = [(f"d{d}", rng.choice([None, 1.0, 2.5, float(rng.randint(0, 3))])) for d in docs]
        out.append((f"q{q}" if q % 3 else f"q{q}0", hits))
    return out


@pytest.mark.parametrize("seed", range(25))
@pytest.mark.parametrize("depth", [1, 10, 100])
def test_the_columns_are_the_text_read_back(seed, depth):
    ranked = _snapshot(seed)
    lines = trec_lines(ranked, depth, "my run")  # the export's path: text
    hits = pl.DataFrame([(q, d) for q, hs in ranked for d, _ in hs], orient="row",
                        schema={"query_id": pl.String, "doc_id": pl.String})
    frame = engine_run_frame(hits, depth)
    text = run_from_lines(lines, "my_run").frame
    assert frame.schema == text.schema
    assert frame.rows() == text.rows()  # same rows in the same order, scores exactly equal
    assert frame_lines(frame, "my run") == lines
    # and the scores follow the engine's order, strictly down each query
    for _, group in frame.group_by("query_id", maintain_order=True):
        scores = group.get_column("score").to_list()
        assert scores == sorted(scores, reverse=True) and len(set(scores)) == len(scores)


def test_an_empty_snapshot_is_an_empty_run():
    hits = pl.DataFrame(schema={"query_id": pl.String, "doc_id": pl.String})
    frame = engine_run_frame(hits, 10)
    assert frame.height == 0 and frame.columns == ["query_id", "doc_id", "score"]
    assert frame_lines(frame, "x") == trec_lines([], 10, "x") == []


def test_a_document_twice_in_a_query_is_refused_both_ways():
    ranked = [("q1", [("a", 2.0), ("b", 1.0), ("a", 0.5)])]
    hits = pl.DataFrame({"query_id": ["q1"] * 3, "doc_id": ["a", "b", "a"]})
    with pytest.raises(DuplicateDocumentError):
        run_from_lines(trec_lines(ranked, 10, "r"), "r")
    with pytest.raises(DuplicateDocumentError):
        Run(engine_run_frame(hits, 10), name="r", source="r")
