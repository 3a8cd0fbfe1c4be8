"""Every remote kind against the local engine server: requests, mapping, versions, errors."""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import json
import threading
import time
from typing import Any

import pytest

from rankscope.errors import ConfigError, SearchRequestError
from rankscope.search.config import endpoint_from_dict, open_endpoint
from rankscope.search.types import QueryItem, SearchResponse

from .engine_server import RECORDED, EngineServer, Reply, recorded


def _search(settings: dict[str, Any], query: QueryItem, depth: int = 10,
            **options: Any) -> SearchResponse:
    async def go() -> SearchResponse:
        endpoint = open_endpoint(endpoint_from_dict(settings, source="test.toml"), **options)
        try:
            return await endpoint.search(query, depth)
        finally:
            await endpoint.aclose()

    return asyncio.run(go())


def _version(settings: dict[str, Any]) -> str | None:
    async def go() -> str | None:
        endpoint = open_endpoint(endpoint_from_dict(settings))
        try:
            return await endpoint.version()
        finally:
            await endpoint.aclose()

    return asyncio.run(go())


def es(engine: EngineServer, kind: str = "elasticsearch", **extra: Any) -> dict[str, Any]:
    return es_settings(engine.url, kind, **extra)


def es_settings(url: str, kind: str = "elasticsearch", **extra: Any) -> dict[str, Any]:
    return {"kind": kind, "url": url, "index": "products",
            "template": '{"query": {"match": {"title": "{{query}}"}}}',
            "snippet_field": "highlight.description[0]",
            "display_fields": {"brand": "brand.name", "price": "price"}, **extra}


HOSTILE = 'say "hi" \\ {{query}} \n ünïcode'


@pytest.mark.parametrize("kind, body, root, version", [
    ("elasticsearch", "es8_search.json", "es8_root.json", "elasticsearch 8.13.4"),
    ("elasticsearch", "es7_search.json", "es7_root.json", "elasticsearch 7.17.21"),
    ("elasticsearch", "es7_search_total_as_int.json", "es7_root.json", "elasticsearch 7.17.21"),
    ("opensearch", "opensearch2_search.json", "opensearch2_root.json", "opensearch 2.13.0"),
])
def test_elasticsearch_and_opensearch_answers_map(engine, kind, body, root, version):
    engine.route("POST", "/products/_search", Reply(body))
    engine.route("GET", "/", Reply(root))
    response = _search(es(engine, kind), QueryItem("q1", HOSTILE), depth=10)
    # the request: the query is the content of one JSON string, size defaults to the depth
    sent = engine.seen("/products/_search")[0]
    assert sent.method == "POST"
    assert sent.body == {"query": {"match": {"title": HOSTILE}}, "size": 10}
    assert response.request["body"] == sent.body
    expected = json.loads(recorded(body))["hits"]["hits"]
    assert [h.doc_id for h in response.hits] == [h["_id"] for h in expected]
    assert [h.score for h in response.hits] == [h["_score"] for h in expected]
    first = response.hits[0]
    assert first.title == "Waterproof hiking boots"  # found in _source
    assert first.url == "https://shop.example/p/p-101"
    assert first.image == "https://img.example/p-101.jpg"
    assert first.snippet == "Full-grain leather boots with a <em>waterproof</em> membrane."
    assert dict(first.fields) == {"brand": "Alpina", "price": 129.0}
    assert response.hits[2].snippet is None and response.hits[2].image is None
    assert response.total_hits == 214  # object (7, 8, OpenSearch) or number (6, int mode)
    assert response.raw_sha256 == hashlib.sha256(recorded(body)).hexdigest()
    assert response.raw is None
    assert _version(es(engine, kind)) == version


def test_depth_cuts_the_list_and_keep_raw_keeps_the_body(engine):
    engine.route("POST", "/products/_search", Reply("es8_search.json"))
    response = _search(es(engine), QueryItem("q1", "boots"), depth=2, keep_raw=True)
    assert [h.doc_id for h in response.hits] == ["p-101", "p-207"]
    assert response.raw == recorded("es8_search.json")


