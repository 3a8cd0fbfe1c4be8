"""The t distribution from a helper process: scipy's bits, and the same answer without one."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from rankscope.compare import t_helper
from rankscope.compare.significance import paired_test, prefetch_t_tests
from rankscope.data.tables import Qrels, Run

from .data import make_qrels, make_run

special = pytest.importorskip("scipy.special")


def _diffs() -> list[np.ndarray]:
    """Differences of every texture the t-test meets: metric-like of 2-1,000 queries, one
    query (no p), all zero (p = 1), constant non-zero (variance 0: t infinite), nearly
    constant, large values, a NaN p where the variance cancels."""
    rng = np.random.default_rng(5)
    out = [np.clip(rng.random(n), 0, 1) - np.clip(rng.random(n) + 0.05, 0, 1)
           for n in (2, 3, 7, 50, 250, 1000)]
    out += [np.array([0.3]), np.zeros(12), np.full(9, 0.25),
            0.3 + 1e-9 * rng.random(40), rng.normal(1e6, 1.0, 20) - rng.normal(1e6, 1.0, 20),
            -rng.random(30)]
    return out


def _same_bits(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or np.float64(a).tobytes() == np.float64(b).tobytes()


def _outcomes(diffs: list[np.ndarray], confidence: float) -> list[tuple[float, float, float]]:
    out = []
    for d in diffs:
        got = paired_test(d, np.zeros_like(d), "t", confidence=confidence)
        out.append((got.p_value, got.ci_low, got.ci_high))
    return out


def _all_same_bits(got: list[tuple[float, ...]], want: list[tuple[float, ...]]) -> bool:
    return all(_same_bits(g, w) for gs, ws in zip(got, want, strict=True)
               for g, w in zip(gs, ws, strict=True))


@contextmanager
def _served(helper: t_helper.THelper) -> Iterator[list[int]]:
    """``helper`` as the serving one (serving() starts none where scipy.special is loaded
    already, as in this test process); yields the sizes of the requests it gets."""
    asked: list[int] = []
    original = helper._ask

    def counted(name: str, args: np.ndarray) -> np.ndarray | None:
        out = original(name, args)
        asked.append(-1 if out is None else args.shape[1])
        return out

    helper._ask = counted  # type: ignore[method-assign]
    t_helper._current = helper
    try:
        yield asked
    finally:
        t_helper._current = None
        helper.close()


@pytest.mark.parametrize("confidence", [0.95, 0.9])
def test_t_tests_from_the_helper_are_the_same_bits(confidence: float) -> None:
    """p-values and t intervals with the helper's t distribution, asked ahead in one request
    a function or one by one, equal scipy.special's in this process to the last bit."""
    diffs = _diffs()
    assert t_helper.current() is None
    want = _outcomes(diffs, confidence)  # scipy.special here
    helper = t_helper._start()
    assert helper is not None
    with _served(helper) as asked:
        prefetch_t_tests(diffs, confidence)
        # every p but of one query and all zero (10), then both tails of the 10 distinct n
        assert asked == [len(diffs) - 2, 20]
        got = _outcomes(diffs, confidence)
        assert asked == [len(diffs) - 2, 20]  # nothing more asked: all kept
        one_by_one = _outcomes(diffs, 0.5)  # not asked ahead: a request each
        assert len(asked) > 2 and -1 not in asked
    assert _all_same_bits(got, want), (got, want)
    assert _all_same_bits(one_by_one, _outcomes(diffs, 0.5))
    assert math.isnan(got[6][0]) and got[7] == (1.0, 0.0, 0.0)  # one query; every diff 0


def test_helper_answers_scipys_functions_for_arrays() -> None:
    rng = np.random.default_rng(3)
    df = rng.integers(1, 2000, 500).astype(np.float64)
    x = np.concatenate([-np.abs(rng.standard_t(5, 497)), [-np.inf, 0.0, np.nan]])
    q = np.concatenate([rng.random(498), [0.0, 1.0]])
    helper = t_helper._start()
    assert helper is not None
    try:
        got = helper.values("stdtr", df, x)
        inverse = helper.values("stdtrit", df, q)
        scalar = helper.values("stdtr", np.float64(9), np.float64(-1.5))
        empty = helper.values("stdtr", np.array([]), np.array([]))
    finally:
        helper.close()
    assert got is not None and got.tobytes() == special.stdtr(df, x).tobytes()
    assert inverse is not None and inverse.tobytes() == special.stdtrit(df, q).tobytes()
    assert isinstance(scalar, np.float64) and scalar == special.stdtr(9.0, -1.5)
    assert empty is not None and empty.shape == (0,)
    assert helper._process.returncode == 0  # ended at the end of its input


