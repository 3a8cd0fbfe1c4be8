"""The largest values the app accepts, and the one check of a text a user gives.

Every id is a whole number from 1 to :data:`MAX_ID` (PostgreSQL's
``integer``, which the tables use); every text a user gives has a limit and
never holds a NUL character (PostgreSQL cannot store one). The API documents
the same limits in its schemas; docs/web_app.md lists them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sized
from typing import Any

from rankscope.errors import InputError

__all__ = [
    "MAX_EXPLANATION",
    "MAX_GUIDELINES",
    "MAX_ID",
    "MAX_NAME",
    "MAX_NOTE",
    "MAX_URL",
    "MAX_USER_NAME",
    "check_items",
    "check_spec",
    "check_text",
    "spec_field",
]

MAX_ID = 2**31 - 1
"""The largest id (ids are PostgreSQL ``integer`` columns)."""
MAX_NAME = 200
"""A name or short label: a project, query set, endpoint, evaluation, rater, model, token,
batch id, query or document id, a metric."""
MAX_USER_NAME = 100
"""A user's name (shorter than other names: it is shown on every page)."""
MAX_NOTE = 2_000
"""A reason ("can't tell"), an adjudication note, an annotation ("what changed")."""
MAX_EXPLANATION = 10_000
"""A grader's explanation."""
MAX_GUIDELINES = 200_000
"""Grading guidelines (Markdown)."""
MAX_URL = 2_048
"""An LLM judge's endpoint URL."""


def check_text(value: str | None, what: str, limit: int) -> str | None:
    """``value`` when it fits: at most ``limit`` characters and no NUL (InputError otherwise).

    Examples
    --------
    >>> check_text("shop", "a project name", MAX_NAME)
    'shop'
    >>> check_text("a\\x00b", "a name", MAX_NAME)
    Traceback (most recent call last):
    rankscope.errors.InputError: a name may not hold a NUL character
    """
    if value is None:
        return None
    if "\x00" in value:
        raise InputError(f"{what} may not hold a NUL character")
    if len(value) > limit:
        raise InputError(f"{what} is longer than {limit:,} characters ({len(value):,})")
    return value


def check_items(values: Sized, what: str, most: int) -> None:
    """Refuse more than ``most`` values (InputError saying the limit and how many were given).

    Examples
    --------
    >>> check_items(["k=1", "k=2"], "a change", 1)
    Traceback (most recent call last):
    rankscope.errors.InputError: a change: at most 1 items, not 2
    """
    if len(values) > most:
        raise InputError(f"{what}: at most {most} items, not {len(values)}")


def spec_field(default: Any = dataclasses.MISSING, *, doc: str, limit: int | None = None,
               key_limit: int | None = None, items: int | None = None, label: str | None = None,
               is_id: bool = False, factory: Callable[[], Any] | None = None) -> Any:
    """A field of a service's spec with its one definition: what it means (``doc``), the
    longest text (``limit``; ``key_limit`` for a mapping's keys), the most items
    (``items``, also of a sequence of specs), the words an error names it by (``label``),
    whether it is an id.

    :func:`check_spec` checks the texts by it; the web app's API derives its input
    models from it (:func:`rankscope.app.schemas.schema_of`), so a limit or a doc is
    written once.
    """
    metadata = {"doc": doc, "limit": limit, "key_limit": key_limit, "items": items,
                "label": label, "is_id": is_id}
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def check_spec(spec: Any) -> None:
    """Every text of a spec within its field's limit and without NUL (:func:`check_text`),
    every sequence within its most items; a spec in a sequence is checked by its own fields.

    Raises
    ------
    InputError
        A text too long (or holding NUL), named by its field's label; too many items.

    Examples
    --------
    >>> @dataclasses.dataclass
    ... class Spec:
    ...     name: str = spec_field(doc="A name.", limit=3, label="the name")
    >>> check_spec(Spec("abcd"))
    Traceback (most recent call last):
    rankscope.errors.InputError: the name is longer than 3 characters (4)
    """
    for f in dataclasses.fields(spec):
        meta = f.metadata
        value = getattr(spec, f.name)
        label = meta.get("label") or f.name.replace("_", " ")
        limit = meta.get("limit")
        items = meta.get("items")
        if value is None or (limit is None and items is None):
            continue
        if isinstance(value, str):
            if limit is not None:
                check_text(value, label, limit)
            continue
        if items is not None:
            check_items(value, label, items)
        if isinstance(value, Mapping):
            for key, text in value.items():
                check_text(key, label, meta.get("key_limit") or limit or MAX_NOTE)
                check_text(text, label, limit or MAX_NOTE)
        else:
            for item in value:
                if dataclasses.is_dataclass(item):  # a spec in a spec: by its own fields
                    check_spec(item)
                else:
                    check_text(item, label, limit or MAX_NOTE)