def test_typed_parameters_and_search_templates(engine):
    engine.route("POST", "/products/_search/template", Reply("es8_search.json"))
    settings = {"kind": "elasticsearch", "url": engine.url, "index": "products",
                "search_template": {"id": "product-search",
                                    "params": {"query_string": "{{query}}", "size": "{{depth}}",
                                               "brand": "{{brand}}", "boost": "{{boost}}"}},
                "variables": {"boost": 2.5}}
    response = _search(settings, QueryItem("q7", 'boots "waterproof"', {"brand": "Alpina"}),
                       depth=5)
    sent = engine.seen("/products/_search/template")[0].body
    assert sent == {"id": "product-search",
                    "params": {"query_string": 'boots "waterproof"', "size": 5,
                               "brand": "Alpina", "boost": 2.5}}
    assert len(response.hits) == 3


def test_solr_select_parameters_are_rendered_one_by_one_and_encoded(engine):
    engine.route("GET", "/solr/products/select", Reply("solr9_select.json"))
    engine.route("GET", "/solr/admin/info/system", Reply("solr9_system.json"))
    settings = {"kind": "solr", "url": f"{engine.url}/solr", "collection": "products",
                "params": {"q": "{{query}}", "defType": "edismax",
                           "qf": "title^2 description", "fq": ["inStock:true", "brand:{{brand}}"]},
                "snippet_field": "description"}
    query = QueryItem("q2", 'boots & "socks" +x #1 ü', {"brand": "Alpina"})
    response = _search(settings, query, depth=7)
    sent = engine.seen("/solr/products/select")[0]
    assert sent.query == [("q", 'boots & "socks" +x #1 ü'), ("defType", "edismax"),
                          ("qf", "title^2 description"), ("fq", "inStock:true"),
                          ("fq", "brand:Alpina"), ("rows", "7"), ("fl", "*,score"),
                          ("wt", "json")]
    assert [h.doc_id for h in response.hits] == ["p-101", "p-033", "p-207"]
    assert [h.score for h in response.hits] == [3.4112263, 2.0176854, 0.9132001]
    assert response.hits[0].title == "Waterproof hiking boots"  # first of a multi-valued field
    assert response.hits[0].snippet == "Full-grain leather boots with a waterproof membrane."
    assert response.hits[2].url is None
    assert response.total_hits == 57
    assert _version(settings) == "solr 9.6.1"


def test_solr_json_request_api(engine):
    engine.route("POST", "/solr/products/query", Reply("solr9_query_json.json"))
    settings = {"kind": "solr", "url": f"{engine.url}/solr", "core": "products", "api": "json",
                "template": '{"query": "{!edismax qf=title}{{query}}", "filter": ["inStock:true"]}'}
    response = _search(settings, QueryItem("q3", "hiking\nboots"), depth=4)
    sent = engine.seen("/solr/products/query")[0].body
    assert sent == {"query": "{!edismax qf=title}hiking\nboots", "filter": ["inStock:true"],
                    "limit": 4, "fields": ["*", "score"]}
    assert [h.doc_id for h in response.hits] == ["p-101", "p-033"]


def test_http_kind_declarative_mapping(engine):
    engine.route("GET", "/api/v2/search", Reply("api_catalog.json"))
    settings = {"kind": "http", "url": f"{engine.url}/api/v2/search",
                "params": {"q": "{{query}}", "limit": "{{depth}}", "lang": "en"},
                "hits": "data.items[*]", "id_field": "sku", "score_field": "relevance",
                "title_field": "name", "snippet_field": "summary", "url_field": "links.web",
                "image_field": "media[0].url", "total_field": "meta.total",
                "display_fields": {"brand": "brand.name", "price": "price.amount",
                                   "second_image": "media[-1].url"}}
    response = _search(settings, QueryItem("q4", "hiking boots"), depth=10)
    assert engine.seen("/api/v2/search")[0].query == [("q", "hiking boots"), ("limit", "10"),
                                                      ("lang", "en")]
    first, second = response.hits
    assert (first.doc_id, first.score, first.title, first.url, first.image) == (
        "p-101", 0.93, "Waterproof hiking boots", "https://shop.example/p/p-101",
        "https://img.example/p-101.jpg")
    assert first.snippet == "Full-grain leather boots."
    assert dict(first.fields) == {"brand": "Alpina", "price": 129.0,
                                  "second_image": "https://img.example/p-101-2.jpg"}
    assert second.image is None and second.snippet is None
    assert response.total_hits == 2


