"""BM25's k1 and b in the embedded engine, and why a result is there (``explain``) in every
kind that can say: the embedded engine's BM25 terms, Elasticsearch/OpenSearch ``explain``,
Solr ``debugQuery``; the http kind says it cannot."""

from __future__ import annotations

import asyncio
import gzip
import json
import math
from pathlib import Path
from typing import Any

import pytest

from rankscope.errors import ConfigError
from rankscope.search.config import endpoint_from_dict, open_endpoint
from rankscope.search.embedded import query_terms
from rankscope.search.types import QueryItem

from .engine_server import Reply
from .test_embedded import DOCS, FIELDS, reference_bm25

PACKAGED = Path(__file__).resolve().parents[2] / "src" / "rankscope" / "demo_data"
STANDIN = Path(__file__).resolve().parents[1] / "services" / "standin"


def _search(settings: dict[str, Any], text: str, depth: int = 50, base_dir: Any = None,
            **options: Any):
    async def go():
        endpoint = open_endpoint(endpoint_from_dict(settings, source="t.toml",
                                                    base_dir=base_dir), **options)
        try:
            return await endpoint.search(QueryItem("q1", text), depth)
        finally:
            await endpoint.aclose()

    return asyncio.run(go())


@pytest.fixture
def corpus_dir(tmp_path):
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    return tmp_path


def embedded(**extra: Any) -> dict[str, Any]:
    return {"kind": "embedded", "name": "t", "corpus": "corpus.jsonl", **extra}


@pytest.mark.parametrize("k1, b", [(0.0, 0.75), (0.5, 0.0), (2.0, 0.3), (1.2, 1.0), (3, 0.5)])
@pytest.mark.parametrize("text", ["directory tree", "files temporary closed", "JSON string"])
def test_k1_and_b_rank_as_bm25_from_its_definition(corpus_dir, k1, b, text):
    weights = {"title": 4.0, "text": 1.0}
    response = _search(embedded(k1=k1, b=b, weights=weights), text, base_dir=corpus_dir)
    expected = reference_bm25(DOCS, [4.0, 1.0], query_terms(text), k1=k1, b=b)
    assert [h.doc_id for h in response.hits] == [d for d, _ in expected]
    assert [h.score for h in response.hits] == pytest.approx([s for _, s in expected],
                                                             rel=1e-12)
    assert response.total_hits == len(expected)
    assert response.request["k1"] == k1 and response.request["b"] == b


def test_a_hand_computed_score_with_other_k1_and_b(tmp_path):
    docs = [{"id": "a", "title": "csv", "text": "read csv csv"},
            {"id": "b", "title": "json", "text": "write json"},
            {"id": "c", "title": "other", "text": "nothing at all here"}]
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    hits = _search(embedded(k1=2.0, b=0.5), "csv", base_dir=tmp_path).hits
    # N = 3 rows, n = 1 holds "csv": idf = ln(2.5 / 1.5); row a: f = 1 (title) + 2 (text) = 3,
    # |a| = 1 + 3 = 4 tokens, avgdl = (4 + 3 + 5) / 3 = 4; norm = 1 - 0.5 + 0.5 * 4 / 4 = 1;
    # bm25 = idf * 3 * (2 + 1) / (3 + 2 * 1) = idf * 9 / 5
    assert [h.doc_id for h in hits] == ["a"]
    assert hits[0].score == pytest.approx(math.log(2.5 / 1.5) * 9 / 5, rel=1e-15)


def _own_and_fts5(corpus: Path, tmp_path: Path, settings: dict[str, Any], texts: list[str]):
    """(SQL bm25(), the engine's own sum) for each text: every matching row, in order."""
    config = endpoint_from_dict({"kind": "embedded", "name": "d", "corpus": str(corpus),
                                 "index": str(tmp_path / "d.index.sqlite"), **settings},
                                base_dir=tmp_path)
    endpoint = open_endpoint(config)
    try:
        out = []
        for text in texts:
            fts5, _, total = endpoint.rank(text, 100_000)  # FTS5's bm25(): k1, b built in
            own, own_total = endpoint._bm25_index().ranked(query_terms(text), 100_000)
            out.append((fts5, total, own, own_total))
        return out
    finally:
        asyncio.run(endpoint.aclose())


