"""The public surface is small, explicit and importable."""

from __future__ import annotations

import rankscope


def test_all_names_resolve_and_nothing_else_is_public():
    for name in rankscope.__all__:
        assert getattr(rankscope, name) is not None
    assert sorted(rankscope.__all__) == sorted(dir(rankscope))


def test_errors_come_from_one_module():
    import rankscope.errors as errors

    for name in errors.__all__:
        cls = getattr(errors, name)
        assert cls.__module__ == "rankscope.errors"
        assert issubclass(cls, errors.RankscopeError) or issubclass(cls, errors.RankscopeWarning)
