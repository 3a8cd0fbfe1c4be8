"""Where a search request may go: redirects, credentials, hosts (rankscope.outbound).

Every test runs real HTTP against local engine servers (127.0.0.1, port 0).
Two servers on two ports are two origins (scheme, host and port differ), so a
redirect from one to the other is a redirect to another origin.
"""

from __future__ import annotations

import asyncio
import ipaddress
from typing import Any

import pytest

from rankscope.errors import ConfigError, OptionError, OutboundError, SearchRequestError
from rankscope.outbound.hosts import METADATA_ADDRESSES, HostPolicy, address_refusal
from rankscope.search.config import endpoint_from_dict, open_endpoint
from rankscope.search.credentials import looks_like_credential, resolve_auth
from rankscope.search.types import QueryItem, SearchResponse

from .engine_server import EngineServer, Reply

ES8 = "es8_search.json"
Q = QueryItem("q1", "red shoes")


@pytest.fixture
def other():
    server = EngineServer()
    try:
        yield server
    finally:
        server.close()


def _search(settings: dict[str, Any], **options: Any) -> SearchResponse:
    async def go() -> SearchResponse:
        endpoint = open_endpoint(endpoint_from_dict(settings, source="test.toml"), **options)
        try:
            return await endpoint.search(Q, 3)
        finally:
            await endpoint.aclose()

    return asyncio.run(go())


def _es(url: str, **extra: Any) -> dict[str, Any]:
    return {"kind": "elasticsearch", "url": url, "index": "products", **extra}


# -- redirects -------------------------------------------------------------------------


def test_a_redirect_to_another_origin_carries_no_credential_header(engine, other, monkeypatch):
    # issue 24: httpx dropped Authorization on such a redirect but forwarded X-Api-Key
    monkeypatch.setenv("RS_TEST_SHOP_KEY", "k-123")
    monkeypatch.setenv("RS_TEST_ES_TOKEN", "t-456")
    engine.route("POST", "/products/_search",
                 Reply(status=307, headers={"Location": f"{other.url}/products/_search"}))
    other.route("POST", "/products/_search", Reply(ES8))
    found = _search(_es(engine.url, headers_env={"X-Api-Key": "RS_TEST_SHOP_KEY"},
                        auth={"type": "bearer", "token_env": "RS_TEST_ES_TOKEN"}))
    assert len(found.hits) == 3
    first, = engine.seen("/products/_search")
    assert first.headers["X-Api-Key"] == "k-123"
    assert first.headers["Authorization"] == "Bearer t-456"
    moved, = other.seen("/products/_search")
    lowered = {k.lower() for k in moved.headers}
    assert "x-api-key" not in lowered and "authorization" not in lowered
    assert moved.method == "POST" and moved.body == first.body  # 307 keeps method and body


def test_a_redirect_within_the_origin_keeps_the_credentials(engine, monkeypatch):
    monkeypatch.setenv("RS_TEST_SHOP_KEY", "k-123")
    engine.route("POST", "/old/_search", Reply(status=308, headers={"Location": "/new/_search"}))
    engine.route("POST", "/new/_search", Reply(ES8))
    _search({"kind": "elasticsearch", "url": engine.url, "index": "old",
             "headers_env": {"X-Api-Key": "RS_TEST_SHOP_KEY"}})
    moved, = engine.seen("/new/_search")
    assert moved.headers["X-Api-Key"] == "k-123"


@pytest.mark.parametrize("status", [301, 302, 303])
def test_a_redirect_that_would_turn_a_post_into_a_get_is_an_error(engine, other, status):
    # the engine would run another query: a GET without the body
    engine.route("POST", "/products/_search",
                 Reply(status=status, headers={"Location": f"{other.url}/products/_search"}))
    other.route("GET", "/products/_search", Reply(ES8))
    with pytest.raises(SearchRequestError, match=f"answered {status}.*GET without the body"):
        _search(_es(engine.url))
    assert other.requests == []
    assert len(engine.requests) == 1  # refused, not retried


