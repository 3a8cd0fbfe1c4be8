"""The embedded engine, against the contract and a BM25 written here from its definition."""

from __future__ import annotations

import asyncio
import json
import math
import re
import sqlite3

import pytest

from rankscope.errors import ParseError
from rankscope.search.config import endpoint_from_dict, open_endpoint
from rankscope.search.embedded import fts_query, query_terms
from rankscope.search.types import QueryItem

DOCS = [
    {"id": "d01", "title": "Copy a directory tree", "text": "copytree copies an entire tree of "
     "directories and files from a source to a destination directory"},
    {"id": "d02", "title": "Remove a directory tree", "text": "rmtree deletes an entire "
     "directory tree; errors can be ignored or handled by a callback"},
    {"id": "d03", "title": "Read a CSV file", "text": "the csv reader iterates over the lines "
     "of a file and returns a list of strings for each row"},
    {"id": "d04", "title": "Write JSON", "text": "dumps serializes an object to a JSON "
     "formatted string; indent makes it pretty"},
    {"id": "d05", "title": "Parse JSON", "text": "loads parses a JSON document from a string "
     "and returns the object"},
    {"id": "d06", "text": "a document without a title that talks about files and directories "
     "and files again"},
    {"id": "d07", "title": "Numbers", "text": 12345, "url": "https://example.org/d07"},
    {"id": "d08", "title": "Run a shell command", "text": "run a command with arguments, wait "
     "for it to complete and capture its output; running processes"},
    {"id": "d10", "title": "Temporary files", "text": "create temporary files and directories "
     "that are removed when closed"},
    {"id": "d09", "title": "Temporary files", "text": "create temporary files and directories "
     "that are removed when closed"},
    {"id": 11, "title": "Walk a directory", "text": "generate the file names in a directory "
     "tree by walking the tree top down or bottom up"},
]
FIELDS = ["title", "text"]


def tokens(value):
    # unicode61 on ASCII text: lower case, runs of letters and digits
    text = value if isinstance(value, str) else json.dumps(value)
    return re.findall(r"[a-z0-9]+", text.lower())


def reference_bm25(docs, weights, terms, k1=1.2, b=0.75):
    """FTS5's bm25() from its definition: per phrase IDF log((N-n+0.5)/(n+0.5)) (1e-6 if not
    positive), term frequency = sum over columns of weight x occurrences, document length =
    tokens of all columns, average over all rows."""
    rows = [[tokens(d.get(f, "")) for f in FIELDS] for d in docs]
    lengths = [sum(len(col) for col in row) for row in rows]
    avgdl = sum(lengths) / len(rows)
    scores = {}
    for row, length, doc in zip(rows, lengths, docs, strict=True):
        score, matched = 0.0, False
        for term in terms:
            n = sum(1 for r in rows if any(term in col for col in r))
            idf = math.log((len(rows) - n + 0.5) / (n + 0.5))
            idf = idf if idf > 0 else 1e-6
            freq = sum(w * col.count(term) for w, col in zip(weights, row, strict=True))
            if freq:
                matched = True
                score += idf * freq * (k1 + 1) / (freq + k1 * (1 - b + b * length / avgdl))
        if matched:
            scores[str(doc["id"])] = score
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    return path


def endpoint(tmp_path, **settings):
    base = {"kind": "embedded", "name": "t", "corpus": "corpus.jsonl"}
    return open_endpoint(endpoint_from_dict({**base, **settings}, base_dir=tmp_path))


def search(ep, text, depth=10):
    async def go():
        return await ep.search(QueryItem("q", text), depth)

    return asyncio.run(go())


@pytest.mark.parametrize("weights", [{}, {"title": 4.0, "text": 1.0}, {"title": 0.5}])
@pytest.mark.parametrize("text", ["directory tree", "JSON string object", "files",
                                  "temporary files closed", "12345", "copy the tree of files"])
