"""The API's routes are matched before the pages': a grader's request does not try the
pages' patterns one by one first, and no address changes hands by the order (each
module's paths match none of another's)."""

from __future__ import annotations

import re

from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from rankscope.app import api, api_tries
from rankscope.app.factory import ROUTERS, create_app


def _example(path: str) -> str:
    """A concrete address of a route's path (each parameter given a value)."""
    return re.sub(r"\{[^}:]+(:path)?\}", lambda m: "a/b" if m.group(1) else "1", path)


def test_no_address_is_matched_by_two_modules():
    """Reordering the modules changes no answer: an example address of every route (and
    the API's prefix itself) is matched by the routes of its own module only."""
    routes = {m.__name__: [r for r in m.router.routes if isinstance(r, APIRoute)]
              for m in ROUTERS}
    for name, own in routes.items():
        for route in own:
            address = _example(route.path)
            for other, theirs in routes.items():
                if other == name:
                    continue
                for their in theirs:
                    assert not their.path_regex.match(address), (name, route.path, their.path)


def test_an_api_request_tries_no_page_route(store, world, tmp_path, monkeypatch):
    """Before, the page routes (57) were each tried before the API's for every API call."""
    client = TestClient(create_app(store, tmp_path / "appdata", boundary=world.boundary),
                        base_url="http://testserver")
    api_routes = {id(r) for m in (api, api_tries) for r in m.router.routes}
    tried: list[APIRoute] = []
    matches = APIRoute.matches

    def counted(self, scope):
        tried.append(self)
        return matches(self, scope)

    monkeypatch.setattr(APIRoute, "matches", counted)
    answer = client.get(f"/api/v1/evaluations/{world.evaluation.id}/tasks/next",
                        headers={"Authorization": "Bearer not-a-token"})
    assert answer.status_code == 401
    assert tried, "no route was tried"
    assert all(id(r) in api_routes for r in tried), [r.path for r in tried
                                                      if id(r) not in api_routes][:5]
