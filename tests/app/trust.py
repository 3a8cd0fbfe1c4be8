"""Helpers of the trust-boundary tests: an app over a world, and a curator's API client."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from rankscope.app.factory import create_app
from rankscope.services import campaigns, sessions


class Curator:
    """A curator driving the app through the API with a token, as a script would."""

    def __init__(self, app: Any, store: Any, world: Any) -> None:
        self.app, self.store, self.w = app, store, world
        token = sessions.create_token(store, world.curator.name)
        self.http = TestClient(app, raise_server_exceptions=False, follow_redirects=False,
                               headers={"Authorization": f"Bearer {token}"})

    def endpoint(self, toml: str) -> Any:
        return self.http.post(f"/api/v1/projects/{self.w.project.id}/endpoints",
                              json={"toml": toml})

    def evaluate(self, endpoint_id: int) -> Any:
        """Create an evaluation on the endpoint and run it; the run's answer."""
        made = self.http.post(f"/api/v1/projects/{self.w.project.id}/evaluations", json={
            "name": f"on {endpoint_id}", "query_set_id": self.w.query_set.id,
            "endpoint_id": endpoint_id, "depth": 3, "metrics": ["P@3"]})
        assert made.status_code == 201, made.text
        return self.http.post(f"/api/v1/evaluations/{made.json()['id']}/run")

    def judge(self, endpoint: str, **extra: Any) -> Any:
        return self.http.post(f"/api/v1/evaluations/{self.w.evaluation.id}/llm-judges",
                              json={"endpoint": endpoint, "model": "m", **extra})

    def error_of(self, evaluation_id: int) -> str | None:
        return campaigns.get_evaluation(self.store, self.w.curator, evaluation_id).error


def app_for(store: Any, world: Any, boundary: Any = None, **options: Any) -> Any:
    """The app over ``store`` with the world's data directory (and a boundary, if given)."""
    return create_app(store, world.data, boundary=boundary, **options)


def es_toml(url: str, name: str = "es", **extra: str) -> str:
    """An Elasticsearch endpoint file (extra lines as ``key = value`` TOML)."""
    lines = ['kind = "elasticsearch"', f'name = "{name}"', f'url = "{url}"',
             'index = "products"']
    lines += [f"{key} = {value}" for key, value in extra.items()]
    return "\n".join(lines) + "\n"
