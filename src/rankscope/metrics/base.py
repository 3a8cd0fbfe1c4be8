"""What a metric *is*: an immutable, hashable value that computes nothing.

A :class:`Family` declares a metric kind once: its canonical name, its
parameters with defaults and checks, whether it takes a cut-off ``@k``, how
per-query values are aggregated, the value for a query with nothing to score,
and its documentation (formula, citation, which tools agree). A :class:`Metric`
is one family with all its parameters bound; two spellings of the same metric
give equal metrics. The engine (``rankscope.engine``) computes them.
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from rankscope.errors import MetricParameterError, UnknownMetricError
from rankscope.metrics.family_docs import document, parameters_section

__all__ = [
    "CLAIM_CONDITIONS",
    "CUTOFF_DOCS",
    "DEFAULT_CONVENTIONS",
    "FAMILIES",
    "MAX_CUTOFF",
    "Aggregate",
    "Family",
    "Metric",
    "Param",
    "claims",
    "family",
    "make_metric",
    "register",
]

Aggregate = Literal["mean", "sum", "gmean"]
ParamValue = int | float | str | bool | tuple[tuple[float, float], ...] | None


@dataclass(frozen=True)
class Param:
    """One parameter of a metric family.

    Parameters
    ----------
    name : str
        The keyword used in names (``nDCG(gain=exp)``) and factories.
    default : object
        The value when not given (``None`` where "not set" has a meaning).
    kind : {"int", "float", "str", "bool", "gains"}
        How a value typed in a metric name is converted.
    choices : tuple of str, optional
        The accepted values of a ``str`` parameter.
    low, high : float, optional
        Bounds for numbers; ``open_low`` / ``open_high`` make them exclusive.
    doc : str
        What it does, in a line: ``rankscope metrics``, the generated reference
        and the factory's Parameters section all show this text (no docstring
        repeats it).
    """

    name: str
    default: ParamValue
    kind: Literal["int", "float", "str", "bool", "gains"]
    doc: str
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    open_low: bool = False
    open_high: bool = False

    def convert(self, value: Any, metric: str) -> ParamValue:
        """Convert and check a value for this parameter (raises MetricParameterError)."""
        if value is None:
            return None
        try:
            if self.kind == "int":
                if isinstance(value, float) and not value.is_integer():
                    raise ValueError
                if isinstance(value, bool):
                    raise ValueError
                number: float = int(float(value)) if isinstance(value, str) else int(value)
                if isinstance(value, str) and float(value) != number:
                    raise ValueError
                converted: ParamValue = int(number)
            elif self.kind == "float":
                if isinstance(value, bool):
                    raise ValueError
                number = float(value)
                if not math.isfinite(number):
                    raise ValueError
                converted = number
            elif self.kind == "bool":
                if isinstance(value, str):
                    if value.lower() not in ("true", "false", "1", "0", "yes", "no"):
                        raise ValueError
                    converted = value.lower() in ("true", "1", "yes")
                else:
                    converted = bool(value)
            elif self.kind == "gains":
                converted = _convert_gains(value)
            else:
                converted = str(value)
                if self.choices:
                    lowered = converted.lower()
                    matches = [c for c in self.choices if c.lower() == lowered]
                    if not matches:
                        raise MetricParameterError(
                            f"{metric}: {self.name} must be one of {', '.join(self.choices)}, "
                            f"not {value!r}"
                        )
                    converted = matches[0]
        except (TypeError, ValueError):
            raise MetricParameterError(
                f"{metric}: {self.name} must be {_KIND_WORDS[self.kind]}, not {value!r}"
            ) from None
        if isinstance(converted, int | float) and not isinstance(converted, bool):
            self._check_range(float(converted), metric)
        return converted

    def _check_range(self, number: float, metric: str) -> None:
        low_bad = self.low is not None and (
            number <= self.low if self.open_low else number < self.low
        )
        high_bad = self.high is not None and (
            number >= self.high if self.open_high else number > self.high
        )
        if low_bad or high_bad:
            left = "(" if self.open_low else "["
            right = ")" if self.open_high else "]"
            lo = "-inf" if self.low is None else f"{self.low:g}"
            hi = "inf" if self.high is None else f"{self.high:g}"
            raise MetricParameterError(
                f"{metric}: {self.name} must be in {left}{lo}, {hi}{right}, not {number:g}"
            )


_KIND_WORDS = {
    "int": "a whole number",
    "float": "a finite number",
    "str": "a word",
    "bool": "true or false",
    "gains": "a gain map like '0=0,1=1,2=3'",
}


def _convert_gains(value: Any) -> tuple[tuple[float, float], ...]:
    """Accept ``{grade: gain}``, pairs, or the text ``"1=3,2=9"`` / ``"1:3;2:9"``."""
    if isinstance(value, str):
        pairs = []
        for part in re.split(r"[,;]", value.strip("{}() ")):
            if not part.strip():
                continue
            grade, _, gain = re.split(r"([=:])", part.strip(), maxsplit=1)
            pairs.append((float(grade), float(gain)))
    elif isinstance(value, dict):
        pairs = [(float(g), float(v)) for g, v in value.items()]
    else:
        pairs = [(float(g), float(v)) for g, v in value]
    if not pairs or any(not (math.isfinite(g) and math.isfinite(v)) for g, v in pairs):
        raise ValueError
    return tuple(sorted(pairs))


@dataclass(frozen=True)
class Family:
    """The declaration of one kind of metric (computes nothing).

    Parameters
    ----------
    name : str
        Canonical name, as printed (``nDCG``, ``P``, ``AP``...).
    params : tuple of Param
        Parameters other than the cut-off.
    cutoff : {"optional", "required", "none"}
        Whether ``@k`` is accepted / required.
    aggregate : {"mean", "sum", "gmean"}
        How per-query values become one number.
    empty_value : float
        The value of a query whose ranking is empty (NaN = null).
    graded : bool
        Whether it uses grades beyond relevant / not relevant.
    aliases : tuple of str
        Other tools' names, shown by ``rankscope metrics`` (the parser has its own tables).
    agrees_with : tuple of str
        Tools whose number is the same, in their own spelling, and under which
        conventions (see :func:`claims`; each is tested against the tool).
    factory : callable
        The public function building it; its numpydoc docstring is the documentation
        (its Parameters section is written from ``params``, see :func:`register`).
    kernel : str
        The function computing its per-query values, ``"module:function"``
        (``"rankscope.engine.kernels_binary:precision"``): the engine imports it
        when the family is first computed, so metrics never import the engine
        (``docs/one_engine.md``, "Adding a metric").
    group : str
        The page of the generated reference it is listed on (``docs/metrics``).
    cutoff_doc : str
        What the cut-off ``k`` means for this family, when more than "only the
        first k ranked documents count" (the default, :data:`CUTOFF_DOCS`).
    reads_run : bool
        Whether its kernel reads the ranked documents' ids or the run's scores, not
        only grades and ranks: an evaluation keeps the run until it is computed
        (otherwise the run is let go once ranked, before the kernels).
    """

    name: str
    params: tuple[Param, ...]
    cutoff: Literal["optional", "required", "none"]
    aggregate: Aggregate
    empty_value: float
    graded: bool
    aliases: tuple[str, ...]
    agrees_with: tuple[str, ...]
    factory: Callable[..., Metric] = field(compare=False, hash=False, repr=False)
    kernel: str
    group: str = "binary"
    cutoff_doc: str = ""
    reads_run: bool = False

    def param(self, name: str) -> Param:
        """The parameter named ``name`` (raises MetricParameterError)."""
        for p in self.params:
            if p.name == name:
                return p
        known = ", ".join(p.name for p in self.params) or "none"
        raise MetricParameterError(f"{self.name} has no parameter {name!r} (has: {known})")

    def doc_section(self, section: str) -> str:
        """A numpydoc section (``Notes``, ``References``...) of the factory's docstring."""
        doc = inspect.getdoc(self.factory) or ""
        lines = doc.splitlines()
        out: list[str] = []
        inside = False
        for i, line in enumerate(lines):
            is_header = i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"} and line.strip()
            if is_header:
                inside = line.strip() == section
                continue
            if set(line.strip()) == {"-"}:
                continue
            if inside:
                out.append(line)
        return "\n".join(out).strip()

    @property
    def summary(self) -> str:
        """The first line of the documentation."""
        doc = inspect.getdoc(self.factory) or self.name
        return doc.splitlines()[0]

    @property
    def k_doc(self) -> str:
        """What the cut-off means (empty for a family without one)."""
        return self.cutoff_doc or CUTOFF_DOCS.get(self.cutoff, "")

    def parameters_section(self) -> str:
        """The numpydoc Parameters section of the factory, written from the definition.

        One entry per argument of the factory, in its order: the cut-off ``k``
        (:attr:`k_doc`) and each :class:`Param` (its type, default and ``doc``).
        """
        return parameters_section(self)