def test_a_get_redirect_is_followed_as_a_get(engine, other):
    # Solr's /select is a GET: 302 keeps it a GET, with the target's query string
    engine.route("GET", "/solr/c/select", Reply(status=302, headers={
        "Location": f"{other.url}/solr/c/select?q=red+shoes&rows=3"}))
    other.route("GET", "/solr/c/select", Reply("solr9_select.json"))
    found = _search({"kind": "solr", "url": f"{engine.url}/solr", "collection": "c"})
    assert found.hits
    assert other.seen("/solr/c/select")[0].method == "GET"


def test_redirects_to_other_schemes_and_endless_redirects_are_refused(engine):
    engine.route("POST", "/a/_search", Reply(status=307, headers={"Location": "file:///etc/passwd"}))
    with pytest.raises(SearchRequestError, match="only http and https are followed"):
        _search(_es(engine.url, index="a"))
    engine.route("POST", "/b/_search", Reply(status=307, headers={"Location": "/b/_search"}))
    with pytest.raises(SearchRequestError, match="redirected more than 10 times"):
        _search(_es(engine.url, index="b"))
    assert len(engine.seen("/b/_search")) == 11


# -- credentials written in the file ---------------------------------------------------


@pytest.mark.parametrize("extra, message", [
    ({"url": "http://elastic:hunter22@es.example:9200"}, "url holds a user name or password"),
    ({"url": "http://elastic@es.example:9200"}, "url holds a user name or password"),
    ({"url": "http://es.example:9200/?api_key=hunter22"}, "query parameter 'api_key'"),
    ({"url": "http://es.example:9200/?access_token=hunter22"}, "query parameter 'access_token'"),
])
def test_credentials_in_the_url_are_refused_and_never_repeated(extra, message):
    with pytest.raises(ConfigError, match=message) as caught:
        endpoint_from_dict(_es(extra["url"]))
    assert "hunter22" not in str(caught.value)


@pytest.mark.parametrize("params", [{"api_key": "hunter22"}, {"token": "hunter22"},
                                    {"key": "hunter22"}, {"access_token": "hunter22"},
                                    {"apiKey": "hunter22"}, {"q": "Bearer hunter22"}])
def test_key_like_query_parameters_are_refused(params):
    data = {"kind": "http", "url": "http://x/search", "hits": "r", "params": params}
    with pytest.raises(ConfigError, match=r"params\.\w+ (looks like a credential|holds an "
                                          r"authorization value).*params_env") as caught:
        endpoint_from_dict(data)
    assert "hunter22" not in str(caught.value)


@pytest.mark.parametrize("variables", [{"api_key": "hunter22"}, {"password": "hunter22"},
                                       {"auth_token": "hunter22"}, {"brand": "Basic aHVudGVy"}])
def test_credential_like_variables_are_refused(variables):
    data = {"kind": "http", "url": "http://x/search", "hits": "r", "variables": variables}
    with pytest.raises(ConfigError, match=r"variables.*stored with every snapshot"):
        endpoint_from_dict(data)


def test_ordinary_names_stay_allowed():
    names = ["q", "qf", "fl", "rows", "sort_key", "tokenizer", "max_tokens", "defType", "brand"]
    assert [n for n in names if looks_like_credential(n)] == []
    endpoint_from_dict({"kind": "http", "url": "http://x/s", "hits": "r",
                        "params": {"sort_key": "price", "q": "{{query}}"},
                        "variables": {"brand": "acme"}})


def test_params_env_sends_the_key_but_never_records_it(engine, monkeypatch):
    monkeypatch.setenv("RS_TEST_API_KEY", "k-789")
    engine.route("GET", "/search", Reply('{"results": [{"id": "a"}, {"id": "b"}]}'))
    found = _search({"kind": "http", "url": f"{engine.url}/search", "hits": "results",
                     "params": {"q": "{{query}}"}, "params_env": {"api_key": "RS_TEST_API_KEY"}})
    seen, = engine.seen("/search")
    assert ("api_key", "k-789") in seen.query and ("q", "red shoes") in seen.query
    assert "k-789" not in repr(found.request)
    assert found.request["params"] == [["q", "red shoes"]]


