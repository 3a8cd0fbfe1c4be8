"""Helpers shared by the trec_eval tests: where the data is, how to run both tools."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from rankscope.trec_eval.command import run

# trec_eval's own test inputs and outputs, kept with the tests (see its LICENSE file there)
CONFORMANCE = Path(__file__).resolve().parent / "conformance"


@dataclass(frozen=True)
class Outcome:
    """What a trec_eval run produced."""

    status: int
    stdout: str
    stderr: str

    @property
    def first_error(self) -> str:
        return self.stderr.splitlines()[0] if self.stderr else ""


def ours(args: list[str], cwd: Path | None = None, stdin: bytes | None = None) -> Outcome:
    """Run ``rankscope trec_eval`` in-process."""
    out, err = io.StringIO(), io.StringIO()
    old_cwd = Path.cwd()
    old_stdin = sys.stdin
    try:
        if cwd is not None:
            os.chdir(cwd)
        if stdin is not None:
            sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = run(list(args))
    finally:
        os.chdir(old_cwd)
        sys.stdin = old_stdin
    return Outcome(status, out.getvalue(), err.getvalue())


def reference_binary() -> str | None:
    """The trec_eval 10.0 binary to compare against, if this machine has one."""
    candidates = [os.environ.get("TREC_EVAL_BIN"), "/work/tools/bin/trec_eval",
                  shutil.which("trec_eval")]
    for path in candidates:
        if path and Path(path).is_file() and os.access(path, os.X_OK):
            return path
    return None


def theirs(binary: str, args: list[str], cwd: Path | None = None,
           stdin: bytes | None = None) -> Outcome:
    """Run the reference trec_eval binary."""
    done = subprocess.run([binary, *args], cwd=cwd, input=stdin, capture_output=True,
                          check=False, timeout=120)
    # killed by a signal (abort(): SIGABRT): the status a shell reports, 128 + the signal
    status = done.returncode if done.returncode >= 0 else 128 - done.returncode
    return Outcome(status, done.stdout.decode("latin-1"),
                   done.stderr.decode("latin-1").replace(binary, "trec_eval"))


def case_folder(files: dict[str, str], cwd: str | None, tmp_path: Path) -> Path:
    """Write a case's input files to ``tmp_path``; the folder to run it in."""
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return CONFORMANCE if cwd == "conformance" else tmp_path


def assert_same(got: Outcome, want: Outcome, stderr_lines: int | None, args: object) -> None:
    """The same status, the same first ``stderr_lines`` lines of stderr (None: all of it)
    and the same stdout, except after an abort() (status 134), which loses trec_eval's
    buffered stdout."""
    if stderr_lines is None:
        assert (got.status, got.stderr) == (want.status, want.stderr), args
    else:
        assert (got.status, got.stderr.splitlines()[:stderr_lines]) == (
            want.status, want.stderr.splitlines()[:stderr_lines]), args
    if want.status != 134:
        assert got.stdout == want.stdout, args
