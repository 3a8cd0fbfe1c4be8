"""The Examples sections of the snapshot modules' docstrings hold (doctest)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "rankscope.outbound.hosts",
    "rankscope.retry",
    "rankscope._lazy",
    "rankscope.data.delimited",
    "rankscope.search.credentials",
    "rankscope.search.templates",
    "rankscope.search.paths",
    "rankscope.search.client",
    "rankscope.search.embedded",
    "rankscope.search.queries",
    "rankscope.services.snapshots",
    "rankscope.data.trec_writer",
    "rankscope.services.regression",
    "rankscope.store.db",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no example"
    assert result.failed == 0
