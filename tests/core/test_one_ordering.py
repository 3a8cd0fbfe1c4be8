"""Ordering a ranking is done one way: every tie rule means the same in evaluation,
coverage, rank similarity, fusion and the TREC run writer (issue 28, section 2).

The expected orders are written from the definitions: queries in byte order, score
descending, then equal scores by document id descending (``trec``, trec_eval's rule),
in the file's order (``input``) or by document id ascending (``docid_asc``).
"""

from __future__ import annotations

import random
from pathlib import Path

import polars as pl
import pytest

import rankscope
from rankscope.cli.main import main
from rankscope.cli.parsing import TIE_CHOICES
from rankscope.compare.rank_similarity import pair_rankings
from rankscope.data import tie_order
from rankscope.data.id_codes import byte_order_codes
from rankscope.data.ranking_order import TIE_RULES, ranked
from rankscope.data.tables import Run
from rankscope.data.trec_writer import format_trec_run
from rankscope.errors import OptionError
from rankscope.fusion.combine import normalize
from rankscope.judgments.coverage import coverage, ranked_top_k

# One query, file order a, c, b (all 1.0), then d (0.5).
RUN = Run(pl.DataFrame({"query_id": ["q"] * 4, "doc_id": ["a", "c", "b", "d"],
                        "score": [1.0, 1.0, 1.0, 0.5]}))
EXPECTED = {"trec": ["c", "b", "a", "d"], "input": ["a", "c", "b", "d"],
            "docid_asc": ["a", "b", "c", "d"]}


@pytest.mark.parametrize("ties", TIE_RULES)
def test_every_reader_of_rankings_orders_ties_the_same(ties: str) -> None:
    want = EXPECTED[ties]
    # evaluation: only "a" is relevant, so RR = 1 / (a's rank)
    result = rankscope.evaluate({"q": {"a": 1}}, RUN, ["RR"], ties=ties)
    assert result["RR"] == pytest.approx(1 / (want.index("a") + 1))
    # coverage: the first two positions, graded or not
    top = ranked_top_k(RUN, 2, ties=ties)
    assert top.get_column("doc_id").to_list() == want[:2]
    assert top.get_column("rank").to_list() == [1, 2]
    graded = coverage({"q": {want[0]: 1}}, RUN, 2, ties=ties)
    assert graded.ungraded.get_column("doc_id").to_list() == [want[1]]
    # rank similarity: the ranks each run's documents get
    pairs, _, _ = pair_rankings(RUN, RUN, ties=ties)  # type: ignore[arg-type]
    ranks = pairs.ranked_a
    assert ranks is not None
    assert ranks.sort("rank").get_column("doc_id").to_list() == want
    # fusion: the rank normalization scores 1 - (rank - 1) / n
    scores = dict(normalize(RUN, "rank", ties=ties).frame.select("doc_id", "score").iter_rows())
    assert sorted(scores, key=lambda d: -scores[d]) == want
    # the TREC writer numbers ranks in the same order
    lines = format_trec_run(RUN.frame, "t", ties=ties).decode().splitlines()  # type: ignore[arg-type]
    assert [line.split()[2] for line in lines] == want
    assert [line.split()[3] for line in lines] == ["1", "2", "3", "4"]


def _reference(rows: list[tuple[str, str, float]], ties: str) -> list[int]:
    """The definition, one row at a time: file positions in rank order."""
    def key(i: int) -> tuple[bytes, float, object]:
        q, d, s = rows[i]
        raw = d.encode()
        tie: object = i if ties == "input" else (
            bytes(255 - b for b in raw) + b"\xff" if ties == "trec" else raw)
        return q.encode(), -s, tie

    return sorted(range(len(rows)), key=key)


@pytest.mark.parametrize("ties", TIE_RULES)
@pytest.mark.parametrize("seed", range(6))
def test_the_one_ordering_is_the_definition(ties: str, seed: int) -> None:
    # shuffled and grouped files, many ties (few distinct scores, -0.0 beside 0.0), ids
    # whose byte order is not their numeric order, unicode ids
    rng = random.Random(seed)
    docs = [f"d{n}" for n in range(40)] + ["é", "e", "Z", "z10", "z9"]
    rows = []
    for q in ["q10", "q9", "Q1", "q1"][: rng.randint(1, 4)]:
        for d in rng.sample(docs, rng.randint(1, 25)):
            rows.append((q, d, rng.choice([0.0, -0.0, 0.5, 1.0, 1.0, 2.5])))
    if seed % 2:
        rng.shuffle(rows)
    frame = pl.DataFrame(rows, schema={"query_id": pl.String, "doc_id": pl.String,
                                       "score": pl.Float64}, orient="row")
    want = [rows[i][:2] for i in _reference(rows, ties)]
    got = ranked(frame, ties)  # type: ignore[arg-type]
    assert list(zip(got.get_column("query_id"), got.get_column("doc_id"), strict=True)) == want
    # ranks restart at 1 in each query
    seen: dict[str, int] = {}
    for q, r in zip(got.get_column("query_id"), got.get_column("rank"), strict=True):
        seen[q] = seen.get(q, 0) + 1
        assert r == seen[q]
    top = ranked(frame, ties, depth=3)  # type: ignore[arg-type]
    assert top.height == sum(min(3, n) for n in seen.values())


