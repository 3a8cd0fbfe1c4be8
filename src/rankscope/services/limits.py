"""The largest values the app accepts, and the one check of a text a user gives.

Every id is a whole number from 1 to :data:`MAX_ID` (PostgreSQL's
``integer``, which the tables use); every text a user gives has a limit and
never holds a NUL character (PostgreSQL cannot store one). The API documents
the same limits in its schemas; docs/web_app.md lists them.
"""

from __future__ import annotations

from rankscope.errors import InputError

__all__ = [
    "MAX_EXPLANATION",
    "MAX_GUIDELINES",
    "MAX_ID",
    "MAX_NAME",
    "MAX_NOTE",
    "MAX_URL",
    "check_text",
]

MAX_ID = 2**31 - 1
"""The largest id (ids are PostgreSQL ``integer`` columns)."""
MAX_NAME = 200
"""A name or short label: a project, query set, endpoint, evaluation, rater, model, token,
batch id, query or document id, a metric."""
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
