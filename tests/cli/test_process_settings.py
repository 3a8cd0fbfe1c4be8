"""Process-wide settings the command line makes before a command runs."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rankscope.cli.process import LARGE_INPUT_BYTES, input_bytes

try:
    GLIBC = bool(os.confstr("CS_GNU_LIBC_VERSION"))
except (ValueError, OSError):
    GLIBC = False


def test_input_bytes_counts_regular_files_only(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"x" * 300)
    b.write_bytes(b"y" * 45)
    words = ["-m", "all_trec", str(a), str(b), str(tmp_path), str(tmp_path / "missing"), "-q",
             "\0bad"]
    assert input_bytes(words) == 345


def _faults_of_reallocating(keep: bool) -> int:
    """Minor page faults of allocating and freeing a 64 MB array four times."""
    code = textwrap.dedent(f"""
        import resource
        import numpy as np
        from rankscope.cli.process import keep_freed_memory
        if {keep!r}:
            assert keep_freed_memory()
        a = np.ones(8 << 20); del a  # the first time always faults
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for _ in range(4):
            a = np.ones(8 << 20); del a
        print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    """)
    env = dict(os.environ, NUMPY_MADVISE_HUGEPAGE="0")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=60, check=True)
    return int(out.stdout.strip())


@pytest.mark.skipif(not GLIBC, reason="the allocator settings are glibc's")
def test_kept_memory_is_reused_without_page_faults() -> None:
    # 64 MB is 16,384 pages of 4 kB: given back to the kernel each time, each
    # allocation faults them in again; kept, the second one reuses them
    returned = _faults_of_reallocating(keep=False)
    kept = _faults_of_reallocating(keep=True)
    assert returned >= 4 * 16_000 // 8  # even with 32 kB fault-around folios
    assert kept < returned / 10


def test_memory_is_kept_for_large_inputs_only(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from rankscope.cli import process

    calls: list[bool] = []

    def keep() -> bool:
        calls.append(True)
        return True

    monkeypatch.setattr(process, "keep_freed_memory", keep)
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "NUMPY_MADVISE_HUGEPAGE"):
        monkeypatch.delenv(name, raising=False)
    small, large = tmp_path / "small", tmp_path / "large"
    small.write_bytes(b"1 Q0 d 1 1.0 r\n" * 10)
    with large.open("wb") as f:  # sparse: the size without the disk
        f.truncate(LARGE_INPUT_BYTES)
    process.prepare_process(["trec_eval", str(small), str(small)])
    assert calls == []
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
    process.prepare_process(["trec_eval", str(small), str(large)])
    assert calls == [True]


def _collector_after(words: list[str]) -> str:
    code = textwrap.dedent(f"""
        import gc, sys
        sys.argv = ["rankscope", *{words!r}]
        from rankscope.cli.main import main
        status = main()
        print(status, gc.isenabled())
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    return out.stdout.split("\n")[-2]


def test_one_shot_commands_run_without_the_cycle_collector(tmp_path: Path) -> None:
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("1 0 a 1\n1 0 b 0\n")
    run.write_text("1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n")
    assert _collector_after(["evaluate", str(qrels), str(run), "-m", "P@1", "-f", "json",
                             "--quiet"]) == "0 False"
    # any other command keeps it (`serve` runs for days)
    assert _collector_after(["metrics"]) == "0 True"
