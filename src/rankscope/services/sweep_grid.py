"""A sweep's grid: its axes (``--grid KEY=V1,V2,...``) and their configurations.

Each axis is a key of the endpoint file or a template placeholder with the
values it takes (:mod:`rankscope.search.variants`); the configurations are
the axes' cross product, in the order the axes and values were given, each
checked like an endpoint file. The **base** is the file as written: the
grid point that sets every key to the file's own value (4 and 4.0 are the
same number), or, when no point does, one more configuration (number 0).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rankscope.errors import OptionError
from rankscope.search.variants import (
    Change,
    describe,
    format_value,
    parse_assignment,
    resolve_key,
    varied_config,
)

if TYPE_CHECKING:
    from rankscope.search.files import FileScope
    from rankscope.search.types import EndpointConfig

__all__ = ["MAX_CONFIGURATIONS", "Axis", "Configuration", "configurations", "read_axes"]

MAX_CONFIGURATIONS = 1000
"""A grid larger than this is refused (a typo in a value list should not start a day of
requests); split it into several sweeps."""


@dataclass(frozen=True)
class Axis:
    """One ``--grid``: where it goes in the file and the values it takes."""

    key: str
    """The dotted key it sets (``variables.boost`` for the placeholder ``{{boost}}``)."""
    path: tuple[str, ...]
    values: tuple[Any, ...]


def read_axes(config: EndpointConfig, specs: Sequence[str]) -> list[Axis]:
    """The axes of ``KEY=V1,V2,...`` specs (:func:`rankscope.search.variants.parse_assignment`).

    Raises
    ------
    OptionError
        No spec, a spec that does not parse, a key given twice, a value twice.
    """
    if not specs:
        raise OptionError("give at least one --grid KEY=V1,V2,...")
    axes: list[Axis] = []
    for spec in specs:
        path, values = parse_assignment(spec)
        path = resolve_key(config, path)
        key = Change(path, None).key
        if any(a.path == path for a in axes):
            raise OptionError(f"--grid {key} is given twice: give all its values at once")
        seen: list[Any] = []
        for value in values:
            if any(_same(value, s) for s in seen):
                raise OptionError(f"--grid {key}: {format_value(value)} is listed twice")
            seen.append(value)
        axes.append(Axis(key, path, tuple(values)))
    return axes


@dataclass(frozen=True)
class Configuration:
    """One point of the grid (or the base when no point is the file as written)."""

    number: int
    """1, 2, ... in grid order; 0 for the base measured apart."""
    changes: tuple[Change, ...]
    config: EndpointConfig
    base: bool

    @property
    def label(self) -> str:
        """``#3``: how the tables and the comparison name it."""
        return f"#{self.number}"

    @property
    def values(self) -> dict[str, Any]:
        """Dotted key -> value."""
        return {c.key: c.value for c in self.changes}

    def describe(self) -> str:
        """``weights.title=4 tokenizer="porter unicode61"``."""
        return describe(self.changes)


def _file_value(data: Mapping[str, Any], path: Sequence[str]) -> tuple[bool, Any]:
    node: Any = data
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node


