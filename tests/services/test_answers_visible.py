"""Partial, short, duplicated and retried answers are visible (issue 24, section 2).

Each test runs `rankscope snapshot` against a fake engine on 127.0.0.1 and
checks the summary line, the store (per query and per snapshot) and, for
answers that miss results the engine has, that --strict exits 3.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from search.engine_server import Reply, recorded

from .conftest import run_cli


def toml_value(value: Any) -> str:
    """A TOML value: strings and numbers as JSON writes them, tables inline."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(v)}"
                                for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(value)


def toml(settings: dict[str, Any]) -> str:
    return "".join(f"{k} = {toml_value(v)}\n" for k, v in settings.items())




def take(tmp_path, settings, *extra, queries=("q1", "q2")):
    endpoint = tmp_path / "endpoint.toml"
    endpoint.write_text(toml(settings))
    qfile = tmp_path / "queries.tsv"
    qfile.write_text("".join(f"{q}\tquery {q}\n" for q in queries))
    return run_cli(["snapshot", endpoint, qfile, "--store", tmp_path / "s.sqlite",
                    "-o", tmp_path / "run.txt", *extra])


def stored(tmp_path):
    from rankscope.store.db import open_store
    from rankscope.store.snapshots import find_snapshot, snapshot_hits, snapshot_queries

    with open_store(tmp_path / "s.sqlite") as store:
        info = find_snapshot(store, "1")
        return info, snapshot_queries(store, info.id), snapshot_hits(store, info.id)


def es(engine, **extra):
    return {"kind": "elasticsearch", "name": "shop", "url": engine.url, "index": "products",
            **extra}


PARTIAL = [
    ("elasticsearch", "es8_timed_out.json", "timed out"),
    ("elasticsearch", "es8_shards_failed.json", "2 of 5 shards failed"),
    ("opensearch", "opensearch2_shards_failed.json", "1 of 3 shards failed"),
    ("solr", "solr9_partial_results.json", "partial results"),
    ("http", "partial_field", "meta.partial is true"),
]


@pytest.mark.parametrize("kind, body, reason", PARTIAL)
def test_partial_answers_are_recorded_counted_and_fail_strict(engine, tmp_path, kind, body,
                                                              reason):
    """A 200 answer that says it is partial was recorded as complete before."""
    if kind == "solr":
        engine.route("GET", "/solr/products/select", Reply(body))
        settings = {"kind": "solr", "name": "shop", "url": f"{engine.url}/solr",
                    "collection": "products"}
    elif kind == "http":
        data = json.loads(recorded("api_catalog.json"))
        data["meta"]["partial"] = True
        engine.route("GET", "/api", Reply(json.dumps(data).encode()))
        settings = {"kind": "http", "name": "shop", "url": f"{engine.url}/api",
                    "params": {"q": "{{query}}"}, "hits": "data.items[*]", "id_field": "sku",
                    "partial_field": "meta.partial"}
    else:
        engine.route("POST", "/products/_search", Reply(body))
        settings = es(engine, kind=kind)
    code, _, err = take(tmp_path, settings)
    assert code == 0, err
    assert "; 2 partial (the engine said so)" in err
    info, records, _ = stored(tmp_path)
    assert (info.status, info.n_partial, info.n_short) == ("complete", 2, 0)
    assert [r.partial for r in records] == [reason, reason]
    code, _, err = take(tmp_path, settings, "--strict")
    assert code == 3, err
    assert "2 partial and 0 short answer(s) (--strict)" in err
    assert (tmp_path / "run.txt").is_file()  # kept: the snapshot and the run are written


def test_whole_answers_pass_strict(engine, tmp_path):
    engine.route("POST", "/products/_search", Reply("es8_search.json"))
    code, _, err = take(tmp_path, es(engine), "--strict")
    assert code == 0, err
    info, records, _ = stored(tmp_path)
    assert info.n_partial == info.n_short == info.n_duplicates == info.n_retries == 0
    assert all(r.partial is None and r.short is None for r in records)


