"""A metric is defined in one place: its definition names its kernel and describes its
parameters; the engine's table, the factory's Parameters section and the reference pages
are all found from it (issue 28, section 4)."""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

import rankscope
from rankscope.engine.kernels import KERNELS
from rankscope.errors import MetricError
from rankscope.metrics.base import FAMILIES, Family, Metric, Param, make_metric, register


def _resolve(reference: str) -> object:
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)


def test_every_family_names_a_kernel_that_exists():
    for fam in FAMILIES.values():
        assert callable(_resolve(fam.kernel)), fam.name


def test_the_engine_table_is_the_definitions_kernels():
    # every family the engine computes, and nothing else: the rank-similarity families
    # compare two runs (rankscope.compare computes them, above the engine)
    engine = {n for n, f in FAMILIES.items() if f.kernel.startswith("rankscope.engine.")}
    assert set(KERNELS) == engine
    assert {n for n in FAMILIES if n not in engine} == {
        "RBO", "AO", "Jaccard", "Overlap", "KendallTau"}
    for name in engine:
        assert KERNELS[name] is _resolve(FAMILIES[name].kernel), name
    with pytest.raises(KeyError):
        KERNELS["RBO"]  # the engine never imports a module above it


@contextmanager
def _registered(fam: Family) -> Iterator[Family]:
    register(fam)
    try:
        yield fam
    finally:
        del FAMILIES[fam.name]
        KERNELS._found.pop(fam.name, None)


_LEVEL = Param("rel", 1, "float", "minimum grade that counts as found")


def _found_share(k: int | None = None, *, rel: float = 1) -> Metric:
    """Found share: a new metric, defined here and nowhere else.

    Returns
    -------
    Metric
    """
    return make_metric("FoundShare", k=k, rel=rel)


def test_a_new_metric_is_computed_and_documented_from_its_definition_alone():
    fam = Family(name="FoundShare", params=(_LEVEL,), cutoff="optional", aggregate="mean",
                 empty_value=0.0, graded=False, aliases=(), agrees_with=(),
                 factory=_found_share, kernel="rankscope.engine.kernels_binary:precision",
                 group="binary", cutoff_doc="Look at the first k documents only.")
    with _registered(fam):
        qrels = {"q1": {"a": 2, "b": 1}, "q2": {"c": 1}}
        run = {"q1": {"a": 3.0, "x": 2.0, "b": 1.0}, "q2": {"y": 2.0, "c": 1.0}}
        result = rankscope.evaluate(qrels, run, [_found_share(2), _found_share(2, rel=2)])
        # q1: a found in the top 2 (1/2); q2: nothing in the top 2 but c at 2 -> 1/2
        assert result["FoundShare@2"] == pytest.approx((1 / 2 + 1 / 2) / 2)
        # rel=2: only q1's a -> (1/2 + 0) / 2
        assert result["FoundShare(rel=2)@2"] == pytest.approx(1 / 4)
        doc = inspect.getdoc(_found_share) or ""
        assert "k : int, optional\n    Look at the first k documents only." in doc
        assert "rel : float, default 1\n    Minimum grade that counts as found." in doc
        assert doc.index("Parameters") < doc.index("Returns")


def test_a_kernel_that_does_not_exist_is_named_in_the_error():
    def nothing(k: int | None = None) -> Metric:
        """Nothing."""
        return make_metric("NoKernel", k=k)

    fam = Family(name="NoKernel", params=(), cutoff="optional", aggregate="mean",
                 empty_value=0.0, graded=False, aliases=(), agrees_with=(), factory=nothing,
                 kernel="rankscope.engine.kernels_binary:no_such_kernel")
    with _registered(fam), pytest.raises(MetricError, match="no_such_kernel"):
        rankscope.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, [nothing(1)])


def test_a_definition_is_refused_when_its_docstring_repeats_the_parameters():
    def repeated(k: int | None = None) -> Metric:
        """Repeated.

        Parameters
        ----------
        k : int, optional
            Cut-off.
        """
        return make_metric("Repeated", k=k)

    fam = Family(name="Repeated", params=(), cutoff="optional", aggregate="mean",
                 empty_value=0.0, graded=False, aliases=(), agrees_with=(), factory=repeated,
                 kernel="rankscope.engine.kernels_binary:precision")
    with pytest.raises(ValueError, match="Parameters section"):
        register(fam)
    assert "Repeated" not in FAMILIES


def test_a_kernel_must_be_named_in_full():
    fam = Family(name="Short", params=(), cutoff="none", aggregate="mean", empty_value=0.0,
                 graded=False, aliases=(), agrees_with=(), factory=make_metric,
                 kernel="precision")
    with pytest.raises(ValueError, match="module:function"):
        register(fam)


def _parameters(doc: str) -> dict[str, str]:
    """The numpydoc Parameters section of ``doc``: name -> description (one line)."""
    section = doc.partition("Parameters\n----------\n")[2]
    section = re.split(r"\n\n[A-Z][a-z]+\n-+\n", section, maxsplit=1)[0]
    out: dict[str, str] = {}
    if not section.strip():
        return out
    for entry in re.split(r"\n(?=\S)", section.strip()):
        head, _, body = entry.partition("\n")
        out[head.split(" : ")[0]] = " ".join(body.split())
    return out


def test_every_factory_documents_each_argument_with_its_definition():
    for fam in FAMILIES.values():
        arguments = list(inspect.signature(fam.factory).parameters)
        documented = _parameters(inspect.getdoc(fam.factory) or "")
        assert list(documented) == arguments, fam.name
        for p in fam.params:
            words = " ".join(p.doc.split())
            assert words[1:].rstrip(".") in documented[p.name], (fam.name, p.name)
        if "k" in documented:
            assert documented["k"] == " ".join(fam.k_doc.split()), fam.name
