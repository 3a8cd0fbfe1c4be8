"""LLM judges: grade query-document pairs with a language model, and know how far to trust it.

- :func:`judge` (also ``rankscope.judge(...)``): grade the pairs of runs'
  top k, the holes in existing judgments, or a pairs file, with any
  OpenAI-compatible chat-completions endpoint; cached, resumable, within a
  budget; grades in the judgments format (rater ``llm:<model>``);
- :func:`~rankscope.judge.grading.grade_items`: grade a list of results
  given as values (query, need, display fields) with a :class:`JudgeConfig`,
  through the same cache: what the web app calls;
- :class:`~rankscope.judge.snapshots.SnapshotTexts`: the queries, needs,
  display fields and top-k pairs of snapshots in the store (``store=``,
  ``snapshot=`` of :func:`judge`);
- :func:`judge_agreement`: Cohen's kappa (plain, weighted, binarised),
  confusion matrix, base rates, Krippendorff's alpha against human grades,
  and Kendall's tau between the system rankings both produce;
- :mod:`~rankscope.judge.prompts` (templates, answer formats, few-shot
  turns), :mod:`~rankscope.judge.examples` (few-shot examples from the
  judgments), :mod:`~rankscope.judge.parse` (the strict answer reader),
  :mod:`~rankscope.judge.client` (requests, retries, failing fast),
  :mod:`~rankscope.judge.cache`, :mod:`~rankscope.judge.spec` (a run's
  settings and messages), :mod:`~rankscope.judge.plan` (what is left, resume
  checks, the dry run), :mod:`~rankscope.judge.runner`: the parts.

Needs the ``judge`` extra (httpx, jinja2); agreement needs ``agreement`` and
``stats``. The package is itself callable: ``rankscope.judge(...)`` is
:func:`judge` whether ``rankscope.judge`` names this package or the function.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "judge": "rankscope.judge.api",
    "judge_async": "rankscope.judge.api",
    "JudgeResult": "rankscope.judge.api",
    "judge_agreement": "rankscope.judge.agreement",
    "JudgeAgreement": "rankscope.judge.agreement",
    "FileTexts": "rankscope.judge.inputs",
    "GradeItem": "rankscope.judge.grading",
    "GradingResult": "rankscope.judge.grading",
    "JudgeConfig": "rankscope.judge.grading",
    "LLMGrade": "rankscope.judge.grading",
    "SnapshotTexts": "rankscope.judge.snapshots",
    "grade_items": "rankscope.judge.grading",
    "Pair": "rankscope.judge.inputs",
    "TextSource": "rankscope.judge.inputs",
    "PromptTemplate": "rankscope.judge.prompts",
    "load_template": "rankscope.judge.prompts",
    "parse_grade": "rankscope.judge.parse",
}

__all__ = [
    "FileTexts",
    "GradeItem",
    "GradingResult",
    "JudgeAgreement",
    "JudgeConfig",
    "JudgeResult",
    "LLMGrade",
    "Pair",
    "PromptTemplate",
    "SnapshotTexts",
    "TextSource",
    "grade_items",
    "judge",
    "judge_agreement",
    "judge_async",
    "load_template",
    "parse_grade",
]

if TYPE_CHECKING:
    from rankscope.judge.agreement import JudgeAgreement, judge_agreement
    from rankscope.judge.api import JudgeResult, judge, judge_async
    from rankscope.judge.grading import (
        GradeItem,
        GradingResult,
        JudgeConfig,
        LLMGrade,
        grade_items,
    )
    from rankscope.judge.inputs import FileTexts, Pair, TextSource
    from rankscope.judge.parse import parse_grade
    from rankscope.judge.prompts import PromptTemplate, load_template
    from rankscope.judge.snapshots import SnapshotTexts


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rankscope.judge' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


class _CallablePackage(types.ModuleType):
    """This package, callable as :func:`rankscope.judge.api.judge`."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from rankscope.judge.api import judge as run_judge

        return run_judge(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
