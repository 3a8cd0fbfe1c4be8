"""Regenerate the demo corpus from the docstrings of the running CPython.

The demo collection (``src/rankscope/demo_data/``) is documentation of
Python's standard library: one document per public module, class, function,
method or property whose docstring says something (at least
``MIN_TEXT_CHARS`` characters), with ids that are the qualified names Python's
documentation uses (``json.dumps``, ``pathlib.Path.glob``, ``str.split``).

Deterministic: modules, members and documents are visited in sorted order,
and the output is a gzip file with a fixed timestamp, so two runs with the
same interpreter write the same bytes. The corpus shipped with rankscope was
made with CPython 3.11.7 on Linux; another interpreter or platform gives a
slightly different corpus (which modules import, which docstrings exist).

Run: ``python3 scripts/make_demo_corpus.py`` with the interpreter whose
docstrings you want, outside any virtualenv (it needs nothing outside the
standard library). ``--check`` only reports whether the file would change.
"""

from __future__ import annotations

import argparse
import builtins
import enum
import gzip
import importlib
import inspect
import io
import json
import pkgutil
import re
import sys
import types
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "src" / "rankscope" / "demo_data"
DOCS = "https://docs.python.org/3.11/library/"
MIN_TEXT_CHARS = 60

# Top-level modules left out: test suites and tools the brief excludes,
# modules with side effects on import, implementation details documented
# elsewhere (posixpath is os.path, pyexpat is xml.parsers.expat, posix is os)
# and distutils (deprecated by PEP 632). Deprecated modules (PEP 594) are
# found at import time by their DeprecationWarning.
SKIP_TOP = {
    "antigravity",  # opens a web browser on import
    "this",  # prints on import
    "idlelib",
    "lib2to3",
    "turtledemo",
    "encodings",
    "test",
    "distutils",
    "genericpath",
    "ntpath",
    "posixpath",
    "nturl2path",
    "opcode",
    "posix",
    "pydoc_data",
    "pyexpat",
    "sre_compile",
    "sre_constants",
    "sre_parse",
}
# Package parts that are test suites or scripts, wherever they appear.
SKIP_PARTS = {"test", "tests", "idle_test", "__main__"}

# Submodules with a page of their own in the 3.11 library reference (the
# page is the module's name in lower case). Any other submodule is
# documented on the page of its nearest documented ancestor.
OWN_PAGE = {
    "collections.abc",
    "concurrent.futures",
    "curses.ascii",
    "curses.panel",
    "email.charset",
    "email.contentmanager",
    "email.encoders",
    "email.errors",
    "email.generator",
    "email.header",
    "email.headerregistry",
    "email.iterators",
    "email.message",
    "email.mime",
    "email.parser",
    "email.policy",
    "email.utils",
    "html.entities",
    "html.parser",
    "http.client",
    "http.cookiejar",
    "http.cookies",
    "http.server",
    "importlib.metadata",
    "importlib.resources",
    "importlib.resources.abc",
    "logging.config",
    "logging.handlers",
    "multiprocessing.shared_memory",
    "os.path",
    "tkinter.colorchooser",
    "tkinter.dnd",
    "tkinter.font",
    "tkinter.messagebox",
    "tkinter.scrolledtext",
    "tkinter.tix",
    "tkinter.ttk",
    "unittest.mock",
    "urllib.error",
    "urllib.parse",
    "urllib.request",
    "urllib.robotparser",
    "xml.dom",
    "xml.dom.minidom",
    "xml.dom.pulldom",
    "xml.etree.ElementTree",
    "xml.parsers.expat",
    "xml.sax",
    "xml.sax.handler",
    "xml.sax.saxutils",
    "xml.sax.xmlreader",
    "xmlrpc.client",
    "xmlrpc.server",
}
# Top-level modules documented on another module's page.
PAGE_OF = {"cProfile": "profile", "pstats": "profile"}
# Built-in classes whose own entry is in "Built-in Types" (the others, and all
# built-in functions, are in "Built-in Functions"; exceptions have a page).
STDTYPES = {
    "bool",
    "bytearray",
    "bytes",
    "complex",
    "dict",
    "float",
    "frozenset",
    "int",
    "list",
    "memoryview",
    "range",
    "set",
    "str",
    "tuple",
}
BUILTIN_EXCEPTIONS = {
    name
    for name, obj in vars(builtins).items()
    if inspect.isclass(obj) and issubclass(obj, BaseException)
}
# asyncio is documented on several pages, one per topic; a name goes to the
# page of the submodule that defines it.
ASYNCIO_PAGES = {
    "asyncio.base_events": "asyncio-eventloop",
    "asyncio.events": "asyncio-eventloop",
    "asyncio.exceptions": "asyncio-exceptions",
    "asyncio.futures": "asyncio-future",
    "asyncio.locks": "asyncio-sync",
    "asyncio.protocols": "asyncio-protocol",
    "asyncio.queues": "asyncio-queue",
    "asyncio.runners": "asyncio-runner",
    "asyncio.streams": "asyncio-stream",
    "asyncio.subprocess": "asyncio-subprocess",
    "asyncio.taskgroups": "asyncio-task",
    "asyncio.tasks": "asyncio-task",
    "asyncio.threads": "asyncio-task",
    "asyncio.timeouts": "asyncio-task",
    "asyncio.transports": "asyncio-protocol",
    "asyncio.unix_events": "asyncio-eventloop",
}


