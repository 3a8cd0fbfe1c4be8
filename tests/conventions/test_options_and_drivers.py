"""``conventions=`` as an option: its preset, explicit fields winning, and every driver.

Every way of evaluating must give, under a profile, the numbers
``rankscope.evaluate(..., conventions=...)`` gives (itself checked against
the tools in the other files of this folder).
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest

import rankscope
from rankscope.cli.conventions import CONVENTIONS
from rankscope.cli.main import main
from rankscope.engine.options import EvalOptions
from rankscope.errors import OptionError
from rankscope.metrics.conventions import PROFILES

from .data import Shape, dataset

pytestmark = pytest.mark.filterwarnings("ignore::rankscope.errors.RankscopeWarning")

# names whose numbers differ under ir_measures and quepid on the data below
NAMES = ["P@3", "RR@3", "Judged@3", "ERR@5", "nDCG@3", "NumRel", "RBP(p=0.5,rel=1)", "AP"]


def _data() -> tuple[dict, dict]:
    qrels, run = dataset(3, Shape("ties", 3, False))
    return qrels, run


# ---------------------------------------------------------------- the options object

def test_the_profile_sets_the_options_it_names() -> None:
    for name, profile in PROFILES.items():
        opts = EvalOptions(conventions=name)
        for field, value in profile.options:
            assert getattr(opts, field) == value, (name, field)
        assert opts.conventions == name


def test_explicit_fields_win_over_the_profile() -> None:
    opts = EvalOptions(conventions="quepid", ties="docid_asc")
    assert (opts.ties, opts.queries) == ("docid_asc", "qrels")
    # replace() keeps what it is given: the profile is not applied again
    assert replace(EvalOptions(conventions="quepid"), ties="trec").ties == "trec"
    merged = EvalOptions.merged(None, {"conventions": "pytrec_eval", "queries": "qrels"})
    assert (merged.queries, merged.scores) == ("qrels", "float32")


def test_a_new_profile_keeps_what_was_set_explicitly() -> None:
    base = EvalOptions(conventions="pytrec_eval", unjudged="condensed")
    moved = EvalOptions.merged(base, {"conventions": "quepid"})
    # pytrec_eval's own values go, the explicit unjudged stays, quepid's come in
    assert (moved.unjudged, moved.queries, moved.scores, moved.ties) == (
        "condensed", "qrels", "float64", "input")
    back = EvalOptions.merged(moved, {"conventions": None})
    assert (back.unjudged, back.ties, back.conventions) == ("condensed", "trec", None)


def test_unknown_profile_is_refused_with_a_suggestion() -> None:
    with pytest.raises(OptionError, match="did you mean 'ir_measures'"):
        EvalOptions(conventions="ir-measures")


def test_the_command_line_knows_every_profile() -> None:
    assert tuple(PROFILES) == CONVENTIONS


def test_the_result_says_which_conventions() -> None:
    qrels, run = _data()
    result = rankscope.evaluate(qrels, run, ["P@3"], conventions="ranx", allow_no_overlap=True)
    assert result.info.conventions == "ranx"
    assert "conventions 'ranx'" in result.info.describe()
    assert result.info.to_dict()["conventions"] == "ranx"


# ---------------------------------------------------------------- every driver

@pytest.mark.parametrize("conventions", ["ir_measures", "quepid", "pytrec_eval"])
def test_compare_gives_evaluate_numbers(conventions: str) -> None:
    qrels, run = _data()
    other = {q: {d: -s for d, s in docs.items()} for q, docs in run.items()}
    names = [n for n in NAMES if n != "NumRel"]  # compare's means are arithmetic, not sums
    result = rankscope.compare(qrels, {"a": run, "b": other}, names, conventions=conventions,
                               progress=False, allow_no_overlap=True)
    for name, ranking in (("a", run), ("b", other)):
        single = rankscope.evaluate(qrels, ranking, names, conventions=conventions,
                                    allow_no_overlap=True)
        for label in names:
            assert result.means[name][label] == pytest.approx(single.means[label]), label
    assert all(info.conventions == conventions for info in result.infos)


def test_report_uses_the_profile(tmp_path: Path) -> None:
    qrels, run = _data()
    other = {q: {d: -s for d, s in docs.items()} for q, docs in run.items()}
    page = rankscope.report(qrels, {"a": run, "b": other}, ["ERR@5"], plots=False,
                            conventions="ir_measures", allow_no_overlap=True, progress=False)
    want = rankscope.evaluate(qrels, run, ["ERR@5"], conventions="ir_measures",
                              allow_no_overlap=True).means["ERR@5"]
    assert f"{want:.4f}" in page
    assert "ir_measures" in page


def _judgments(qrels: dict) -> rankscope.Judgments:
    rows = [(q, d, "r1", float(g)) for q, docs in qrels.items() for d, g in docs.items()]
    frame = pl.DataFrame(rows, schema={"query_id": pl.String, "doc_id": pl.String,
                                       "rater": pl.String, "grade": pl.Float64}, orient="row")
    # a 0-3 scale without transformers: every metric reads the grades as they are
    return rankscope.Judgments(frame, scale="0-3")


def test_judgments_path_gives_evaluate_numbers() -> None:
    from rankscope.judgments import evaluate_judgments

    qrels, run = _data()
    judged = _judgments(qrels)
    for conventions in ("ir_measures", "quepid"):
        got = evaluate_judgments(judged, run, NAMES, conventions=conventions,
                                 allow_no_overlap=True)
        want = rankscope.evaluate(qrels, run, NAMES, conventions=conventions,
                                  allow_no_overlap=True)
        for label in NAMES:
            assert got.means[label] == pytest.approx(want.means[label]), (conventions, label)


def test_a_plan_refuses_other_conventions_than_its_own() -> None:
    from rankscope.judgments import plan_evaluation

    qrels, run = _data()
    plan = plan_evaluation(_judgments(qrels), ["ERR@5"], conventions="ir_measures")
    with pytest.raises(OptionError, match="plan again"):
        plan.evaluate(run, conventions="quepid", allow_no_overlap=True)


def _trec_files(tmp_path: Path, qrels: dict, run: dict) -> tuple[Path, Path]:
    qpath, rpath = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qpath.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items()
                             for d, g in docs.items()))
    rpath.write_text("".join(f"{q} Q0 {d} 0 {s!r} r\n" for q, docs in run.items()
                             for d, s in docs.items()))
    return qpath, rpath


@pytest.mark.parametrize("conventions", ["ir_measures", "quepid", "pytrec_eval"])
def test_streaming_gives_evaluate_numbers(tmp_path: Path, conventions: str) -> None:
    from rankscope.engine.streaming import evaluate_streaming

    qrels, run = dataset(5, Shape("float32", 3, False))
    qpath, rpath = _trec_files(tmp_path, qrels, run)
    got = evaluate_streaming(qpath, rpath, NAMES, conventions=conventions, memory=1 << 14)
    want = rankscope.evaluate(qpath, rpath, NAMES, conventions=conventions,
                              allow_no_overlap=True)
    assert got.query_ids == want.query_ids
    for label in NAMES:
        assert got.means[label] == pytest.approx(want.means[label]), label


def test_check_reads_names_with_the_profile() -> None:
    from rankscope.services.regression import check_regression

    qrels = {str(q): {"a": 3, "b": 0} for q in range(6)}
    good = {str(q): {"a": 2.0, "b": 1.0} for q in range(6)}
    result = check_regression(qrels, good, good, "ERR@5", conventions="ir_measures")
    assert result.checks[0].mean_run == pytest.approx(7 / 16)  # gdeval: 2^4, not 2^3


# ---------------------------------------------------------------- the command line

def _cli_files(tmp_path: Path) -> tuple[str, str]:
    qrels = {"1": {"a": 3, "b": 0, "c": 1}, "2": {"x": 1}}
    run = {"1": {"a": 1.0, "b": 1.0, "c": 0.5}}
    qpath, rpath = _trec_files(tmp_path, qrels, run)
    return str(qpath), str(rpath)


def _json_means(capsys: pytest.CaptureFixture[str]) -> dict:
    return json.loads(capsys.readouterr().out)["mean"]


@pytest.mark.parametrize("conventions", list(CONVENTIONS))
def test_evaluate_command(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                          conventions: str) -> None:
    qpath, rpath = _cli_files(tmp_path)
    names = ["P@2", "RR@2", "ERR@5", "nDCG@2", "NumRel"]
    code = main(["evaluate", qpath, rpath, "--conventions", conventions, "-f", "json",
                 *[a for n in names for a in ("-m", n)]])
    assert code == 0
    means = _json_means(capsys)
    want = rankscope.evaluate(qpath, rpath, names, conventions=conventions).means
    assert means == pytest.approx(want)


def test_explicit_option_wins_on_the_command_line(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    qpath, rpath = _cli_files(tmp_path)
    main(["evaluate", qpath, rpath, "--conventions", "quepid", "-m", "RR@2", "-f", "json"])
    by_profile = _json_means(capsys)["RR@2"]
    main(["evaluate", qpath, rpath, "--conventions", "quepid", "--ties", "trec", "-m", "RR@2",
          "-f", "json"])
    explicit = _json_means(capsys)["RR@2"]
    assert by_profile == pytest.approx(0.5)  # input order: a (relevant) first in query 1
    assert explicit == pytest.approx(0.25)  # b before a by id descending


def test_bad_conventions_is_one_line_exit_2(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    qpath, rpath = _cli_files(tmp_path)
    assert main(["evaluate", qpath, rpath, "--conventions", "sklern", "-m", "P@1"]) == 2
    captured = capsys.readouterr()
    assert "did you mean 'sklearn'" in captured.err and captured.out == ""


def test_compare_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qpath, rpath = _cli_files(tmp_path)
    other = tmp_path / "other.txt"
    other.write_text("1 Q0 c 1 3 r\n1 Q0 b 2 2 r\n1 Q0 a 3 1 r\n")
    code = main(["compare", qpath, rpath, str(other), "-m", "ERR@5", "--conventions",
                 "ir_measures", "-f", "json"])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    want = [rankscope.evaluate(qpath, path, "ERR@5", conventions="ir_measures").means["ERR@5"]
            for path in (rpath, str(other))]
    assert [run["mean"]["ERR@5"] for run in data["runs"].values()] == want
    assert data["comparisons"][0]["delta"] == pytest.approx(want[1] - want[0], abs=1e-15)


def test_metrics_command_shows_each_tools_reading(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["metrics", "ERR@10"]) == 0
    out = capsys.readouterr().out
    assert "ir_measures: ERR(max_grade=4)@10" in out
    assert "quepid: ERR(max_grade=3)@10" in out
    assert main(["metrics", "SetF(beta=0.5)"]) == 0
    out = capsys.readouterr().out
    assert "F(beta=0.7071067811865476)" in out and "one tool's spelling" in out
    assert main(["metrics", "bpref", "--conventions", "ranx", "-f", "json"]) == 0
    info = json.loads(capsys.readouterr().out)[0]
    assert info["name"] == "ranx_bpref" and info["reading"]["conventions"] == "ranx"


def test_float32_scores_option() -> None:
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"b": 1.0, "a": 1.0 + 1e-9}}
    assert rankscope.evaluate(qrels, run, "RR")["RR"] == 1.0
    assert rankscope.evaluate(qrels, run, "RR", scores="float32")["RR"] == 0.5  # b, a: tie
    with pytest.raises(OptionError, match="32-bit"):
        rankscope.evaluate(qrels, {"q": {"a": 1e39}}, "RR", scores="float32")
    assert not math.isnan(rankscope.evaluate(qrels, run, "RR", scores="float64")["RR"])
