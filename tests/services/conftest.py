"""The stand-in demo collection (tests/services/standin), laid out as the packaged one."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

STANDIN = Path(__file__).parent / "standin"


def run_cli(argv: list[object]) -> tuple[int, str, str]:
    """Run ``rankscope`` in this process: its exit code, stdout and stderr."""
    import contextlib
    import io

    from rankscope.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()
PACKAGED = Path(__file__).resolve().parents[2] / "src" / "rankscope" / "demo_data"


def standin_package(target: Path) -> Path:
    """A directory holding the stand-in with the packaged names (corpus gzipped)."""
    target.mkdir(parents=True, exist_ok=True)
    for name in ("queries.tsv", "qrels.txt", "baseline.toml", "tuned.toml", "README.md"):
        shutil.copy(STANDIN / name, target / name)
    (target / "corpus.jsonl.gz").write_bytes(gzip.compress((STANDIN / "corpus.jsonl")
                                                           .read_bytes()))
    return target


@pytest.fixture
def standin(tmp_path) -> Path:
    """The stand-in as the packaged demo_data directory would hold it."""
    return standin_package(tmp_path / "demo_data")


@pytest.fixture
def demo(tmp_path) -> Path:
    """A directory as `rankscope demo init` writes it, from the stand-in."""
    from rankscope.services.demo import init_demo

    init_demo(tmp_path / "demo", source=standin_package(tmp_path / "pkg"))
    return tmp_path / "demo"