def test_http_kind_post_body_and_url_placeholders(engine):
    engine.route("POST", "/tenants/a%2Fb/search", Reply("api_catalog.json"))
    settings = {"kind": "http", "url": f"{engine.url}/tenants/{{{{tenant}}}}/search",
                "template": '{"text": "{{query}}", "page": {"size": {{depth}}}}',
                "hits": "data.items", "id_field": "sku",
                "headers": {"X-Client": "rankscope-tests"}}
    _search(settings, QueryItem("q5", "x", {"tenant": "a/b"}), depth=3)
    sent = engine.requests[0]
    assert sent.path == "/tenants/a%2Fb/search"  # a placeholder in the URL is percent-encoded
    assert sent.body == {"text": "x", "page": {"size": 3}}
    assert sent.headers["X-Client"] == "rankscope-tests"


@pytest.mark.parametrize("kind, status, body, said", [
    ("elasticsearch", 400, "es_400_parsing.json", "parsing_exception: unknown query [mtch]"),
    ("elasticsearch", 401, "es_401_security.json",
     "security_exception: missing authentication credentials"),
    ("elasticsearch", 404, "es_404_index.json",
     "index_not_found_exception: no such index [productz]"),
    ("opensearch", 404, "opensearch2_404_index.json",
     "index_not_found_exception: no such index [products-v2]"),
])
def test_non_retryable_answers_name_the_query_and_the_server(engine, fast_sleep, kind, status,
                                                             body, said):
    engine.route("POST", "/products/_search", Reply(body, status=status))
    with pytest.raises(SearchRequestError) as caught:
        _search(es(engine, kind), QueryItem("q42", "boots"), sleep=fast_sleep)
    message = str(caught.value)
    assert message.startswith("query q42: ")
    assert f"HTTP {status} from POST {engine.url}/products/_search" in message
    assert said in message
    assert "\n" not in message
    assert len(engine.requests) == 1 and fast_sleep.delays == []  # never retried


def test_solr_errors_json_and_html(engine, fast_sleep):
    engine.route("GET", "/solr/products/select", Reply("solr9_400_syntax.json", status=400))
    engine.route("GET", "/solr/nope/select", Reply("solr9_404_core.html", status=404,
                                                    content_type="text/html"))
    base = {"kind": "solr", "url": f"{engine.url}/solr"}
    with pytest.raises(SearchRequestError, match=r"query s1: HTTP 400 .*SyntaxError: Cannot "
                                                 r"parse 'title:\('"):
        _search({**base, "collection": "products"}, QueryItem("s1", "title:("))
    with pytest.raises(SearchRequestError, match=r"HTTP 404 .*Error 404 Not Found"):
        _search({**base, "collection": "nope"}, QueryItem("s2", "x"))


def test_429_with_retry_after_seconds_and_date_then_success(engine, fast_sleep):
    sent_at = time.time()
    date = email.utils.formatdate(sent_at + 30, usegmt=True)  # whole seconds, rounded down
    engine.route("POST", "/products/_search",
                 Reply("es_429_rejected.json", status=429, headers={"Retry-After": "7"}),
                 Reply("es_429_rejected.json", status=429, headers={"Retry-After": date}),
                 Reply("es8_search.json"))
    response = _search(es(engine), QueryItem("q1", "boots"), sleep=fast_sleep)
    took = time.time() - sent_at
    assert len(response.hits) == 3
    assert len(engine.requests) == 3
    assert fast_sleep.delays[0] == 7.0
    # the date is 30 s after sent_at (less its fraction of a second), read at most `took` later
    assert 30 - 1 - took <= fast_sleep.delays[1] <= 30