@dataclass(frozen=True)
class Candidate:
    """One public name with a docstring, before duplicates are dropped."""

    id: str
    module: str
    kind: str
    obj: Any
    text: str
    home: str  # the module whose documentation page describes it


def import_quietly(name: str) -> types.ModuleType | None:
    """The module, or None when it does not import here or is deprecated."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        warnings.simplefilter("error", PendingDeprecationWarning)
        try:
            return importlib.import_module(name)
        except (Exception, SystemExit):
            return None


def public(name: str) -> bool:
    return not name.startswith("_")


def module_names() -> list[str]:
    """Every public, importable standard-library module and submodule, sorted."""
    found: set[str] = set()
    for top in sorted(sys.stdlib_module_names):
        if not public(top) or top in SKIP_TOP:
            continue
        mod = import_quietly(top)
        if mod is None:
            continue
        found.add(top)
        if hasattr(mod, "__path__"):
            found.update(submodules(mod))
    found.add("os.path")
    return sorted(found)


def submodules(pkg: types.ModuleType) -> Iterator[str]:
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
        if not public(info.name) or info.name in SKIP_PARTS:
            continue
        name = f"{pkg.__name__}.{info.name}"
        mod = import_quietly(name)
        if mod is None:
            continue
        yield name
        if info.ispkg:
            yield from submodules(mod)


def docstring(obj: Any) -> str:
    raw = getattr(obj, "__doc__", None)
    if not isinstance(raw, str):
        return ""
    return inspect.cleandoc(raw).strip()


def own_docstring(obj: Any) -> str:
    """The object's docstring when it is its own, not its type's."""
    text = docstring(obj)
    if not text or inspect.isclass(obj) or inspect.isroutine(obj) or inspect.ismodule(obj):
        return text
    return "" if text == docstring(type(obj)) else text


def object_text(obj: Any) -> str:
    """The document text: the docstring; a class's ``__init__`` docstring follows its own.

    Python classes often document their arguments on ``__init__`` (Sphinx's
    ``autoclass_content = "both"`` shows the two together the same way).
    """
    text = own_docstring(obj)
    if inspect.isclass(obj):
        init = vars(obj).get("__init__")
        init_text = docstring(init) if inspect.isfunction(init) else ""
        if init_text and init_text != text:
            text = f"{text}\n\n{init_text}" if text else init_text
    return text


def object_kind(obj: Any) -> str | None:
    if inspect.ismodule(obj):
        return None  # submodules are visited as modules of their own
    if inspect.isclass(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    if inspect.isroutine(obj):
        return "function"
    if isinstance(obj, enum.Enum):
        return None
    return "data" if own_docstring(obj) else None


def member_kind(raw: Any) -> str | None:
    """The kind of one entry of a class ``__dict__`` (None: not a documented member)."""
    if isinstance(raw, classmethod) or type(raw).__name__ == "classmethod_descriptor":
        return "classmethod"
    if isinstance(raw, staticmethod):
        return "staticmethod"
    if isinstance(raw, property | types.GetSetDescriptorType | types.MemberDescriptorType):
        return "property"
    if inspect.isfunction(raw) or inspect.ismethoddescriptor(raw) or inspect.isbuiltin(raw):
        return "method"
    return None


def module_members(mod: types.ModuleType) -> list[tuple[str, Any]]:
    """The module's public names: ``__all__`` when it has one, else what it defines."""
    names: list[str]
    declared = getattr(mod, "__all__", None)
    if isinstance(declared, list | tuple):
        names = [n for n in declared if isinstance(n, str) and public(n) and hasattr(mod, n)]
    else:
        names = []
        for n, obj in vars(mod).items():
            if not public(n):
                continue
            origin = getattr(obj, "__module__", None)
            if origin == mod.__name__ or (isinstance(origin, str) and origin.startswith("_")):
                names.append(n)
    return [(n, getattr(mod, n)) for n in sorted(set(names))]