@pytest.mark.parametrize("program", [
    "import sys; sys.stdout.buffer.write(b'E')",  # scipy cannot be imported there
    "import sys; sys.stdout.buffer.write(b'R')",  # ready, then gone before answering
    "import sys; sys.stdout.buffer.write(b'R'); sys.stdout.buffer.flush(); sys.stdin.read(8)",
    "raise SystemExit(3)",  # ended without a word
])
def test_a_helper_that_cannot_answer_leaves_the_work_here(
        program: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(t_helper, "_PROGRAM", program)
    diffs = _diffs()
    want = _outcomes(diffs, 0.95)
    helper = t_helper._start()
    assert helper is not None
    with _served(helper) as asked:
        assert helper.values("stdtr", np.array([9.0]), np.array([-1.0])) is None
        prefetch_t_tests(diffs, 0.95)
        got = _outcomes(diffs, 0.95)
    assert set(asked) == {-1}
    assert _all_same_bits(got, want)


def test_no_helper_when_python_cannot_start(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    assert t_helper._start() is None
    monkeypatch.delitem(sys.modules, "scipy.special")  # as in a fresh command
    with t_helper.serving() as helper:
        assert helper is None and t_helper.current() is None


def test_serving_starts_none_when_scipy_special_is_loaded_or_not_asked() -> None:
    with t_helper.serving() as loaded, t_helper.serving(start=False) as unasked:
        assert loaded is None and unasked is None


@pytest.fixture
def files(tmp_path: Path) -> list[str]:
    qrels = make_qrels(3, n_queries=30)
    Qrels.from_dict(qrels).write(tmp_path / "qrels.txt")
    out = [str(tmp_path / "qrels.txt")]
    for name, seed, skill in (("bm25", 1, 0.8), ("dense", 2, 1.6), ("hybrid", 3, 1.2)):
        Run.from_dict(make_run(qrels, seed, skill), name=name).write(tmp_path / f"{name}.txt")
        out.append(str(tmp_path / f"{name}.txt"))
    return out


_COMMAND = """\
import sys
from rankscope.cli.main import main
code = main(sys.argv[1:])
print(code, "scipy.special" in sys.modules, file=sys.stderr)
"""


@pytest.mark.parametrize("command", [["compare", "-f", "json"], ["report", "--no-plots"]])
def test_the_command_computes_p_values_in_a_helper(files: list[str], tmp_path: Path,
                                                   command: list[str]) -> None:
    """A fresh `rankscope compare` / `report` never imports scipy.special (the helper
    process does) and prints the p-values the library gives with scipy in process."""
    from rankscope.compare.comparison import compare

    out = tmp_path / ("out.json" if command[0] == "compare" else "out.html")
    metrics = ["-m", "ndcg_cut_10", "-m", "P_5", "-m", "map"]
    done = subprocess.run([sys.executable, "-c", _COMMAND, command[0], *files, *metrics,
                           *command[1:], "-o", str(out), "--all-pairs"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.stderr.split()[-2:] == ["0", "False"], done.stderr
    result = compare(files[0], files[1:], ["ndcg_cut_10", "P_5", "map"], all_pairs=True)
    p_values = [c.p_value for c in result.comparisons]
    assert len(p_values) == 9 and all(0 < p < 1 for p in p_values)
    if command[0] == "compare":
        shown = json.loads(out.read_text())
        got = [row["p_value"] for row in shown["comparisons"]]
        assert got == p_values  # JSON keeps a float's shortest repr: these are the same bits
    else:
        page = out.read_text()
        assert "paired t-test" in page


def test_a_comparison_asks_for_every_metrics_t_values_at_once(files: list[str]) -> None:
    """Three metrics, three runs against a baseline: one request for the p-values' stdtr of
    all 3 x 2 pairs and one for the intervals' stdtrit (both tails of the one n), not two
    a metric; the numbers those of scipy.special in this process."""
    from rankscope.compare.comparison import compare

    metrics = ["ndcg_cut_10", "P_5", "map"]
    want = compare(files[0], files[1:], metrics)  # scipy.special here (no helper serving)
    helper = t_helper._start()
    assert helper is not None
    with _served(helper) as asked:
        got = compare(files[0], files[1:], metrics)
    # 6 differences (3 metrics x 2 runs against the baseline), none all zero; 30 queries
    assert asked == [6, 2], asked
    assert [(c.p_value, c.ci_low, c.ci_high) for c in got.comparisons] == [
        (c.p_value, c.ci_low, c.ci_high) for c in want.comparisons]


def test_values_known_already_are_not_asked_again() -> None:
    helper = t_helper._start()
    assert helper is not None
    with _served(helper) as asked:
        helper.prefetch("stdtr", [9.0, 9.0, 4.0], [-1.5, -1.5, -0.5])  # a pair given twice
        helper.prefetch("stdtr", [4.0, 7.0], [-0.5, -2.0])  # one of them known
        helper.prefetch("stdtr", [9.0], [-1.5])  # all known: no request
        got = helper.values("stdtr", np.array([9.0, 4.0, 7.0]), np.array([-1.5, -0.5, -2.0]))
    assert asked == [2, 1]
    assert got is not None
    assert got.tobytes() == special.stdtr([9.0, 4.0, 7.0], [-1.5, -0.5, -2.0]).tobytes()


def test_the_helpers_ufuncs_are_scipy_specials() -> None:
    """The helper loads scipy.special's extension module of ufuncs alone: its stdtr and
    stdtrit must be the very functions scipy.special exports."""
    from scipy.special import _ufuncs

    assert _ufuncs.stdtr is special.stdtr and _ufuncs.stdtrit is special.stdtrit


def test_the_helper_imports_the_whole_package_where_the_ufuncs_live_elsewhere(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A scipy whose scipy.special._ufuncs cannot be loaded alone: the helper imports
    scipy.special as a whole and answers the same bits."""
    program = t_helper._PROGRAM.replace("from scipy.special._ufuncs import stdtr, stdtrit",
                                        "from scipy.special._no_such_module import stdtr")
    assert program != t_helper._PROGRAM
    monkeypatch.setattr(t_helper, "_PROGRAM", program)
    df = np.array([3.0, 9.0, 249.0])
    x = np.array([-0.5, -1.5, -2.25])
    helper = t_helper._start()
    assert helper is not None
    try:
        got = helper.values("stdtr", df, x)
    finally:
        helper.close()
    assert got is not None and got.tobytes() == special.stdtr(df, x).tobytes()
