"""docs/tuning.md: every command runs as written, and the sweep's table is what it prints."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from rankscope.cli.main import main
from rankscope.services.demo import DEMO_FILES

from .conftest import PACKAGED, standin_package

DOC = Path(__file__).resolve().parents[2] / "docs" / "tuning.md"


def blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", DOC.read_text(), flags=re.DOTALL)


@pytest.mark.slow
def test_the_tuning_guide_runs_and_shows_what_the_sweep_prints(tmp_path, monkeypatch, capsys):
    import rankscope.services.demo as demo

    packaged = all((PACKAGED / name).is_file() for name in DEMO_FILES)
    if not packaged:
        source = standin_package(tmp_path / "standin")
        monkeypatch.setattr(demo, "demo_source", lambda: source)
    monkeypatch.chdir(tmp_path)
    outputs = {}
    for block in blocks("sh"):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("  #")[0].strip()
            if not line.startswith("rankscope "):
                continue
            argv = shlex.split(line)[1:]
            if not packaged:  # the stand-in's query ids
                argv = [a if a != "q01" else "q1" for a in argv]
            assert main(argv) == 0, (line, capsys.readouterr().err)
            outputs[argv[0] + " " + argv[1]] = capsys.readouterr().out
    assert {"sweep demo/endpoint.toml", "snapshots compare", "snapshots show",
            "snapshots holes"} <= set(outputs)
    assert (tmp_path / "demo" / "sweep" / "config-04.toml").is_file()
    assert (tmp_path / "demo" / "to_grade.csv").is_file()
    assert "up " in outputs["snapshots compare"] or "new" in outputs["snapshots compare"]
    if packaged:
        # the table shown in the guide is the one the sweep prints (columns elided there)
        shown = blocks("text")[0].splitlines()
        printed = outputs["sweep demo/endpoint.toml"].splitlines()
        assert shown[0] == printed[0] and shown[-1] == printed[-1]
        for line in shown[2:-2]:
            head = line.split("  ...")[0]
            assert any(p.startswith(head) for p in printed), line


def test_the_readme_shows_a_sweep_and_links_the_guide():
    readme = (DOC.parents[1] / "README.md").read_text()
    assert re.search(r"^rankscope sweep demo/endpoint.toml [^`]*?--grid", readme, re.M)
    assert "(docs/tuning.md)" in readme
