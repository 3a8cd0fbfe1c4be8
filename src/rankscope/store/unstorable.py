"""Values no backend of the store can hold, refused alike on SQLite and PostgreSQL.

PostgreSQL cannot store a NUL character in text (nor in ``jsonb``) and SQLite
no whole number past 64 bits. :func:`refuse_unstorable` makes every statement
of an engine refuse them before it is sent; :func:`first_unstorable` screens
rows written without a statement (PostgreSQL's ``COPY``) before the first is
written. Both say :data:`UNSTORABLE`, so both backends refuse the same input
with the same words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

__all__ = ["UNSTORABLE", "first_unstorable", "refuse_unstorable"]

_INT64 = 2**63


def _storable(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" not in value
    if isinstance(value, int) and not isinstance(value, bool):
        return -_INT64 <= value < _INT64
    return True


UNSTORABLE = "a text holding a NUL character, or a whole number outside 64 bits, cannot be stored"
"""What :func:`refuse_unstorable` and :func:`first_unstorable` say of a value no backend takes."""


def _refuse_unstorable(conn: Any, cursor: Any, statement: str, parameters: Any,
                       context: Any, executemany: bool) -> None:
    if isinstance(parameters, dict):
        rows: Any = [parameters]
    elif parameters and all(isinstance(p, list | tuple | dict) for p in parameters):
        rows = parameters  # executemany, or a batch of "insertmanyvalues"
    else:
        rows = [parameters or ()]
    for row in rows:
        values = row.values() if isinstance(row, dict) else row
        if not all(_storable(v) for v in values):
            from rankscope.errors import InputError

            raise InputError(UNSTORABLE)


def _storable_json(value: Any) -> bool:
    """No NUL character in any text of a JSON value, keys included (PostgreSQL's ``jsonb``
    refuses ``\\u0000``; its whole numbers may be of any size, as in SQLite's JSON text)."""
    if isinstance(value, str):
        return "\x00" not in value
    if isinstance(value, Mapping):
        return all(_storable_json(k) and _storable_json(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(_storable_json(v) for v in value)
    return True


def first_unstorable(rows: Sequence[Sequence[Any]], json_columns: Sequence[int] = (), *,
                     dumped: bool = False) -> tuple[int, int] | None:
    """Where the first value neither backend can store is, ``(row, column)``; None: nowhere.

    The check :func:`refuse_unstorable` makes of each statement, for rows
    written without one (PostgreSQL's ``COPY``), made before the first is
    written: a text with a NUL character, a whole number outside 64 bits;
    and in the columns ``json_columns`` (values written as JSON: objects, or
    with ``dumped`` their JSON text) a NUL character in any text. The caller
    raises :class:`~rankscope.errors.InputError` with :data:`UNSTORABLE`,
    saying where. The whole batch is screened at once (one scan of its texts
    and whole numbers); the row and column are looked for only when the
    screen finds something.
    """
    texts = "".join([v for row in rows for v in row if isinstance(v, str)])
    suspect = "\x00" in texts or (dumped and "\\u0000" in texts)
    if not suspect:
        ints = [v for row in rows for v in row if isinstance(v, int)]
        suspect = bool(ints) and not (min(ints) >= -_INT64 and max(ints) < _INT64)
    if not suspect and json_columns and not dumped:
        suspect = not all(_storable_json(row[i]) for row in rows for i in json_columns)
    if not suspect:
        return None
    import json

    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            if not _storable(value):
                return r, c
            if c in json_columns and not _storable_json(
                    json.loads(value) if dumped and isinstance(value, str) else value):
                return r, c
    return None  # a text "\\u0000" (a backslash, then u0000) in JSON text: storable


def refuse_unstorable(engine: Engine) -> None:
    """Make every statement of ``engine`` refuse what one backend cannot store, on both.

    PostgreSQL cannot store a NUL character in text and SQLite no integer
    past 64 bits; a value of either raises
    :class:`~rankscope.errors.InputError` (a 400 in the web app) before the
    statement is sent, the same on SQLite and PostgreSQL, instead of a
    driver's error. The web app's store uses it under its own checks.
    """
    from sqlalchemy import event

    event.listen(engine, "before_cursor_execute", _refuse_unstorable)
