"""A metric factory's generated documentation: its Parameters section written from
the family's definition (:class:`~rankscope.metrics.base.Param`), put in its
docstring when the family is registered.

Apart from :mod:`rankscope.metrics.base` (the definitions themselves): what a
family documents is read from them, never written twice.
"""

from __future__ import annotations

import functools
import inspect
import re
import textwrap
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rankscope.metrics.base import Family, Metric, Param

__all__ = ["document", "parameters_section"]

_SECTION = re.compile(r"^[A-Z][A-Za-z ]+\n-{3,}$", re.M)


def parameters_section(fam: Family) -> str:
    """The numpydoc Parameters section of ``fam``'s factory (:meth:`Family.parameters_section`)."""
    lines = ["Parameters", "----------"]
    for name, has_default in _arguments(fam.factory):
        if name == "k":
            lines.append(f"k : {'int, optional' if has_default else 'int'}")
            lines += _wrapped(fam.k_doc)
            continue
        p = fam.param(name)
        lines.append(f"{name} : {_type_words(p)}")
        lines += _wrapped(p.doc)
    return "\n".join(lines)


def _type_words(p: Param) -> str:
    """A parameter's type and default as numpydoc writes them (``float, default 1``)."""
    if p.kind == "str" and p.choices:
        kind = "{" + ", ".join(f'"{c}"' for c in p.choices) + "}"
    else:
        kind = {"gains": "mapping or str"}.get(p.kind, p.kind)
    if p.default is None:
        return f"{kind}, optional"
    shown = f'"{p.default}"' if isinstance(p.default, str) else repr(p.default)
    return f"{kind}, default {shown}"


def _sentence(text: str) -> str:
    """A Param's one-line ``doc`` as a sentence (names such as ``trec_eval`` keep their case)."""
    text = text.strip()
    first = text.split(" ", 1)[0]
    if first.isalpha():
        text = text[:1].upper() + text[1:]
    return text if text.endswith(".") else text + "."


def _arguments(factory: Callable[..., Metric]) -> list[tuple[str, bool]]:
    """A factory's arguments in order, each with whether it has a default.

    Read from the code object, as :func:`inspect.signature` would give them
    for a function of named arguments (the registry's 72 signatures cost
    milliseconds of every command's start).
    """
    func = inspect.unwrap(factory)
    code = func.__code__
    if code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        raise ValueError(f"metric factory {func.__name__!r} takes *args or **kwargs; "
                         "its arguments must be named")
    positional = code.co_varnames[:code.co_argcount]
    keyword = code.co_varnames[code.co_argcount:code.co_argcount + code.co_kwonlyargcount]
    first_default = len(positional) - len(func.__defaults__ or ())
    kw_defaults = func.__kwdefaults__ or {}
    return ([(name, i >= first_default) for i, name in enumerate(positional)]
            + [(name, name in kw_defaults) for name in keyword])


@functools.cache
def _wrapped(text: str) -> tuple[str, ...]:
    """A parameter's text as the section's indented lines (families share many texts)."""
    return tuple(textwrap.wrap(_sentence(text), 75, initial_indent="    ",
                               subsequent_indent="    ", break_on_hyphens=False))


def document(fam: Family) -> None:
    """Write the factory's Parameters section from the definition (see :class:`Param`)."""
    doc = inspect.cleandoc(fam.factory.__doc__ or "")
    if re.search(r"^Parameters\n-{3,}$", doc, re.M):
        raise ValueError(f"metric family {fam.name!r}: its factory's docstring has a "
                         "Parameters section; describe them in its Params (it is generated)")
    if not _arguments(fam.factory):  # no arguments: the docstring stays as written
        return
    section = parameters_section(fam)
    found = _SECTION.search(doc)
    at = found.start() if found else len(doc)
    fam.factory.__doc__ = doc[:at].rstrip() + "\n\n" + section + "\n\n" + doc[at:].lstrip()