@pytest.mark.parametrize("settings", [
    {"weights": {"title": 1.0, "text": 1.0}, "tokenizer": "unicode61"},
    {"weights": {"title": 4.0, "text": 0.3}, "tokenizer": "porter unicode61"},
])
def test_the_own_sum_at_fts5s_k1_and_b_is_fts5s_bm25_bit_for_bit(tmp_path, settings):
    texts = ["copy a directory tree", "json pretty print", "read_csv rows", "__init__ dict",
             "run the shell command and capture output", "delete delete folder", "zzz nothing"]
    found = _own_and_fts5(STANDIN / "corpus.jsonl", tmp_path, settings, texts)
    for text, (fts5, total, own, own_total) in zip(texts, found, strict=True):
        assert total == own_total, text
        assert [(d, r) for d, r, _ in own] == [(d, r) for d, r, _ in fts5], text


@pytest.mark.slow
def test_the_own_sum_is_fts5s_bm25_on_the_whole_demo_collection(tmp_path):
    if not (PACKAGED / "corpus.jsonl.gz").is_file():
        pytest.skip("the packaged demo collection is not in this checkout")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_bytes(gzip.decompress((PACKAGED / "corpus.jsonl.gz").read_bytes()))
    texts = [line.split("\t")[1] for line in
             (PACKAGED / "queries.tsv").read_text().splitlines()[1:]]
    for settings in ({"tokenizer": "unicode61"},
                     {"weights": {"title": 4.0, "text": 1.0}, "tokenizer": "porter unicode61"}):
        found = _own_and_fts5(corpus, tmp_path, settings, texts)
        assert sum(len(f[0]) for f in found) > 10_000
        for text, (fts5, total, own, own_total) in zip(texts, found, strict=True):
            assert total == own_total, text
            assert [(d, r) for d, r, _ in own] == [(d, r) for d, r, _ in fts5], text


@pytest.mark.parametrize("key, value, said", [
    ("k1", -0.5, "k1 must be a number >= 0"), ("k1", True, "k1 must be a number"),
    ("b", 1.5, "b must be a number from 0 to 1"), ("b", "0.3", "b must be a number"),
    ("k1", float("nan"), "k1 must be"), ("k1", float("inf"), "k1 must be")])
def test_k1_and_b_out_of_range_are_refused(corpus_dir, key, value, said):
    with pytest.raises(ConfigError, match=said):
        _search(embedded(**{key: value}), "tree", base_dir=corpus_dir)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1.0, "2"])
def test_a_weight_that_is_no_finite_number_at_least_0_is_refused(corpus_dir, value):
    # NaN passed the old check (value < 0 is false for NaN)
    with pytest.raises(ConfigError, match=r"weights\.title must be a number >= 0"):
        _search(embedded(weights={"title": value}), "tree", base_dir=corpus_dir)


def test_tantivy_says_its_k1_and_b_are_built_in(corpus_dir):
    pytest.importorskip("tantivy")
    with pytest.raises(ConfigError, match=r"tantivy engine's BM25 has k1 = 1\.2"):
        _search(embedded(engine="tantivy", k1=0.9), "tree", base_dir=corpus_dir)
    # FTS5's own values are tantivy's too: accepted
    assert _search(embedded(engine="tantivy", k1=1.2, b=0.75), "tree",
                   base_dir=corpus_dir).hits


# -- explanations -------------------------------------------------------------------------

def _walk(tree: dict[str, Any]) -> list[dict[str, Any]]:
    return [tree, *[node for child in tree.get("details", []) for node in _walk(child)]]


@pytest.mark.parametrize("extra", [{}, {"k1": 0.7, "b": 0.2, "weights": {"title": 3.0}}])
def test_the_embedded_engine_explains_each_hit_by_its_bm25_terms(corpus_dir, extra):
    response = _search(embedded(**extra), "temporary files tree", base_dir=corpus_dir,
                       explain=True)
    assert response.hits
    k1, b = extra.get("k1", 1.2), extra.get("b", 0.75)
    weights = [float(extra.get("weights", {}).get(f, 1.0)) for f in FIELDS]
    for hit in response.hits:
        tree = hit.explanation
        assert tree["value"] == pytest.approx(hit.score, rel=1e-12)
        # the terms add up to the score, each term is the reference's own term
        assert sum(t["value"] for t in tree["details"]) == pytest.approx(hit.score, rel=1e-12)
        doc = next(d for d in DOCS if str(d["id"]) == hit.doc_id)
        for term in tree["details"]:
            word = term["description"].split("'")[1]
            alone = dict(reference_bm25([*DOCS], weights, [word], k1=k1, b=b))
            # a one-term BM25 of that document over the same corpus is that term's share
            assert term["value"] == pytest.approx(alone[str(doc["id"])], rel=1e-12)
        said = tree["description"]
        assert f"k1 = {k1:g}, b = {b:g}" in said
    # a term a document lacks is named as missing
    d09 = next(h for h in response.hits if h.doc_id == "d09")
    assert "not in this document: 'tree'" in d09.explanation["description"]
    # without explain, nothing is computed or kept
    assert _search(embedded(), "tree", base_dir=corpus_dir).hits[0].explanation is None


