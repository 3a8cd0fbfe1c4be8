"""Docstring examples of the app's modules; query sets from TREC topics; endpoint secrets."""

from __future__ import annotations

import doctest
import importlib

import pytest

from rankscope.errors import ConfigError, ParseError
from rankscope.services import catalog

from .conftest import boundary_for

MODULES = [
    "rankscope.app.core",
    "rankscope.app.schemas",
    "rankscope.app.security",
    "rankscope.app.svg",
    "rankscope.app.apidocs",
    "rankscope.services.accounts",
    "rankscope.services.boundary",
    "rankscope.services.limits",
    "rankscope.services.campaigns",
    "rankscope.services.campaign_data",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no example"
    assert result.failed == 0


TOPICS = """<top>
<num> Number: 301
<title> International Organized Crime
<desc> Description:
Identify organizations that participate in international criminal activity.
<narr> Narrative:
A relevant document must name the organization.
</top>
"""


def test_query_sets_from_trec_topics_and_bad_lines(store, world):
    view = catalog.import_query_set(store, world.curator, world.project.id, "trec", TOPICS)
    assert view.n_queries == 1
    (query,) = catalog.query_set_queries(store, world.curator, view.id)
    assert (query["query_id"], query["text"]) == ("301", "International Organized Crime")
    assert query["need"].startswith("Identify organizations") and "must name" in query["need"]
    with pytest.raises(ParseError, match=r"line 3: query id 'a' already on line 1"):
        catalog.import_query_set(store, world.curator, world.project.id, "dup",
                                 "a\tone\nb\ttwo\na\tthree\n")


def test_an_endpoint_with_a_secret_in_it_is_refused(store, world):
    toml = ('kind = "elasticsearch"\nname = "es"\nurl = "http://127.0.0.1:9200"\n'
            'index = "products"\nauth = { type = "basic", username = "u", password = "x" }\n')
    # this server lets endpoints name ES_PASSWORD and reach 127.0.0.1 (a local Elasticsearch)
    boundary = boundary_for(world.data, hosts=["127.0.0.1"], env=["ES_PASSWORD"])
    with pytest.raises(ConfigError, match="environment variable"):
        catalog.save_endpoint(store, world.curator, world.project.id, toml, boundary=boundary)
    ok = toml.replace('password = "x"', 'password_env = "ES_PASSWORD"')
    view = catalog.save_endpoint(store, world.curator, world.project.id, ok, boundary=boundary)
    assert "ES_PASSWORD" in view.toml and view.kind == "elasticsearch"


def test_a_run_cut_short_by_a_stopped_server_can_be_run_again(store, world):
    from rankscope.errors import ConflictError
    from rankscope.services import campaign_runs, campaigns
    from rankscope.store.models_app import Evaluation

    def stuck(session):
        session.get(Evaluation, world.evaluation.id).status = "running"

    store.write(stuck)
    with pytest.raises(ConflictError, match="running already"):
        campaign_runs.run_evaluation(store, world.curator, world.evaluation.id,
                                     boundary=world.boundary)
    assert campaign_runs.recover_interrupted_runs(store) == [world.evaluation.id]
    view = campaigns.get_evaluation(store, world.curator, world.evaluation.id)
    assert view.status == "failed" and "server stopped" in view.error
    again = campaign_runs.run_evaluation(store, world.curator, world.evaluation.id,
                                         boundary=world.boundary)
    assert again["tasks"] == world.run["tasks"]  # the same results: the same tasks, reused
