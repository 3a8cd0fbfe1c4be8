"""``irds:NAME`` inputs: collections registered with ir_datasets' own API, read by name.

The collections here are small files registered with ``ir_datasets.registry``
and ir_datasets' own format classes (TrecQrels, TrecSubQrels, TrecPrels,
TrecQueries, TsvDocs) or record classes (ToucheQualityQrel, HighwireQrel,
CodeSearchNetChallengeQrel), so the mapping of each record shape is checked as
ir_datasets documents it. Its pages show a collection's records as, e.g.,
``namedtuple<query_id, doc_id, relevance, iteration>`` for
``msmarco-passage/trec-dl-2019/judged`` (relevance levels 0 "Irrelevant" to 3
"Perfectly relevant") and ``namedtuple<query_id, doc_id, relevance, quality,
iteration>`` for ``argsme/2020-04-01/touche-2020-task-1`` (relevance -2 to 5,
quality a separate judgment): the grade is ``relevance``, other fields are not
grades unless asked for. No test reaches the network: sockets refuse to
connect while these tests run.
"""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest

from rankscope.data.tables import Qrels
from rankscope.errors import FileAccessError, InputError, OptionError, ParseError

irds = pytest.importorskip("ir_datasets")

from ir_datasets.datasets.base import Dataset  # noqa: E402
from ir_datasets.formats import (  # noqa: E402
    BaseQrels,
    TrecPrels,
    TrecQrels,
    TrecQueries,
    TrecSubQrels,
    TsvDocs,
    TsvQueries,
)
from ir_datasets.util import Download, LocalDownload, RequestsDownload  # noqa: E402

PREFIX = f"rankscope-test-{uuid.uuid4().hex[:8]}"


class ListQrels(BaseQrels):
    """Qrels of an ir_datasets record class, from a list (as the datasets' own readers give)."""

    def __init__(self, cls: type, records: list[tuple]) -> None:
        self._cls, self._records = cls, records

    def qrels_iter(self):
        return (self._cls(*r) for r in self._records)

    def qrels_cls(self):
        return self._cls

    def qrels_defs(self):
        return {}


@pytest.fixture(autouse=True)
def no_network(monkeypatch, tmp_path):
    """Any connection attempt fails the test; ir_datasets' home and temp are the test's."""
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"a test tried the network: {args}")

    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "irds-home"))
    monkeypatch.setenv("IR_DATASETS_TMP", str(tmp_path / "irds-tmp"))

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.fixture(scope="module")
def names(tmp_path_factory) -> dict[str, str]:
    """Register the test collections once (ir_datasets' registry is global)."""
    d = tmp_path_factory.mktemp("irds")
    (d / "qrels.txt").write_text("1 0 d1 3\n1 0 d2 0\n1 0 d3 -1\n2 2 d1 1\n2 2 d4 2\n")
    (d / "topics.txt").write_text(textwrap.dedent("""\
        <top>
        <num> Number: 1
        <title> copy a tree
        <desc> Description:
        How to copy a directory
        with its files.
        <narr> Narrative:
        Shell commands are not relevant.
        </top>
        <top>
        <num> Number: 2
        <title> json
        <desc> Description:
        JSON in Python.
        <narr> Narrative:
        </top>
        """))
    (d / "queries.tsv").write_text("1\tcopy a tree\n2\tjson\n")
    (d / "docs.tsv").write_text("d1\tshutil copytree\nd2\tos walk\nd3\tjson dumps\n"
                                "d4\tjson loads\n")
    (d / "sub.txt").write_text("1 1 d1 1\n1 2 d1 0\n1 2 d2 1\n")
    (d / "prels.txt").write_text("1 d1 1 0 0.5\n1 d2 0 1 0.25\n")
    (d / "bad.txt").write_text("1 0 d1\n")
    out = {k: f"{PREFIX}/{k}" for k in ("graded", "sub", "prels", "touche", "spans", "text",
                                        "remote", "bad", "tsv")}
    reg = irds.registry.register
    reg(out["graded"], Dataset(TrecQrels(LocalDownload(d / "qrels.txt"), {0: "no", 3: "yes"}),
                               TrecQueries(LocalDownload(d / "topics.txt")),
                               TsvDocs(LocalDownload(d / "docs.tsv"))))
    reg(out["tsv"], Dataset(TsvQueries(LocalDownload(d / "queries.tsv"))))
    reg(out["sub"], Dataset(TrecSubQrels(LocalDownload(d / "sub.txt"), {})))
    reg(out["prels"], Dataset(TrecPrels(LocalDownload(d / "prels.txt"), {})))
    touche = irds.formats.ToucheQualityQrel
    reg(out["touche"], Dataset(ListQrels(touche, [("1", "a", -2, 1, "0"), ("1", "b", 4, 3,
                                                                            "0")])))
    from ir_datasets.datasets.highwire import HighwireQrel
    reg(out["spans"], Dataset(ListQrels(HighwireQrel, [("1", "a", 0, 10, 1), ("1", "a", 20, 5,
                                                                                2)])))
    from ir_datasets.datasets.codesearchnet import CodeSearchNetChallengeQrel
    reg(out["text"], Dataset(ListQrels(CodeSearchNetChallengeQrel,
                                       [("1", "a", "3", ""), ("1", "b", "n/a", "")])))
    reg(out["remote"], Dataset(
        TrecQrels(Download([RequestsDownload("https://example.invalid/qrels.txt")],
                           cache_path=str(d / "home" / "remote" / "qrels")), {}),
        TsvQueries(LocalDownload(d / "licensed" / "topics.tsv",
                                 "Copy topics.tsv from the licensed disks to {path}".format(
                                     path=d / "licensed" / "topics.tsv")))))
    reg(out["bad"], Dataset(TrecQrels(LocalDownload(d / "bad.txt"), {})))
    return out


