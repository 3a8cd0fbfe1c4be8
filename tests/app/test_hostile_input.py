"""Hostile input on every route: whatever a user allowed to call it sends, the answer is a
4xx, never a 500 (and an API answer is JSON with an ``"error"``).

For each route of :data:`tests.app.test_http.ROUTES`, as the least role allowed to call it,
the request the table makes is sent again with one thing at a time made hostile (variants
per field, never their product): each path id as 0, -1, 2**63, 2**64, "x", "1e3", " 1";
each JSON field as null, a wrong type, a huge int, NaN / Infinity, a 1 MB string, a string
with NUL and a lone surrogate, and an unknown field beside it; the whole JSON body as
invalid JSON, an array, empty, non-UTF-8 bytes, 10,000 levels deep; each form field and
each query parameter (the ones the table sends and the ones the route declares) as NUL,
huge numbers, a 1 MB string, missing. Run on SQLite, and on PostgreSQL when
``RANKSCOPE_TEST_PG_URL`` is set (NUL characters and 64-bit overflow differ there).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from .test_http import ROUTES, TOML, Route, Site, _id, _unwrap, site  # noqa: F401  (the fixture)

pytestmark = pytest.mark.slow
ROUTES_BY = {(r.method, r.path): r for r in ROUTES}

MB = "x" * (1024 * 1024)
PATH_IDS = ["0", "-1", str(2**63), str(2**64), "x", "1e3", "%20{}"]
"""Hostile path segments (the last: a space before the right one, as it travels in a URL)."""
TEXTS = ["a\x00b", "\ud800", str(10**30), "-" + str(2**63), "NaN", "", " ", MB]
"""Hostile form fields and query parameters (a form sends text only)."""
QUERY_TEXTS = [t if t is not MB else "x" * 32_000 for t in TEXTS]
"""In a query, 32 kB for the 1 MB string (a URL longer than 64 kB is refused by the client)."""
BODIES: list[tuple[str, bytes]] = [
    ("invalid", b'{"name": '),
    ("array", b"[1, 2]"),
    ("empty", b""),
    ("non-utf8", b'{"name": "\xff\xfe"}'),
    ("deep", b"[" * 10_000 + b"]" * 10_000),
    ("deep-object", b'{"a":' * 10_000 + b"1" + b"}" * 10_000),
    ("nan", b'{"x": NaN}'),
    ("string", b'"hello"'),
    ("null", b"null"),
]
"""Hostile whole JSON bodies."""

HEAD = b"query_id,doc_id,rater,grade\n"
UPLOADS: list[tuple[str, bytes]] = [
    ("NUL", HEAD + b"q\x00,d,r,1\n"),
    ("non-utf8", HEAD + b"\xff\xfe,d,r,1\n"),
    ("huge grade", HEAD + b"q01,d,r," + str(10**30).encode() + b"\n"),
    ("NaN grade", HEAD + b"q01,d,r,NaN\n"),
    ("2**63 grade", HEAD + b"q01,d,r," + str(2**63).encode() + b"\n"),
    ("no header", b"q01,d,r,1\n"),
    ("binary", bytes(range(256)) * 64),
    ("empty", b""),
    ("1 MB id", HEAD + b"q01," + MB.encode() + b",r,1\n"),
]
"""Hostile uploaded grades files."""


NUMBERS = ["nan", "inf", "-inf", "1e309", str(10**30), "-" + str(2**63)]
"""What a number inside a text is replaced with (nDCG@5 -> nDCG@nan, weights.title=3 -> ...)."""


def _numbers_in(text: str) -> Iterator[tuple[str, str]]:
    """``text`` with its first number replaced by each of :data:`NUMBERS` (if it has one)."""
    found = re.search(r"\d+(\.\d+)?", text)
    if found:
        for number in NUMBERS:
            yield (f"number in text {number[:8]}",
                   text[:found.start()] + number + text[found.end():])


def _values(value: Any) -> Iterator[tuple[str, Any]]:
    """Hostile JSON values of a field whose good value is ``value``."""
    yield "null", None
    if isinstance(value, bool):
        yield "int for bool", 1
        yield "string for bool", "true"
    elif isinstance(value, int):
        yield "string for int", "1"
        yield "bool for int", True
        yield "float for int", 1.5
        yield "huge", 10**30
        yield "2**63", 2**63
        yield "-2**63-1", -(2**63) - 1
        yield "list for int", [1]
    elif isinstance(value, str):
        yield "list for str", [value]
        yield "int for str", 7
        yield "object for str", {"a": value}
        yield "NUL", "a\x00b"
        yield "lone surrogate", "\ud800"
        yield "1 MB", MB
        yield from _numbers_in(value)
    elif isinstance(value, list):
        yield "object for list", {"a": 1}
        yield "string for list", "abc"
        yield "list of null", [None]
        yield "list of NUL", ["a\x00b"]
        yield "huge list", [value[0] if value else 1] * 100_000
        if value and isinstance(value[0], str):
            for name, text in _numbers_in(value[0]):
                yield name, [text, *value[1:]]
    elif isinstance(value, dict):
        yield "list for object", [value]
    yield "NaN", float("nan")
    yield "Infinity", float("inf")


def _dump(body: Any) -> bytes:
    """JSON as a client may send it: NaN / Infinity literals, lone surrogates escaped."""
    return json.dumps(body, allow_nan=True).encode()


def _json_variants(body: Any, where: str = "") -> Iterator[tuple[str, Any]]:
    """The body with one field made hostile at a time (inside lists of objects too)."""
    if isinstance(body, dict):
        yield f"{where}+unknown field", {**body, "zz_unknown": 1}
        for key, value in body.items():
            for name, bad in _values(value):
                yield f"{where}{key}: {name}", {**body, key: bad}
            missing = {k: v for k, v in body.items() if k != key}
            yield f"{where}{key}: missing", missing
            for name, inner in _json_variants(value, f"{where}{key}."):
                yield name, {**body, key: inner}
    elif isinstance(body, list) and body and isinstance(body[0], dict):
        for name, inner in _json_variants(body[0], f"{where}[0]."):
            yield name, [inner, *body[1:]]


def _form_variants(data: dict[str, Any], declared: set[str]) -> Iterator[tuple[str, Any]]:
    """The form with one field made hostile (or missing) at a time."""
    for key in sorted(set(data) | declared):
        for text in TEXTS:
            yield f"form {key}={text[:12]!r}", {**data, key: text}
        for name, text in _numbers_in(str(data.get(key, ""))):
            yield f"form {key}: {name}", {**data, key: text}
        if key in data:
            yield f"form {key} missing", {k: v for k, v in data.items() if k != key}
    yield "form unknown field", {**data, "zz_unknown": "a\x00"}


def _api_route(s: Site, route: Route) -> APIRoute | None:
    def walk(routes: Any, prefix: str = "") -> Iterator[tuple[str, APIRoute]]:
        for r in routes:
            if isinstance(r, APIRoute):
                yield (r.path if r.path.startswith(prefix) else prefix + r.path), r
            elif hasattr(r, "original_router"):  # an included router (FastAPI >= 0.16x)
                yield from walk(r.original_router.routes,
                                getattr(r.original_router, "prefix", ""))

    for path, r in walk(_unwrap(s.app).routes):
        if path == route.path and route.method in r.methods:
            return r
    return None


def _declared(s: Site, route: Route) -> tuple[set[str], set[str]]:
    """The query parameters and form fields the route declares."""
    found = _api_route(s, route)
    if found is None:
        return set(), set()
    dep = found.dependant
    queries = {p.alias for p in dep.query_params}
    forms: set[str] = set()
    for d in [dep, *dep.dependencies]:
        queries |= {p.alias for p in d.query_params}
    for p in dep.body_params:
        info = p.field_info
        if type(info).__name__ in ("Form", "File"):
            forms.add(p.alias)
    return queries, forms


SAMPLE = {"integer": 1, "number": 1.5, "boolean": True, "string": "a", "array": ["a"],
          "object": {"a": "a"}}
"""A plain value of each JSON type: what a body field the table does not send starts from."""


def _model_fields(s: Site, route: Route) -> dict[str, Any]:
    """Each field of the route's JSON body model: a plain value of its type."""
    found = _api_route(s, route)
    if found is None or found.dependant.body_params == []:
        return {}
    model = found.dependant.body_params[0].field_info.annotation
    if not hasattr(model, "model_json_schema"):
        return {}
    out = {}
    for name, prop in model.model_json_schema()["properties"].items():
        kinds = [k.get("type") for k in prop.get("anyOf", [prop])] + [None]
        kind = next(k for k in kinds if k != "null")
        out[name] = SAMPLE.get(kind or "string", "a")
    return out


