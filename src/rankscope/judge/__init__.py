"""Deprecated: LLM judges moved to :mod:`rankscope.llm_judge` (beside the raters' tables of
:mod:`rankscope.judgments`, "judge" said too little). This stand-in keeps the old paths
working for one release.

``rankscope.judge(...)`` (the facade's name, in ``rankscope.__all__``) is not deprecated;
it is :func:`rankscope.llm_judge.judge` and this package stays callable as it was.
``from rankscope.judge import X`` and ``rankscope.judge.<module>`` warn with a
:class:`DeprecationWarning` and give the objects of :mod:`rankscope.llm_judge`.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

from rankscope._aliases import redirect, warn_moved

_MODULES = ("agreement", "api", "cache", "client", "examples", "grading", "inputs", "output",
            "parse", "plan", "prompts", "runner", "snapshots", "spec")

redirect({f"rankscope.judge.{m}": f"rankscope.llm_judge.{m}" for m in _MODULES})


def __getattr__(name: str) -> Any:
    if name.startswith("__") and name.endswith("__"):
        raise AttributeError(name)
    warn_moved(f"rankscope.judge.{name}", f"rankscope.llm_judge.{name}")
    return getattr(importlib.import_module("rankscope.llm_judge"), name)


class _CallablePackage(types.ModuleType):
    """Callable as :func:`rankscope.llm_judge.judge` (not deprecated)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from rankscope.llm_judge.api import judge as run_judge

        return run_judge(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