@dataclass(frozen=True, order=True)
class Metric:
    """One metric with every parameter bound: hashable, printable, computes nothing.

    Build metrics with the factories in :mod:`rankscope.metrics` (``ndcg(10)``)
    or by name with :func:`rankscope.parse_metric` (``"nDCG@10"``).
    """

    family: str
    params: tuple[tuple[str, ParamValue], ...]
    k: int | None = None

    @property
    def spec(self) -> Family:
        """The family this metric belongs to."""
        return FAMILIES[self.family]

    def get(self, name: str) -> Any:
        """The value of parameter ``name``."""
        for key, value in self.params:
            if key == name:
                return value
        raise KeyError(name)

    @property
    def name(self) -> str:
        """The canonical name: family, non-default parameters, cut-off."""
        spec = self.spec
        shown = []
        for p in spec.params:
            value = self.get(p.name)
            if value != p.default:
                shown.append(f"{p.name}={_show(value)}")
        text = spec.name
        if shown:
            text += "(" + ",".join(shown) + ")"
        if self.k is not None:
            text += f"@{self.k}"
        return text

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Metric({self.name!r})"

    def __matmul__(self, k: int) -> Metric:
        return make_metric(self.family, k=k, **dict(self.params))


def _number(value: float) -> str:
    """Short form of a number that still parses back to it exactly."""
    short = f"{value:g}"
    # a name must parse back to the same metric (Spark re-parses names on its workers)
    return short if float(short) == value else repr(value)