def test_an_allow_list_limits_the_variables_an_endpoint_reads(monkeypatch):
    monkeypatch.setenv("RS_TEST_ES_TOKEN", "t-1")
    monkeypatch.setenv("HOME", "/root")
    config = endpoint_from_dict(_es("http://x", auth={"type": "bearer", "token_env": "HOME"}))
    assert resolve_auth(config)["Authorization"] == "Bearer /root"  # the command line: any
    with pytest.raises(ConfigError, match="names the environment variable HOME, which this "
                                          "server does not let endpoints read"):
        resolve_auth(config, allowed_env={"RS_TEST_ES_TOKEN"})
    allowed = endpoint_from_dict(_es("http://x", auth={"type": "bearer",
                                                       "token_env": "RS_TEST_ES_TOKEN"}))
    assert resolve_auth(allowed, allowed_env={"RS_TEST_ES_TOKEN"}) == {
        "Authorization": "Bearer t-1"}


# -- hosts -----------------------------------------------------------------------------


@pytest.mark.parametrize("address, reason", [
    ("127.0.0.1", "a loopback address"), ("127.8.9.10", "a loopback address"),
    ("::1", "a loopback address"), ("::ffff:127.0.0.1", "a loopback address"),
    ("169.254.169.254", "a cloud metadata address"), ("169.254.1.1", "a link-local address"),
    ("fe80::1", "a link-local address"), ("10.1.2.3", "a private address"),
    ("172.16.0.1", "a private address"), ("192.168.0.1", "a private address"),
    ("fd12:3456::1", "a unique-local address"), ("fd00:ec2::254", "a cloud metadata address"),
    ("0.0.0.0", "not a public address"), ("100.64.0.1", "not a public address"),
    ("224.0.0.1", "not a public address"), ("93.184.215.14", None),
    ("2606:2800:21f:cb07:6820:80da:af6b:8b2c", None),
])
def test_the_default_policy_refuses_every_non_public_address(address, reason):
    assert address_refusal(address) == reason
    assert HostPolicy().refusal(address) == reason


def test_allowing_an_address_allows_that_address_only():
    policy = HostPolicy.parse(["127.0.0.1"])
    assert policy.refusal("127.0.0.1") is None
    assert policy.refusal("127.0.0.2") == "a loopback address"
    assert policy.refusal("::1") == "a loopback address"
    assert policy.refusal("::ffff:127.0.0.1") is None  # the same address, IPv4-mapped


def test_a_range_opens_its_addresses_but_never_a_metadata_address():
    policy = HostPolicy.parse(["10.0.0.0/8", "169.254.0.0/16", "fd00::/8"])
    assert policy.refusal("10.200.0.7") is None and policy.refusal("169.254.3.4") is None
    assert [a for a in METADATA_ADDRESSES if policy.refusal(a) is None] == []
    assert HostPolicy.parse(["169.254.169.254"]).refusal("169.254.169.254") is None


@pytest.mark.parametrize("entry", ["http://es.internal", "es.internal:9200", "10.0.0.0/33",
                                   "bad host"])
def test_the_operator_list_is_checked(entry):
    with pytest.raises(OptionError, match="allowed host"):
        HostPolicy.parse([entry])


def test_an_allowed_name_never_leads_to_a_metadata_address(engine):
    # the operator trusts es.internal, whatever private address it has; rebound to the
    # metadata service it is still refused, when saved and when asked
    policy = HostPolicy(names=frozenset({"es.internal"}),
                        resolver=lambda host, port: ["169.254.169.254"])
    with pytest.raises(OutboundError, match=r"es.internal, which resolves to 169.254.169.254"):
        policy.check_url("http://es.internal:9200")
    private = HostPolicy(names=frozenset({"es.internal"}),
                         resolver=lambda host, port: ["169.254.169.254", "127.0.0.1"])
    engine.route("POST", "/products/_search", Reply(ES8))
    port = engine.url.rsplit(":", 1)[1]
    found = _search(_es(f"http://es.internal:{port}"), outbound=private)
    assert len(found.hits) == 3 and engine.seen("/products/_search")[0].headers["Host"] == \
        f"es.internal:{port}"


