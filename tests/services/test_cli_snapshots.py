"""The commands: demo init, snapshot, snapshots list/show/export/diff/holes, check."""

from __future__ import annotations

import json

import pytest

import rankscope
from core.reference import reference_evaluate
from rankscope.cli.main import main
from search.engine_server import EngineServer, Reply
from trec_eval.generate import as_dicts

from .conftest import standin_package


@pytest.fixture
def demo_dir(tmp_path, monkeypatch, capsys):
    """`rankscope demo init` run on the stand-in collection."""
    import rankscope.services.demo as demo

    source = standin_package(tmp_path / "pkg")
    monkeypatch.setattr(demo, "demo_source", lambda: source)
    assert main(["demo", "init", str(tmp_path / "demo")]) == 0
    assert "wrote 6 files" in capsys.readouterr().out
    return tmp_path / "demo"


def run_ok(argv, capsys):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    assert code == 0, out.err
    return out


def run_fails(argv, capsys, code=2):
    got = main([str(a) for a in argv])
    out = capsys.readouterr()
    assert got == code, (out.out, out.err)
    assert out.err.count("\n") <= 1 and "Traceback" not in out.err
    return out.err


def test_the_issue_loop_demo_snapshot_evaluate(demo_dir, capsys):
    d = demo_dir
    err = run_ok(["snapshot", d / "endpoint.toml", d / "queries.tsv", "-o", d / "run.txt"],
                 capsys).err
    assert "snapshot 'demo-baseline' complete: 8 queries" in err
    out = run_ok(["evaluate", d / "qrels.txt", d / "run.txt", "-m", "nDCG@10", "-m", "P@5"],
                 capsys).out
    # the numbers by their definitions, one query at a time (tests/core/reference.py)
    judged, ranked = as_dicts((d / "qrels.txt").read_text(), (d / "run.txt").read_text())
    expected = reference_evaluate(judged, ranked, [rankscope.parse_metric("nDCG@10"),
                                                   rankscope.parse_metric("P@5")])
    printed = {line.split()[0]: line.split()[1] for line in out.splitlines()[2:4]}
    assert printed == {"nDCG@10": f"{expected.means[0]:.4f}", "P@5": f"{expected.means[1]:.4f}"}
    run_fails(["demo", "init", d], capsys)  # never overwrites without --force


def test_store_list_show_export_diff_holes(demo_dir, tmp_path, capsys):
    d = demo_dir
    db = tmp_path / "s.sqlite"
    run_ok(["snapshot", d / "endpoint.toml", d / "queries.tsv", "--store", db, "-o",
            d / "base.txt"], capsys)
    run_ok(["snapshot", d / "endpoint_tuned.toml", d / "queries.tsv", "--store", db, "-o",
            d / "tuned.txt", "--keep-raw"], capsys)
    listed = run_ok(["snapshots", "list", "--store", db], capsys).out
    assert "#1" in listed and "demo-tuned" in listed and listed.count("complete") == 2
    as_json = json.loads(run_ok(["snapshots", "list", "--store", db, "-f", "json"], capsys).out)
    assert [s["name"] for s in as_json] == ["demo-baseline", "demo-tuned"]
    shown = run_ok(["snapshots", "show", "demo-tuned", "--store", db, "-q", "q01"], capsys).out
    assert "snapshot #2 'demo-tuned': complete" in shown and "shutil.copytree" in shown
    # export gives back the run file the snapshot command wrote
    run_ok(["snapshots", "export", "1", "--store", db, "-o", tmp_path / "export.txt"], capsys)
    assert (tmp_path / "export.txt").read_text() == (d / "base.txt").read_text()
    run_ok(["snapshots", "export", "2", "--store", db, "-o", tmp_path / "x.jsonl"], capsys)
    lines = [json.loads(x) for x in (tmp_path / "x.jsonl").read_text().splitlines()]
    assert [x["query_id"] for x in lines][:2] == ["q01", "q02"]
    assert lines[0]["hits"][0]["title"] and lines[0]["request"]["match"]
    # diff from the store equals diff from the run files
    from_store = json.loads(run_ok(["snapshots", "diff", "1", "2", "--store", db, "-f", "json"],
                                   capsys).out)
    # (tied engine scores: the run files list them in the engine's order, --ties input keeps it)
    from_runs = json.loads(run_ok(["snapshots", "diff", d / "base.txt", d / "tuned.txt",
                                   "--ties", "input", "-f", "json"], capsys).out)
    assert from_store["diffs"][0]["per_query"] == from_runs["diffs"][0]["per_query"]
    # with judgments: metric deltas equal the difference of rankscope.evaluate's means
    out = json.loads(run_ok(["snapshots", "diff", "1", "2", "--store", db, "--qrels",
                             d / "qrels.txt", "-m", "nDCG@10", "-f", "json"], capsys).out)
    a = rankscope.evaluate(str(d / "qrels.txt"), str(d / "base.txt"), "nDCG@10")["nDCG@10"]
    b = rankscope.evaluate(str(d / "qrels.txt"), str(d / "tuned.txt"), "nDCG@10")["nDCG@10"]
    (comparison,) = out["metrics"]["comparisons"]
    assert comparison["delta"] == pytest.approx(b - a)
    assert out["metrics"]["runs"]["#1 demo-baseline"]["mean"]["nDCG@10"] == pytest.approx(a)
    assert out["metrics"]["runs"]["#2 demo-tuned"]["mean"]["nDCG@10"] == pytest.approx(b)
    text = run_ok(["snapshots", "diff", "1", "2", "--store", db, "--qrels", d / "qrels.txt",
                   "-q"], capsys).out
    assert "RBO" in text and "q08" in text and "holes" in text
    # holes: a batch to grade, readable back as judgments
    run_ok(["snapshots", "holes", "1", "2", "--store", db, "--qrels", d / "qrels.txt",
            "-o", tmp_path / "batch.csv"], capsys)
    from rankscope.judgments.coverage import coverage
    from rankscope.judgments.table import Judgments

    batch = Judgments.read(tmp_path / "batch.csv")
    expected = set()
    for run in (d / "base.txt", d / "tuned.txt"):
        expected |= set(coverage(str(d / "qrels.txt"), str(run), 10).ungraded
                        .select("query_id", "doc_id").rows())
    assert set(batch.frame.select("query_id", "doc_id").rows()) == expected


