"""A command over many run files holds a few of them at a time, not all (issue 30, section 3:
memory grows with the largest run, not their sum): ``evaluate`` evaluates each run before
the one after next is read; ``compare`` (and ``report``) measures each run before the third
after it is read (the next one is ranked meanwhile, the one after read); the numbers and
names are those of reading them all first."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

import rankscope.compare.comparison as comparison
import rankscope.engine.evaluate as engine_evaluate
import rankscope.engine.ranking_ahead as ranking_ahead
from rankscope.cli.main import main
from rankscope.compare.comparison import compare
from rankscope.data.tables import Run
from rankscope.errors import DuplicateDocumentError, OptionError

QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 c 2\nq2 0 d 1\n"
# five runs, each ranking one relevant document first in q1 or not: P@1 by hand below
RUNS = [
    "q1 Q0 a 1 2.0 r1\nq2 Q0 c 1 1.0 r1\n",  # P@1: q1 1, q2 1 -> 1.0
    "q1 Q0 b 1 2.0 r2\nq2 Q0 c 1 1.0 r2\n",  # q1 0, q2 1 -> 0.5
    "q1 Q0 b 1 2.0 r3\nq2 Q0 e 1 1.0 r3\n",  # 0, 0 -> 0.0
    "q1 Q0 a 1 2.0 r4\nq2 Q0 e 1 1.0 r4\n",  # 1, 0 -> 0.5
    "q1 Q0 a 1 2.0 r5\nq2 Q0 d 1 1.0 r5\n",  # 1, 1 -> 1.0
]
EXPECTED = {"r1": 1.0, "r2": 0.5, "r3": 0.0, "r4": 0.5, "r5": 1.0}


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.chdir(tmp_path)
    Path("qrels.txt").write_text(QRELS)
    names = []
    for i, text in enumerate(RUNS):
        Path(f"run{i + 1}.txt").write_text(text)
        names.append(f"run{i + 1}.txt")
    return names


@pytest.fixture
def log(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """'read' for each run file read, 'eval' for each run evaluated (measured, for a
    comparison), in order."""
    events: list[str] = []
    lock = threading.Lock()
    original_read = Run.read.__func__  # type: ignore[attr-defined]

    def read(cls: type[Run], *args: Any, **kwargs: Any) -> Run:
        out = original_read(cls, *args, **kwargs)
        with lock:
            events.append("read")
        return out

    original_eval = engine_evaluate.evaluate

    def counted(*args: Any, **kwargs: Any) -> Any:
        with lock:
            events.append("eval")
        return original_eval(*args, **kwargs)

    original_measure = ranking_ahead.measure_ranked

    def measured(*args: Any, **kwargs: Any) -> Any:
        with lock:
            events.append("eval")
        return original_measure(*args, **kwargs)

    monkeypatch.setattr(Run, "read", classmethod(read))
    monkeypatch.setattr(engine_evaluate, "evaluate", counted)
    monkeypatch.setattr(ranking_ahead, "measure_ranked", measured)
    return events


def _at_most_one_ahead(events: list[str]) -> None:
    """Whenever run i is evaluated, runs 0..i+1 at most have been read."""
    _at_most_ahead(events, 1)


def _at_most_two_ahead(events: list[str]) -> None:
    """Whenever run i is measured, runs 0..i+2 at most have been read: a comparison holds
    the run it measures, the next (being ranked) and the one after (being read)."""
    _at_most_ahead(events, 2)


def _at_most_ahead(events: list[str], ahead: int) -> None:
    evaluated = 0
    for k, event in enumerate(events):
        if event == "eval":
            assert events[:k].count("read") <= evaluated + 1 + ahead, events
            evaluated += 1
    assert evaluated == len(RUNS)
    assert events.count("read") == len(RUNS)


def test_cli_evaluate_reads_one_ahead(files: list[str], log: list[str],
                                      capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["evaluate", "qrels.txt", *files, "-m", "P@1", "-f", "json", "--ci", "never"])
    assert code == 0
    _at_most_one_ahead(log)
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert {name: runs[name]["mean"]["P@1"] for name in runs} == EXPECTED


pytestmark = pytest.mark.filterwarnings("ignore:too few paired queries")


def test_compare_reads_one_ahead(files: list[str], log: list[str]) -> None:
    result = compare("qrels.txt", files, ["P@1"])
    _at_most_two_ahead(log)
    assert result.run_names == list(EXPECTED)
    assert {name: result.means[name]["P@1"] for name in EXPECTED} == EXPECTED


def test_compare_names_given_and_baseline_checked(files: list[str]) -> None:
    named = [f"s{i}" for i in range(len(files))]
    result = compare("qrels.txt", files, ["P@1"], names=named, baseline="s2")
    assert result.run_names == named
    assert result.means["s2"]["P@1"] == 0.0
    with pytest.raises(OptionError, match="no run named 'r9'"):
        compare("qrels.txt", files, ["P@1"], baseline="r9")


@pytest.mark.parametrize("extra", [[], ["--run-format", "trec"]])
def test_cli_compare_reads_one_ahead(files: list[str], log: list[str], extra: list[str],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["compare", "qrels.txt", *files, "-m", "P@1", "-f", "json", *extra])
    assert code == 0
    _at_most_two_ahead(log)
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert {name: runs[name]["mean"]["P@1"] for name in runs} == EXPECTED


def test_cli_compare_bad_run_file_is_a_usage_error(files: list[str],
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    Path("run3.txt").write_text("q1 Q0 a 1 high r3\n")
    code = main(["compare", "qrels.txt", *files, "-m", "P@1", "-f", "json"])
    assert code == 2
    err = capsys.readouterr().err
    assert "run3.txt" in err and "Traceback" not in err


@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_a_document_twice_in_a_run_is_the_readers_error(files: list[str], command: str,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    """The duplicate check may run beside the measures; the error is still the reader's:
    exit 2, the file and the line of the second occurrence."""
    Path("run2.txt").write_text("q1 Q0 b 1 2.0 r2\nq2 Q0 c 1 1.0 r2\nq1 Q0 b 2 0.5 r2\n")
    with pytest.raises(DuplicateDocumentError) as raised:  # the reader's own message
        Run.read("run2.txt")
    expected = str(raised.value)
    assert "line 3" in expected
    code = main([command, "qrels.txt", *files, "-m", "P@1", "-f", "json"])
    assert code == 2
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err


def test_a_document_twice_over_raters_judgments(files: list[str]) -> None:
    """The raters' path evaluates every run through the same ranking step: the deferred
    check still raises the reader's error."""
    Path("raters.csv").write_text("query_id,doc_id,rater,grade\nq1,a,ann,1\nq1,a,bob,1\n"
                                  "q1,b,ann,0\nq2,c,ann,2\nq2,d,bob,1\n")
    Path("run2.txt").write_text("q1 Q0 b 1 2.0 r2\nq2 Q0 c 1 1.0 r2\nq1 Q0 b 2 0.5 r2\n")
    with pytest.raises(DuplicateDocumentError, match="line 3"):
        compare("raters.csv", files, ["P@1"], strategy="mean")