def _qrels(name: str) -> dict[tuple[str, str], float]:
    return {(q, d): g for q, d, g in Qrels.read(f"irds:{name}").frame.iter_rows()}


def test_graded_trec_qrels_keep_every_grade(names):
    # relevance is the grade, negative ones kept as in the TREC file; iteration dropped
    assert _qrels(names["graded"]) == {("1", "d1"): 3.0, ("1", "d2"): 0.0, ("1", "d3"): -1.0,
                                       ("2", "d1"): 1.0, ("2", "d4"): 2.0}


def test_multi_field_qrels_grade_by_relevance_or_the_field_named(names):
    assert _qrels(names["touche"]) == {("1", "a"): -2.0, ("1", "b"): 4.0}
    assert _qrels(names["touche"] + "#quality") == {("1", "a"): 1.0, ("1", "b"): 3.0}
    with pytest.raises(OptionError, match=r"no grade field 'stance'.*grades: relevance, quality"):
        Qrels.read(f"irds:{names['touche']}#stance")
    # prels: relevance is the grade; method and iprob (statAP's sampling) are not
    assert _qrels(names["prels"]) == {("1", "d1"): 1.0, ("1", "d2"): 0.0}


def test_subtopic_and_passage_qrels(names):
    # diversity qrels: the intent-aware measures read the subtopics, the others a
    # document's best grade over them (SubtopicQrels.collapsed)
    from rankscope.data.subtopics import SubtopicQrels

    sub = SubtopicQrels.read(f"irds:{names['sub']}")
    assert sorted(sub.frame.rows()) == [("1", "1", "d1", 1.0), ("1", "2", "d1", 0.0),
                                        ("1", "2", "d2", 1.0)]
    assert _qrels(names["sub"]) == {("1", "d1"): 1.0, ("1", "d2"): 1.0}
    with pytest.raises(InputError, match="have no subtopic_id"):
        SubtopicQrels.read(f"irds:{names['graded']}")
    # passage qrels: a document is as relevant as its best passage
    assert _qrels(names["spans"]) == {("1", "a"): 2.0}


def test_text_grades_are_numbers_or_an_error(names):
    with pytest.raises(ParseError, match="relevance of record 2 is not a number") as info:
        Qrels.read(f"irds:{names['text']}")
    assert info.value.value == "'n/a'" and info.value.source == f"irds:{names['text']}"


def test_a_malformed_cached_file_is_bad_input_not_a_crash(names):
    with pytest.raises(ParseError, match=r"ir_datasets could not read the qrels .*expected 4 "
                                         "columns"):
        Qrels.read(f"irds:{names['bad']}")


def test_unknown_names_and_missing_entities(names):
    with pytest.raises(InputError, match="did you mean " + names["graded"]):
        Qrels.read(f"irds:{names['graded']}x")
    with pytest.raises(InputError, match=r"has no qrels .it provides queries"):
        Qrels.read(f"irds:{names['tsv']}")
    with pytest.raises(OptionError, match="names no collection"):
        Qrels.read("irds:")