def test_a_duplicate_id_is_counted_and_keeps_its_first_position(engine, tmp_path):
    """Dropped silently and the ranks renumbered before: now counted, first position kept."""
    engine.route("POST", "/products/_search", Reply("es8_duplicate_ids.json"))
    code, _, err = take(tmp_path, es(engine))
    assert code == 0, err
    assert "2 duplicate ids dropped" in err
    info, records, hits = stored(tmp_path)
    assert info.n_duplicates == 2 and [r.duplicates for r in records] == [1, 1]
    listed = [h["_id"] for h in json.loads(recorded("es8_duplicate_ids.json"))["hits"]["hits"]]
    assert listed == ["p-101", "p-207", "p-101", "p-033"]
    assert [(h["rank"], h["doc_id"]) for h in hits if h["query_id"] == "q1"] == [
        (1, "p-101"), (2, "p-207"), (3, "p-033")]


def test_retries_are_counted_with_their_reasons(engine, tmp_path):
    """A flaky engine looked healthy before: now the summary and the store say it."""
    engine.route("POST", "/products/_search",
                 Reply("es_503_shards.json", status=503),
                 Reply("es_429_rejected.json", status=429, headers={"Retry-After": "0"}),
                 Reply("es8_search.json"))
    code, _, err = take(tmp_path, es(engine, backoff=0.001, concurrency=1), queries=("q1",))
    assert code == 0, err
    assert "2 requests retried (HTTP 429 x1, HTTP 503 x1)" in err
    info, (record,), _ = stored(tmp_path)
    assert info.n_retries == 2
    assert (record.retries, record.retry_reasons) == (2, {"HTTP 503": 1, "HTTP 429": 1})


# Paging up to the depth


def es_page(ids: list[str], total: int) -> bytes:
    return json.dumps({"timed_out": False, "_shards": {"total": 1, "failed": 0},
                       "hits": {"total": {"value": total, "relation": "eq"},
                                "hits": [{"_id": d, "_score": 10.0 - i, "_source": {}}
                                         for i, d in enumerate(ids)]}}).encode()


DOCS = [f"d{i:02d}" for i in range(1, 13)]


def test_elasticsearch_pages_with_from_and_size_up_to_the_depth(engine, tmp_path):
    """A template with "size": 5 and --depth 10 gave 5 results before, silently."""
    engine.route("POST", "/products/_search", Reply(es_page(DOCS[:5], 12)),
                 Reply(es_page(DOCS[5:10], 12)))
    settings = es(engine, template='{"query": {"match": {"title": "{{query}}"}}, "size": 5}')
    code, _, err = take(tmp_path, settings, "--depth", "10", queries=("q1",))
    assert code == 0, err
    sent = [r.body for r in engine.seen("/products/_search")]
    assert sent == [{"query": {"match": {"title": "query q1"}}, "size": 5},
                    {"query": {"match": {"title": "query q1"}}, "size": 5, "from": 5}]
    info, (record,), hits = stored(tmp_path)
    assert [h["doc_id"] for h in hits] == DOCS[:10]
    assert (record.pages, record.short, info.n_short) == (2, None, 0)
    assert record.request["next_pages"][0]["body"]["from"] == 5


def test_the_last_page_asks_only_what_the_depth_lacks(engine, tmp_path):
    engine.route("POST", "/products/_search", Reply(es_page(DOCS[:5], 12)),
                 Reply(es_page(DOCS[5:10], 12)), Reply(es_page(DOCS[10:12], 12)))
    settings = es(engine, template='{"query": {"match_all": {}}, "size": 5}')
    code, _, err = take(tmp_path, settings, "--depth", "12", queries=("q1",))
    assert code == 0, err
    sent = [(r.body.get("from"), r.body["size"]) for r in engine.seen("/products/_search")]
    assert sent == [(None, 5), (5, 5), (10, 2)]
    _, _, hits = stored(tmp_path)
    assert [h["doc_id"] for h in hits] == DOCS