def test_ranking_equals_bm25_from_its_definition(tmp_path, corpus, weights, text):
    ep = endpoint(tmp_path, weights=weights)
    response = search(ep, text, depth=50)
    w = [float(weights.get(f, 1.0)) for f in FIELDS]
    expected = reference_bm25(DOCS, w, query_terms(text))
    assert [h.doc_id for h in response.hits] == [d for d, _ in expected]
    assert [h.score for h in response.hits] == pytest.approx([s for _, s in expected], rel=1e-9)
    assert response.total_hits == len(expected)
    asyncio.run(ep.aclose())


def test_depth_ties_and_display(tmp_path, corpus):
    ep = endpoint(tmp_path)
    hits = search(ep, "temporary", depth=1).hits
    assert [h.doc_id for h in hits] == ["d09"]  # d09 and d10 tie: doc id ascending
    hits = search(ep, "numbers").hits
    assert hits[0].doc_id == "d07" and hits[0].url == "https://example.org/d07"
    assert hits[0].snippet == "12345"  # a non-string field, as its JSON text
    untitled = search(ep, "document without").hits[0]
    assert untitled.doc_id == "d06" and untitled.title is None
    copy = search(ep, "copytree").hits[0]
    assert copy.title == "Copy a directory tree" and copy.fields == {}
    asyncio.run(ep.aclose())


@pytest.mark.parametrize("text", ['"', 'NEAR(a b)', "title:copy", "copy*", "a AND OR NOT",
                                  "^tree", "(((", "'; DROP TABLE docs; --", "-tree +copy"])
def test_no_fts5_syntax_reaches_the_parser(tmp_path, corpus, text):
    ep = endpoint(tmp_path)
    response = search(ep, text)  # never an SQLite error
    terms = query_terms(text)
    assert response.request["match"] == " OR ".join(f'"{t}"' for t in terms)
    expected = reference_bm25(DOCS, [1.0, 1.0], terms) if terms else []
    assert [h.doc_id for h in response.hits] == [d for d, _ in expected][:10]
    asyncio.run(ep.aclose())


def test_query_terms_and_match_string():
    assert query_terms("Read READ read, write-JSON ünï") == ["read", "write", "json", "ünï"]
    assert query_terms("!!! ...") == []
    assert fts_query(["a", "b"]) == '"a" OR "b"'


def test_the_index_file_follows_the_contract(tmp_path, corpus):
    ep = endpoint(tmp_path, tokenizer="porter unicode61")
    search(ep, "x")
    asyncio.run(ep.aclose())
    with sqlite3.connect(tmp_path / "t.index.sqlite") as con:
        sql = {n: s for n, s in con.execute("SELECT name, sql FROM sqlite_master")}
        assert "doc_id TEXT UNIQUE NOT NULL" in sql["docs"] and "body TEXT NOT NULL" in sql["docs"]
        assert sql["fts"] == ("CREATE VIRTUAL TABLE fts USING fts5(title, text, "
                              "tokenize='porter unicode61')")
        rows = con.execute("SELECT rowid, doc_id, body FROM docs ORDER BY rowid").fetchall()
        assert [(r, d) for r, d, _ in rows] == [(i + 1, str(doc["id"]))
                                                for i, doc in enumerate(DOCS)]
        assert [json.loads(b) for _, _, b in rows] == DOCS
        fts = con.execute("SELECT rowid, title, text FROM fts ORDER BY rowid").fetchall()
        assert fts[5] == (6, "", DOCS[5]["text"])  # a missing title is indexed as ""
        assert fts[6] == (7, "Numbers", "12345")  # a number as its JSON text
        meta = dict(con.execute("SELECT key, value FROM meta"))
    import hashlib

    assert meta["corpus_sha256"] == hashlib.sha256(corpus.read_bytes()).hexdigest()


