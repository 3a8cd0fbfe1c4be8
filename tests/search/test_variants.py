"""Variants of an endpoint file (a sweep's grid, a try): keys, values, the checks a file has."""

from __future__ import annotations

import tomllib

import pytest

from rankscope.errors import ConfigError, OptionError
from rankscope.search.config import endpoint_from_dict
from rankscope.search.variants import (
    Change,
    apply_changes,
    describe,
    parse_assignment,
    parse_key,
    parse_scalar,
    parse_values,
    resolve_key,
    toml_text,
    varied_config,
)

ES = {"kind": "elasticsearch", "name": "shop", "url": "http://localhost:9200",
      "index": "products",
      "template": '{"query": {"match": {"title": {"query": "{{query}}", "boost": "{{boost}}"}}}}',
      "variables": {"boost": 1}}


def test_values_are_toml_scalars_where_they_parse():
    # TOML's own reading: integers, floats, booleans, quoted strings
    assert parse_values("1,2.5,true,\"4\"") == [1, 2.5, True, "4"]
    assert [type(v) for v in parse_values("1,2.5,true,\"4\"")] == [int, float, bool, str]
    # anything else is the text as written (stripped), a date included
    assert parse_values("unicode61, porter unicode61") == ["unicode61", "porter unicode61"]
    assert parse_scalar("2024-01-01") == "2024-01-01"
    assert parse_scalar("[1, 2]") == "[1, 2]"
    # a comma inside a value: a TOML array
    assert parse_values('["a,b", "c"]') == ["a,b", "c"]


@pytest.mark.parametrize("text", ["weights.title=nan", "k1=1,inf", "b=-inf",
                                  "weights.title=1e309", "k1=[0.9, nan]"])
def test_a_number_that_is_not_finite_is_refused_naming_its_key(text):
    # TOML reads nan, inf and 1e309 as floats no setting means (a sweep ran them; a try
    # kept them as a JSON null)
    key = text.split("=")[0]
    with pytest.raises(OptionError, match=f"^{key}: .*not a finite number"):
        parse_assignment(text)


@pytest.mark.parametrize("text", ["1,,2", "", " , ", "1,"])
def test_an_empty_value_is_refused(text):
    with pytest.raises(OptionError, match="empty value"):
        parse_values(text)


def test_keys_dotted_quoted_and_placeholders():
    assert parse_key("weights.title") == ("weights", "title")
    assert parse_key('display_fields."a.b"') == ("display_fields", "a.b")
    assert parse_key("{{ boost }}") == ("{{ boost }}",)
    with pytest.raises(OptionError, match="not a key"):
        parse_key("a..b")
    assert parse_assignment("k1=0.9,1.2") == (("k1",), [0.9, 1.2])
    with pytest.raises(OptionError, match="KEY=V1,V2"):
        parse_assignment("weights.title")


def test_a_placeholder_is_a_variable_a_key_is_a_key():
    config = endpoint_from_dict(ES)
    assert resolve_key(config, ("{{boost}}",)) == ("variables", "boost")
    assert resolve_key(config, ("boost",)) == ("variables", "boost")
    assert resolve_key(config, ("variables", "boost")) == ("variables", "boost")
    assert resolve_key(config, ("index",)) == ("index",)
    assert resolve_key(config, ("weights", "title")) == ("weights", "title")
    with pytest.raises(OptionError, match="set by rankscope"):
        resolve_key(config, ("{{query}}",))


def test_changes_reach_nested_keys_and_refuse_to_replace_a_value_by_a_table():
    data = {"kind": "embedded", "weights": {"title": 1.0}, "tokenizer": "unicode61"}
    out = apply_changes(data, [Change(("weights", "title"), 4), Change(("k1",), 0.9)])
    assert out == {"kind": "embedded", "weights": {"title": 4}, "tokenizer": "unicode61",
                   "k1": 0.9}
    assert data["weights"] == {"title": 1.0}  # the original is left as it was
    with pytest.raises(ConfigError, match="tokenizer is not a table"):
        apply_changes(data, [Change(("tokenizer", "x"), 1)])
    # a new template replaces the file's template_file (and its syntax), and back
    filed = {"template_file": "t.json", "template_syntax": "quepid"}
    assert apply_changes(filed, [Change(("template",), "{}")]) == {"template": "{}"}
    assert apply_changes({"template": "{}"}, [Change(("template_file",), "t.json")]) == {
        "template_file": "t.json"}


def test_a_variant_is_checked_as_a_file_is(tmp_path):
    with pytest.raises(ConfigError, match="did you mean 'weights'"):
        varied_config({"kind": "embedded", "corpus": "c.jsonl"}, [Change(("wieghts",), 1)],
                      name="x", source="e.toml", base_dir=tmp_path)
    with pytest.raises(ConfigError, match=r"credential|password"):
        varied_config(ES, [Change(("auth",), {"type": "basic", "username": "u",
                                               "password": "p"})],
                      name="x", source="e.toml", base_dir=tmp_path)


def test_an_embedded_variant_building_another_index_gets_its_own(tmp_path):
    data = {"kind": "embedded", "name": "demo", "corpus": "c.jsonl"}
    same = varied_config(data, [Change(("weights", "text"), 2.0)], name="demo[x]",
                         source=None, base_dir=tmp_path)
    other = varied_config(data, [Change(("tokenizer",), "porter unicode61")], name="demo[y]",
                          source=None, base_dir=tmp_path)
    given = varied_config(data, [Change(("tokenizer",), "porter"), Change(("index",), "p.db")],
                          name="demo[z]", source=None, base_dir=tmp_path)
    # weights are applied at query time: the file's own index (named after the file's name)
    assert same.settings["index"] == "demo.index.sqlite"
    assert other.settings["index"].startswith("demo.index.sqlite.")
    assert other.settings["index"] != same.settings["index"]
    assert given.settings["index"] == "p.db"


def test_toml_text_reads_back_as_written():
    data = {"kind": "http", "name": 'quote " and \\ and\nnewline\x7f', "n": 3, "f": 0.1,
            "flag": False, "big": 1e-05, "list": [1, "two", [3.0]],
            "table": {"a.b": {"c": "ü"}, "plain": 1}, "empty": {}}
    assert tomllib.loads(toml_text(data, header="line one\nline two")) == data


def test_describe_writes_values_as_toml():
    changes = [Change(("weights", "title"), 4), Change(("tokenizer",), "porter unicode61"),
               Change(("variables", "brand"), "4"), Change(("display_fields", "a.b"), "x")]
    assert describe(changes) == ('weights.title=4 tokenizer="porter unicode61" '
                                 'variables.brand="4" display_fields."a.b"=x')