def test_tantivy_explains_with_its_own_tree(corpus_dir):
    pytest.importorskip("tantivy")
    response = _search(embedded(engine="tantivy"), "temporary files", base_dir=corpus_dir,
                       explain=True)
    for hit in response.hits:
        assert hit.explanation["value"] == pytest.approx(hit.score, rel=1e-6)
        assert any("idf" in n.get("description", "") for n in _walk(hit.explanation))


def test_elasticsearch_asks_for_explain_and_keeps_each_hits_tree(engine):
    engine.route("POST", "/products/_search", Reply("es8_search_explain.json"))
    settings = {"kind": "elasticsearch", "url": engine.url, "index": "products",
                "template": '{"query": {"match": {"title": "{{query}}"}}, "size": 3}'}
    response = _search(settings, "hiking", depth=5, explain=True)
    first = engine.seen("/products/_search")[0].body
    assert first["explain"] is True and first["size"] == 3
    # the template's size 3 is cut below the depth 5: the next page asks to explain too
    pages = engine.seen("/products/_search")
    assert len(pages) == 2 and pages[1].body["explain"] is True and pages[1].body["from"] == 3
    recorded = json.loads((Path(__file__).parent / "recorded" /
                           "es8_search_explain.json").read_text())["hits"]["hits"]
    assert response.hits[0].explanation == recorded[0]["_explanation"]
    assert response.request["body"]["explain"] is True
    # not asked: no explain in the request, none kept
    plain = _search(settings, "hiking", depth=3)
    assert "explain" not in engine.seen("/products/_search")[-1].body
    assert plain.hits[0].explanation is None


def test_a_stored_search_template_asks_for_explain_at_its_top_level(engine):
    engine.route("POST", "/products/_search/template", Reply("es8_search_explain.json"))
    settings = {"kind": "opensearch", "url": engine.url, "index": "products",
                "search_template": {"id": "t", "params": {"q": "{{query}}"}}}
    response = _search(settings, "hiking", depth=3, explain=True)
    assert engine.seen("/products/_search/template")[0].body == {
        "id": "t", "params": {"q": "hiking"}, "explain": True}
    assert response.hits[2].explanation["value"] == pytest.approx(4.7720003)


def test_solr_asks_for_debug_query_and_maps_explanations_by_unique_key(engine):
    engine.route("GET", "/solr/catalog/select", Reply("solr9_select_debug.json"))
    settings = {"kind": "solr", "url": engine.url + "/solr", "collection": "catalog",
                "params": {"q": "{{query}}", "debugQuery": "false"}}
    response = _search(settings, "hiking boots", explain=True)
    sent = engine.seen("/solr/catalog/select")[0].query
    assert ("debugQuery", "true") in sent and ("debug.explain.structured", "true") in sent
    assert ("debugQuery", "false") not in sent  # the file's own value is replaced
    assert response.hits[0].explanation["description"] == "sum of:"
    assert response.hits[1].explanation["value"] == pytest.approx(2.0176854)
    assert response.hits[2].explanation is None  # Solr gave none for it: none is made up


def test_solr_json_api_asks_in_its_params_block(engine):
    body = json.loads((Path(__file__).parent / "recorded" / "solr9_select_debug.json")
                      .read_text())
    body["debug"]["explain"]["p-101"] = "\n3.4112263 = sum of:\n  2.0 = weight(title:hiking)\n"
    engine.route("POST", "/solr/catalog/query", Reply(json.dumps(body).encode()))
    settings = {"kind": "solr", "url": engine.url + "/solr", "collection": "catalog",
                "api": "json", "template": '{"query": "{{query}}", "params": {"df": "title"}}'}
    response = _search(settings, "hiking", explain=True)
    sent = engine.seen("/solr/catalog/query")[0].body
    assert sent["params"] == {"df": "title", "debugQuery": "true",
                              "debug.explain.structured": "true"}
    # an explanation given as text (an older Solr, no structure) is kept as its text
    assert response.hits[0].explanation == {
        "value": None, "description": "3.4112263 = sum of:\n  2.0 = weight(title:hiking)",
        "details": []}


def test_the_http_kind_says_it_cannot_explain(engine):
    settings = {"kind": "http", "url": engine.url + "/search", "hits": "results[*]"}
    with pytest.raises(ConfigError, match="the http kind cannot say why a result is there"):
        _search(settings, "x", explain=True)
    assert engine.requests == []  # refused before anything is sent