@pytest.mark.parametrize("extra", [[], ["--run-format", "trec"]])
def test_cli_report_without_plots_reads_one_ahead(files: list[str], log: list[str],
                                                  extra: list[str]) -> None:
    """Without plots nothing needs the runs after the comparison: a report holds two."""
    code = main(["report", "qrels.txt", *files, "-m", "P@1", "--no-plots", "-o", "r.html",
                 *extra])
    assert code == 0
    _at_most_two_ahead(log)
    page = Path("r.html").read_text()
    assert all(name in page for name in EXPECTED)


def test_report_with_plots_reads_each_run_once(files: list[str], log: list[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The curves are measured in the comparison's pass (issue 30 section 3): each run file
    is read once and evaluated once, one ahead (two runs in memory, not all five), and the
    curves' numbers are the runs' own."""
    import rankscope.compare.curves as curves
    from rankscope.render.html_report import report

    def second_pass(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the curves evaluated a run again")

    monkeypatch.setattr(curves, "evaluate", second_pass)
    page = report("qrels.txt", files, ["P@1"], plots=True, ks=range(1, 3), run_format="trec",
                  names=[f"s{i}" for i in range(len(files))])
    assert "s4" in page and page.count("<svg ") == 2 + 1 + 4
    _at_most_two_ahead(log)
    # the curves' numbers are the runs' own: P@1 of the five runs (worked out above)
    for name, p1 in zip([f"s{i}" for i in range(len(files))], EXPECTED.values(), strict=True):
        assert f"{name}: P@1 = {p1:.4f}" in page


def test_report_with_curves_measured_otherwise_reads_twice(files: list[str], log: list[str],
                                                           ) -> None:
    """Unjudged documents null: the precision-recall curve takes them non-relevant, unlike
    the comparison, so the curves read the files again after it, one ahead too."""
    from rankscope.render.html_report import report

    page = report("qrels.txt", files, ["P@1"], plots=True, ks=range(1, 3), run_format="trec",
                  unjudged="null")
    split = [i for i, event in enumerate(log) if event == "eval"][len(RUNS) - 1] + 1
    _at_most_two_ahead(log[:split])
    assert log[split:].count("read") == len(RUNS)
    assert "r5: P@1 = 1.0000" in page


def test_report_with_plots_reads_a_run_on_stdin_once(files: list[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A run on stdin can be read once: the comparison and the curves share that reading."""
    import io

    stdin = io.TextIOWrapper(io.BytesIO(Path(files[1]).read_bytes()))
    monkeypatch.setattr("sys.stdin", stdin)
    code = main(["report", "qrels.txt", files[0], "-", "-m", "P@1", "-o", "r.html",
                 "--max-k", "1"])
    assert code == 0
    page = Path("r.html").read_text()
    # run 2 (r2) by hand: P@1 = 0.5, in the table and on its curve
    assert "<title>r2: P@1 = 0.5000</title>" in page and "<title>r1: P@1 = 1.0000</title>" in page


def _first_run_read_while_qrels_are(monkeypatch: pytest.MonkeyPatch, module: Any,
                                    name: str) -> dict[str, bool]:
    """Make ``module.name`` (the command's qrels reader) wait for a run file's reading to
    begin (10 s at most) and say whether it began meanwhile."""
    begun = threading.Event()
    seen: dict[str, bool] = {}
    original_read = Run.read.__func__  # type: ignore[attr-defined]

    def read(cls: type[Run], *args: Any, **kwargs: Any) -> Run:
        begun.set()
        return original_read(cls, *args, **kwargs)

    original_qrels = getattr(module, name)

    def read_qrels(*args: Any, **kwargs: Any) -> Any:
        seen["run read beside the qrels"] = begun.wait(timeout=10)
        return original_qrels(*args, **kwargs)

    monkeypatch.setattr(Run, "read", classmethod(read))
    monkeypatch.setattr(module, name, read_qrels)
    return seen


@pytest.mark.parametrize("command", ["evaluate", "compare", "report"])
def test_cli_reads_the_first_run_while_it_reads_the_qrels(
        files: list[str], monkeypatch: pytest.MonkeyPatch, command: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    import rankscope.cli.compare as cli_compare
    import rankscope.cli.evaluate as cli_evaluate

    module, name = ((cli_evaluate, "_read_qrels") if command == "evaluate"
                    else (cli_compare, "read_qrels"))
    seen = _first_run_read_while_qrels_are(monkeypatch, module, name)
    code = main([command, "qrels.txt", *files, "-m", "P@1", "-f", "json", "--ci", "never"]
                if command == "evaluate" else
                [command, "qrels.txt", *files, "-m", "P@1", "-f", "json"]
                if command == "compare" else
                [command, "qrels.txt", *files, "-m", "P@1", "--max-k", "1", "-o", "r.html"])
    assert code == 0
    assert seen == {"run read beside the qrels": True}
    if command == "report":
        page = Path("r.html").read_text()
        assert all(f"<title>{name}: P@1 = {p1:.4f}</title>" in page
                   for name, p1 in EXPECTED.items())
        return
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert {name: runs[name]["mean"]["P@1"] for name in runs} == EXPECTED


def test_cli_compare_a_bad_qrels_file_stops_the_reading_begun(
        files: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    Path("qrels.txt").write_text("q1 0 a high\n")
    code = main(["compare", "qrels.txt", *files, "-m", "P@1", "-f", "json"])
    assert code == 2
    assert "qrels.txt" in capsys.readouterr().err
    assert [t for t in threading.enumerate() if t.name.startswith("rankscope-read")] == []


def test_compare_takes_run_inputs_already_reading(files: list[str], log: list[str]) -> None:
    from rankscope.data.runs import RunInputs

    named = [f"s{i}" for i in range(len(files))]
    with RunInputs(files, names=named, defer_duplicates=True).start() as inputs:
        result = compare("qrels.txt", inputs, ["P@1"], baseline="s1")
    _at_most_two_ahead(log)
    assert {name: result.means[f"s{i}"]["P@1"] for i, name in enumerate(EXPECTED)} == EXPECTED
    assert result.baseline == "s1"
    with pytest.raises(OptionError, match="belong to the RunInputs"):
        compare("qrels.txt", RunInputs(files), ["P@1"], names=named)


def test_run_inputs_started_then_closed_leave_no_thread(files: list[str]) -> None:
    from rankscope.data.runs import RunInputs

    inputs = RunInputs(files).start()
    inputs.close()
    assert [t for t in threading.enumerate() if t.name.startswith("rankscope-read")] == []
    # closed before use: iterating reads them afresh
    with inputs.tables() as tables:
        assert [t.name for t in tables] == list(EXPECTED)


def test_compare_imports_its_tests_module_before_evaluating(
        files: list[str], log: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """scipy's import overlaps the reading: it is begun before the first run is measured."""
    started: list[str] = []

    def preload(test: str) -> None:
        log.append(f"preload {test}")
        started.append(test)

    monkeypatch.setattr(comparison, "preload_test", preload)
    compare("qrels.txt", files, ["P@1"], test="wilcoxon")
    assert started == ["wilcoxon"]
    assert log.index("preload wilcoxon") < log.index("eval")


@pytest.mark.parametrize(("test", "loaded"), [("t", "True False"), ("wilcoxon", "True True")])
def test_preload_test_imports_on_a_thread(test: str, loaded: str) -> None:
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(f"""
        import sys, threading
        from rankscope.compare.significance import preload_test
        preload_test({test!r})
        for thread in threading.enumerate():
            if thread.name == "rankscope-preload":
                thread.join(timeout=60)
        print("scipy.special" in sys.modules, "scipy.stats" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.strip() == loaded


def test_preload_without_scipy_leaves_the_message_to_the_test() -> None:
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import sys, threading
        sys.modules["scipy"] = None  # not installed
        from rankscope.compare.significance import preload_test, require_t_distribution
        from rankscope.errors import DependencyError
        preload_test("t")
        for thread in threading.enumerate():
            if thread.name == "rankscope-preload":
                thread.join(timeout=60)
        try:
            require_t_distribution("significance tests")
        except DependencyError as exc:
            print("DependencyError", "scipy" in str(exc))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.strip() == "DependencyError True"
    assert out.stderr == ""
