"""The shipped demo collection: well formed, fully judged where it must be, and informative.

The rankings are computed here, from the corpus, with the embedded engine's
contract written out in this file (SQLite FTS5 through Python's sqlite3), so
"the top 10 of both endpoints is judged" is checked independently of
``scripts/make_demo_pools.py`` and of the engine on the snapshots branch.
The nDCG@10 means are computed here by the textbook formula and also by
rankscope, and must agree.
"""

from __future__ import annotations

import gzip
import json
import math
import re
import sqlite3
import subprocess
import sys
import tomllib
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import rankscope

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "src" / "rankscope" / "demo_data"
ENDPOINTS = ("baseline", "tuned")
POOL_DEPTH = 10

Doc = dict[str, Any]
Hits = list[tuple[str, float]]


@cache
def corpus() -> tuple[Doc, ...]:
    with gzip.open(DATA / "corpus.jsonl.gz", "rt", encoding="utf-8") as fh:
        return tuple(json.loads(line) for line in fh)


def read_tsv(name: str) -> tuple[list[str], list[list[str]]]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return lines[0].split("\t"), [line.split("\t") for line in lines[1:]]


@cache
def queries() -> dict[str, str]:
    return {qid: text for qid, text in read_tsv("queries.tsv")[1]}


@cache
def qrels() -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for line in (DATA / "qrels.txt").read_text(encoding="utf-8").splitlines():
        qid, zero, doc_id, grade = line.split()
        assert zero == "0"
        assert doc_id not in out.setdefault(qid, {}), f"{qid} {doc_id} judged twice"
        out[qid][doc_id] = int(grade)
    return out


def endpoint(name: str) -> dict[str, Any]:
    return tomllib.loads((DATA / f"{name}.toml").read_text(encoding="utf-8"))


@cache
def rankings(name: str, depth: int = 100) -> dict[str, Hits]:
    """Every query's hits for one endpoint, by the contract: engine order, best first."""
    config = endpoint(name)
    fields: list[str] = config["fields"]
    weights = [float(config["weights"][f]) for f in fields]
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE docs(rowid INTEGER PRIMARY KEY, doc_id TEXT UNIQUE NOT NULL)")
    db.execute(
        f"CREATE VIRTUAL TABLE fts USING fts5({', '.join(fields)}, "
        f"tokenize='{config['tokenizer']}')"
    )
    for rowid, doc in enumerate(corpus(), start=1):
        db.execute("INSERT INTO docs VALUES (?, ?)", (rowid, doc["id"]))
        values = [
            doc.get(f, "") if isinstance(doc.get(f, ""), str) else json.dumps(doc[f])
            for f in fields
        ]
        marks = ", ".join("?" for _ in fields)
        db.execute(
            f"INSERT INTO fts(rowid, {', '.join(fields)}) VALUES (?, {marks})", (rowid, *values)
        )
    out: dict[str, Hits] = {}
    for qid, text in queries().items():
        terms = list(dict.fromkeys(re.findall(r"\w+", text.casefold())))
        match = " OR ".join(f'"{t}"' for t in terms)
        rows = db.execute(
            f"SELECT d.doc_id, bm25(fts, {', '.join(map(repr, weights))}) AS r "
            "FROM fts JOIN docs d ON d.rowid = fts.rowid WHERE fts MATCH ? "
            "ORDER BY r ASC, d.doc_id ASC LIMIT ?",
            (match, depth),
        ).fetchall()
        out[qid] = [(doc_id, -r) for doc_id, r in rows]
    db.close()
    return out


def trec_order(hits: Hits) -> Hits:
    """trec_eval's order: score descending, ties by document id descending."""
    return sorted(hits, key=lambda h: (h[1], h[0]), reverse=True)


def ndcg_at_10(ranked: list[str], grades: dict[str, int]) -> float:
    """Linear gain, 1/log2(rank + 1) discount, ideal from every judgment of the query."""
    dcg = sum(grades.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:10]))
    ideal = sorted(grades.values(), reverse=True)[:10]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


# --- the files are well formed -------------------------------------------------


