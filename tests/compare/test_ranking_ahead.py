"""A comparison ranks the next run on a thread while it measures the one before (issue 30,
section 3), and still reports every run's warnings and errors in the runs' order, as one
run after another would."""

from __future__ import annotations

import threading
import warnings
from pathlib import Path
from typing import Any

import pytest

import rankscope.engine.evaluate as engine_evaluate
from rankscope.cli.main import main
from rankscope.compare.comparison import compare
from rankscope.data.tables import Run
from rankscope.errors import DuplicateDocumentError, RankscopeWarning

QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 c 2\nq2 0 d 1\nq3 0 e 1\n"
# four runs: P@1 by hand (q1: a relevant; q2: c, d relevant; q3: e relevant)
RUNS = [
    "q1 Q0 a 1 2.0 r1\nq2 Q0 c 1 1.0 r1\nq3 Q0 e 1 1.0 r1\n",  # 1, 1, 1 -> 1.0
    "q1 Q0 b 1 2.0 r2\nq2 Q0 c 1 1.0 r2\nq3 Q0 x 1 1.0 r2\n",  # 0, 1, 0 -> 1/3
    "q1 Q0 b 1 2.0 r3\nq2 Q0 x 1 1.0 r3\nq3 Q0 e 1 1.0 r3\n",  # 0, 0, 1 -> 1/3
    "q1 Q0 a 1 2.0 r4\nq2 Q0 d 1 1.0 r4\nq3 Q0 x 1 1.0 r4\n",  # 1, 1, 0 -> 2/3
]
EXPECTED = {"r1": 1.0, "r2": 1 / 3, "r3": 1 / 3, "r4": 2 / 3}

pytestmark = pytest.mark.filterwarnings("ignore:too few paired queries")


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.chdir(tmp_path)
    Path("qrels.txt").write_text(QRELS)
    for i, text in enumerate(RUNS):
        Path(f"run{i + 1}.txt").write_text(text)
    return [f"run{i + 1}.txt" for i in range(len(RUNS))]


def test_the_next_run_is_ranked_while_the_one_before_is_measured(
        files: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The first run's measures wait (5 s at most) for the second run's ranking to begin:
    one run after another, it never begins until the first is measured."""
    second_ranked = threading.Event()
    rankers: list[tuple[str, int]] = []
    waited: list[bool] = []
    rank_plan, compute_ranked = engine_evaluate.rank_plan, engine_evaluate.compute_ranked

    def ranking(qrels: Any, run: Run, *args: Any, **kwargs: Any) -> Any:
        rankers.append((run.name, threading.get_ident()))
        if len(rankers) == 2:
            second_ranked.set()
        return rank_plan(qrels, run, *args, **kwargs)

    def measuring(ranked: Any) -> Any:
        if not waited:
            waited.append(second_ranked.wait(timeout=5))
        return compute_ranked(ranked)

    monkeypatch.setattr(engine_evaluate, "rank_plan", ranking)
    monkeypatch.setattr(engine_evaluate, "compute_ranked", measuring)
    result = compare("qrels.txt", files, ["P@1"])
    assert waited == [True]
    assert [name for name, _ in rankers] == list(EXPECTED)
    assert all(ident != threading.get_ident() for _, ident in rankers)
    assert result.run_names == list(EXPECTED)
    assert {name: result.means[name]["P@1"] for name in EXPECTED} == pytest.approx(EXPECTED)


def test_each_runs_warning_comes_in_the_runs_order(files: list[str]) -> None:
    """Each run lacks a different query of the qrels: one warning a run, in the runs'
    order, whatever thread ranked it."""
    for i, q in enumerate(["q1", "q2", "q3", "q1"]):
        kept = [line for line in RUNS[i].splitlines() if not line.startswith(q + " ")]
        Path(f"run{i + 1}.txt").write_text("\n".join(kept) + "\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compare("qrels.txt", files, ["P@1"])
    said = [str(w.message) for w in caught if issubclass(w.category, RankscopeWarning)
            and "only in" in str(w.message)]
    assert len(said) == len(files)
    for text, name, missing in zip(said, files, ["q1", "q2", "q3", "q1"], strict=True):
        assert name in text and f"only in qrels.txt ({missing})" in text, said


def test_a_runs_error_comes_before_an_unreadable_run_after_it(
        files: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Run 2 ranks a document twice (found when it is measured), run 3 cannot be read: the
    error reported is run 2's, as when each run is done before the next is read."""
    Path("run2.txt").write_text("q1 Q0 b 1 2.0 r2\nq2 Q0 c 1 1.0 r2\nq1 Q0 b 2 0.5 r2\n")
    Path("run3.txt").write_text("q1 Q0 a 1 high r3\n")
    with pytest.raises(DuplicateDocumentError, match="line 3"):
        compare("qrels.txt", files, ["P@1"])
    code = main(["compare", "qrels.txt", *files, "-m", "P@1", "-f", "json"])
    assert code == 2
    err = capsys.readouterr().err
    assert "run2.txt" in err and "line 3" in err and "run3.txt" not in err, err
    assert [t for t in threading.enumerate() if t.name.startswith("rankscope-read")] == []


def test_a_large_run_is_ranked_after_the_one_before_is_measured(
        files: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs over ``AHEAD_ROWS`` rows (here every run) are done one after another, on the
    calling thread: each run measured before the next is ranked, two runs in memory."""
    import rankscope.engine.ranking_ahead as ranking_ahead

    events: list[tuple[str, str, int]] = []
    rank_plan, compute_ranked = engine_evaluate.rank_plan, engine_evaluate.compute_ranked

    def ranking(qrels: Any, run: Run, *args: Any, **kwargs: Any) -> Any:
        events.append(("rank", run.name, threading.get_ident()))
        return rank_plan(qrels, run, *args, **kwargs)

    def measuring(ranked: Any) -> Any:
        events.append(("measure", "", threading.get_ident()))
        return compute_ranked(ranked)

    monkeypatch.setattr(ranking_ahead, "AHEAD_ROWS", 0)
    monkeypatch.setattr(engine_evaluate, "rank_plan", ranking)
    monkeypatch.setattr(engine_evaluate, "compute_ranked", measuring)
    result = compare("qrels.txt", files, ["P@1"])
    assert [kind for kind, _, _ in events] == ["rank", "measure"] * len(files)
    assert [name for kind, name, _ in events if kind == "rank"] == list(EXPECTED)
    assert {ident for _, _, ident in events} == {threading.get_ident()}
    assert {name: result.means[name]["P@1"] for name in EXPECTED} == pytest.approx(EXPECTED)
