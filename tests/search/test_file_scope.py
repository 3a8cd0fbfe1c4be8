"""The files an endpoint names: inside the operator's directory when a web user wrote it,
and never an index built over a file the engine did not make (for anyone)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest

from rankscope.errors import ConfigError, ParseError
from rankscope.search.config import endpoint_from_dict, open_endpoint
from rankscope.search.files import FileScope
from rankscope.search.types import QueryItem

DOCS = [{"id": "a", "title": "red shoes"}, {"id": "b", "title": "blue shoes"}]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "files"
    root.mkdir()
    (root / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    db = root / "app.sqlite"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE users(name TEXT, password_hash TEXT)")
        con.execute("INSERT INTO users VALUES ('admin', '$argon2id$v=19$secret')")
    return root


def _scope(root: Path) -> FileScope:
    return FileScope(root, frozenset({root / "app.sqlite"}))


def _embedded(**extra: object) -> dict[str, object]:
    return {"kind": "embedded", "name": "shop", "corpus": "corpus.jsonl", **extra}


def _search(config, text: str = "red") -> list[str]:
    async def go() -> list[str]:
        endpoint = open_endpoint(config)
        try:
            found = await endpoint.search(QueryItem("q1", text), 5)
            return [h.doc_id for h in found.hits]
        finally:
            await endpoint.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("key, value, message", [
    ("corpus", "/etc/passwd", "not an absolute path"),
    ("corpus", "/proc/self/environ", "not an absolute path"),
    ("corpus", "../outside.jsonl", "may not step out of a directory"),
    ("corpus", "sub/../../outside.jsonl", "may not step out of a directory"),
    ("corpus", "~/.ssh/id_rsa", "not an absolute path"),
    ("template_file", "/etc/hostname", "not an absolute path"),
    ("index", "app.sqlite", "a file of the app itself"),
    ("index", "app.sqlite-wal", "a file of the app itself"),
    ("corpus", "app.sqlite", "a file of the app itself"),
    ("index", "corpus.jsonl", "not an index this engine made"),
    ("index", ".", "the files directory itself"),
])
def test_a_web_users_endpoint_names_files_only_inside_the_directory(root, key, value, message):
    data = _embedded(**{key: value})
    with pytest.raises(ConfigError, match=message) as caught:
        endpoint_from_dict(data, source="endpoint shop", base_dir=root, files=_scope(root))
    assert key in str(caught.value)
    assert "secret" not in str(caught.value) and "root:" not in str(caught.value)


def test_a_symbolic_link_out_of_the_directory_is_refused(root, tmp_path):
    (tmp_path / "private.jsonl").write_text('{"id": "x", "title": "private"}\n')
    (root / "link.jsonl").symlink_to(tmp_path / "private.jsonl")
    (root / "env").symlink_to("/proc/self/environ")
    for name in ("link.jsonl", "env"):
        with pytest.raises(ConfigError, match="corpus leads outside"):
            endpoint_from_dict(_embedded(corpus=name), base_dir=root, files=_scope(root))
    (root / "db-link").symlink_to(root / "app.sqlite")
    with pytest.raises(ConfigError, match="index names a file of the app itself"):
        endpoint_from_dict(_embedded(index="db-link"), base_dir=root, files=_scope(root))


def test_the_endpoint_directory_must_be_inside_the_root(root, tmp_path):
    with pytest.raises(ConfigError, match="endpoint's directory is outside"):
        endpoint_from_dict(_embedded(), base_dir=tmp_path, files=_scope(root))


def test_a_scoped_endpoint_inside_the_directory_works(root):
    (root / "sub").mkdir()
    config = endpoint_from_dict(_embedded(index="sub/shop.index.sqlite"), base_dir=root,
                                files=_scope(root))
    assert _search(config) == ["a"]
    assert (root / "sub" / "shop.index.sqlite").is_file()
    assert _search(config, "blue") == ["b"]  # the index it made is reused (and may be rebuilt)


def test_no_index_is_built_over_a_file_the_engine_did_not_make(root):
    # the command line too: `index = "corpus.jsonl"` (a slip) would have replaced the corpus
    db_before = (root / "app.sqlite").read_bytes()
    for target in ("app.sqlite", "corpus.jsonl"):
        config = endpoint_from_dict(_embedded(index=target), base_dir=root)
        with pytest.raises(ConfigError, match="not an index this engine made"):
            _search(config)
    assert (root / "app.sqlite").read_bytes() == db_before
    with sqlite3.connect(root / "app.sqlite") as con:
        assert con.execute("SELECT name FROM users").fetchall() == [("admin",)]
    assert (root / "corpus.jsonl").read_text().startswith('{"id": "a"')


def test_no_tantivy_index_replaces_a_directory_it_did_not_make(root):
    pytest.importorskip("tantivy")
    keep = root / "keep"
    keep.mkdir()
    (keep / "notes.txt").write_text("mine")
    config = endpoint_from_dict(_embedded(engine="tantivy", index="keep"), base_dir=root)
    with pytest.raises(ConfigError, match="not an index this engine made"):
        _search(config)
    assert (keep / "notes.txt").read_text() == "mine"


def test_a_web_named_corpus_is_never_quoted_in_an_error(root):
    (root / "notes.txt").write_text("AWS_SECRET_ACCESS_KEY=abc123 not json\n")
    scoped = endpoint_from_dict(_embedded(corpus="notes.txt"), base_dir=root,
                                files=_scope(root))
    with pytest.raises(ParseError) as caught:
        _search(scoped)
    assert "line 1" in str(caught.value) and "abc123" not in str(caught.value)
    own = endpoint_from_dict(_embedded(corpus="notes.txt", index="own.sqlite"), base_dir=root)
    with pytest.raises(ParseError, match="abc123"):  # the user's own file: quoted, as before
        _search(own)
