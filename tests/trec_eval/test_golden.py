"""trec_eval 10.0's own output on generated cases, compared without the binary.

``golden/cases.jsonl.gz`` holds, per case, the input files, the arguments and
what the trec_eval 10.0 binary printed (``golden/make_golden.py`` says how it
was produced; ``golden/README.md`` where from). Every case must give the same
stdout, exit status and stderr lines as the differential tests compare them.
Every case of those differential tests (``cases.py``) is among them, so a
machine without the binary still runs each comparison. A missing golden file
fails: it never skips.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from rankscope.trec_eval.catalog import MEASURES

from .cases import Case, binary_cases
from .util import CONFORMANCE, Outcome, assert_same, case_folder, ours

GOLDEN = Path(__file__).resolve().parent / "golden" / "cases.jsonl.gz"


def _cases() -> list[dict[str, object]]:
    with gzip.open(GOLDEN, "rt") as handle:
        return [json.loads(line) for line in handle if line.strip()]


CASES = _cases()


def _key(case: dict[str, object]) -> str:
    return Case("", tuple(case["args"]), dict(case.get("files", {})),  # type: ignore[arg-type]
                case.get("cwd")).key  # type: ignore[arg-type]


def test_every_differential_case_is_recorded():
    """Mutation: a case added to (or changed in) cases.py without running make_golden.py,
    so the machines without the binary would never run it: this fails."""
    recorded = {_key(c) for c in CASES}
    missing = [f"{c.kind} {' '.join(c.args)}" for c in binary_cases() if c.key not in recorded]
    assert not missing, f"{len(missing)} cases of cases.py are not in {GOLDEN.name} " \
                        f"(run golden/make_golden.py): {missing[:5]}"


def _flags() -> set[str]:
    """Every option given in a golden case, with its value where it is glued on (-M5, -l2)."""
    return {a for c in CASES for a in c["args"] if str(a).startswith("-")}  # type: ignore[union-attr]


def test_golden_set_is_broad():
    """Every option the differential tests give, each relevance level and -M value.
    Mutation: the golden file recorded without its -l-1 (or -h) cases: this fails."""
    kinds = {c["kind"] for c in CASES}
    assert {"random_small", "random_long", "all_trec_flags", "gain_params", "prefs",
            "prefs_abort", "qrels_jg", "bulk", "errors", "zscores", "file_quirks",
            "conformance_flags", "help"} <= kinds
    flags = _flags()
    assert {"-q", "-c", "-J", "-n", "-N", "-m", "-R", "-Z", "-D", "-h", "--help", "-v",
            "-T"} <= flags
    assert {f"-l{level}" for level in (-1, 0, 1, 2, 3)} <= flags  # every relevance level
    assert {f"-M{n}" for n in (0, 1, 2, 5, 10)} <= flags
    assert len(CASES) > 600


def _placements(outputs: list[str]) -> set[tuple[str, str]]:
    """(measure as printed, "all" or "query") of every line of trec_eval outputs."""
    placed: set[tuple[str, str]] = set()
    for text in outputs:
        for line in text.splitlines():
            fields = line.split()
            if len(fields) == 3:
                placed.add((fields[0], "all" if fields[1] == "all" else "query"))
    return placed


def test_every_measure_is_printed_by_some_case():
    """Each of trec_eval's measures (its 57, prefs and judgment groups included) is in the
    binary's recorded output wherever trec_eval's own test outputs print it: per query,
    in the summary, or both (runid, num_q and gm_* are summaries only, relstring per query
    only); the three its test outputs never ask for (dcg, ideal_dcg, yaap), both.
    Mutation: the golden file recorded without the cases that ask for yaap: this fails."""
    golden = _placements([str(c["stdout"]) for c in CASES])
    own = _placements([(CONFORMANCE / name).read_text()
                       for name in ("out.test.aq", "out.test.prefs", "out.test.qrels_jg")])
    for measure in MEASURES:
        name = re.compile(rf"^{re.escape(measure.name)}(_[0-9.]+)?$")
        expected = {where for shown, where in own if name.match(shown)} or {"all", "query"}
        assert expected <= {where for shown, where in golden if name.match(shown)}, (
            measure.name)


def _ids() -> list[str]:
    return [f"{i}-{c['kind']}" for i, c in enumerate(CASES)]


@pytest.mark.parametrize("case", CASES, ids=_ids())
def test_same_output_as_trec_eval(tmp_path, case):
    cwd = case_folder(case.get("files", {}), case.get("cwd"), tmp_path)
    want = Outcome(case["status"], case["stdout"], case["stderr"])
    assert_same(ours(case["args"], cwd=cwd), want, case["stderr_lines"], case["args"])