def _show(value: ParamValue) -> str:
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, tuple):
        return "'" + ",".join(f"{_number(g)}={_number(v)}" for g, v in value) + "'"
    return str(value).lower() if isinstance(value, bool) else str(value)


CLAIM_CONDITIONS = {
    "trec_eval": "the default conventions",
    "pytrec_eval": "--conventions pytrec_eval",
    "ir_measures": "--conventions ir_measures",
    "ranx": "--conventions ranx; ranx orders tied scores its own way",
    "scikit-learn": "--conventions sklearn",
}
"""Under which conventions each tool's number is claimed (and tested, tests/conventions)."""


DEFAULT_CONVENTIONS = "the default conventions"
"""The conditions of a claim that holds without any profile."""


def claims(*, under: str | None = None, **tools: str) -> tuple[str, ...]:
    """``agrees_with`` entries: ``claims(trec_eval="P_k, set_P", ir_measures="P@k")``.

    Each reads "TOOL SPELLINGS (CONDITIONS)"; ``k``, ``x``, ``r``, ``P`` stand for
    numbers. The conditions are the tool's profile (:data:`CLAIM_CONDITIONS`), or
    ``under`` (starting with :data:`DEFAULT_CONVENTIONS`) for a claim tested
    under rankscope's defaults. Every one is checked against the tool in
    ``tests/conventions`` or ``tests/metrics``.
    """
    out = []
    for tool, spellings in tools.items():
        name = "scikit-learn" if tool == "sklearn" else tool
        out.append(f"{name} {spellings} ({under or CLAIM_CONDITIONS[name]})")
    return tuple(out)


FAMILIES: dict[str, Family] = {}
"""Every registered family by canonical name."""


CUTOFF_DOCS = {
    "optional": "Cut-off: only the first k ranked documents count (the whole ranking when "
                "omitted).",
    "required": "Cut-off (required): only the first k ranked documents count.",
}
"""What ``k`` means unless a family says more (:attr:`Family.cutoff_doc`)."""

_KERNEL_NAME = re.compile(r"rankscope(\.\w+)+:\w+")


def register(fam: Family) -> Family:
    """Add a family to the registry (its name must be new, its kernel named in full)."""
    if fam.name in FAMILIES:
        raise ValueError(f"metric family {fam.name!r} registered twice")
    if not _KERNEL_NAME.fullmatch(fam.kernel):
        raise ValueError(f"metric family {fam.name!r}: kernel must be 'rankscope.module:function', "
                         f"not {fam.kernel!r}")
    document(fam)
    FAMILIES[fam.name] = fam
    return fam


def family(name: str) -> Family:
    """The family with canonical name ``name`` (raises UnknownMetricError)."""
    try:
        return FAMILIES[name]
    except KeyError:
        raise UnknownMetricError(name) from None


MAX_CUTOFF = 2**31 - 1
"""The largest cut-off a metric takes (far beyond any real ranking's length)."""


def make_metric(family_name: str, k: int | None = None, **params: Any) -> Metric:
    """Bind a family's parameters, check them, and return the metric.

    Raises
    ------
    MetricParameterError
        A cut-off <= 0 or missing where required, an unknown parameter, or a
        value out of range.
    """
    spec = family(family_name)
    label = spec.name
    if k is not None:
        if (isinstance(k, bool) or not isinstance(k, int | float) or not math.isfinite(k)
                or float(k) != int(k)):
            raise MetricParameterError(f"{label}: cut-off must be a whole number, not {k!r}")
        k = int(k)
        if k <= 0:
            raise MetricParameterError(f"{label}: cut-off must be >= 1, not {k}")
        if k > MAX_CUTOFF:  # no ranking is that long; beyond int64 the kernels would overflow
            raise MetricParameterError(f"{label}: cut-off must be at most {MAX_CUTOFF}, not {k}")
        if spec.cutoff == "none":
            raise MetricParameterError(f"{label} takes no cut-off (@k)")
    elif spec.cutoff == "required":
        raise MetricParameterError(f"{label} needs a cut-off: {label}@k")
    bound: list[tuple[str, ParamValue]] = []
    for p in spec.params:
        raw = params.pop(p.name, p.default)
        bound.append((p.name, p.convert(raw, label) if raw is not p.default else p.default))
    if params:
        spec.param(next(iter(params)))  # raises with the list of known parameters
    return Metric(spec.name, tuple(bound), k)
