"""trec_eval 10.0's own output on generated cases, compared without the binary.

``golden/cases.jsonl.gz`` holds, per case, the input files, the arguments and
what the trec_eval 10.0 binary printed (``golden/make_golden.py`` says how it
was produced). Every case must give the same stdout, exit status and first
stderr line. A missing golden file fails: it never skips.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from .util import CONFORMANCE, ours

GOLDEN = Path(__file__).resolve().parent / "golden" / "cases.jsonl.gz"


def _cases() -> list[dict[str, object]]:
    with gzip.open(GOLDEN, "rt") as handle:
        return [json.loads(line) for line in handle if line.strip()]


CASES = _cases()


def test_golden_set_is_broad():
    kinds = {c["kind"] for c in CASES}
    assert {"random_small", "random_long", "all_trec_flags", "gain_params", "prefs",
            "qrels_jg", "bulk", "errors", "zscores", "file_quirks", "conformance_flags"} <= kinds
    flags = {a for c in CASES for a in c["args"]}  # type: ignore[union-attr]
    assert {"-c", "-J", "-q", "-n"} <= flags
    assert any(a.startswith("-M") for a in flags) and any(a.startswith("-l") for a in flags)
    assert len(CASES) > 600


def _ids() -> list[str]:
    return [f"{i}-{c['kind']}" for i, c in enumerate(CASES)]


@pytest.mark.parametrize("case", CASES, ids=_ids())
def test_same_output_as_trec_eval(tmp_path, case):
    for name, text in case.get("files", {}).items():
        (tmp_path / name).write_text(text)
    cwd = CONFORMANCE if case.get("cwd") == "conformance" else tmp_path
    got = ours(case["args"], cwd=cwd)
    assert (got.status, got.first_error) == (case["status"], case["first_error"]), case["args"]
    assert got.stdout == case["stdout"], case["args"]