def test_503_retried_with_full_jitter_backoff_then_give_up(engine, fast_sleep):
    engine.route("POST", "/products/_search", Reply("es_503_shards.json", status=503))
    draws = iter([0.5, 0.25, 1.0, 0.0])
    with pytest.raises(SearchRequestError) as caught:
        _search(es(engine, max_retries=3, backoff=0.4, max_backoff=1.0), QueryItem("q9", "x"),
                sleep=fast_sleep, rng=lambda: next(draws))
    # full jitter: retry n waits rng * min(cap, base * 2**n)
    assert fast_sleep.delays == pytest.approx([0.5 * 0.4, 0.25 * 0.8, 1.0 * 1.0])
    assert len(engine.requests) == 4
    message = str(caught.value)
    assert message.startswith("query q9: gave up after 4 requests")
    assert "HTTP 503: search_phase_execution_exception: all shards failed" in message


def test_an_answer_slower_than_the_timeout_is_retried(engine, fast_sleep):
    slow = threading.Event()  # the first answer is held until the test lets it go
    engine.route("POST", "/products/_search", Reply("es8_search.json", hold=slow),
                 Reply("es8_search.json"))
    response = _search(es(engine, timeout=0.3), QueryItem("q1", "boots"), sleep=fast_sleep)
    assert len(response.hits) == 3 and len(engine.requests) == 2
    # the held answer was not waited for: its handler is still holding when search() returns
    assert not slow.is_set() and engine.in_flight == 1
    assert len(fast_sleep.delays) == 1  # one retry, after the timeout
    slow.set()


def test_timeouts_every_time_end_with_the_query_named(engine, fast_sleep):
    engine.route("POST", "/products/_search", Reply("es8_search.json", delay=2.0))
    with pytest.raises(SearchRequestError, match=r"query q1: gave up after 2 requests .*timed "
                                                 r"out after 0.2s"):
        _search(es(engine, timeout=0.2, max_retries=1), QueryItem("q1", "x"), sleep=fast_sleep)


def test_connection_refused_is_retried_then_named(fast_sleep):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = {"kind": "elasticsearch", "url": f"http://127.0.0.1:{port}", "index": "p",
                "max_retries": 2}
    with pytest.raises(SearchRequestError, match="connection error"):
        _search(settings, QueryItem("q1", "x"), sleep=fast_sleep)
    assert len(fast_sleep.delays) == 2


@pytest.mark.parametrize("body, status, what", [
    ("es_truncated.json", 200, "is not JSON"),
    ("proxy_html_200.html", 200, "is not JSON"),
    ("es_no_hits_key.json", 200, "has no hit list at 'hits.hits'"),
])
def test_bodies_that_do_not_map_end_the_query(engine, fast_sleep, body, status, what):
    engine.route("POST", "/products/_search", Reply(body, status=status))
    with pytest.raises(SearchRequestError) as caught:
        _search(es(engine), QueryItem("q3", "x"), sleep=fast_sleep)
    assert str(caught.value).startswith("query q3: the response of POST ")
    assert what in str(caught.value)
    assert len(engine.requests) == 1


def test_http_kind_missing_path_and_missing_id(engine, fast_sleep):
    engine.route("GET", "/a", Reply("api_catalog.json"))
    engine.route("GET", "/b", Reply("api_no_sku.json"))
    base = {"kind": "http", "id_field": "sku", "params": {"q": "{{query}}"}}
    with pytest.raises(SearchRequestError, match=r"has no hit list at 'results\[\*\]'"):
        _search({**base, "url": f"{engine.url}/a", "hits": "results[*]"}, QueryItem("h1", "x"))
    with pytest.raises(SearchRequestError, match=r"query h2: .*hit 1 without a document id at "
                                                 r"'sku'"):
        _search({**base, "url": f"{engine.url}/b", "hits": "data.items[*]"}, QueryItem("h2", "x"))


def test_an_empty_hit_list_is_no_error(engine):
    engine.route("GET", "/a", Reply(b'{"results": [], "total": 0}'))
    response = _search({"kind": "http", "url": f"{engine.url}/a", "hits": "results[*]"},
                       QueryItem("h1", "nothing"))
    assert response.hits == ()