def test_missing_files_are_named_with_where_ir_datasets_looks(names, tmp_path):
    with pytest.raises(FileAccessError) as info:
        Qrels.read(f"irds:{names['remote']}")
    message = str(info.value)
    assert "the qrels are not in ir_datasets' cache" in message
    assert "https://example.invalid/qrels.txt" in message
    assert str(Path("home") / "remote" / "qrels") in message and "never downloads" in message
    from rankscope.search.queries import read_queries

    with pytest.raises(FileAccessError, match=r"Copy topics.tsv from the licensed disks"):
        read_queries(f"irds:{names['remote']}")


def test_a_download_the_walk_missed_is_still_refused(names, monkeypatch):
    # should the files' walk miss a download, the guard stops it: the network is never used
    from rankscope.data import irds as module

    monkeypatch.setattr(module, "missing_files", lambda handler: [])
    with pytest.raises(FileAccessError, match="not in ir_datasets' cache"):
        Qrels.read(f"irds:{names['remote']}")


def test_queries_for_snapshot_and_judge(names):
    from rankscope.llm_judge.inputs import read_needs, read_query_file
    from rankscope.search.queries import read_queries

    items = read_queries(f"irds:{names['graded']}")
    assert [(q.query_id, q.text) for q in items] == [("1", "copy a tree"), ("2", "json")]
    # description and narrative make the need a grader reads (as TREC topics files do)
    assert items[0].need == ("How to copy a directory with its files.\n\nShell commands are "
                             "not relevant.")
    assert items[1].need == "JSON in Python."
    texts, needs = read_query_file(f"irds:{names['graded']}")
    assert texts == {"1": "copy a tree", "2": "json"} and needs["1"] == items[0].need
    assert read_needs(f"irds:{names['graded']}") == needs
    assert [(q.query_id, q.text, q.need) for q in read_queries(f"irds:{names['tsv']}")] == [
        ("1", "copy a tree", None), ("2", "json", None)]


def test_documents_for_judge(names):
    from rankscope.llm_judge.inputs import read_documents

    docs = read_documents(f"irds:{names['graded']}", ("title", "text"), only=["d4", "d1", "x"])
    assert docs == {"d4": {"text": "json loads"}, "d1": {"text": "shutil copytree"}}


def test_judgments_and_evaluate_read_collections(names, tmp_path):
    import rankscope
    from rankscope.judgments import Judgments

    j = Judgments.read(f"irds:{names['graded']}")
    assert j.raters == [f"irds:{names['graded']}"] and len(j) == 5
    # a declared scale checks the collection's grades like a file's: -1 is outside 0-4
    with pytest.raises(InputError, match=r"outside the trec .0-4. scale: '-1'"):
        Judgments.read(f"irds:{names['graded']}", scale="trec")
    run = tmp_path / "run.txt"
    run.write_text("1 Q0 d1 1 3 r\n1 Q0 d2 2 2 r\n2 Q0 d4 1 1 r\n")
    result = rankscope.evaluate(f"irds:{names['graded']}", str(run), ["P@1", "RR"])
    # query 1: d1 (grade 3) first; query 2: d4 (grade 2) first
    assert result["P@1"] == 1.0 and result["RR"] == 1.0


@pytest.mark.parametrize("engine", ["sqlite", "tantivy"])
def test_the_embedded_engine_indexes_a_collection(names, tmp_path, engine):
    import asyncio

    from rankscope.search.config import endpoint_from_dict, open_endpoint
    from rankscope.search.types import QueryItem

    settings = {"kind": "embedded", "name": "irds-test", "corpus": f"irds:{names['graded']}",
                "fields": ["text"]}
    if engine == "tantivy":
        pytest.importorskip("tantivy")
        settings.update(engine="tantivy", tokenizer="default")
    config = endpoint_from_dict(settings, base_dir=tmp_path)

    async def search() -> list[str]:
        endpoint = open_endpoint(config)
        try:
            response = await endpoint.search(QueryItem("q", "json", {}, None), 10)
            return sorted(h.doc_id for h in response.hits)
        finally:
            await endpoint.aclose()

    assert asyncio.run(search()) == ["d3", "d4"]


