"""``rankscope judge`` end to end on the command line, against the local server."""

from __future__ import annotations

import csv
import json

from rankscope.cli.main import main

from .conftest import Reply


def _args(server, collection, *more):
    return ["judge", "--endpoint", server.url, "--model", "tiny-judge",
            "--queries", str(collection["queries"]), "--docs", str(collection["docs"]),
            "--run", str(collection["run"]), *more]


def test_a_judging_run_reports_usage_and_agreement(server, collection, capsys):
    grades = {"d3": 3, "d1": 1, "d2": 0, "d4": 0, "d5": 3, "d6": 1}
    server.script = lambda doc, n, body: Reply(json.dumps({"grade": grades[doc]}))
    human = collection["dir"] / "qrels.txt"
    human.write_text("q1 0 d3 3\nq1 0 d1 1\nq1 0 d2 1\nq2 0 d5 3\n")
    out = collection["dir"] / "grades.csv"
    guidelines = collection["dir"] / "guide.md"
    guidelines.write_text("Recipes count as answers.")
    code = main(_args(server, collection, "--depth", "3", "-o", str(out), "--cache",
                      str(collection["dir"] / "c.sqlite"), "--human", str(human),
                      "--guidelines", str(guidelines), "--setting", "seed=42",
                      "--concurrency", "2"))
    text = capsys.readouterr().out
    assert code == 0
    assert server.count == 6
    assert all(b["seed"] == 42 for b in server.bodies)
    assert all("Recipes count as answers." in b["messages"][-1]["content"]
               for b in server.bodies)
    assert "graded 6, unrateable 0" in text and "requests 6 (0 retries)" in text
    # four human grades overlap; one disagrees (d2: 1 vs 0)
    assert "4 results graded by both" in text and "exact agreement" in text
    with open(out, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 6 and {r["rater"] for r in rows} == {"llm:tiny-judge"}
    # a rerun sends nothing: everything is done
    code = main(_args(server, collection, "--depth", "3", "-o", str(out), "-f", "json",
                      "--setting", "seed=42", "--guidelines", str(guidelines)))
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and server.count == 6
    assert report["usage"]["already_done"] == 6 and report["usage"]["requests"] == 0


def test_usage_errors_are_one_line_and_exit_2(server, collection, capsys):
    x = str(collection["dir"] / "x.csv")
    cases = [
        (["judge", "--model", "m", "--queries", "q", "--docs", "d", "--run", "r"],
         "--endpoint"),
        (_args(server, collection, "--setting", "nokey", "-o", x), "KEY=VALUE"),
        (_args(server, collection, "-o", str(collection["dir"] / "grades.txt")), ".csv"),
        (_args(server, collection, "--prompt", str(collection["dir"] / "none.j2"), "-o", x),
         "no such template"),
        (_args(server, collection, "--samples", "0", "-o", x), "samples"),
        (_args(server, collection), "-o FILE"),
        (_args(server, collection, "--provider", "nope", "-o", x),
         "unknown LLM provider 'nope'; choose one of ollama, openai"),
    ]
    for argv, needle in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert needle in err and err.count("\n") == 1 and "Traceback" not in err
    assert server.count == 0
    server.script = lambda doc, n, body: Reply(status=404)
    assert main(_args(server, collection, "--concurrency", "1", "-o",
                      str(collection["dir"] / "g.csv"))) == 2
    err = capsys.readouterr().err
    assert "404" in err and err.count("\n") == 1
