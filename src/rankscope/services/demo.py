"""The bundled demo collection, written out to a directory for ``rankscope demo init``.

The package directory ``rankscope/demo_data`` holds the corpus
(``corpus.jsonl.gz``), the queries, hand-made graded judgments and two
embedded endpoints over the corpus (``baseline.toml``, ``tuned.toml``);
see its README for where they come from. :func:`init_demo` writes
``corpus.jsonl`` (decompressed), ``queries.tsv``, ``qrels.txt``,
``endpoint.toml`` (the baseline), ``endpoint_tuned.toml`` and, when present,
``needs.tsv``, ``guidelines.md``, ``README.md``, ``LICENSE`` and ``clicks.csv``
(a click log simulated from the judgments, for implicit judgments).
"""

from __future__ import annotations

import gzip
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from rankscope.data._io import write_bytes
from rankscope.errors import FileAccessError, OptionError, OutputWriteError

__all__ = ["DEMO_FILES", "OPTIONAL_FILES", "demo_source", "init_demo"]

DEMO_FILES = {
    "corpus.jsonl.gz": "corpus.jsonl",
    "queries.tsv": "queries.tsv",
    "qrels.txt": "qrels.txt",
    "baseline.toml": "endpoint.toml",
    "tuned.toml": "endpoint_tuned.toml",
}
"""Packaged file -> the name it is written under."""
OPTIONAL_FILES = ("needs.tsv", "guidelines.md", "README.md", "LICENSE", "clicks.csv.gz")
"""Packaged files written when present (a ``.gz`` one decompressed, without the suffix)."""


def demo_source() -> Traversable:
    """Where the packaged demo collection is."""
    return resources.files("rankscope") / "demo_data"


def init_demo(dest: str | Path, *, source: Traversable | Path | None = None,
              force: bool = False) -> list[Path]:
    """Write the demo collection into ``dest`` (created if needed); the files written.

    Raises
    ------
    FileAccessError
        The demo collection is not installed.
    OutputWriteError
        ``dest`` cannot be written.
    OptionError
        A file would be overwritten and ``force`` is not set.
    """
    src = source if source is not None else demo_source()
    missing = [name for name in DEMO_FILES if not (src / name).is_file()]
    if missing:
        raise FileAccessError(f"the demo collection is incomplete in this installation "
                              f"(missing {', '.join(missing)})", source=str(src))
    target = Path(dest)
    plan = dict(DEMO_FILES)
    plan.update({name: name.removesuffix(".gz") for name in OPTIONAL_FILES
                 if (src / name).is_file()})
    if not force:
        present = [out for out in plan.values() if (target / out).exists()]
        if present:
            raise OptionError(f"{target} already has {', '.join(present)}: use --force to "
                              "overwrite, or another directory")
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputWriteError(f"cannot create the directory: {exc.strerror or exc}",
                               target=str(target)) from None
    written = []
    for name, out in plan.items():
        data = (src / name).read_bytes()
        if name.endswith(".gz"):
            data = gzip.decompress(data)
        write_bytes(target / out, data)  # whole or not at all
        written.append(target / out)
    return written
