"""Modules that moved (issue 28: names that say what is inside) keep their old import paths
for one release: the same objects, with a DeprecationWarning naming the new path; nothing
in the package itself uses an old path."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# old path -> (new path, a name defined there)
MOVED: dict[str, tuple[str, str]] = {
    "rankscope.judge.grading": ("rankscope.llm_judge.grading", "grade_items"),
    "rankscope.judge.agreement": ("rankscope.llm_judge.agreement", "judge_agreement"),
    "rankscope.judge.inputs": ("rankscope.llm_judge.inputs", "read_documents"),
    "rankscope.compare.fusion": ("rankscope.fusion.combine", "fuse"),
    "rankscope.compare.fusion_methods": ("rankscope.fusion.methods", "METHODS"),
    "rankscope.compare.fusion_search": ("rankscope.fusion.optimize", "optimize_fusion"),
    "rankscope.compare.fusion_train": ("rankscope.fusion.train", "train_fusion"),
    "rankscope.compare.runs": ("rankscope.data.runs", "load_runs"),
    "rankscope.services.evaluations": ("rankscope.services.campaigns", "create_evaluation"),
    "rankscope.services.evaluation_data": ("rankscope.services.campaign_data",
                                           "evaluate_command"),
}

# names that went on to another module when the new one was split later: old path -> the
# module split off and a name of it
SPLIT_LATER = {
    "rankscope.services.evaluations": ("rankscope.services.campaign_runs", "run_evaluation"),
}


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False, timeout=120, cwd=ROOT)


@pytest.mark.parametrize(("old", "new", "name"),
                         [(old, *MOVED[old]) for old in sorted(MOVED)]
                         + [(old, *SPLIT_LATER[old]) for old in sorted(SPLIT_LATER)])
def test_an_old_path_gives_the_new_objects_and_says_where_they_went(old, new, name):
    code = (
        "import warnings, importlib\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        f"    from {old} import {name} as via_old\n"
        f"new = importlib.import_module({new!r})\n"
        f"assert via_old is new.{name}, 'not the same object'\n"
        "messages = [str(w.message) for w in caught if w.category is DeprecationWarning]\n"
        f"assert any({old!r} in m and {new!r} in m for m in messages), messages\n"
        # the warning names the line that imported the old path, not the import machinery
        "assert all(w.filename == '<string>' for w in caught"
        " if w.category is DeprecationWarning), [w.filename for w in caught]\n"
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr


def test_the_judge_stand_in_warns_for_its_names_and_stays_callable():
    code = (
        "import warnings, rankscope, rankscope.llm_judge as new\n"
        "assert rankscope.judge is new and callable(rankscope.judge)\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    import rankscope.judge as old\n"
        "    agreement = old.judge_agreement\n"
        "assert agreement is new.judge_agreement\n"
        "assert callable(old) and callable(rankscope.judge)\n"
        "assert [str(w.message) for w in caught] == ['rankscope.judge.judge_agreement moved "
        "to rankscope.llm_judge.judge_agreement; the old path goes in the next release'], "
        "[str(w.message) for w in caught]\n"
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr


def test_the_public_names_of_moved_modules_did_not_move():
    import rankscope
    import rankscope.compare
    from rankscope.fusion.combine import fuse
    from rankscope.fusion.optimize import optimize_fusion

    assert rankscope.fuse is fuse and rankscope.compare.fuse is fuse
    assert rankscope.optimize_fusion is optimize_fusion
    assert rankscope.compare.optimize_fusion is optimize_fusion


def test_nothing_in_the_package_imports_an_old_path():
    old = [*MOVED, "rankscope.judge"]
    pattern = re.compile(r"^\s*(?:from|import)\s+(" + "|".join(map(re.escape, old)) + r")\b",
                         re.M)
    found = []
    for path in sorted((ROOT / "src" / "rankscope").rglob("*.py")):
        if path.parent.name == "judge":  # the stand-in itself
            continue
        found += [f"{path.relative_to(ROOT)}: {m.group(0).strip()}"
                  for m in pattern.finditer(path.read_text())]
    assert found == []