def _unsent(sent: dict[str, Any], key: str, value: Any) -> Iterator[tuple[str, Any]]:
    """The variants of a body field the table does not send (from a plain value of it)."""
    for name, body in _json_variants({**sent, key: value}):
        if name.startswith(f"{key}:") or name.startswith(f"{key}."):
            yield f"{name} (not sent by the table)", body


def _form(request: dict[str, Any], form: dict[str, Any]) -> dict[str, Any]:
    """httpx arguments sending ``form`` (a lone surrogate as the bytes a client may send)."""
    if "files" in request:
        return {"files": request["files"],
                "data": {k: str(v).encode("utf-8", "surrogatepass") for k, v in form.items()}}
    return {"content": urlencode(form, errors="surrogatepass").encode(),
            "headers": {"content-type": "application/x-www-form-urlencoded"}}


def _requests(s: Site, route: Route) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(what is hostile, url, httpx arguments) for the route: one variant at a time."""
    request = route.make(s)
    url = request.pop("url")
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    segments = parts.path.split("/")
    template = route.path.split("/")
    queries, forms = _declared(s, route)

    def at(path: str = parts.path, params: dict[str, str] | None = None) -> str:
        q = urlencode(query if params is None else params, errors="surrogatepass")
        return path + ("?" + q if q else "")

    for i, part in enumerate(template):
        if part.startswith("{"):
            for bad in PATH_IDS:
                path = "/".join([*segments[:i], bad.format(segments[i]), *segments[i + 1:]])
                yield f"path {part}={bad}", at(path), request
            if not segments[i].isdigit():  # a name (q01, qrels-3.txt): its number hostile
                for name, text in _numbers_in(segments[i]):
                    path = "/".join([*segments[:i], text, *segments[i + 1:]])
                    yield f"path {part}: {name}", at(path), request
    for key in sorted(set(query) | queries):
        for text in QUERY_TEXTS:
            yield f"query {key}={text[:12]!r}", at(params={**query, key: text}), request
        if key in query:
            yield f"query {key} missing", at(params={k: v for k, v in query.items()
                                                     if k != key}), request
    if "json" in request:
        sent = request["json"]
        more = {k: v for k, v in _model_fields(s, route).items()
                if isinstance(sent, dict) and k not in sent}
        # the body the table sends, each field; then each field of the model it leaves out
        variants = itertools.chain(_json_variants(sent), *(
            _unsent(sent, k, v) for k, v in more.items()))
        for n, (name, body) in enumerate(variants):
            if isinstance(body, dict) and "batch_id" in body and "batch_id" not in name:
                body = {**body, "batch_id": f"hostile-{n}-{id(s)}"}  # never a replay
            yield f"json {name}", at(), {"content": _dump(body),
                                         "headers": {"content-type": "application/json"}}
    if "json" in request or (route.method == "POST" and route.path.startswith("/api/")
                             and "content" not in request):
        for name, raw in BODIES:
            yield f"body {name}", at(), {"content": raw,
                                         "headers": {"content-type": "application/json"}}
    if "data" in request or forms:
        data = dict(request.get("data", {}))
        for name, form in _form_variants(data, forms - {"file"}):
            yield name, at(), _form(request, form)
        for name, raw, kind in [
                ("multipart without its parts", b"--x\r\ngarbage", "multipart/form-data; "
                 "boundary=x"),
                ("multipart without a boundary", b"a=1", "multipart/form-data"),
                ("JSON for a form", b'{"a": 1}', "application/json"),
                ("form not UTF-8", b"name=%ff%fe&value=%ff", "application/x-www-form-urlencoded")]:
            yield f"body {name}", at(), {"content": raw, "headers": {"content-type": kind}}
    for name, good in request.get("files", {}).items():  # an uploaded file's bytes hostile
        for what, raw in UPLOADS:
            yield f"file {name} {what}", at(), {**request,
                                                "files": {name: (good[0], raw)}}
    if "content" in request:  # an upload: its bytes hostile
        for name, raw in UPLOADS:
            yield f"upload {name}", at(), {"content": raw}
        yield "upload as a form", at(), {"content": b"a=1", "headers": {
            "content-type": "application/x-www-form-urlencoded"}}


def _client(s: Site, route: Route) -> TestClient:
    api = route.path.startswith("/api/")
    who = route.role if route.role in ("judge", "curator", "admin") else None
    return s.client(who, api, raise_errors=False)


@pytest.mark.parametrize("route", ROUTES, ids=_id)
def test_hostile_input_is_never_a_500(site, route):  # noqa: F811  (the imported fixture)
    client = _client(site, route)
    api = route.path.startswith("/api/")
    failures = []
    for what, url, arguments in _requests(site, route):
        answer = client.request(route.method, url, **arguments)
        if answer.status_code >= 500:
            failures.append(f"{what}: {answer.status_code} {answer.text[:200]!r}")
        elif api and answer.status_code >= 400:
            try:
                error = answer.json().get("error")
            except ValueError:
                error = None
            if not error:
                failures.append(f"{what}: {answer.status_code} without a JSON error: "
                                f"{answer.text[:200]!r}")
    assert not failures, "\n".join(failures)


# What the sweep found: each a 500 before its fix (a 4xx naming the field and value after).

@pytest.mark.parametrize("cutoff", ["nan", "inf", "-inf", "1e309", "(k=nan)", "(k=5)"])
def test_a_metric_cut_off_that_is_no_number_is_refused(site, cutoff):  # noqa: F811
    """nDCG@nan: the cut-off parser called int(nan) (ValueError); nDCG(k=5): make_metric got
    k twice (TypeError): each a 500 on both forms."""
    api = _client(site, ROUTES_BY[("POST", "/api/v1/projects/{project_id}/evaluations")])
    name = f"nDCG{cutoff}" if cutoff.startswith("(") else f"nDCG@{cutoff}"
    answer = api.post(f"/api/v1/projects/{site.w.project.id}/evaluations", json={
        "name": "nan", "query_set_id": site.w.query_set.id, "endpoint_id": site.w.endpoint.id,
        "metrics": [name]})
    assert answer.status_code == 400, answer.text
    said = "no parameter 'k'" if cutoff.startswith("(") else "whole number"
    assert name in answer.json()["error"] and said in answer.json()["error"]
    page = _client(site, ROUTES_BY[("POST", "/projects/{project_id}/evaluations")])
    answer = page.post(f"/projects/{site.w.project.id}/evaluations", data={
        "name": "nan", "query_set_id": str(site.w.query_set.id),
        "endpoint_id": str(site.w.endpoint.id), "metrics": name})
    assert answer.status_code == 400 and said.split("'")[0] in answer.text


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e309", "[1.0, nan]"])
def test_a_try_changing_a_setting_to_no_number_is_refused(site, value):  # noqa: F811
    """weights.title=nan: TOML reads nan / inf; the try was kept with a JSON null (a failed
    try saying float(None) on SQLite, a 500 on PostgreSQL, which keeps no NaN in JSON)."""
    api = _client(site, ROUTES_BY[("POST", "/api/v1/evaluations/{evaluation_id}/tries")])
    url = f"/api/v1/evaluations/{site.w.evaluation.id}/tries"
    answer = api.post(url, json={"changes": [f"weights.title={value}"], "query_id": "q01"})
    assert answer.status_code == 400, answer.text
    assert "weights.title" in answer.json()["error"] and "finite" in answer.json()["error"]
    page = _client(site, ROUTES_BY[("POST", "/evaluations/{evaluation_id}/tries")])
    answer = page.post(f"/evaluations/{site.w.evaluation.id}/tries",
                       data={"changes": f"weights.title={value}", "query_id": "q01"})
    assert answer.status_code == 400 and "finite" in answer.text


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e309"])
def test_an_endpoint_file_with_a_number_that_is_none_is_refused(site, value):  # noqa: F811
    """weights = { title = nan }: the weight check (value < 0) let NaN through; PostgreSQL
    refused the JSON (a 500), SQLite kept an endpoint whose every run fails."""
    api = _client(site, ROUTES_BY[("POST", "/api/v1/projects/{project_id}/endpoints")])
    toml = TOML.replace('name = "again"', f'name = "w{value}"').replace("title = 4.0",
                                                                        f"title = {value}")
    answer = api.post(f"/api/v1/projects/{site.w.project.id}/endpoints", json={"toml": toml})
    assert answer.status_code == 400, answer.text
    assert "weights.title" in answer.json()["error"]
    # a key no engine reads is refused all the same: no number the store cannot keep
    other = TOML.replace('name = "again"', f'name = "t{value}"') + f"\ntimeout = {value}\n"
    answer = api.post(f"/api/v1/projects/{site.w.project.id}/endpoints", json={"toml": other})
    assert answer.status_code == 400, answer.text
    assert "timeout" in answer.json()["error"]


@pytest.mark.parametrize("key", ["tokenizer", "title_field", "template", "extra"])
def test_an_endpoint_file_with_a_nul_escape_is_refused(site, key):  # noqa: F811
    """tokenizer = "x\\u0000": TOML's escape makes a NUL no text field lets through; on
    PostgreSQL saving it was a 500."""
    api = _client(site, ROUTES_BY[("POST", "/api/v1/projects/{project_id}/endpoints")])
    lines = [line for line in TOML.replace('name = "again"', f'name = "nul-{key}"')
             .splitlines() if not line.startswith(f"{key} ")]
    toml = "\n".join([*lines, f'{key} = "porter\\u0000"']) + "\n"
    answer = api.post(f"/api/v1/projects/{site.w.project.id}/endpoints", json={"toml": toml})
    assert answer.status_code == 400, answer.text
    assert key in answer.json()["error"] and "NUL" in answer.json()["error"]
