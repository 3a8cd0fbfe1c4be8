"""``rankscope evaluate`` and ``rankscope metrics`` from the outside."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import rankscope
from core.reference import reference_evaluate
from rankscope.cli.main import main
from trec_eval.generate import as_dicts

SAMPLE = Path(__file__).resolve().parents[2] / "src" / "rankscope" / "sample_data"


@pytest.fixture
def files(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 2\nq3 0 x 1\n")
    run = tmp_path / "run.txt"
    run.write_text(
        "q1 Q0 a 1 0.9 r\nq1 Q0 b 2 0.8 r\nq2 Q0 d 1 1.0 r\nq2 Q0 c 2 0.5 r\nq9 Q0 z 1 1 r\n"
    )
    return qrels, run


def test_json_output_shape_with_names_as_typed(files, capsys):
    qrels, run = files
    code = main(["evaluate", str(qrels), str(run), "-m", "P_1", "-m", "ndcg@10", "-m", "RR",
                 "--per-query", "--format", "json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    # q1: P@1 = 1; q2: P@1 = 0 (d is unjudged); q3 missing from the run: an empty ranking.
    assert out["mean"]["P_1"] == pytest.approx(1 / 3)
    # RR: q1 1, q2 1/2, q3 0 -> 0.5
    assert out["mean"]["RR"] == pytest.approx(0.5)
    assert set(out["per_query"]) == {"q1", "q2", "q3"}
    assert out["per_query"]["q2"] == pytest.approx(
        {"P_1": 0.0, "ndcg@10": 2 / 1.5849625007211563 / 2, "RR": 0.5}
    )
    assert out["info"]["missing_from_run"] == ["q3"] and out["info"]["run_only"] == ["q9"]


def test_intersection_policy(files, capsys):
    qrels, run = files
    main(["evaluate", str(qrels), str(run), "-m", "P@1", "--queries", "intersection", "-f", "json"])
    out = json.loads(capsys.readouterr().out)
    assert out["mean"]["P@1"] == pytest.approx(0.5)
    assert out["info"]["n_evaluated"] == 2


def test_nonnull_policy_gives_null_for_missing_queries(files, capsys):
    qrels, run = files
    main(["evaluate", str(qrels), str(run), "-m", "P@1", "--queries", "nonnull", "-q",
          "-f", "json"])
    out = json.loads(capsys.readouterr().out)
    assert out["per_query"]["q3"]["P@1"] is None
    assert out["mean"]["P@1"] == pytest.approx(0.5)


@pytest.mark.parametrize("fmt", ["table", "csv", "tsv", "markdown"])
def test_text_formats(files, capsys, fmt):
    qrels, run = files
    assert main(["evaluate", str(qrels), str(run), "-m", "P@1", "-f", fmt]) == 0
    out = capsys.readouterr().out
    assert "P@1" in out and "0.333" in out


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["-m", "ndgc@10"], "did you mean 'nDCG'"),
        (["-m", "P@0"], "cut-off must be >= 1"),
        (["-m", "RBP(p=2)"], "(0, 1)"),
    ],
)
def test_bad_metric_is_one_line_exit_2(files, capsys, args, fragment):
    qrels, run = files
    assert main(["evaluate", str(qrels), str(run), *args]) == 2
    err = capsys.readouterr().err
    assert fragment in err and "Traceback" not in err and err.count("\n") == 1


def test_bad_file_is_one_line_with_file_and_line(tmp_path, files, capsys):
    qrels, _ = files
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 a 1 0.5 r\nq1 Q0 b 2 NaN r\n")
    assert main(["evaluate", str(qrels), str(bad), "-m", "P@1"]) == 2
    err = capsys.readouterr().err
    assert f"{bad}, line 2: score is not a finite number: 'NaN'" in err
    assert main(["evaluate", str(qrels), str(tmp_path / "missing.run"), "-m", "P@1"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_console_script_sample_data_and_metrics_listing():
    exe = [sys.executable, "-m", "rankscope"]
    done = subprocess.run(
        [*exe, "evaluate", str(SAMPLE / "qrels.txt"), str(SAMPLE / "run_a.txt"), "-m", "map",
         "-f", "json"], capture_output=True, text=True, check=True)
    # MAP by its definition, one query at a time (tests/core/reference.py)
    judged, ranked = as_dicts((SAMPLE / "qrels.txt").read_text(),
                              (SAMPLE / "run_a.txt").read_text())
    want = reference_evaluate(judged, ranked, [rankscope.parse_metric("map")]).means[0]
    assert json.loads(done.stdout)["mean"]["map"] == pytest.approx(want, rel=1e-12)
    listing = subprocess.run([*exe, "metrics"], capture_output=True, text=True, check=True)
    for name in ("nDCG[@k]", "ERR[@k]", "R_cap@k", "Best@k", "RBP", "bpref"):
        assert name in listing.stdout
    help_out = subprocess.run([*exe, "--help"], capture_output=True, text=True, check=True)
    assert "evaluate" in help_out.stdout


def test_json_shape_does_not_change_with_the_number_of_runs(files, tmp_path, capsys):
    qrels, run = files
    other = tmp_path / "other.txt"
    other.write_text(run.read_text())  # same run tag 'r': the names fall back to file names
    for argv in ([str(run)], [str(run), str(other)]):
        assert main(["evaluate", str(qrels), *argv, "-m", "P@1", "-f", "json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert set(out["runs"]) == ({"r"} if len(argv) == 1 else {"run.txt", "other.txt"})
        for result in out["runs"].values():
            # q1: a first (relevant); q2: d first (unjudged); q3: missing -> 0. Mean 1/3.
            assert result["mean"] == {"P@1": pytest.approx(1 / 3)}
            assert result["n_queries"] == {"P@1": 3}
            assert result["info"]["run_only"] == ["q9"]
        if len(argv) == 1:  # one run: its keys also at the top, as before
            assert out["mean"] == out["runs"]["r"]["mean"]
        else:
            assert "mean" not in out


def test_csv_has_a_run_column_and_one_header(files, tmp_path, capsys):
    qrels, run = files
    other = tmp_path / "other.txt"
    other.write_text(run.read_text().replace(" r\n", " s\n"))
    assert main(["evaluate", str(qrels), str(run), str(other), "-m", "P@1", "-m", "RR",
                 "-f", "csv", "-q"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "run,query,statistic,P@1,RR"
    assert lines.count(lines[0]) == 1
    # per run: q1..q3, then the summary rows with an empty query (issue 27 §5: a query
    # named "all" or "std" is never taken for one); RR: q1 1, q2 1/2, q3 0 -> 0.5; floats
    # at 15 significant digits: 1/3 -> 0.333333333333333
    assert lines[1:7] == ["r,q1,value,1.0,1.0", "r,q2,value,0.0,0.5", "r,q3,value,0.0,0.0",
                          "r,,mean,0.333333333333333,0.5", "r,,n_queries,3,3",
                          f"r,,std,{(2 / 9) ** 0.5:.15g},{(1 / 6) ** 0.5:.15g}"]  # population
    low = [float(x) for x in lines[7].split(",")[3:]]
    high = [float(x) for x in lines[8].split(",")[3:]]
    assert lines[7].startswith("r,,ci_low,") and lines[8].startswith("r,,ci_high,")
    assert 0.0 <= low[0] <= 1 / 3 <= high[0] <= 1.0 and 0.0 <= low[1] <= 0.5 <= high[1] <= 1.0
    assert [line.split(",")[0] for line in lines[9:]] == ["s"] * 8


def test_output_file(files, tmp_path, capsys):
    qrels, run = files
    target = tmp_path / "out.json"
    assert main(["evaluate", str(qrels), str(run), "-m", "P@1", "-f", "json", "-o",
                 str(target)]) == 0
    assert capsys.readouterr().out == ""
    assert json.loads(target.read_text())["mean"]["P@1"] == pytest.approx(1 / 3)


def test_sample_data_command(tmp_path, capsys):
    target = tmp_path / "demo"
    assert main(["sample-data", str(target)]) == 0
    assert (target / "qrels.txt").read_bytes() == (SAMPLE / "qrels.txt").read_bytes()
    assert main(["evaluate", str(target / "qrels.txt"), str(target / "run_a.txt"),
                 "-m", "P@5", "-f", "json"]) == 0
    assert json.loads(capsys.readouterr().out.split("\n", 1)[1])["n_queries"] == {"P@5": 50}
    assert main(["sample-data", str(target)]) == 2  # never overwrites
    assert "exists already" in capsys.readouterr().err


def test_the_qrels_go_before_the_last_runs_measures(files, capsys, monkeypatch):
    # the command line reads no qrels after ranking its last run: the qrels (their frame
    # and index, 140 MB at 7 M judgments) are freed before that run's measures, not held
    # beside them; kept for every run before it
    import weakref

    from rankscope.data.tables import Qrels
    from rankscope.engine import evaluate as engine_evaluate

    read = Qrels.read.__func__
    alive: weakref.WeakSet[Qrels] = weakref.WeakSet()

    def reading(cls, *args, **kwargs):
        qrels = read(cls, *args, **kwargs)
        alive.add(qrels)
        return qrels

    seen: list[int] = []
    measures = engine_evaluate.compute_ranked

    def measuring(ranked):
        seen.append(len(alive))
        return measures(ranked)

    monkeypatch.setattr(Qrels, "read", classmethod(reading))
    monkeypatch.setattr(engine_evaluate, "compute_ranked", measuring)
    qrels, run = files
    code = main(["evaluate", str(qrels), str(run), str(run), "-m", "P_1", "-m", "RR",
                 "--format", "json"])
    assert code == 0
    assert seen == [1, 0]
    out = json.loads(capsys.readouterr().out)
    # both runs the same file: the same values (q1 P@1 1, RR 1; q2 0, 1/2; q3 0, 0)
    assert [r["mean"]["RR"] for r in out["runs"].values()] == [pytest.approx(0.5)] * 2
