"""The Examples sections of the click-model and irds modules hold (doctest)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["rankscope.judgments.clicks.log", "rankscope.judgments.clicks.models",
           "rankscope.judgments.clicks.implicit", "rankscope.judgments.clicks.simulate",
           "rankscope.judgments.clicks.ubi", "rankscope.data.irds"]


@pytest.mark.parametrize("name", MODULES)
def test_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_every_model_has_a_formula_a_citation_and_an_example():
    from rankscope.judgments.clicks import MODELS

    for name, model in MODELS.items():
        doc = model.__doc__ or ""
        assert ".. math::" in doc, name
        assert "Examples" in doc and ">>>" in doc, name
        assert any(author in doc for author in ("Chuklin", "Craswell", "Chapelle", "Zhang")), name
