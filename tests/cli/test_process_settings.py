"""Process-wide settings the command line makes before a command runs."""

from __future__ import annotations

import json
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


def _allocator_after_reallocating(keep: bool) -> dict[str, object]:
    """glibc's own counters (mallinfo2) around allocating, freeing and allocating again a
    64 MB array, and the arenas malloc_stats lists after another thread allocated."""
    code = textwrap.dedent(f"""
        import ctypes, json, threading
        from rankscope.cli.process import keep_freed_memory
        if {keep!r}:
            assert keep_freed_memory()
        import numpy as np

        class Info(ctypes.Structure):
            _fields_ = [(n, ctypes.c_size_t) for n in (
                "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                "uordblks", "fordblks", "keepcost")]

        libc = ctypes.CDLL(None)
        libc.mallinfo2.restype = Info

        def info():
            got = libc.mallinfo2()
            return {{name: getattr(got, name) for name, _ in Info._fields_}}

        steps = {{"start": info()}}
        a = np.ones(8 << 20)
        steps["allocated"] = info()
        del a
        steps["freed"] = info()
        a = np.ones(8 << 20)
        steps["again"] = info()
        del a
        worker = threading.Thread(target=lambda: [bytearray(64 << 10) for _ in range(4)])
        worker.start()
        worker.join()
        print(json.dumps(steps), flush=True)
        libc.malloc_stats()  # one "Arena N:" block per arena, on stderr
    """)
    env = dict(os.environ, NUMPY_MADVISE_HUGEPAGE="0")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=60, check=True)
    steps = json.loads(out.stdout.strip().splitlines()[-1])
    steps["arenas"] = out.stderr.count("Arena ")
    return steps


ARRAY = 64 << 20  # bytes of np.ones(8 << 20)


@pytest.mark.skipif(not GLIBC, reason="the allocator settings are glibc's")
def test_freed_memory_is_kept_in_one_arena_and_reused() -> None:
    """The allocator's own counters, not page faults (those depend on the kernel and on
    what else the machine runs). Mutations: without M_MMAP_MAX=0 the array is mapped on its
    own (hblks grows); without M_TRIM_THRESHOLD the freed array goes back to the kernel
    (arena shrinks); without M_ARENA_MAX=1 the thread gets an arena of its own."""
    returned = _allocator_after_reallocating(keep=False)
    mapped = returned["allocated"]["hblkhd"] - returned["start"]["hblkhd"]  # type: ignore[index]
    assert mapped >= ARRAY  # by default a block this large is mapped on its own...
    assert returned["freed"]["hblkhd"] == returned["start"]["hblkhd"]  # type: ignore[index]
    assert returned["arenas"] >= 2  # ...and a new thread allocates from an arena of its own

    kept = _allocator_after_reallocating(keep=True)
    start, allocated, freed, again = (kept[k] for k in ("start", "allocated", "freed", "again"))
    assert allocated["hblks"] == start["hblks"]  # type: ignore[index]  # from the heap
    assert allocated["uordblks"] - start["uordblks"] >= ARRAY  # type: ignore[index]
    assert freed["arena"] == allocated["arena"]  # type: ignore[index]  # kept when freed
    assert freed["fordblks"] >= ARRAY  # type: ignore[index]  # as free space
    assert again["arena"] == freed["arena"]  # type: ignore[index]  # reused: no growth
    assert again["hblks"] == start["hblks"]  # type: ignore[index]
    assert kept["arenas"] == 1  # the other thread shares the one arena


