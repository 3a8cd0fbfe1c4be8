"""Getting bytes in and out: paths, ``-`` for stdin/stdout, gzip, binary detection."""

from __future__ import annotations

import contextlib
import gzip
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from rankscope.errors import FileAccessError, OutputWriteError

__all__ = ["Kind", "PathLike", "RowLocator", "display_name", "read_bytes", "read_text",
           "write_bytes"]

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


def write_bytes(path: PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` (stdout for ``-``); gzip when the name ends in ``.gz``.

    Raises
    ------
    OutputWriteError
        The system refused the write (no such directory, a full disk, no
        permission): the command line's exit code 4.
    """
    text = os.fspath(path)
    if text == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    if text.endswith(".gz"):
        data = gzip.compress(data)
    target = Path(text)
    try:
        if not target.parent.is_dir() or (target.exists() and not target.is_file()):
            target.write_bytes(data)  # the system's own error (no such directory, ...)
            return
        # a temporary file renamed into place: a reader never sees half a file
        handle, temp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(temp, 0o666 & ~umask)  # mkstemp makes it private; an output is not
            os.replace(temp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
    except OSError as exc:
        raise OutputWriteError(str(exc.strerror or exc), target=text) from None
