"""``rankscope fuse`` with the methods and normalizations ranx offers."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankscope.cli import fuse as cli_fuse
from rankscope.cli.main import main
from rankscope.data.tables import Run
from rankscope.fusion.combine import NORMS
from rankscope.fusion.methods import METHODS


def test_cli_lists_the_librarys_methods_and_norms() -> None:
    assert tuple(METHODS) == cli_fuse.METHODS
    assert cli_fuse.NORMS == NORMS


def _write(path: Path, run: dict[str, dict[str, float]]) -> Path:
    lines = [f"{q} Q0 {d} {i} {s} r" for q, docs in run.items()
             for i, (d, s) in enumerate(docs.items(), 1)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_fuse_new_methods(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.txt", {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}})
    b = _write(tmp_path / "b.txt", {"q1": {"d2": 5.0, "d4": 1.0}})
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d2 1\n")
    out = tmp_path / "out.txt"
    assert main(["fuse", str(a), str(b), "--method", "rbc", "--phi", "0.5", "-o", str(out)]) == 0
    # (1 - phi) phi^(r - 1): ranks 1, 2, 3 weigh 1/2, 1/4, 1/8
    assert Run.read(out).to_dict()["q1"] == pytest.approx(
        {"d2": 0.25 + 0.5, "d1": 0.5, "d4": 0.25, "d3": 0.125})
    assert main(["fuse", str(a), str(b), "--method", "posfuse", "--train-qrels", str(qrels),
                 "-o", str(out)]) == 0
    # trained on q1: run a's rank 2 and run b's rank 1 hold the relevant document
    assert Run.read(out).to_dict()["q1"]["d2"] == pytest.approx(2.0)


def test_fuse_list_methods_and_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["fuse", "--list-methods"]) == 0
    text = capsys.readouterr().out
    for name, spec in METHODS.items():
        assert f"{name}  (" in text and spec.citation in text
    a = _write(tmp_path / "a.txt", {"q1": {"d1": 3.0}})
    assert main(["fuse", str(a), str(a), "--method", "posfuse"]) == 2
    assert "learns from qrels" in capsys.readouterr().err
    assert main(["fuse", str(a), str(a), "--method", "rrf", "--phi", "0.5"]) == 2
    assert "rrf has no parameter 'phi'" in capsys.readouterr().err