def _same(a: Any, b: Any) -> bool:
    """Equal as TOML values: 4 and 4.0 are the same number; true is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return bool(a == b)
    return bool(type(a) is type(b) and a == b)


def _opens(config: EndpointConfig, options: Mapping[str, Any]) -> None:
    """Open the endpoint and close it again (its kind checks its keys; nothing is sent)."""
    import asyncio

    from rankscope.search.config import open_endpoint

    asyncio.run(open_endpoint(config, **options).aclose())


def _points(axes: Sequence[Axis], sample: int | None,
            seed: int) -> tuple[int, list[tuple[int, tuple[Any, ...]]]]:
    """The grid's size and the points measured: ``(number, values)``, in grid order.

    With ``sample``, that many points drawn without replacement (seeded: the
    same seed draws the same points), decoded from their index in the cross
    product without listing it.
    """
    total = 1
    for axis in axes:
        total *= len(axis.values)
    if sample is None:
        if total > MAX_CONFIGURATIONS:
            raise OptionError(f"the grid has {total:,} configurations, more than "
                              f"{MAX_CONFIGURATIONS:,}: split it into several sweeps, or "
                              "measure a random --sample of them")
        return total, list(enumerate(itertools.product(*(a.values for a in axes)), start=1))
    if isinstance(sample, bool) or not isinstance(sample, int) or not \
            1 <= sample <= MAX_CONFIGURATIONS:
        raise OptionError(f"--sample must be a whole number from 1 to "
                          f"{MAX_CONFIGURATIONS:,}, not {sample!r}")
    import numpy as np

    chosen = sorted(int(i) for i in np.random.default_rng(seed).choice(
        total, size=min(sample, total), replace=False))
    points = []
    for index in chosen:
        values, rest = [], index
        for axis in reversed(axes):  # the last axis varies fastest, as in the product
            rest, at = divmod(rest, len(axis.values))
            values.append(axis.values[at])
        points.append((index + 1, tuple(reversed(values))))
    return total, points


def configurations(data: Mapping[str, Any], config: EndpointConfig, axes: Sequence[Axis], *,
                   files: FileScope | None = None,
                   open_options: Mapping[str, Any] | None = None,
                   sample: int | None = None, seed: int = 0) -> list[Configuration]:
    """Every configuration of the grid, checked like endpoint files, the base first found.

    ``data`` is the endpoint file's keys (its name included), ``config`` the
    file read and checked (:func:`rankscope.search.config.load_endpoint`).
    Each configuration is opened once (and closed, nothing sent) so that a
    value its kind refuses (a weight that is not a number, a tokenizer FTS5
    does not know the name of) fails before any configuration is measured.

    With ``sample``, a random sample of the grid (``seed``) is measured,
    numbered by its place in the whole grid, with the base always among them.

    Raises
    ------
    OptionError
        More than :data:`MAX_CONFIGURATIONS` configurations (without a sample).
    ConfigError
        A configuration that is not a valid endpoint (the key, the value and
        the reason named).
    """
    from rankscope.errors import ConfigError

    _, points = _points(axes, sample, seed)
    if sample is not None:  # the file as written is measured whether drawn or not
        mine = tuple(_file_value(data, a.path) for a in axes)
        at = [next((i for i, v in enumerate(a.values) if present and _same(v, now)), None)
              for a, (present, now) in zip(axes, mine, strict=True)]
        if all(i is not None for i in at):
            index = 0
            for axis, i in zip(axes, at, strict=True):
                index = index * len(axis.values) + int(i or 0)
            if all(n != index + 1 for n, _ in points):
                points = sorted([*points, (index + 1, tuple(
                    a.values[int(i or 0)] for a, i in zip(axes, at, strict=True)))])
    found: list[Configuration] = []
    base_found = False
    for number, values in points:
        changes = tuple(Change(a.path, v) for a, v in zip(axes, values, strict=True))
        is_base = all(present and _same(now, c.value) for c in changes
                      for present, now in [_file_value(data, c.path)])
        name = config.name if is_base else f"{config.name}[{describe(changes)}]"
        try:
            varied = varied_config(data, changes, name=name, source=config.source,
                                   base_dir=config.base_dir, files=files)
            _opens(varied, open_options or {})
        except ConfigError as exc:
            raise ConfigError(f"configuration {describe(changes)}: {exc}") from None
        found.append(Configuration(number, changes, varied, is_base and not base_found))
        base_found = base_found or is_base
    if not base_found:
        changes = tuple(Change(a.path, _file_value(data, a.path)[1]) for a in axes
                        if _file_value(data, a.path)[0])
        found.insert(0, Configuration(0, changes, config, True))
    return found