def defining_home(obj: Any, module: str) -> str:
    """The module whose page documents ``obj`` reached as a name of ``module``."""
    if module == "asyncio":
        origin = getattr(obj, "__module__", None)
        if isinstance(origin, str) and origin in ASYNCIO_PAGES:
            return origin
    return module


def candidates() -> Iterator[Candidate]:
    yield from builtin_candidates()
    for name in module_names():
        mod = sys.modules["posixpath"] if name == "os.path" else sys.modules[name]
        text = docstring(mod)
        if text:
            yield Candidate(name, name, "module", mod, text, name)
        if name == "builtins":  # its names are documented without the prefix, above
            continue
        for member, obj in module_members(mod):
            kind = object_kind(obj)
            if kind is None:
                continue
            qualified = f"{name}.{member}"
            home = defining_home(obj, name)
            yield Candidate(qualified, name, kind, obj, object_text(obj), home)
            if inspect.isclass(obj):
                yield from class_candidates(obj, qualified, name, home)


def builtin_candidates() -> Iterator[Candidate]:
    for member, obj in sorted(vars(builtins).items()):
        kind = object_kind(obj)
        if not public(member) or kind is None or kind == "data":
            continue
        yield Candidate(member, "builtins", kind, obj, object_text(obj), "builtins")
        if inspect.isclass(obj):
            yield from class_candidates(obj, member, "builtins", "builtins")


def class_candidates(cls: type, qualified: str, module: str, home: str) -> Iterator[Candidate]:
    for member, raw in sorted(vars(cls).items()):
        if not public(member):
            continue
        kind = member_kind(raw)
        if kind is None:
            continue
        yield Candidate(f"{qualified}.{member}", module, kind, raw, docstring(raw), home)


def page(c: Candidate) -> str:
    """The library reference page (without ``.html``) that documents a candidate."""
    if c.module == "builtins" and c.kind != "module":
        owner = c.id.split(".")[0]
        if owner in BUILTIN_EXCEPTIONS:
            return "exceptions"
        if c.kind == "function" or (c.kind == "class" and owner not in STDTYPES):
            return "functions"
        return "stdtypes"
    if c.home in ASYNCIO_PAGES:
        return ASYNCIO_PAGES[c.home]
    parts = c.home.split(".")
    for n in range(len(parts), 1, -1):
        prefix = ".".join(parts[:n])
        if prefix in OWN_PAGE:
            return prefix.lower()
    return PAGE_OF.get(parts[0], parts[0].lower())


def url(c: Candidate) -> str:
    anchor = f"module-{c.id}" if c.kind == "module" else c.id
    return f"{DOCS}{page(c)}.html#{anchor}"


