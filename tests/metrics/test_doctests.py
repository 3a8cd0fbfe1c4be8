"""The Examples sections of the metric modules hold (doctest)."""

from __future__ import annotations

import doctest
import importlib
import inspect

import pytest

MODULES = ["rankscope.metrics.binary", "rankscope.metrics.counts", "rankscope.metrics.graded",
           "rankscope.metrics.cwl", "rankscope.metrics.compatibility",
           "rankscope.metrics.diagnostics", "rankscope.metrics.similarity",
           "rankscope.metrics.intent_aware", "rankscope.fusion.combine", "rankscope.spread"]


@pytest.mark.parametrize("name", MODULES)
def test_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


@pytest.mark.parametrize("name", [m for m in MODULES if m.startswith("rankscope.metrics.")])
def test_every_public_metric_has_an_example(name: str) -> None:
    """The convention: each public metric's docstring shows a worked Examples section."""
    module = importlib.import_module(name)
    factories = [obj for n in module.__all__ if inspect.isfunction(obj := getattr(module, n))]
    assert factories, name
    without = [f.__name__ for f in factories
               if ">>> " not in (inspect.getdoc(f) or "").partition("Examples\n--------")[2]]
    assert not without, f"{name}: no Examples section in {without}"