def test_porter_stems_and_the_index_is_rebuilt_only_when_needed(tmp_path, corpus):
    index = tmp_path / "t.index.sqlite"
    ep = endpoint(tmp_path)
    assert search(ep, "copying").hits == ()  # unicode61: no stemming
    asyncio.run(ep.aclose())
    first = index.stat().st_ino
    ep = endpoint(tmp_path, weights={"title": 3.0})  # weights apply at query time
    search(ep, "x")
    asyncio.run(ep.aclose())
    assert index.stat().st_ino == first
    ep = endpoint(tmp_path, tokenizer="porter unicode61")  # copying -> copi, copies -> copi
    assert [h.doc_id for h in search(ep, "copying").hits] == ["d01"]
    assert "d08" in [h.doc_id for h in search(ep, "runs").hits]  # running -> run
    asyncio.run(ep.aclose())
    assert index.stat().st_ino != first
    second = index.stat().st_ino
    with corpus.open("a") as out:
        out.write(json.dumps({"id": "d12", "title": "Copying files", "text": "copy"}) + "\n")
    ep = endpoint(tmp_path, tokenizer="porter unicode61")
    assert "d12" in [h.doc_id for h in search(ep, "copying").hits]
    asyncio.run(ep.aclose())
    assert index.stat().st_ino != second


def test_a_bad_corpus_line_names_the_line_and_keeps_the_old_index(tmp_path, corpus):
    ep = endpoint(tmp_path)
    search(ep, "tree")
    asyncio.run(ep.aclose())
    before = (tmp_path / "t.index.sqlite").read_bytes()
    with corpus.open("a") as out:
        out.write('{"id": "d13", "title": "ok"}\n{"title": "no id"}\n')
    ep = endpoint(tmp_path)
    with pytest.raises(ParseError, match=r"corpus.jsonl, line 13: no document id in field 'id'"):
        search(ep, "tree")
    assert (tmp_path / "t.index.sqlite").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.jsonl", "t.index.sqlite"]
    corpus.write_text('{"id": "a"}\n{"id": "a"}\n')
    with pytest.raises(ParseError, match=r"line 2: document id 'a' already on line 1"):
        search(endpoint(tmp_path), "x")


def test_tantivy_engine(tmp_path, corpus):
    pytest.importorskip("tantivy")
    ep = endpoint(tmp_path, engine="tantivy", tokenizer="en_stem",
                  weights={"title": 4.0, "text": 1.0})
    response = search(ep, "trees")
    ids = [h.doc_id for h in response.hits]
    # English stemming: "trees" finds every document holding "tree", and only those
    assert set(ids) == {"d01", "d02", "11"}
    assert ids[0] in ("d01", "d02")  # the title matches, boosted
    assert all(a.score >= b.score for a, b in zip(response.hits, response.hits[1:],
                                                   strict=False))
    assert response.total_hits == len(ids)
    assert (tmp_path / "t.tantivy").is_dir()
    version = asyncio.run(ep.version())
    assert version is not None and version.startswith("tantivy")
    asyncio.run(ep.aclose())


@pytest.mark.parametrize("engine", ["sqlite", "tantivy"])
def test_threads_building_the_same_index_at_once_all_succeed(tmp_path, corpus, engine):
    """Two evaluations of one endpoint started together build its index at the same time
    (a fresh app): each build has a temporary name of its own, and every search answers."""
    import threading

    settings = {} if engine == "sqlite" else {"engine": "tantivy"}
    if engine == "tantivy":
        pytest.importorskip("tantivy")
    barrier = threading.Barrier(4)
    answers: list[list[str]] = []
    errors: list[BaseException] = []

    def one() -> None:
        try:
            ep = endpoint(tmp_path, **settings)
            barrier.wait(timeout=30)
            answers.append([h.doc_id for h in search(ep, "directory tree").hits])
            asyncio.run(ep.aclose())
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors
    expected = [d for d, _ in reference_bm25(DOCS, [1.0, 1.0], ["directory", "tree"])]
    if engine == "sqlite":
        assert answers == [expected] * 4
    else:
        assert len(answers) == 4 and all(a == answers[0] for a in answers)
        assert set(answers[0]) == set(expected)
    # no temporary file or directory is left behind
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