def test_memory_is_kept_for_large_inputs_only(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from rankscope.cli import process

    calls: list[bool] = []

    def keep() -> bool:
        calls.append(True)
        return True

    monkeypatch.setattr(process, "keep_freed_memory", keep)
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "NUMPY_MADVISE_HUGEPAGE",
                 "_RJEM_MALLOC_CONF"):  # restored after the test: none leaks to later ones
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
    """The exit status, whether the cycle collector is on at the end, and whether the
    command left through ``_leave`` (no interpreter teardown; stubbed here to return)."""
    code = textwrap.dedent(f"""
        import gc, sys
        sys.argv = ["rankscope", *{words!r}]
        import rankscope.cli.main as cli
        left = []
        cli._leave = left.append
        status = cli.main()
        print(status, gc.isenabled(), left == [status])
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    return out.stdout.split("\n")[-2]


def _small_track(tmp_path: Path) -> tuple[Path, Path, Path]:
    qrels, a, b = tmp_path / "qrels", tmp_path / "a", tmp_path / "b"
    qrels.write_text("1 0 a 1\n1 0 b 0\n")
    a.write_text("1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n")
    b.write_text("1 Q0 b 1 2.0 s\n1 Q0 a 2 1.0 s\n")
    return qrels, a, b


def test_one_shot_commands_run_without_the_cycle_collector(tmp_path: Path) -> None:
    qrels, run, other = _small_track(tmp_path)
    assert _collector_after(["evaluate", str(qrels), str(run), "-m", "P@1", "-f", "json",
                             "--quiet"]) == "0 False True"
    assert _collector_after(["compare", str(qrels), str(run), str(other), "-m", "P@1", "-f",
                             "json"]) == "0 False True"
    # the report too: its page (and figure files) written and closed before it returns
    assert _collector_after(["report", str(qrels), str(run), str(other), "-m", "P@1",
                             "--no-plots", "-o", str(tmp_path / "r.html")]) == "0 False True"
    # any other command keeps it (`serve` runs for days), and ends as usual
    assert _collector_after(["metrics"]) == "0 True False"
    # another engine may hold a session (Spark's) that its own exit handlers stop
    assert _collector_after(["evaluate", str(qrels), str(run), "-m", "P@1", "-f", "json",
                             "--quiet", "--engine", "streaming"]) == "0 False False"


@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_a_one_shot_command_leaving_early_writes_all_its_output(tmp_path: Path,
                                                                command: str) -> None:
    """Without the interpreter's teardown, stdout, stderr and an -o file are still whole."""
    qrels, run, other = _small_track(tmp_path)
    words = [command, str(qrels), str(run), str(other), "-m", "P@1", "-m", "P@2"]
    to_stdout = subprocess.run([sys.executable, "-m", "rankscope", *words, "-f", "json"],
                               capture_output=True, text=True, timeout=120)
    assert to_stdout.returncode == 0, to_stdout.stderr
    data = json.loads(to_stdout.stdout)  # whole: the JSON parses
    # P@1: run a ranks the relevant a first (1), run b ranks b first (0)
    assert [data["runs"][n]["mean"]["P@1"] for n in ("r", "s")] == [1.0, 0.0]
    if command == "compare":  # one query: the warning of too few paired queries reaches stderr
        assert "warning: too few paired queries" in to_stdout.stderr
    out = tmp_path / "out.csv"
    to_file = subprocess.run([sys.executable, "-m", "rankscope", *words, "-f", "csv", "-o",
                              str(out)], capture_output=True, text=True, timeout=120)
    assert to_file.returncode == 0, to_file.stderr
    assert to_stdout.stdout and out.read_text().endswith("\n")
    assert len(out.read_text().splitlines()) > 2  # a header and a row per run at least


def test_a_report_leaving_early_writes_its_page_and_figures_whole(tmp_path: Path) -> None:
    """``report`` ends without the interpreter's teardown too: the page on stdout or in a
    file, and the figure files of --figures, are whole."""
    qrels, run, other = _small_track(tmp_path)
    words = ["report", str(qrels), str(run), str(other), "-m", "P@1", "-m", "P@2"]
    to_stdout = subprocess.run([sys.executable, "-m", "rankscope", *words, "--no-plots",
                                "-o", "-"], capture_output=True, text=True, timeout=120)
    assert to_stdout.returncode == 0, to_stdout.stderr
    assert to_stdout.stdout.startswith("<!DOCTYPE html>")
    assert to_stdout.stdout.endswith("</body></html>\n")
    page, figures = tmp_path / "r.html", tmp_path / "figures"
    command = [sys.executable, "-m", "rankscope", *words, "-o", str(page)]
    pytest.importorskip("matplotlib")
    command += ["--figures", str(figures), "--figure-formats", "pdf,svg"]
    to_file = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert to_file.returncode == 0, to_file.stderr
    assert page.read_text(encoding="utf-8").endswith("</body></html>\n")
    pdfs, svgs = sorted(figures.glob("*.pdf")), sorted(figures.glob("*.svg"))
    assert pdfs and len(pdfs) == len(svgs)
    assert all(p.read_bytes().rstrip().endswith(b"%%EOF") for p in pdfs)
    assert all(p.read_text(encoding="utf-8").rstrip().endswith("</svg>") for p in svgs)


def _polars_allocator_options(words: list[str]) -> dict[str, str]:
    """polars' jemalloc's decay options in a process prepared for ``words``, read from the
    statistics jemalloc itself prints at exit (``stats_print``, added to whatever the
    preparation left in the variable), not from rankscope's constant."""
    code = textwrap.dedent(f"""
        import os
        from rankscope.cli.process import prepare_process
        prepare_process({words!r})
        conf = os.environ.get("_RJEM_MALLOC_CONF")
        os.environ["_RJEM_MALLOC_CONF"] = (conf + "," if conf else "") + "stats_print:true"
        import polars as pl
        print(pl.Series(range(10)).sum(), flush=True)
    """)
    env = {k: v for k, v in os.environ.items() if k != "_RJEM_MALLOC_CONF"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=120, check=True)
    assert out.stdout.strip() == "45"
    found = {}
    for line in out.stderr.splitlines():
        words_of = line.split()
        if len(words_of) >= 2 and words_of[0] in ("opt.dirty_decay_ms:", "opt.muzzy_decay_ms:"):
            found[words_of[0].rstrip(":")] = words_of[1]
    return found


def test_polars_hands_back_freed_memory_for_large_inputs(tmp_path: Path) -> None:
    """polars' allocator keeps freed pages resident for 0.5 s and then 1 s more (its
    build's defaults, printed by jemalloc itself below); for a large input the command
    line has it hand them back after 0.2 s (the peak of a 10^7-line evaluation, where
    polars' parsing temporaries were freed just before: benchmarks/README.md section 5)."""
    small, large = tmp_path / "small", tmp_path / "large"
    small.write_bytes(b"1 Q0 d 1 1.0 r\n" * 10)
    with large.open("wb") as f:  # sparse: the size without the disk
        f.truncate(LARGE_INPUT_BYTES)
    default = _polars_allocator_options(["trec_eval", str(small), str(small)])
    if not default:  # nothing printed: this polars build allocates without jemalloc
        pytest.skip("polars is not built with jemalloc here")
    assert default != {"opt.dirty_decay_ms": "200", "opt.muzzy_decay_ms": "0"}
    assert _polars_allocator_options(["trec_eval", str(small), str(large)]) == {
        "opt.dirty_decay_ms": "200", "opt.muzzy_decay_ms": "0"}


def test_a_users_polars_allocator_setting_wins(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import polars  # noqa: F401  # loaded, as in a process that has evaluated already

    from rankscope.cli import process

    large = tmp_path / "large"
    with large.open("wb") as f:
        f.truncate(LARGE_INPUT_BYTES)
    monkeypatch.setattr(process, "keep_freed_memory", lambda: True)
    monkeypatch.setenv("_RJEM_MALLOC_CONF", "dirty_decay_ms:1000")
    process.prepare_process(["trec_eval", str(large), str(large)])
    assert os.environ["_RJEM_MALLOC_CONF"] == "dirty_decay_ms:1000"
    monkeypatch.delenv("_RJEM_MALLOC_CONF")
    # polars already loaded (this test process): its allocator read its settings; none is
    # set that would only reach the processes this one starts
    assert process.polars_hands_back_freed_memory() is False
    assert "_RJEM_MALLOC_CONF" not in os.environ