@pytest.mark.parametrize("engine", ["sqlite", "tantivy"])
def test_a_web_users_corpus_names_a_collection_only_where_the_operator_allows(names, tmp_path,
                                                                             engine):
    """Under a FileScope (an endpoint a web user wrote) ``irds:NAME`` is no path to confine:
    the operator's patterns (``serve --irds``) allow it or not, when the endpoint is checked
    and again when it is opened; its index stays inside the directory, and a plain path is
    confined as before. Fails if the corpus goes through FileScope.resolve (it is taken for a
    file named ``irds:...`` in the directory) or if the collection is not checked."""
    import asyncio
    import dataclasses

    from rankscope.errors import ConfigError, ForbiddenError
    from rankscope.search.config import endpoint_from_dict, open_endpoint
    from rankscope.search.embedded_index import default_index_name
    from rankscope.search.files import FileScope
    from rankscope.search.types import QueryItem

    settings: dict[str, Any] = {"kind": "embedded", "name": "irds-web",
                                "corpus": f"irds:{names['graded']}", "fields": ["text"]}
    if engine == "tantivy":
        pytest.importorskip("tantivy")
        settings.update(engine="tantivy", tokenizer="default")
    files = tmp_path / "files"
    files.mkdir()
    allowed = FileScope(files, irds=(f"{PREFIX}/*",))
    config = endpoint_from_dict(settings, base_dir=files, files=allowed)

    async def search(config) -> list[str]:
        endpoint = open_endpoint(config)
        try:
            response = await endpoint.search(QueryItem("q", "json", {}, None), 10)
            return sorted(h.doc_id for h in response.hits)
        finally:
            await endpoint.aclose()

    assert asyncio.run(search(config)) == ["d3", "d4"]
    index = files / default_index_name("irds-web", settings.get("engine", "fts5"))
    assert index.exists() and not (files / f"irds:{names['graded']}").exists()

    with pytest.raises(ForbiddenError, match="not enabled on this server"):
        endpoint_from_dict(settings, base_dir=files, files=FileScope(files))
    with pytest.raises(ForbiddenError, match="not among those this server allows"):
        endpoint_from_dict(settings, base_dir=files, files=FileScope(files, irds=("beir/*",)))
    with pytest.raises(ForbiddenError, match="not enabled on this server"):  # opened again
        asyncio.run(search(dataclasses.replace(config, files=FileScope(files))))
    for path, message in (("/etc/passwd", "not an absolute path"),
                          ("../outside.jsonl", "may not step out")):
        with pytest.raises(ConfigError, match=message):
            endpoint_from_dict({**settings, "corpus": path}, base_dir=files, files=allowed)


def test_the_cli_evaluates_a_collection_by_name(names, tmp_path, capsys):
    from rankscope.cli.main import main

    run = tmp_path / "run.txt"
    run.write_text("1 Q0 d2 1 3 r\n1 Q0 d1 2 2 r\n2 Q0 d1 1 1 r\n")
    code = main(["evaluate", f"irds:{names['graded']}", str(run), "-m", "P@1", "-m", "RR",
                 "-q", "-f", "json"])
    assert code == 0
    per_query = json.loads(capsys.readouterr().out)["per_query"]
    # query 1: d2 (0) then d1 (3): P@1 0, RR 1/2; query 2: d1 (grade 1) first
    assert per_query == {"1": {"P@1": 0.0, "RR": 0.5}, "2": {"P@1": 1.0, "RR": 1.0}}
    code = main(["evaluate", f"irds:{names['remote']}", str(run), "-m", "P@1"])
    assert code == 2 and "never downloads" in capsys.readouterr().err