def test_the_concurrency_limit_holds_and_is_reached():
    """Two in flight, never three, counted where the requests arrive.

    Every answer is held until the test lets them go; before that, the event
    loop runs until each of the 8 searches is blocked (in the transport or on
    the limit; the mock transport does no I/O, so a bounded number of turns
    reaches that state). A limit of 1 leaves one request in, a broken or
    larger limit lets three or more in.
    """
    import httpx

    state = {"in": 0, "peak": 0}

    async def go() -> None:
        release = asyncio.Event()

        async def answer(request: httpx.Request) -> httpx.Response:
            state["in"] += 1
            state["peak"] = max(state["peak"], state["in"])
            await release.wait()
            state["in"] -= 1
            return httpx.Response(200, content=recorded("es8_search.json"))

        endpoint = open_endpoint(endpoint_from_dict(es_settings("http://engine.test",
                                                                concurrency=2)),
                                 transport=httpx.MockTransport(answer))
        try:
            tasks = [asyncio.ensure_future(endpoint.search(QueryItem(f"q{i}", "x"), 10))
                     for i in range(8)]
            for _ in range(200):  # loop turns, not time: every task reaches its wait
                await asyncio.sleep(0)
            held = state["in"]
            release.set()
            results = await asyncio.gather(*tasks)
        finally:
            await endpoint.aclose()
        assert held == 2
        assert all(len(r.hits) == 3 for r in results)

    asyncio.run(go())
    assert state["peak"] == 2


class FakeTime:
    """A clock that moves only when the code under test sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.delays: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.delays.append(seconds)
        self.now += seconds


def test_requests_per_second_space_the_starts():
    """20 a second: 8 requests start 50 ms apart on the client's clock (7 waits of 50 ms)."""
    sent: list[float] = []
    fake = FakeTime()

    def answer(request: Any) -> Any:
        import httpx

        sent.append(fake.now)
        return httpx.Response(200, content=recorded("es8_search.json"))

    async def go() -> None:
        import httpx

        config = endpoint_from_dict(es_settings("http://engine.test", rps=20.0, concurrency=8))
        endpoint = open_endpoint(config, sleep=fake.sleep, clock=fake.clock,
                                 transport=httpx.MockTransport(answer))
        try:
            await asyncio.gather(*(endpoint.search(QueryItem(f"q{i}", "x"), 10)
                                   for i in range(8)))
        finally:
            await endpoint.aclose()

    asyncio.run(go())
    assert fake.delays == pytest.approx([0.05] * 7)
    assert sent == pytest.approx([0.05 * i for i in range(8)])


def test_credentials_come_from_the_environment(engine, monkeypatch):
    engine.route("POST", "/products/_search", Reply("es8_search.json"))
    monkeypatch.setenv("ES_USER_T", "elastic")
    monkeypatch.setenv("ES_PASS_T", "s3cret:ü")
    monkeypatch.setenv("TENANT_KEY_T", "k-123")
    settings = es(engine, auth={"type": "basic", "username_env": "ES_USER_T",
                                "password_env": "ES_PASS_T"},
                  headers_env={"X-Tenant-Key": "TENANT_KEY_T"})
    response = _search(settings, QueryItem("q1", "x"))
    import base64

    sent = engine.requests[0].headers
    assert sent["Authorization"] == "Basic " + base64.b64encode(
        "elastic:s3cret:ü".encode()).decode()
    assert sent["X-Tenant-Key"] == "k-123"
    assert "Authorization" not in json.dumps(response.request)  # never recorded
    monkeypatch.delenv("ES_PASS_T")
    with pytest.raises(ConfigError, match="environment variable ES_PASS_T is not set"):
        _search(settings, QueryItem("q1", "x"))


def test_every_recorded_file_is_used_or_documented():
    readme = (RECORDED / "README.md").read_text()
    for path in RECORDED.iterdir():
        if path.name != "README.md":
            assert f"`{path.name}`" in readme, path.name