def test_no_paging_when_the_engine_has_nothing_more(engine, tmp_path):
    engine.route("POST", "/products/_search", Reply(es_page(DOCS[:5], 5)))
    settings = es(engine, template='{"query": {"match_all": {}}, "size": 5}')
    code, _, err = take(tmp_path, settings, "--depth", "10", "--strict", queries=("q1",))
    assert code == 0, err
    assert len(engine.seen("/products/_search")) == 1
    _, (record,), _ = stored(tmp_path)
    assert (record.pages, record.short) == (1, None)


def solr_page(ids: list[str], total: int, start: int) -> bytes:
    return json.dumps({"responseHeader": {"status": 0},
                       "response": {"numFound": total, "start": start,
                                    "docs": [{"id": d, "score": 1.0} for d in ids]}}).encode()


def test_solr_pages_with_start_and_rows(engine, tmp_path):
    engine.route("GET", "/solr/products/select", Reply(solr_page(DOCS[:5], 12, 0)),
                 Reply(solr_page(DOCS[5:8], 12, 5)))
    settings = {"kind": "solr", "name": "shop", "url": f"{engine.url}/solr",
                "collection": "products", "params": {"q": "{{query}}", "rows": "5"}}
    code, _, err = take(tmp_path, settings, "--depth", "8", queries=("q1",))
    assert code == 0, err
    first, second = engine.seen("/solr/products/select")
    assert ("rows", "5") in first.query and ("start", "0") not in first.query
    assert ("start", "5") in second.query and ("rows", "3") in second.query
    _, _, hits = stored(tmp_path)
    assert [h["doc_id"] for h in hits] == DOCS[:8]


def test_solr_json_api_pages_with_offset_and_limit(engine, tmp_path):
    engine.route("POST", "/solr/products/query", Reply(solr_page(DOCS[:4], 12, 0)),
                 Reply(solr_page(DOCS[4:6], 12, 4)))
    settings = {"kind": "solr", "name": "shop", "url": f"{engine.url}/solr",
                "collection": "products", "api": "json",
                "template": '{"query": "{{query}}", "limit": 4}'}
    code, _, err = take(tmp_path, settings, "--depth", "6", queries=("q1",))
    assert code == 0, err
    bodies = [r.body for r in engine.seen("/solr/products/query")]
    assert (bodies[1]["offset"], bodies[1]["limit"]) == (4, 2)
    _, _, hits = stored(tmp_path)
    assert [h["doc_id"] for h in hits] == DOCS[:6]


def api_page(ids: list[str], total: int) -> bytes:
    return json.dumps({"meta": {"total": total},
                       "data": {"items": [{"sku": d} for d in ids]}}).encode()


@pytest.mark.parametrize("param, values", [("{{offset}}", ["0", "4"]),
                                           ("{{page}}", ["1", "2"])])
def test_the_http_kind_pages_with_its_placeholder(engine, tmp_path, param, values):
    engine.route("GET", "/api", Reply(api_page(DOCS[:4], 12)), Reply(api_page(DOCS[4:8], 12)))
    settings = {"kind": "http", "name": "shop", "url": f"{engine.url}/api",
                "params": {"q": "{{query}}", "at": param}, "hits": "data.items[*]",
                "id_field": "sku", "total_field": "meta.total"}
    code, _, err = take(tmp_path, settings, "--depth", "8", queries=("q1",))
    assert code == 0, err
    assert [dict(r.query)["at"] for r in engine.seen("/api")] == values
    _, _, hits = stored(tmp_path)
    assert [h["doc_id"] for h in hits] == DOCS[:8]


def test_an_endpoint_that_cannot_page_says_so_per_query(engine, tmp_path):
    engine.route("GET", "/api", Reply(api_page(DOCS[:4], 12)))
    settings = {"kind": "http", "name": "shop", "url": f"{engine.url}/api",
                "params": {"q": "{{query}}"}, "hits": "data.items[*]", "id_field": "sku",
                "total_field": "meta.total"}
    code, _, err = take(tmp_path, settings, "--depth", "8")
    assert code == 0, err
    assert "2 short of the depth" in err
    info, records, _ = stored(tmp_path)
    assert info.n_short == 2
    assert records[0].short == ("4 of 8 kept, the engine matched 12: this endpoint cannot "
                                "page: put {{offset}} (results already received) or {{page}} "
                                "(from 1) in its url, params or template")
    code, _, err = take(tmp_path, settings, "--depth", "8", "--strict")
    assert code == 3 and "0 partial and 2 short answer(s)" in err


