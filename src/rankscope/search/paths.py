"""Declarative paths into a JSON response: ``data.items[0].id``, ``results[*]``.

A path is a chain of steps: a key (``data``, or ``["key.with.dots"]`` for a
key holding dots or brackets), a list index (``[0]``, ``[-1]`` for the last)
or every element of a list (``[*]``). Resolving a path gives every value it
reaches, so ``results[*].id`` lists each result's id. No user code runs: a
path only walks dictionaries and lists.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from rankscope.errors import ConfigError

__all__ = ["Path", "parse_path"]

_STEP = re.compile(
    r"""\[\s*(?:(?P<star>\*)|(?P<index>-?\d+)|(?P<quoted>"(?:[^"\\]|\\.)*"))\s*\]"""
    r"""|(?P<dot>\.)?(?P<key>[^.\[\]]+)"""
)

Step = str | int | None
"""A key, a list index, or None for every element of a list."""


@dataclass(frozen=True)
class Path:
    """A parsed path (see the module docstring)."""

    text: str
    steps: tuple[Step, ...]

    def resolve(self, value: Any) -> list[Any]:
        """Every value the path reaches in ``value`` (empty when it reaches none)."""
        current = [value]
        for step in self.steps:
            following: list[Any] = []
            for item in current:
                if step is None:
                    if isinstance(item, list):
                        following.extend(item)
                elif isinstance(step, int):
                    if isinstance(item, list) and -len(item) <= step < len(item):
                        following.append(item[step])
                elif isinstance(item, dict) and step in item:
                    following.append(item[step])
            current = following
        return current

    def first(self, value: Any) -> Any:
        """The first value reached, or None."""
        found = self.resolve(value)
        return found[0] if found else None

    def found_in(self, value: Any) -> bool:
        """Whether the path reaches anything in ``value``."""
        return bool(self.resolve(value))

    def __str__(self) -> str:
        return self.text


def parse_path(text: str, *, key: str = "path", source: str | None = None) -> Path:
    """Parse a path (raises :class:`~rankscope.errors.ConfigError` naming ``key``).

    Examples
    --------
    >>> parse_path("data.items[0].id").resolve({"data": {"items": [{"id": 7}, {"id": 8}]}})
    [7]
    >>> parse_path("results[*].id").resolve({"results": [{"id": "a"}, {"id": "b"}]})
    ['a', 'b']
    >>> parse_path('meta["a.b"]').first({"meta": {"a.b": 1}})
    1
    """
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f"{key} must be a non-empty path such as 'results[*].id'",
                          source=source, value=repr(text))
    steps: list[Step] = []
    pos = 0
    stripped = text.strip()
    while pos < len(stripped):
        match = _STEP.match(stripped, pos)
        if match is None or (match.group("dot") and pos == 0) or (
            match.group("key") is not None and not match.group("dot") and pos > 0
        ):
            raise ConfigError(f"{key} is not a valid path (at character {pos + 1})",
                              source=source, value=text)
        if match.group("star"):
            steps.append(None)
        elif match.group("index") is not None:
            steps.append(int(match.group("index")))
        elif match.group("quoted") is not None:
            steps.append(str(json.loads(match.group("quoted"))))
        else:
            steps.append(match.group("key").strip())
        pos = match.end()
    return Path(text=text, steps=tuple(steps))