def test_names_are_allowed_exactly_or_by_wildcard():
    policy = HostPolicy.parse(["ES.internal.", "*.corp.example"])
    assert policy.name_allowed("es.internal") and policy.name_allowed("a.b.corp.example")
    assert not policy.name_allowed("corp.example") and not policy.name_allowed("xes.internal")


def test_a_refused_url_is_refused_when_given(engine):
    policy = HostPolicy()
    for url in (engine.url, "http://[::1]:9200", "http://localhost:9200",
                "http://169.254.169.254/latest/meta-data"):
        with pytest.raises(OutboundError, match="this server reaches it only if its operator"):
            policy.check_url(url)
    policy.check_url("http://93.184.215.14/")
    HostPolicy.parse(["127.0.0.1"]).check_url(engine.url)


def test_the_request_is_checked_again_and_refused_before_anything_is_sent(engine):
    engine.route("POST", "/products/_search", Reply(ES8))
    with pytest.raises(SearchRequestError, match=r"127.0.0.1, a loopback address.*--allow-hosts"):
        _search(_es(engine.url), outbound=HostPolicy())
    assert engine.requests == []
    found = _search(_es(engine.url), outbound=HostPolicy.parse(["127.0.0.1"]))
    assert len(found.hits) == 3


def test_a_name_rebound_to_loopback_after_the_check_is_refused(engine):
    answers = iter([["93.184.215.14"], ["127.0.0.1"]])
    policy = HostPolicy(resolver=lambda host, port: next(answers))
    url = f"http://shop.example:{engine.url.rsplit(':', 1)[1]}"
    policy.check_url(url)  # when the endpoint is saved: a public address
    engine.route("POST", "/products/_search", Reply(ES8))
    with pytest.raises(SearchRequestError, match=r"shop.example, which resolves to 127.0.0.1"):
        _search(_es(url), outbound=policy)
    assert engine.requests == []


def test_the_connection_goes_to_the_address_that_was_checked(engine):
    # the name resolves to a refused address first, then to the allowed one: the request
    # goes to the allowed one, and the server still sees the name in Host
    port = engine.url.rsplit(":", 1)[1]
    policy = HostPolicy(addresses=frozenset({ipaddress.ip_address("127.0.0.1")}),
                        resolver=lambda host, p: ["10.9.9.9", "127.0.0.1"])
    engine.route("POST", "/products/_search", Reply(ES8))
    found = _search(_es(f"http://shop.example:{port}"), outbound=policy)
    assert len(found.hits) == 3
    seen, = engine.seen("/products/_search")
    assert seen.headers["Host"] == f"shop.example:{port}"


def test_a_redirect_to_a_refused_address_is_refused(engine):
    port = engine.url.rsplit(":", 1)[1]
    engine.route("POST", "/products/_search", Reply(status=307, headers={
        "Location": f"http://127.0.0.2:{port}/products/_search"}))
    with pytest.raises(SearchRequestError, match=r"127.0.0.2, a loopback address"):
        _search(_es(engine.url), outbound=HostPolicy.parse(["127.0.0.1"]))
    assert len(engine.requests) == 1


def test_a_version_url_on_a_refused_host_is_an_error(engine):
    from rankscope.errors import SearchError

    settings = {"kind": "http", "url": "http://93.184.215.14/s", "hits": "r",
                "version_url": f"{engine.url}/version", "version_path": "v"}

    async def go() -> None:
        endpoint = open_endpoint(endpoint_from_dict(settings), outbound=HostPolicy())
        try:
            await endpoint.version()
        finally:
            await endpoint.aclose()

    with pytest.raises(SearchError, match="version probe"):
        asyncio.run(go())
    assert engine.requests == []