TIED_SHAPES = {
    # ids that fit: sorted as integer codes of the ids (byte_order_codes), few pairs or many
    "short runs": "coded", "prefixes of each other": "coded",
    "one long run": "coded", "a repeated id": "coded",
    "prefixes of each other, one long run": "coded", "ids of 9 to 16 bytes": "coded",
    # or as strings: longer than 16 bytes, more than 14 varying bytes, a NUL byte
    "long ids": "strings", "ids differing in many places": "strings",
    "a NUL in an id": "strings",
    # ids that do not fit, few pairs of tied rows: ordered by counting (every pair compared)
    "short runs of long ids": "counted",
}
PREFIXES = ["", "a", "ab", "abc", "a\x01", "b", "\x01", "ab\x7f", "abé", "\x7f"]


def _tied_rows(shape: str, rng: random.Random) -> list[tuple[str, str, float]]:
    """A run of tied rows whose ids have the shape named (see TIED_SHAPES)."""
    if shape == "short runs":
        rows = []
        for q in ("q1", "q2", "q3"):
            ids = rng.sample([f"d{n}" for n in range(500)] + ["é", "Z", "z10", "z9"], 60)
            for i, d in enumerate(ids):
                rows.append((q, d, float(60 - i // rng.randint(2, 6))))
        return rows
    if shape == "short runs of long ids":
        rows = []
        for q in ("q1", "q2"):
            ids = rng.sample([f"https://example.org/{n}/é" for n in range(300)] + ["Z" * 17], 40)
            for i, d in enumerate(ids):
                rows.append((q, d, float(40 - i // rng.randint(2, 4))))
        return rows
    if shape == "prefixes of each other":  # a prefix goes first; "" and one-byte ids
        return [("q", d, 1.0) for d in PREFIXES] + [("q2", d, 2.0) for d in reversed(PREFIXES)]
    if shape == "a repeated id":
        return [("q", d, 1.0) for d in ["b", "a", "c", "a", "d"]] + [("q", "e", 0.5)]
    # one run of 300 tied rows (89,700 pairs), then an untied row
    pool = {
        "one long run": lambda n: f"doc{n}",
        "prefixes of each other, one long run": lambda n: f"ab{n}",
        "ids of 9 to 16 bytes": lambda n: f"en{n % 97:02d}-{n * 997:08d}",  # 10 varying
        "long ids": lambda n: f"https://www.example.org/wiki/section-{n % 17}/page-{n:08d}.html",
        "ids differing in many places": lambda n: "".join(
            rng.choice("abcXYZ019é") for _ in range(rng.randint(9, 16))),
        "a NUL in an id": lambda n: f"d{n}" + "\x00" * (n % 3),
    }[shape]
    ids = [pool(n) for n in rng.sample(range(100_000), 300)]
    if shape == "prefixes of each other, one long run":
        ids += PREFIXES
    return [("q", d, 1.0) for d in ids] + [("q", "last", 0.5)]


def codes_tried(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """A list that grows at each call of the tie step's ``byte_order_codes``: True when
    it gave codes, False when the ids took the strings' way (its answer unchanged)."""
    coded: list[bool] = []

    def spy(ids: pl.Series) -> object:
        found = byte_order_codes(ids)
        coded.append(found is not None)
        return found

    monkeypatch.setattr(tie_order, "byte_order_codes", spy)
    return coded


@pytest.mark.parametrize("ties", ["trec", "docid_asc"])
@pytest.mark.parametrize("shape", list(TIED_SHAPES))
def test_tied_runs_are_ordered_by_id_whether_counted_or_sorted(ties: str, shape: str) -> None:
    # Runs of tied rows are put in id order by comparing every pair of a run when the
    # pairs are few; by a sort when they are many (a run of 300 ties: 89,700 pairs) or
    # when one run holds an id twice, of integer codes of the ids when they fit in 64
    # bits, else of the strings; each way must give the definition's order.
    rng = random.Random(len(shape) + len(ties))
    rows = _tied_rows(shape, rng)
    rng.shuffle(rows)
    frame = pl.DataFrame(rows, schema={"query_id": pl.String, "doc_id": pl.String,
                                       "score": pl.Float64}, orient="row")
    want = [rows[i][:2] for i in _reference(rows, ties)]
    got = ranked(frame, ties)  # type: ignore[arg-type]
    assert list(zip(got.get_column("query_id"), got.get_column("doc_id"), strict=True)) == want


@pytest.mark.parametrize("shape", list(TIED_SHAPES))
def test_each_tied_shape_takes_the_path_it_names(shape: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # the test above covers every way of ordering only if each shape takes the way named
    coded = codes_tried(monkeypatch)
    rows = _tied_rows(shape, random.Random(len(shape) + len("trec")))
    frame = pl.DataFrame(rows, schema={"query_id": pl.String, "doc_id": pl.String,
                                       "score": pl.Float64}, orient="row")
    ranked(frame, "trec")
    # (ids that do not fit are tried once, then counted or sorted as strings)
    assert coded and set(coded) == {TIED_SHAPES[shape] == "coded"}


@pytest.mark.parametrize("ties", ["trec", "docid_asc"])
@pytest.mark.parametrize("way", ["strings", "coded", "too many to code"])
def test_many_runs_some_in_order_some_swapped_some_sorted(
        ties: str, way: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Several queries, each with runs of 2 tied rows (swapped or already in order) and
    # longer runs (sorted, or already in order), beside untied rows: only some tied rows
    # are moved, so the ids of the runs to sort are a part of those gathered. With more
    # tied rows than are coded (CODED_UP_TO), the strings are sorted without trying codes.
    if way == "too many to code":
        monkeypatch.setattr(tie_order, "CODED_UP_TO", 64)
    rng = random.Random(len(way) + len(ties))
    name = (lambda n: f"https://example.org/{n:07d}/page") if way == "strings" else \
        (lambda n: f"d{n}")
    rows = []
    for q in ("q2", "q10", "q1"):
        score = 1000.0
        for _ in range(40):
            score -= 1.0
            ids = [name(n) for n in rng.sample(range(10**6), rng.choice([1, 1, 2, 2, 3, 9, 40]))]
            if rng.random() < 0.3:  # already in the rule's order: nothing to move
                ids.sort(reverse=ties == "trec")
            rows += [(q, d, score) for d in ids]
    frame = pl.DataFrame(rows, schema={"query_id": pl.String, "doc_id": pl.String,
                                       "score": pl.Float64}, orient="row")
    want = [rows[i][:2] for i in _reference(rows, ties)]
    got = ranked(frame, ties)  # type: ignore[arg-type]
    assert list(zip(got.get_column("query_id"), got.get_column("doc_id"), strict=True)) == want


def test_a_tie_rule_is_checked_in_one_place() -> None:
    assert TIE_CHOICES == TIE_RULES  # the command line offers exactly the library's rules
    for call in (lambda: ranked(RUN.frame, "random"),  # type: ignore[arg-type]
                 lambda: ranked_top_k(RUN, 2, ties="random"),  # type: ignore[arg-type]
                 lambda: pair_rankings(RUN, RUN, ties="random"),  # type: ignore[arg-type]
                 lambda: normalize(RUN, ties="random"),  # type: ignore[arg-type]
                 lambda: rankscope.evaluate({"q": {"a": 1}}, RUN, "P@1", ties="random")):  # type: ignore[arg-type]
        with pytest.raises(OptionError, match="ties must be one of trec, input, docid_asc"):
            call()


@pytest.mark.parametrize("ties", TIE_RULES)
def test_every_command_offers_every_tie_rule(ties: str, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run.txt"
    run.write_text("q Q0 a 1 1.0 t\nq Q0 c 2 1.0 t\nq Q0 b 3 1.0 t\nq Q0 d 4 0.5 t\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(f"q 0 {EXPECTED[ties][0]} 1\n")
    fused = tmp_path / "fused.txt"
    # RRF of a run with itself keeps its order: 2 / (60 + rank)
    assert main(["fuse", str(run), str(run), "--method", "rrf", "--ties", ties,
                 "-o", str(fused)]) == 0
    assert [line.split()[2] for line in fused.read_text().splitlines()] == EXPECTED[ties]
    assert main(["coverage", str(qrels), str(run), "-k", "2", "--ties", ties, "-f", "json",
                 "--ungraded", "-"]) == 0
    lines = capsys.readouterr().out.splitlines()  # the ungraded pairs of the top 2, as CSV
    assert lines == ["query_id,doc_id,rank,grade", f"q,{EXPECTED[ties][1]},2,"]
    assert main(["similarity", str(run), str(run), "--ties", ties, "-f", "json"]) == 0
