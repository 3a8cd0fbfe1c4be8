"""The Examples sections of the command line's shared modules hold (doctest)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["rankscope.cli.options", "rankscope.cli.exit_codes", "rankscope.errors"]


@pytest.mark.parametrize("name", MODULES)
def test_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
