"""The files an endpoint may name when a web user wrote it: inside one directory.

On the command line an endpoint file names the user's own files, anywhere.
In the web app a curator writes the endpoint, and the server reads and
writes the files it names (``corpus``, ``template_file``, ``index``), so
they are kept inside the directory the operator set (``rankscope serve
--files-dir``, by default the data directory) by a :class:`FileScope`:

- a path is relative: an absolute path, ``~`` or a ``..`` step is refused;
- the file it leads to, symbolic links followed, is inside the directory;
- it is not one of the app's own files (its SQLite database with its
  ``-wal``, ``-shm`` and ``-journal`` files, the LLM answer cache): neither
  read nor written;
- an index is written only where nothing is, or over an index the engine
  made (:func:`rankscope.search.embedded_index.check_index_target`);
- an embedded corpus named ``irds:NAME`` is no file: it is an ir_datasets
  collection, read from its cache, allowed only when NAME matches one of the
  operator's patterns (``rankscope serve --irds``; none by default; else a
  :class:`~rankscope.errors.ForbiddenError`).

Every refusal is a :class:`~rankscope.errors.ConfigError` naming the key and
the path as written, never the content of a file; and the embedded engine
quotes no line of a corpus it cannot read when the scope is set.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from rankscope.errors import ConfigError

__all__ = ["SIDE_FILES", "FileScope"]

SIDE_FILES = ("", "-wal", "-shm", "-journal")
"""SQLite keeps these beside a database file: a reserved file's are reserved too."""


@dataclass(frozen=True)
class FileScope:
    """Where the files an endpoint names may be (see the module docstring).

    Parameters
    ----------
    root : Path
        The directory every path stays in.
    reserved : frozenset of Path
        Files of the app itself, never read or written for an endpoint
        (their SQLite side files included).
    irds : tuple of str
        Name patterns of the ir_datasets collections an embedded corpus may
        name as ``irds:NAME`` instead of a file (none by default).
    """

    root: Path
    reserved: frozenset[Path] = frozenset()
    irds: tuple[str, ...] = ()

    def _reserved(self) -> set[Path]:
        out: set[Path] = set()
        for path in self.reserved:
            resolved = path.resolve()
            out.update(resolved.with_name(resolved.name + side) for side in SIDE_FILES)
        return out

    def check_base(self, base: Path, source: str | None) -> Path:
        """The endpoint's own directory, resolved; refused when outside the root."""
        root = self.root.resolve()
        resolved = base.resolve()
        if not resolved.is_relative_to(root):
            raise ConfigError(f"the endpoint's directory is outside the directory this server "
                              f"keeps endpoint files in ({root})", source=source)
        return resolved

    def resolve(self, value: Any, *, key: str, base: Path, source: str | None) -> Path:
        """The file a path of the endpoint names, checked (ConfigError naming ``key``)."""
        if not isinstance(value, str) or not value.strip() or "\x00" in value:
            raise ConfigError(f"{key} must be a file name", source=source,
                              value=None if value is None else repr(value))
        written = PurePath(value)
        if written.is_absolute() or value.startswith(("~", "/", "\\")) or (
                len(value) > 1 and value[1] == ":"):
            raise ConfigError(f"{key} must be a path inside the server's files directory, "
                              "relative to it (not an absolute path)", source=source,
                              value=value)
        if ".." in written.parts or ".." in PurePath(value.replace("\\", "/")).parts:
            raise ConfigError(f"{key} may not step out of a directory with '..'",
                              source=source, value=value)
        root = self.root.resolve()
        target = (self.check_base(base, source) / value).resolve()
        if not target.is_relative_to(root):
            raise ConfigError(f"{key} leads outside the server's files directory (through a "
                              "symbolic link)", source=source, value=value)
        if target == root:
            raise ConfigError(f"{key} names the files directory itself", source=source,
                              value=value)
        if target in self._reserved():
            raise ConfigError(f"{key} names a file of the app itself (its database or a "
                              "cache), which an endpoint may not read or write", source=source,
                              value=value)
        return target

    def corpus(self, value: Any, *, base: Path, source: str | None) -> Path | None:
        """An embedded engine's corpus: the file, checked like any path
        (:meth:`resolve`), or None for an ``irds:NAME`` collection the operator
        allows (ForbiddenError when it is not allowed)."""
        from rankscope.data.irds import check_allowed, is_irds

        if is_irds(value):
            check_allowed(value, self.irds)
            return None
        return self.resolve(value, key="corpus", base=base, source=source)