def test_corpus_documents_are_complete_and_ids_unique() -> None:
    docs = corpus()
    assert 1000 <= len(docs) <= 5000
    ids = [d["id"] for d in docs]
    assert len(set(ids)) == len(ids)
    assert ids == sorted(ids), "documents are written in id order"
    for d in docs:
        for key in ("id", "title", "text", "url", "module", "kind"):
            assert isinstance(d[key], str) and d[key].strip(), (d["id"], key)
        assert d["url"].startswith("https://docs.python.org/3.11/library/"), d["id"]
        assert len(d["text"]) >= 60, d["id"]
        assert d["kind"] in {
            "module",
            "class",
            "exception",
            "function",
            "method",
            "classmethod",
            "staticmethod",
            "property",
            "data",
        }
    texts = Counter(d["text"] for d in docs)
    assert texts.most_common(1)[0][1] == 1, "identical docstrings are kept once"
    assert (DATA / "corpus.jsonl.gz").stat().st_size < 2_000_000


def test_corpus_has_the_documents_the_examples_name() -> None:
    by_id = {d["id"]: d for d in corpus()}
    dumps = by_id["json.dumps"]
    assert dumps["url"] == "https://docs.python.org/3.11/library/json.html#json.dumps"
    assert dumps["module"] == "json" and dumps["kind"] == "function"
    assert dumps["title"].startswith("json.dumps(obj, *")
    assert by_id["str.split"]["url"].endswith("/stdtypes.html#str.split")
    assert by_id["os.path"]["url"].endswith("/os.path.html#module-os.path")
    assert "json.decoder.JSONDecoder" not in by_id and "json.JSONDecoder" in by_id
    assert not any(
        i.startswith(("idlelib", "lib2to3", "turtledemo", "encodings", "test.")) for i in by_id
    )
    assert not any(part.startswith("_") for i in by_id for part in i.split("."))


def test_queries_and_needs() -> None:
    header, rows = read_tsv("queries.tsv")
    assert header == ["query_id", "text"]
    assert 50 <= len(rows) <= 70
    assert [r[0] for r in rows] == [f"q{i:02d}" for i in range(1, len(rows) + 1)]
    assert all(len(r) == 2 and r[1].strip() for r in rows)
    assert len({r[1] for r in rows}) == len(rows)
    need_header, needs = read_tsv("needs.tsv")
    assert need_header == ["query_id", "need"]
    assert [n[0] for n in needs] == [r[0] for r in rows]
    assert all(len(n) == 2 and len(n[1]) > 20 for n in needs)


def test_qrels_grades_queries_and_documents_exist() -> None:
    ids = {d["id"] for d in corpus()}
    judged = qrels()
    assert set(judged) == set(queries()), "every query is judged, no stray query"
    for qid, grades in judged.items():
        assert set(grades.values()) <= {0, 1, 2, 3}, qid
        assert set(grades) <= ids, (qid, set(grades) - ids)
    counts = Counter(g for grades in judged.values() for g in grades.values())
    assert all(counts[g] > 0 for g in (0, 1, 2, 3))


def test_endpoints_follow_the_contract() -> None:
    for name, tokenizer, title_weight in (
        ("baseline", "unicode61", 1.0),
        ("tuned", "porter unicode61", 4.0),
    ):
        config = endpoint(name)
        assert config["kind"] == "embedded"
        assert config["name"] == f"demo-{name}"
        assert config["corpus"] == "corpus.jsonl"
        assert config["index"] == f"demo-{name}.index.sqlite"
        assert config["fields"] == ["title", "text"]
        assert config["weights"] == {"title": title_weight, "text": 1.0}
        assert config["tokenizer"] == tokenizer
        assert config.get("template", "{{query}}") == "{{query}}"
        assert config.get("id_field", "id") == "id"


