"""The factories' generated Parameters sections: their arguments read from the code
objects at import (issue 30, section 3: start-up), each section the one the signature
gives."""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

import rankscope.metrics  # noqa: F401  (registers every family)
from rankscope.metrics.base import (
    FAMILIES,
    Family,
    Metric,
    Param,
    make_metric,
    register,
)
from rankscope.metrics.family_docs import _type_words


def _sentence_lines(text: str) -> list[str]:
    text = text.strip()
    if text.split(" ", 1)[0].isalpha():
        text = text[:1].upper() + text[1:]
    text = text if text.endswith(".") else text + "."
    return textwrap.wrap(text, 75, initial_indent="    ", subsequent_indent="    ",
                         break_on_hyphens=False)


def _reference_section(fam: Family) -> str:
    """The section written from :func:`inspect.signature`, each text wrapped anew."""
    lines = ["Parameters", "----------"]
    for name, arg in inspect.signature(fam.factory).parameters.items():
        if name == "k":
            optional = arg.default is not inspect.Parameter.empty
            lines.append("k : int, optional" if optional else "k : int")
            lines += _sentence_lines(fam.k_doc)
        else:
            p = fam.param(name)
            lines.append(f"{name} : {_type_words(p)}")
            lines += _sentence_lines(p.doc)
    return "\n".join(lines)


def test_every_factorys_section_is_the_one_its_signature_gives() -> None:
    assert len(FAMILIES) >= 70
    for fam in FAMILIES.values():
        expected = _reference_section(fam)
        assert fam.parameters_section() == expected, fam.name
        doc = fam.factory.__doc__ or ""
        if inspect.signature(fam.factory).parameters:
            assert doc.count(expected) == 1, fam.name
        else:
            assert "Parameters\n---" not in doc, fam.name


@contextmanager
def _no_signature(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("inspect.signature called while registering")

    with monkeypatch.context() as m:
        m.setattr(inspect, "signature", refuse)
        yield


_LEVEL = Param("rel", 1, "float", "minimum grade that counts as found")


def test_registering_reads_the_code_object_not_the_signature(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def needed(k: int, *, rel: float = 1) -> Metric:
        """Needed share.

        Returns
        -------
        Metric
        """
        return make_metric("NeededShare", k=k, rel=rel)

    fam = Family(name="NeededShare", params=(_LEVEL,), cutoff="required", aggregate="mean",
                 empty_value=0.0, graded=False, aliases=(), agrees_with=(), factory=needed,
                 kernel="rankscope.engine.kernels_binary:precision")
    try:
        with _no_signature(monkeypatch):
            register(fam)
        doc = needed.__doc__ or ""
        assert doc.count(_reference_section(fam)) == 1
        assert "k : int\n" in doc and "rel : float, default 1\n" in doc
    finally:
        FAMILIES.pop("NeededShare", None)


def test_a_factory_taking_star_args_is_refused() -> None:
    def loose(*args: object, k: int | None = None) -> Metric:
        """Loose."""
        return make_metric("Loose", k=k)

    fam = Family(name="Loose", params=(), cutoff="optional", aggregate="mean",
                 empty_value=0.0, graded=False, aliases=(), agrees_with=(), factory=loose,
                 kernel="rankscope.engine.kernels_binary:precision")
    with pytest.raises(ValueError, match=r"\*args"):
        register(fam)
    assert "Loose" not in FAMILIES