def test_a_stored_search_template_pages_only_with_offset(engine, tmp_path):
    engine.route("POST", "/products/_search/template", Reply(es_page(DOCS[:5], 12)))
    settings = es(engine, search_template={"id": "shop", "params": {"q": "{{query}}"}})
    code, _, err = take(tmp_path, settings, "--depth", "10", queries=("q1",))
    assert code == 0, err
    _, (record,), _ = stored(tmp_path)
    assert record.short == ("5 of 10 kept, the engine matched 12: a stored search template "
                            "pages only when its params use {{offset}} (for from) or {{page}}")
    engine.route("POST", "/products/_search/template", Reply(es_page(DOCS[:5], 12)),
                 Reply(es_page(DOCS[5:10], 12)))
    engine.requests.clear()
    settings = es(engine, search_template={"id": "shop", "params": {"q": "{{query}}",
                                                                   "from": "{{offset}}"}})
    (tmp_path / "s.sqlite").unlink()
    code, _, err = take(tmp_path, settings, "--depth", "10", queries=("q1",))
    assert code == 0, err
    assert [r.body["params"]["from"] for r in engine.seen("/products/_search/template")] == [
        0, 5]
    _, (record,), hits = stored(tmp_path)
    assert record.short is None and [h["doc_id"] for h in hits] == DOCS[:10]


def test_a_page_parameter_the_engine_ignores_is_caught(engine, tmp_path):
    engine.route("GET", "/api", Reply(api_page(DOCS[:4], 12)))  # the same page every time
    settings = {"kind": "http", "name": "shop", "url": f"{engine.url}/api",
                "params": {"q": "{{query}}", "page": "{{page}}"}, "hits": "data.items[*]",
                "id_field": "sku", "total_field": "meta.total"}
    code, _, err = take(tmp_path, settings, "--depth", "8", queries=("q1",))
    assert code == 0, err
    assert len(engine.requests) == 2
    _, (record,), hits = stored(tmp_path)
    assert "page 2 listed only documents of the earlier pages" in record.short
    assert (record.duplicates, len(hits)) == (0, 4)


def test_show_and_export_say_what_was_off(engine, tmp_path):
    engine.route("POST", "/products/_search", Reply("es8_timed_out.json"))
    code, _, err = take(tmp_path, es(engine), queries=("q1",))
    assert code == 0, err
    db = tmp_path / "s.sqlite"
    code, out, _ = run_cli(["snapshots", "show", "1", "--store", db, "-q", "q1"])
    assert code == 0 and "  partial: timed out" in out
    code, out, _ = run_cli(["snapshots", "export", "1", "--store", db, "-o", "-",
                            "-f", "jsonl"])
    assert json.loads(out)["partial"] == "timed out"
    code, out, _ = run_cli(["snapshots", "list", "--store", db, "-f", "json"])
    assert json.loads(out)[0]["n_partial"] == 1


def test_check_and_diff_warn_about_a_snapshot_with_partial_answers(engine, tmp_path):
    engine.route("POST", "/products/_search", Reply("es8_timed_out.json"))
    code, _, err = take(tmp_path, es(engine))
    assert code == 0, err
    engine.route("POST", "/products/_search", Reply("es8_search.json"))
    endpoint, qfile = tmp_path / "endpoint.toml", tmp_path / "queries.tsv"
    db = tmp_path / "s.sqlite"
    code, _, err = run_cli(["snapshot", endpoint, qfile, "--store", db])
    assert code == 0, err
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 p-101 1\nq2 0 p-101 1\n")
    code, _, err = run_cli(["check", qrels, "2", "--baseline", "1", "--store", db,
                              "-m", "P@1"])
    assert code == 0, err
    assert "warning: snapshot #1 (shop): 2 of 2 answers partial" in err
    code, _, err = run_cli(["snapshots", "diff", "1", "2", "--store", db])
    assert code == 0 and "snapshot #1 (shop): 2 of 2 answers partial" in err