SUBPROCESS = """
import socket, sys
def refuse(*a, **k):
    sys.stderr.write("NETWORK ATTEMPT\\n")
    raise OSError("no network in tests")
socket.socket.connect = refuse
socket.create_connection = refuse
from rankscope.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_real_collection_from_a_fresh_cache_then_from_the_files_named(tmp_path):
    # msmarco-passage/trec-dl-2019/judged as ir_datasets defines it, with an empty cache:
    # the error names the qrels file and where it is looked for; a qrels file put there
    # (the official format, a few lines) is then read by name. IR_DATASETS_HOME must be set
    # before ir_datasets is imported: a process of its own.
    home = tmp_path / "home"
    env = {**os.environ, "IR_DATASETS_HOME": str(home)}
    run = tmp_path / "run.txt"
    run.write_text("19335 Q0 1017759 1 2 r\n19335 Q0 1082489 2 1 r\n")

    def rankscope(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", SUBPROCESS, *argv], env=env, text=True,
                              capture_output=True, timeout=120, check=False)

    name = "irds:msmarco-passage/trec-dl-2019/judged"
    done = rankscope("evaluate", name, str(run), "-m", "nDCG@10")
    assert done.returncode == 2 and "NETWORK ATTEMPT" not in done.stderr
    expected = home / "msmarco-passage" / "trec-dl-2019" / "qrels"
    assert f"looked for at {expected}" in done.stderr
    assert "https://trec.nist.gov/data/deep/2019qrels-pass.txt" in done.stderr
    expected.parent.mkdir(parents=True, exist_ok=True)
    expected.write_text("19335 Q0 1017759 0\n19335 Q0 1082489 3\n")
    done = rankscope("evaluate", name, str(run), "-m", "nDCG@10", "-f", "json")
    assert done.returncode == 0, done.stderr
    # the grade-0 document first, the grade-3 second: DCG 3 / log2 3, ideal 3
    value = json.loads(done.stdout)["mean"]["nDCG@10"]
    assert value == pytest.approx(1 / math.log2(3))


def test_snapshot_and_judge_take_queries_and_documents_by_name(names, tmp_path, capsys):
    # snapshot: the collection's queries against an embedded endpoint over its documents;
    # judge (dry run: no request is sent): its queries and documents as the texts to grade
    from rankscope.cli.main import main

    name = f"irds:{names['graded']}"
    endpoint = tmp_path / "endpoint.toml"
    endpoint.write_text(f'kind = "embedded"\nname = "irds"\ncorpus = "{name}"\n'
                        'fields = ["text"]\n')
    run = tmp_path / "run.txt"
    assert main(["snapshot", str(endpoint), name, "-o", str(run), "--depth", "3", "--quiet"]) == 0
    lines = [line.split() for line in run.read_text().splitlines()]
    # query 1 "copy a tree" shares no term with a document (d1 is "shutil copytree");
    # query 2 "json" matches d3 and d4
    assert sorted((q, d) for q, _, d, *_ in lines) == [("2", "d3"), ("2", "d4")]
    capsys.readouterr()
    code = main(["judge", "--endpoint", "http://127.0.0.1:9/v1", "--model", "m",
                 "--queries", name, "--docs", name, "--run", str(run), "--dry-run"])
    out = capsys.readouterr().out
    assert code == 0 and "pairs 2: 0 already done, 2 to grade" in out


@pytest.mark.parametrize("argv", [
    ["compare", "{q}", "{a}", "{b}", "-m", "P@1"],
    ["report", "{q}", "{a}", "{b}", "-o", "{tmp}/report.html"],
    ["coverage", "{q}", "{a}", "-k", "2"],
    ["explain-differences", "{q}", "{a}", "-m", "P@1", "--conventions", "ranx"],
    ["check", "{q}", "{a}", "--baseline", "{b}", "-m", "P@1", "--max-drop", "1"],
    ["fuse", "{a}", "{b}", "--method", "wsum", "--optimize", "--qrels", "{q}", "-o", "{tmp}/f.txt"],
    ["judgments", "aggregate", "{q}", "--strategy", "mean"],
    ["judgments", "agreement", "{q}", "{h}"],
    ["judge", "agreement", "{q}", "{h}"],
], ids=lambda argv: " ".join(argv[:2]))
def test_every_command_reading_qrels_takes_a_collection(names, tmp_path, capsys, argv):
    from rankscope.cli.main import main

    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("1 Q0 d1 1 3 a\n1 Q0 d2 2 2 a\n2 Q0 d4 1 1 a\n")
    b.write_text("1 Q0 d2 1 3 b\n1 Q0 d1 2 2 b\n2 Q0 d1 1 1 b\n")
    other = tmp_path / "other.txt"
    other.write_text("1 0 d1 3\n1 0 d2 1\n2 0 d4 2\n")
    values = {"q": f"irds:{names['graded']}", "a": str(a), "b": str(b), "h": str(other),
              "tmp": str(tmp_path)}
    code = main([x.format(**values) for x in argv])
    assert code == 0, capsys.readouterr().err
