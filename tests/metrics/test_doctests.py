"""The Examples sections of the metric modules hold (doctest)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["rankscope.metrics.binary", "rankscope.metrics.graded", "rankscope.metrics.cwl",
           "rankscope.metrics.compatibility", "rankscope.metrics.diagnostics",
           "rankscope.metrics.similarity", "rankscope.metrics.intent_aware",
           "rankscope.compare.fusion", "rankscope.spread"]


@pytest.mark.parametrize("name", MODULES)
def test_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