def test_documentation_files_are_there() -> None:
    licence = (DATA / "LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("A. HISTORY OF THE SOFTWARE")
    assert "PYTHON SOFTWARE FOUNDATION LICENSE VERSION 2" in licence
    guidelines = (DATA / "guidelines.md").read_text(encoding="utf-8")
    for grade in ("| 3 |", "| 2 |", "| 1 |", "| 0 |"):
        assert grade in guidelines
    readme = (DATA / "README.md").read_text(encoding="utf-8")
    for name in (
        "corpus.jsonl.gz",
        "queries.tsv",
        "needs.tsv",
        "qrels.txt",
        "baseline.toml",
        "tuned.toml",
        "make_demo_corpus.py",
    ):
        assert name in readme


# --- the judgments cover what the endpoints return --------------------------------


@pytest.mark.parametrize("name", ENDPOINTS)
def test_top_10_of_each_endpoint_is_judged(name: str) -> None:
    judged = qrels()
    for qid, hits in rankings(name).items():
        assert hits, f"{name} returns nothing for {qid}"
        top = [d for d, _ in hits[:POOL_DEPTH]]
        missing = [d for d in top if d not in judged[qid]]
        assert not missing, (name, qid, missing)


@pytest.mark.parametrize("name", ENDPOINTS)
def test_top_10_is_judged_under_trec_eval_tie_order(name: str) -> None:
    # A snapshot scored by rankscope re-sorts ties by id descending.
    judged = qrels()
    for qid, hits in rankings(name).items():
        top = [d for d, _ in trec_order(hits)[:POOL_DEPTH]]
        assert all(d in judged[qid] for d in top), (name, qid)


def test_the_demo_has_answers_found_by_no_endpoint() -> None:
    # Documents graded 3 that neither endpoint puts in its top 10: the hard cases.
    judged = qrels()
    missed = {
        (qid, d)
        for qid, grades in judged.items()
        for d, g in grades.items()
        if g == 3 and all(d not in [h for h, _ in rankings(n)[qid][:10]] for n in ENDPOINTS)
    }
    assert ("q12", "concurrent.futures.ThreadPoolExecutor") in missed
    assert len(missed) >= 10


# --- the numbers mean something ----------------------------------------------------


def test_endpoints_give_different_means_and_rankscope_agrees(tmp_path: Path) -> None:
    judged = qrels()
    means: dict[str, float] = {}
    per_query: dict[str, dict[str, float]] = {}
    for name in ENDPOINTS:
        hits = rankings(name)
        per_query[name] = {
            qid: ndcg_at_10([d for d, _ in trec_order(hits[qid])], judged[qid]) for qid in judged
        }
        means[name] = sum(per_query[name].values()) / len(judged)
        run = tmp_path / f"{name}.txt"
        run.write_text(
            "".join(
                f"{qid} Q0 {d} {rank} {score!r} {name}\n"
                for qid, ranked in hits.items()
                for rank, (d, score) in enumerate(ranked, start=1)
            )
        )
        result = rankscope.evaluate(DATA / "qrels.txt", run, ["nDCG@10"])
        assert result["nDCG@10"] == pytest.approx(means[name], abs=1e-12)
    assert means["tuned"] - means["baseline"] > 0.005
    wins = sum(per_query["tuned"][q] > per_query["baseline"][q] + 1e-12 for q in judged)
    losses = sum(per_query["tuned"][q] < per_query["baseline"][q] - 1e-12 for q in judged)
    assert wins >= 10 and losses >= 10, "better on average, not on every query"


def test_pooling_script_matches_the_contract(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_demo_pools.py"), "-o", str(tmp_path)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    for name in ENDPOINTS:
        lines = (tmp_path / f"run_{name}.txt").read_text().splitlines()
        script: dict[str, list[str]] = {}
        for line in lines:
            qid, _, doc_id, _, _, tag = line.split()
            assert tag == f"demo-{name}"
            script.setdefault(qid, []).append(doc_id)
        assert script == {q: [d for d, _ in hits] for q, hits in rankings(name).items()}
    pool = (tmp_path / "pool.tsv").read_text().splitlines()[1:]
    assert pool and all(row.endswith("\t1") for row in pool), "every pooled pair is graded"


@pytest.mark.skipif(
    sys.version_info[:3] != (3, 11, 7) or sys.platform != "linux",
    reason="the corpus is derived from CPython 3.11.7 on Linux",
)
def test_corpus_regenerates_identically() -> None:
    base = getattr(sys, "_base_executable", sys.executable)  # the generator refuses a venv
    done = subprocess.run(
        [base, str(ROOT / "scripts" / "make_demo_corpus.py"), "--check"],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.stdout.strip().endswith("unchanged"), done.stdout