def short_signature(c: Candidate) -> str:
    """``(a, b, *, c=1, ...)`` kept short enough for a title; '' when unknown."""
    target = c.obj
    if isinstance(target, classmethod | staticmethod):
        target = target.__func__
    if isinstance(target, property) or c.kind in ("module", "property", "data"):
        return ""
    try:
        sig = inspect.signature(target)
    except Exception:  # C signatures can name constants that do not exist here
        return ""
    params = list(sig.parameters.values())
    if c.kind in ("method", "classmethod") and params and params[0].name in ("self", "cls", "type"):
        params = params[1:]
    shown: list[str] = []
    kw_only_marked = False
    for p in params:
        if p.name.startswith("_"):  # private helper parameters, e.g. copy.deepcopy(_nil=[])
            continue
        if p.kind is p.KEYWORD_ONLY and not kw_only_marked:
            shown.append("*")
            kw_only_marked = True
        if p.kind is p.VAR_POSITIONAL:
            kw_only_marked = True
            text = f"*{p.name}"
        elif p.kind is p.VAR_KEYWORD:
            text = f"**{p.name}"
        elif p.default is p.empty:
            text = p.name
        else:
            default = repr(p.default)
            text = f"{p.name}={default if len(default) <= 12 else '...'}"
        shown.append(text)
    out = ""
    for i, part in enumerate(shown):
        nxt = part if not out else f"{out}, {part}"
        if len(nxt) > 48 and i < len(shown) - 1:
            return f"({out}, ...)" if out else "(...)"
        out = nxt
    return f"({out})"


def first_sentence(text: str) -> str:
    para = " ".join(text.split("\n\n", 1)[0].split())
    match = re.match(r"(.+?[.!?])(\s+[A-Z]|$)", para)  # not "a.k.a. x" or "e.g. y"
    sentence = match.group(1) if match else para
    return sentence if len(sentence) <= 100 else sentence[:97].rstrip() + "..."


def title(c: Candidate) -> str:
    if c.kind in ("module", "property", "data"):
        return f"{c.id} — {first_sentence(c.text)}"
    return c.id + short_signature(c)


def canonical_key(c: Candidate) -> tuple[int, int, int, int, str]:
    """Smaller is more canonical: builtins, the object's own name, shallow modules, short ids."""
    own_name = getattr(c.obj, "__name__", None)
    if isinstance(c.obj, classmethod | staticmethod):
        own_name = getattr(c.obj.__func__, "__name__", None)
    return (
        0 if c.module == "builtins" else 1,
        0 if c.kind == "module" or own_name == c.id.rsplit(".", 1)[-1] else 1,
        c.module.count("."),
        len(c.id),
        c.id,
    )


def build() -> list[dict[str, str]]:
    best: dict[str, Candidate] = {}
    for c in candidates():
        if len(c.text) < MIN_TEXT_CHARS:
            continue
        kept = best.get(c.text)
        if kept is None or canonical_key(c) < canonical_key(kept):
            best[c.text] = c
    docs = sorted(best.values(), key=lambda c: c.id)
    seen: set[str] = set()
    out: list[dict[str, str]] = []
    for c in docs:
        if c.id in seen:  # same name reached twice with different text: keep the first
            continue
        seen.add(c.id)
        out.append(
            {
                "id": c.id,
                "title": title(c),
                "text": c.text,
                "url": url(c),
                "module": c.module,
                "kind": c.kind,
            }
        )
    return out


def encode(docs: list[dict[str, str]]) -> bytes:
    lines = "".join(json.dumps(d, ensure_ascii=False, sort_keys=False) + "\n" for d in docs)
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
        gz.write(lines.encode("utf-8"))
    return buf.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report, write nothing")
    parser.add_argument("--out", type=Path, default=OUT / "corpus.jsonl.gz")
    args = parser.parse_args()
    if sys.prefix != sys.base_prefix:
        # Some defaults shown in titles depend on the environment (sysconfig's
        # scheme is 'venv' in a virtualenv), so the corpus comes from the base one.
        base = getattr(sys, "_base_executable", "python3")
        parser.error(f"run this with the base interpreter, not a virtualenv: {base}")
    docs = build()
    data = encode(docs)
    kinds: dict[str, int] = {}
    for d in docs:
        kinds[d["kind"]] = kinds.get(d["kind"], 0) + 1
    sys.stdout.write(
        f"{len(docs)} documents from {len({d['module'] for d in docs})} modules, "
        f"{len(data):,} bytes gzipped; kinds: {dict(sorted(kinds.items()))}\n"
    )
    if args.check:
        same = args.out.exists() and args.out.read_bytes() == data
        sys.stdout.write("unchanged\n" if same else "would change\n")
        return
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(data)


if __name__ == "__main__":
    main()