def test_check_exit_codes(tmp_path, capsys):
    qrels = tmp_path / "qrels.txt"
    good = tmp_path / "good.txt"
    bad = tmp_path / "bad.txt"
    qrels.write_text("".join(f"q{i} 0 rel 1\n" for i in range(8)))
    good.write_text("".join(f"q{i} Q0 rel 1 2 good\nq{i} Q0 other 2 1 good\n" for i in range(8)))
    bad.write_text("".join(f"q{i} Q0 other 1 2 bad\nq{i} Q0 rel 2 1 bad\n" for i in range(8)))
    out = run_fails(["check", qrels, bad, "--baseline", good, "-m", "P@1"], capsys, code=1)
    assert out == ""
    assert "PASS" in run_ok(["check", qrels, good, "--baseline", bad, "-m", "P@1",
                             "--max-drop", "0.01"], capsys).out
    main(["check", str(qrels), str(bad), "--baseline", str(good), "-m", "P@1", "-f", "json"])
    report = json.loads(capsys.readouterr().out)
    assert report["regression"] is True and report["metrics"][0]["delta"] == -1.0
    err = run_fails(["check", qrels, bad, "--baseline", good, "-m", "nope@3"], capsys)
    assert "unknown metric" in err
    err = run_fails(["check", qrels, tmp_path / "missing.txt", "--baseline", good, "-m", "P@1"],
                    capsys)
    assert "missing.txt" in err


def test_snapshot_errors_are_one_line(tmp_path, capsys):
    (tmp_path / "q.tsv").write_text("q1\tboots\n")
    (tmp_path / "bad.toml").write_text('kind = "solr"\nurl = \n')
    err = run_fails(["snapshot", tmp_path / "bad.toml", tmp_path / "q.tsv", "-o", "x"], capsys)
    assert "bad.toml: not valid TOML" in err
    server = EngineServer()
    try:
        server.route("POST", "/products/_search", Reply("es_404_index.json", status=404))
        (tmp_path / "es.toml").write_text(
            f'kind = "elasticsearch"\nurl = "{server.url}"\nindex = "products"\n')
        err = run_fails(["snapshot", tmp_path / "es.toml", tmp_path / "q.tsv", "-o",
                         tmp_path / "r.txt"], capsys, code=3)  # a query failed: incomplete
    finally:
        server.close()
    assert err.startswith("rankscope snapshot: error: query q1: HTTP 404 from POST ")
    assert "index_not_found_exception: no such index [productz]" in err
    assert not (tmp_path / "r.txt").exists()
    err = run_fails(["snapshot", tmp_path / "es.toml", tmp_path / "q.tsv"], capsys)
    assert "-o RUN" in err
    # no store given: a usage error, its line first, the usage after it
    assert main(["snapshots", "list"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[0] == ("rankscope snapshots list: error: the following arguments "
                                   "are required: --store") and "Traceback" not in err


def test_dry_run_prints_the_rendered_request(tmp_path, capsys):
    (tmp_path / "q.tsv").write_text('q1\tboots "waterproof"\n')
    (tmp_path / "es.toml").write_text(
        'kind = "elasticsearch"\nurl = "http://127.0.0.1:9"\nindex = "products"\n'
        "template = '{\"query\": {\"match\": {\"title\": \"{{query}}\"}}}'\n")
    out = run_ok(["snapshot", tmp_path / "es.toml", tmp_path / "q.tsv", "--dry-run",
                  "--depth", "3"], capsys).out
    assert json.loads(out) == {"method": "POST", "url": "http://127.0.0.1:9/products/_search",
                               "body": {"query": {"match": {"title": 'boots "waterproof"'}},
                                        "size": 3}}


def test_an_answer_no_store_can_hold_fails_the_snapshot_naming_it(tmp_path, capsys):
    # an engine's title holding a NUL character: SQLite stored it, PostgreSQL failed with its
    # driver's message; both now refuse it before writing, naming the query, hit and column
    (tmp_path / "corpus.jsonl").write_text(
        json.dumps({"id": "d1", "title": "cat\u0000s", "text": "cats are pets"}) + "\n"
        + json.dumps({"id": "d2", "title": "dogs", "text": "dogs are pets too"}) + "\n")
    (tmp_path / "e.toml").write_text(
        'kind = "embedded"\nname = "pets"\ncorpus = "corpus.jsonl"\nindex = "pets.sqlite"\n'
        'fields = ["title", "text"]\ntitle_field = "title"\n')
    (tmp_path / "q.tsv").write_text("query_id\ttext\nq1\tcats\n")
    store = tmp_path / "s.sqlite"
    err = run_fails(["snapshot", tmp_path / "e.toml", tmp_path / "q.tsv", "--store", store,
                     "-o", tmp_path / "run.txt", "--quiet"], capsys)
    assert err.startswith("rankscope snapshot: error: cannot record the answers of snapshot #1")
    assert err.rstrip().endswith(": a text holding a NUL character, or a whole number outside "
                                 "64 bits, cannot be stored (query 'q1', hit 1, title)")
