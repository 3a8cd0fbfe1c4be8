"""Getting bytes in and out: paths, ``-`` for stdin/stdout, gzip, binary detection."""

from __future__ import annotations

import contextlib
import errno
import gzip
import os
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO, Literal

from rankscope.errors import FileAccessError, OutputWriteError

__all__ = ["Kind", "PathLike", "RowLocator", "atomic_output", "display_name", "read_bytes",
           "read_text", "write_bytes", "write_failure"]

PathLike = str | os.PathLike[str]
Kind = Literal["qrels", "run"]
"""What a file of relevance data holds."""
RowLocator = Callable[[int], int | None]
"""Maps a 0-based row of a table to the 1-based line of the file it came from (None: unknown)."""

_GZIP_MAGIC = b"\x1f\x8b"


def display_name(path: PathLike) -> str:
    """The name used for ``path`` in messages (``<stdin>`` for ``-``)."""
    text = os.fspath(path)
    return "<stdin>" if text == "-" else text


def read_bytes(path: PathLike) -> bytes:
    """Read a whole file (or stdin for ``-``), transparently un-gzipping it.

    Raises
    ------
    FileAccessError
        If the file is missing, a directory, unreadable, or not valid gzip.
    """
    name = display_name(path)
    if os.fspath(path) == "-":
        data = sys.stdin.buffer.read()
    else:
        p = Path(path)
        try:
            data = p.read_bytes()
        except FileNotFoundError:
            raise FileAccessError("no such file", source=name) from None
        except IsADirectoryError:
            raise FileAccessError("is a directory, not a file", source=name) from None
        except PermissionError:
            raise FileAccessError("permission denied", source=name) from None
        except OSError as exc:
            raise FileAccessError(f"cannot read: {exc.strerror or exc}", source=name) from None
    if data[:2] == _GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise FileAccessError(f"corrupt gzip data: {exc}", source=name) from None
    return data


def read_text(path: PathLike) -> tuple[bytes, str]:
    """Read a text file; refuse binary content with a clear error.

    Returns the raw bytes (for fast parsers) and the display name.
    """
    data = read_bytes(path)
    name = display_name(path)
    check_text_head(data[:65536], name)
    return data, name


def check_text_head(head: bytes, name: str) -> None:
    """Refuse a file whose first bytes are not text (NUL bytes, or not UTF-8)."""
    if b"\x00" in head:
        raise FileAccessError("binary file (contains NUL bytes), expected text", source=name)
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut at the end of the head is not binary.
        if exc.start < len(head) - 4:
            line = head[: exc.start].count(b"\n") + 1
            raise FileAccessError(
                "not UTF-8 text (binary file?)", source=name, line=line
            ) from None


def write_failure(exc: OSError, target: PathLike) -> OutputWriteError:
    """The :class:`OutputWriteError` (exit code 4) of a write the system refused."""
    name = "<stdout>" if os.fspath(target) == "-" else os.fspath(target)
    if exc.errno == errno.ENOENT:
        parent = os.path.dirname(os.path.abspath(name)) if name != "<stdout>" else ""
        return OutputWriteError(f"no such directory: {parent}", target=name)
    if exc.errno == errno.EISDIR:
        return OutputWriteError("is a directory", target=name)
    return OutputWriteError(str(exc.strerror or exc), target=name)


_UMASK: list[int] = []


def _umask() -> int:
    """The process's umask, read once (reading it means setting it: not in every thread)."""
    if not _UMASK:
        mask = os.umask(0o022)
        os.umask(mask)
        _UMASK.append(mask)
    return _UMASK[0]


@contextlib.contextmanager
def atomic_output(path: PathLike) -> Iterator[BinaryIO]:
    """A binary file to write ``path`` through: it replaces ``path`` only when the block ends.

    Every file rankscope writes goes through here (:func:`write_bytes` and the
    writers that stream lines). The bytes go to a temporary file beside the
    target (``.NAME.XXXXXX.tmp``, in the same directory, so the rename is
    atomic) that is renamed over it when the block ends without an error; on
    an error it is removed and the target is as it was: a failed run never
    leaves a half-written file, nor destroys the one it would have replaced.
    A symbolic link is written through (its target is replaced, the link
    stays); an existing file keeps its permissions, a new one gets the
    umask's. Standard output (``-``) and files that are not regular files
    (``/dev/null``, a FIFO, a terminal) are written directly.

    Raises
    ------
    OutputWriteError
        The system refused (no such directory, a full disk, no permission,
        a directory in the way): the command line's exit code 4.
    """
    text = os.fspath(path)
    if text == "-":
        try:
            sys.stdout.flush()  # what was written as text first
            yield sys.stdout.buffer
            sys.stdout.buffer.flush()
        except OSError as exc:
            if isinstance(exc, BrokenPipeError):
                raise
            raise write_failure(exc, "-") from None
        return
    real = os.path.realpath(text)
    try:
        mode: int | None = os.stat(real).st_mode
    except OSError:
        mode = None
    if mode is not None and stat.S_ISDIR(mode):
        raise OutputWriteError("is a directory", target=text)
    if mode is not None and not stat.S_ISREG(mode):
        try:
            with open(real, "wb") as handle:
                yield handle
        except OSError as exc:
            raise write_failure(exc, text) from None
        return
    import tempfile

    directory, name = os.path.split(real)
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory or ".")
    except OSError as exc:
        raise write_failure(exc, text) from None
    try:
        if mode is None:
            os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes it private; an output is not
        else:
            os.fchmod(fd, stat.S_IMODE(mode))
        with os.fdopen(fd, "wb") as handle:
            yield handle
        os.replace(temp, real)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        if isinstance(exc, OSError):
            raise write_failure(exc, text) from None
        raise


def write_bytes(path: PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` (stdout for ``-``) atomically; gzip when the name ends in ``.gz``.

    Raises
    ------
    OutputWriteError
        The system refused the write (no such directory, a full disk, no
        permission): the command line's exit code 4. The target is then as
        it was (:func:`atomic_output`).
    """
    if os.fspath(path) != "-" and os.fspath(path).endswith(".gz"):
        data = gzip.compress(data)
    with atomic_output(path) as handle:
        handle.write(data)
