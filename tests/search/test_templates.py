"""Templates render on the parsed JSON value: hostile queries never break a request."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankscope.errors import ConfigError
from rankscope.search.paths import parse_path
from rankscope.search.templates import (
    import_template,
    parse_json_template,
    placeholder_names,
    render_text,
    render_value,
    template_params,
)

HOSTILE = [
    'a "quoted" query',
    "back\\slash \\\" and \\n literal",
    "line one\nline two\r\n\ttabbed",
    "ünïcödé ✓ 漢字 🙂",
    "{{query}} and {{depth}} and {{nope}}",
    '"}, "size": 10000, "x": {"',
    "#$query## %SearchText% $query",
    "",
]

TEMPLATE = ('{"query": {"bool": {"must": {"match": {"title": "{{query}}"}}, '
            '"should": [{"match_phrase": {"text": "exact: {{query}}!"}}]}}, '
            '"size": {{depth}}, "_source": ["title"]}')


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_queries_are_one_string_value(text):
    tree = parse_json_template(TEMPLATE)
    body = render_value(tree, template_params(text, 7, {}))
    sent = json.loads(json.dumps(body))  # what goes over the wire, parsed back
    assert sent == {"query": {"bool": {"must": {"match": {"title": text}},
                                       "should": [{"match_phrase": {"text": f"exact: {text}!"}}]}},
                    "size": 7, "_source": ["title"]}


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_text_lands_verbatim(text):
    tree = parse_json_template('{"a": "{{query}}", "b": ["<{{query}}>"], "{{query}}": 1}')
    body = render_value(tree, {"query": text})
    assert json.loads(json.dumps(body)) == {"a": text, "b": [f"<{text}>"], text: 1}


def test_typed_parameters_keep_their_type_only_when_alone():
    tree = parse_json_template('{"size": "{{depth}}", "label": "top {{depth}}", '
                               '"boost": {{boost}}, "ids": "{{ids}}", "on": "{{flag}}"}')
    values = {"depth": 10, "boost": 2.5, "ids": ["a", "b"], "flag": True}
    assert render_value(tree, values) == {"size": 10, "label": "top 10", "boost": 2.5,
                                          "ids": ["a", "b"], "on": True}


def test_defaults_keywords_and_missing_names():
    values = template_params("red wool, socks", 10, {"brand": "acme"})
    assert values["keyword1"] == "red" and values["keyword3"] == "socks"
    assert render_text("{{keyword2}}|{{keyword9}}|{{color|any}}|{{brand|x}}", values) == \
        "wool||any|acme"
    with pytest.raises(KeyError):
        render_text("{{missing}}", values)
    assert placeholder_names({"a": "{{x}} {{y|d}}", "{{z}}": ["{{query}}"]}) == {"x", "z", "query"}


def test_invalid_template_names_the_key():
    with pytest.raises(ConfigError, match=r"t.toml: template is not valid JSON \(Expecting"):
        parse_json_template('{"query": }', source="t.toml")


# Importers, on templates written the way each tool writes them.

def test_quepid_elasticsearch_template_with_curator_variables():
    quepid = ('{"query": {"multi_match": {"query": "#$query##", "type": "best_fields", '
              '"fields": ["title^##titleBoost##", "description"], "tie_breaker": ##tie##}}, '
              '"size": 10}')
    converted = import_template(quepid, "quepid")
    tree = parse_json_template(converted)
    body = render_value(tree, {"query": 'say "x"', "titleBoost": 3, "tie": 0.3})
    assert body == {"query": {"multi_match": {"query": 'say "x"', "type": "best_fields",
                                              "fields": ["title^3", "description"],
                                              "tie_breaker": 0.3}}, "size": 10}


def test_quepid_keywords_as_quepids_own_tests_expect():
    # splainer-search's queryTemplateSvc test: "rambo movie" with keyword1, keyword.1 (0-based)
    # and keyword3|other gives "rambo and movie and other".
    template = '{"query": "#$keyword1## and #$keyword.1## and #$keyword3|other##"}'
    tree = parse_json_template(import_template(template, "quepid"))
    assert render_value(tree, template_params("rambo movie", 10, {})) == {
        "query": "rambo and movie and other"}


def test_quepid_solr_query_string_and_qoption():
    converted = import_template("q=#$query##&defType=edismax&qf=title^2&fq=#$qOption.filter##",
                                "auto")
    assert converted == "q={{query}}&defType=edismax&qf=title^2&fq={{filter}}"


def test_opensearch_search_relevance_workbench_template():
    workbench = ('{"query":{"multi_match":{"query":"%SearchText%","fields":["id","title",'
                 '"category","bullet_points","description","brand","color"]}}}')
    tree = parse_json_template(import_template(workbench))  # auto-detected
    body = render_value(tree, {"query": "iphone\\case"})
    assert body["query"]["multi_match"]["query"] == "iphone\\case"
    assert body["query"]["multi_match"]["fields"][0] == "id"


def test_rated_ranking_evaluator_template():
    rre = ('{"query": {"multi_match": {"query": "$query", "fields": ["title^2", "$field"]}}, '
           '"size": 10}')
    tree = parse_json_template(import_template(rre, "rre"))
    assert render_value(tree, {"query": "$query literally", "field": "body"}) == {
        "query": {"multi_match": {"query": "$query literally", "fields": ["title^2", "body"]}},
        "size": 10}


def test_unknown_syntax_is_refused():
    with pytest.raises(ConfigError, match="template_syntax must be one of"):
        import_template("{}", "velocity")


# Paths

def test_paths_walk_dicts_and_lists():
    data = {"data": {"items": [{"id": 1, "tags": ["a", "b"]}, {"id": 2, "tags": []}]},
            "a.b": {"c": 3}}
    assert parse_path("data.items[*].id").resolve(data) == [1, 2]
    assert parse_path("data.items[-1].id").resolve(data) == [2]
    assert parse_path("data.items[*].tags[0]").resolve(data) == ["a"]
    assert parse_path('["a.b"].c').resolve(data) == [3]
    assert parse_path("data.missing[0]").resolve(data) == []
    assert parse_path("data.items[5]").first(data) is None
    assert parse_path("[*]").resolve([1, 2]) == [1, 2]


@pytest.mark.parametrize("bad", ["", "a..b", ".a", "a[", "a[x]", "a.[0]", "a[0]b"])
def test_bad_paths_are_refused(bad):
    with pytest.raises(ConfigError, match="hits"):
        parse_path(bad, key="hits")
