"""Progress bars (only on a terminal, never with --quiet) and the --engine option."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from rankscope import progress
from rankscope.cli.main import main
from rankscope.data import trec


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def _automatic() -> Iterator[None]:
    progress.set_enabled(None)
    yield
    progress.set_enabled(None)


def _read_big(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = "".join(f"q{i // 100} Q0 d{i % 100} 1 {i % 7} t\n" for i in range(5000))
    path = tmp_path / "run.txt"
    path.write_text(lines)
    monkeypatch.setattr(progress, "MIN_BYTES", 1)  # treat this small file as big
    monkeypatch.setattr(trec, "CHUNK_BYTES", 4096)
    assert trec.read_trec_file(path, "run") is not None


def test_bar_on_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("tqdm")
    err = _Terminal()
    monkeypatch.setattr("sys.stderr", err)
    _read_big(tmp_path, monkeypatch)
    assert "reading run.txt" in err.getvalue()


def test_silent_when_not_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    _read_big(tmp_path, monkeypatch)
    assert err.getvalue() == ""


def test_silent_when_quiet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    err = _Terminal()
    monkeypatch.setattr("sys.stderr", err)
    progress.set_enabled(False)
    _read_big(tmp_path, monkeypatch)
    assert err.getvalue() == ""


def test_cli_streaming_engine_prints_the_local_numbers(
    case: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    qrels, run = case
    args = ["evaluate", str(qrels), str(run), "-m", "ndcg@10", "-m", "AP", "-f", "json"]
    assert main(args) == 0
    local = json.loads(capsys.readouterr().out)
    assert main([*args, "--engine", "streaming", "--memory", "64K", "--quiet"]) == 0
    streamed = json.loads(capsys.readouterr().out)
    assert streamed == local


def test_cli_rejects_a_bad_memory_size(case: tuple[Path, Path],
                                       capsys: pytest.CaptureFixture[str]) -> None:
    qrels, run = case
    code = main(["evaluate", str(qrels), str(run), "-m", "P@5", "--engine", "streaming",
                 "--memory", "lots"])
    assert code == 2
    assert "--memory" in capsys.readouterr().err
