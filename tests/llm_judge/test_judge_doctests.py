"""The Examples sections of the judge modules' docstrings hold (doctest)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "rankscope.llm_judge.parse",
    "rankscope.llm_judge.prompts",
    "rankscope.llm_judge.inputs",
    "rankscope.llm_judge.cache",
    "rankscope.llm_judge.grading",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no example"
    assert result.failed == 0
