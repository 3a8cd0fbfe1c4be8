"""Grading a snapshot kept in the store: a real snapshot taken by the embedded engine on a
small corpus, graded through the local chat-completions server."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from rankscope.cli.main import main
from rankscope.errors import FileAccessError, OptionError, StoreError
from rankscope.llm_judge.api import judge

from .conftest import Reply

CORPUS = {
    "cat-food": ("Feeding your cat", "Cats need meat: wet food, dry food and fresh water.",
                 "pets"),
    "cat-sleep": ("Why cats sleep so much", "A cat sleeps twelve to sixteen hours a day.",
                  "pets"),
    "cat-toys": ("Toys for indoor cats", "Wand toys and balls keep a cat busy indoors.",
                 "shop"),
    "dog-food": ("Feeding your dog", "Dogs eat meat and some vegetables; food for dogs.",
                 "pets"),
    "fish-food": ("Feeding aquarium fish", "Flakes are food for most fish; keep the cats away.",
                  "pets"),
    "weather": ("Rain tomorrow", "Rain is expected; the food market is closed.", "news"),
}
QUERIES = [("q1", "cat food", "Wants to know what to feed a pet cat."),
           ("q2", "cats sleep", "Wants to know how long cats sleep and why.")]
DEPTH = 4


def _run_file(path: Path) -> dict[str, list[str]]:
    """query -> documents in rank order, read from the TREC run the snapshot wrote."""
    ranked: dict[str, list[tuple[int, str]]] = {}
    for line in path.read_text().splitlines():
        q, _, d, rank, _, _ = line.split()
        ranked.setdefault(q, []).append((int(rank), d))
    return {q: [d for _, d in sorted(v)] for q, v in ranked.items()}


@pytest.fixture
def snapshot(tmp_path) -> dict[str, Path]:
    """A snapshot named 'pets' of the embedded engine at depth 4, in a store."""
    (tmp_path / "corpus.jsonl").write_text("".join(
        json.dumps({"id": d, "title": t, "text": f"[[{d}]] {x}", "url": f"https://pets.test/{d}",
                    "section": s}) + "\n"
        for d, (t, x, s) in CORPUS.items()))
    (tmp_path / "pets.toml").write_text(
        'kind = "embedded"\nname = "pets"\ncorpus = "corpus.jsonl"\nindex = "pets.sqlite"\n'
        'fields = ["title", "text"]\ntitle_field = "title"\nsnippet_field = "text"\n'
        'url_field = "url"\n')
    (tmp_path / "queries.tsv").write_text(
        "query_id\ttext\tneed\n" + "".join(f"{q}\t{t}\t{n}\n" for q, t, n in QUERIES))
    store, run = tmp_path / "snapshots.sqlite", tmp_path / "pets.txt"
    assert main(["snapshot", str(tmp_path / "pets.toml"), str(tmp_path / "queries.tsv"),
                 "--depth", str(DEPTH), "--store", str(store), "-o", str(run), "--quiet"]) == 0
    ranked = _run_file(run)
    assert all(len(v) == DEPTH for v in ranked.values())  # the corpus is small but enough
    return {"store": store, "run": run, "dir": tmp_path}


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _asked(server) -> list[tuple[str, str]]:
    """(user message, document marker) of every request, in arrival order."""
    out = []
    for body in server.bodies:
        text = body["messages"][-1]["content"]
        out.append((text, text.split("[[", 1)[1].split("]]", 1)[0]))
    return out


def test_a_snapshot_top_k_is_graded_with_the_stored_queries_needs_and_display_fields(
        server, snapshot, fast_sleep):
    server.script = lambda doc, n, body: Reply('{"grade": 2}')
    out = snapshot["dir"] / "grades.csv"
    result = judge(endpoint=server.url, model="tiny", store=snapshot["store"],
                   snapshot="pets", depth=3, output=out, sleep=fast_sleep)
    ranked = _run_file(snapshot["run"])
    expected = {(q, d) for q, docs in ranked.items() for d in docs[:3]}
    got = {(r["query_id"], r["doc_id"]) for r in _rows(out)}
    assert got == expected and server.count == len(expected) == 6
    assert result.usage.graded == 6
    # what the model saw: the query, the need, and the hit as the store kept it
    for text, doc in _asked(server):
        title, body, section = CORPUS[doc]
        query = next(q for q in QUERIES if (q[0], doc) in expected
                     and q[1] in text)
        assert f"Query: {query[1]}\n" in text
        assert f"What the searcher wants: {query[2]}" in text
        passage = text.split("<<<\n", 1)[1].split("\n>>>", 1)[0]
        assert passage == (f"{title}\n\n[[{doc}]] {body}\n\nurl: https://pets.test/{doc}"
                           f"\n\nsection: {section}")


def test_only_the_holes_or_only_the_graded_and_a_sample(server, snapshot, fast_sleep):
    server.script = lambda doc, n, body: Reply('{"grade": 1}')
    ranked = _run_file(snapshot["run"])
    top = [(q, d) for q, docs in ranked.items() for d in docs]
    judged = top[::3]  # every third result of the top 4 has a human grade
    qrels = snapshot["dir"] / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} 1\n" for q, d in judged) + "q9 0 zz 2\n")
    holes = judge(endpoint=server.url, model="tiny", store=snapshot["store"],
                  snapshot="pets", depth=DEPTH, holes_of=qrels, sleep=fast_sleep)
    assert {(r["query_id"], r["doc_id"]) for r in holes.rows.to_dicts()} == set(top) - set(
        judged)
    assert server.count == len(top) - len(judged)
    # human grades from the judgments format: a result seen but left ungraded is a hole too
    grades = snapshot["dir"] / "grades.csv"
    grades.write_text("query_id,doc_id,rater,grade\n"
                      f"{top[0][0]},{top[0][1]},ann,2\n{top[1][0]},{top[1][1]},ann,\n")
    server.reset()
    by_people = judge(endpoint=server.url, model="tiny", store=snapshot["store"],
                      snapshot="pets", depth=DEPTH, holes_of=grades, dry_run=True)
    assert by_people.plan.pairs == len(top) - 1 and server.count == 0
    graded = judge(endpoint=server.url, model="tiny", store=snapshot["store"],
                   snapshot="pets", depth=DEPTH, graded_in=qrels, sleep=fast_sleep)
    assert {(r["query_id"], r["doc_id"]) for r in graded.rows.to_dicts()} == set(judged)
    server.reset()
    sample = judge(endpoint=server.url, model="tiny", store=snapshot["store"],
                   snapshot="pets", depth=DEPTH, sample=3, seed=7, concurrency=1,
                   sleep=fast_sleep)
    chosen = [(r["query_id"], r["doc_id"]) for r in sample.rows.to_dicts()]
    assert len(chosen) == 3 == server.count and set(chosen) <= set(top)
    assert chosen == sorted(chosen, key=top.index)  # asked in the ranked order
    again = judge(endpoint=server.url, model="tiny", store=snapshot["store"],
                  snapshot="pets", depth=DEPTH, sample=3, seed=7, dry_run=True)
    assert again.plan.pairs == 3


def test_files_replace_the_snapshot_texts_and_needs_come_from_a_file(
        server, snapshot, fast_sleep, tmp_path):
    server.script = lambda doc, n, body: Reply('{"grade": 3}')
    needs = tmp_path / "needs.tsv"
    needs.write_text("query_id\tneed\nq1\tA recipe for cat food.\n")
    judge(endpoint=server.url, model="tiny", store=snapshot["store"], snapshot="pets",
          depth=1, docs=snapshot["dir"] / "corpus.jsonl", doc_fields=["text"], needs=needs,
          sleep=fast_sleep)
    by_query = {}
    for body in server.bodies:
        text = body["messages"][-1]["content"]
        by_query["q1" if "Query: cat food" in text else "q2"] = text
    # documents from the corpus file (the text field only), needs from the file first
    assert "What the searcher wants: A recipe for cat food." in by_query["q1"]
    assert f"What the searcher wants: {QUERIES[1][2]}" in by_query["q2"]
    for text in by_query.values():
        passage = text.split("<<<\n", 1)[1].split("\n>>>", 1)[0]
        doc = passage.split("[[", 1)[1].split("]]", 1)[0]
        assert passage == f"[[{doc}]] {CORPUS[doc][1]}"


def test_the_same_document_is_shown_as_each_query_saw_it(server, tmp_path, fast_sleep):
    """A highlighted snippet depends on the query: each pair gets its own."""
    from rankscope.search.types import Hit, QueryItem
    from rankscope.store.db import open_store
    from rankscope.store.snapshot_writes import finish_snapshot, record_query, start_snapshot

    with open_store(tmp_path / "s.sqlite") as store:
        sid, rows = start_snapshot(
            store, name="hl", endpoint_name="es", kind="elasticsearch", config={},
            config_hash="0" * 64, query_set_name="qs", query_set_source=None,
            queries=[QueryItem("a", "red shoes", need="Running shoes in red."),
                     QueryItem("b", "blue shoes")], depth=2, engine_version="8.15.0")
        for qid, snippet in (("a", "the <em>red</em> one [[s1]]"),
                             ("b", "comes in <em>blue</em> [[s1]]")):
            record_query(store, sid, rows[qid], request={}, latency_ms=1.0, raw_sha256="x",
                         raw=None, total_hits=1,
                         hits=[Hit("s1", 2.0, title="Trainer", snippet=snippet,
                                      image="https://img.test/s1.png",
                                      fields={"price": 49.5, "sizes": [40, 41]})])
        finish_snapshot(store, sid, "complete")
    server.script = lambda doc, n, body: Reply('{"grade": 1}')
    judge(endpoint=server.url, model="tiny", store=tmp_path / "s.sqlite", snapshot=str(sid),
          concurrency=1, sleep=fast_sleep)
    passages = sorted(b["messages"][-1]["content"].split("<<<\n", 1)[1].split("\n>>>")[0]
                      for b in server.bodies)
    assert passages == [
        "Trainer\n\ncomes in <em>blue</em> [[s1]]\n\nprice: 49.5\n\nsizes: 40, 41",
        "Trainer\n\nthe <em>red</em> one [[s1]]\n\nprice: 49.5\n\nsizes: 40, 41",
    ]
    server.reset()
    judge(endpoint=server.url, model="tiny", store=tmp_path / "s.sqlite", snapshot="hl",
          doc_fields=["title", "image"], pairs=[("a", "s1")], sleep=fast_sleep)
    passage = server.bodies[0]["messages"][-1]["content"].split("<<<\n", 1)[1]
    assert passage.startswith("Trainer\n\nimage: https://img.test/s1.png\n>>>")


def test_snapshots_that_are_missing_or_not_complete(server, snapshot, tmp_path):
    from rankscope.search.types import QueryItem
    from rankscope.store.db import open_store
    from rankscope.store.snapshot_writes import finish_snapshot, start_snapshot

    base = dict(endpoint=server.url, model="tiny", dry_run=True)
    with pytest.raises(StoreError, match="no snapshot 'nope'"):
        judge(store=snapshot["store"], snapshot="nope", **base)
    with pytest.raises(FileAccessError, match="no such snapshot store"):
        judge(store=tmp_path / "missing.sqlite", snapshot="pets", **base)
    assert not (tmp_path / "missing.sqlite").exists()  # not created by looking
    with pytest.raises(OptionError, match="needs its store"):
        judge(snapshot="pets", **base)
    with open_store(snapshot["store"]) as store:
        sid, _ = start_snapshot(store, name="half", endpoint_name="pets", kind="embedded",
                                config={}, config_hash="1" * 64, query_set_name="qs",
                                query_set_source=None, queries=[QueryItem("q1", "cat food")],
                                depth=4, engine_version=None)
        finish_snapshot(store, sid, "incomplete")
    with pytest.raises(OptionError, match=r"#\d+ half is incomplete .*--partial"):
        judge(store=snapshot["store"], snapshot="half", **base)
    assert judge(store=snapshot["store"], snapshot="half", partial=True, **base).plan.pairs == 0
    assert server.count == 0


def test_the_command_line_with_a_store(server, snapshot, capsys, monkeypatch):
    server.script = lambda doc, n, body: Reply('{"grade": 2}')
    ranked = _run_file(snapshot["run"])
    qrels = snapshot["dir"] / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {docs[0]} 3\n" for q, docs in ranked.items()))
    out = snapshot["dir"] / "llm.csv"
    base = ["judge", "--endpoint", server.url, "--model", "tiny", "--store",
            str(snapshot["store"]), "--snapshot", "pets", "-o", str(out)]
    assert main([*base, "--depth", "2", "--holes-of", str(qrels), "--dry-run"]) == 0
    text = capsys.readouterr().out
    assert "pairs 2:" in text and "0 in the cache, 2 calls" in text and server.count == 0
    assert main([*base, "--depth", "2", "--holes-of", str(qrels)]) == 0
    assert server.count == 2
    # the graded ones too, into the same file: the overlap for the agreement report
    assert main([*base, "--depth", "2", "--graded-in", str(qrels), "--human", str(qrels)]) == 0
    text = capsys.readouterr().out
    assert server.count == 4 and "2 results graded by both" in text
    assert {(r["query_id"], r["doc_id"]) for r in _rows(out)} == {
        (q, d) for q, docs in ranked.items() for d in docs[:2]}
    # the store from the environment
    monkeypatch.setenv("RANKSCOPE_STORE", str(snapshot["store"]))
    assert main(["judge", "--endpoint", server.url, "--model", "tiny", "--snapshot", "#1",
                 "--dry-run"]) == 0
    assert "pairs 8:" in capsys.readouterr().out
    monkeypatch.delenv("RANKSCOPE_STORE")
    for argv, needle in [
        (["judge", "--endpoint", server.url, "--model", "m", "--snapshot", "pets",
          "--dry-run"], "--snapshot needs --store"),
        ([*base, "--snapshot", "gone", "--dry-run"], "no snapshot 'gone'"),
        ([*base, "--sample", "0", "--dry-run"], "sample size"),
    ]:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert needle in err and err.count("\n") == 1 and "Traceback" not in err
