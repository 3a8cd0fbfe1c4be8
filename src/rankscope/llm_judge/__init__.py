"""LLM judges: grade query-document pairs with a language model, and know how far to trust it.

- :func:`judge` (also ``rankscope.judge(...)``): grade the pairs of runs'
  top k, the holes in existing judgments, or a pairs file, with any
  OpenAI-compatible chat-completions endpoint; cached, resumable, within a
  budget; grades in the judgments format (rater ``llm:<model>``);
- :func:`~rankscope.llm_judge.grading.grade_items`: grade a list of results
  given as values (query, need, display fields) with a :class:`JudgeConfig`,
  through the same cache: what the web app calls;
- :class:`~rankscope.llm_judge.snapshots.SnapshotTexts`: the queries, needs,
  display fields and top-k pairs of snapshots in the store (``store=``,
  ``snapshot=`` of :func:`judge`);
- :func:`judge_agreement`: Cohen's kappa (plain, weighted, binarised),
  confusion matrix, base rates, Krippendorff's alpha against human grades,
  and Kendall's tau between the system rankings both produce;
- :mod:`~rankscope.llm_judge.prompts` (templates, answer formats, few-shot
  turns), :mod:`~rankscope.llm_judge.examples` (few-shot examples from the
  judgments), :mod:`~rankscope.llm_judge.parse` (the strict answer reader),
  :mod:`~rankscope.llm_judge.client` (requests, retries, failing fast),
  :mod:`~rankscope.llm_judge.cache`, :mod:`~rankscope.llm_judge.spec` (a run's
  settings and messages), :mod:`~rankscope.llm_judge.plan` (what is left, resume
  checks, the dry run), :mod:`~rankscope.llm_judge.runner`: the parts.

Needs the ``judge`` extra (httpx, jinja2); agreement needs ``agreement`` and
``stats``. The package is itself callable: ``rankscope.judge(...)`` is
:func:`judge` whether ``rankscope.judge`` names this package or the function.
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

from rankscope._lazy import lazy_exports

_EXPORTS = {
    "judge": "rankscope.llm_judge.api",
    "judge_async": "rankscope.llm_judge.api",
    "JudgeResult": "rankscope.llm_judge.api",
    "judge_agreement": "rankscope.llm_judge.agreement",
    "JudgeAgreement": "rankscope.llm_judge.agreement",
    "FileTexts": "rankscope.llm_judge.inputs",
    "GradeItem": "rankscope.llm_judge.grading",
    "GradingResult": "rankscope.llm_judge.grading",
    "JudgeConfig": "rankscope.llm_judge.grading",
    "LLMGrade": "rankscope.llm_judge.grading",
    "SnapshotTexts": "rankscope.llm_judge.snapshots",
    "grade_items": "rankscope.llm_judge.grading",
    "Pair": "rankscope.llm_judge.inputs",
    "TextSource": "rankscope.llm_judge.inputs",
    "PromptTemplate": "rankscope.llm_judge.prompts",
    "load_template": "rankscope.llm_judge.prompts",
    "parse_grade": "rankscope.llm_judge.parse",
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
    from rankscope.llm_judge.agreement import JudgeAgreement, judge_agreement
    from rankscope.llm_judge.api import JudgeResult, judge, judge_async
    from rankscope.llm_judge.grading import (
        GradeItem,
        GradingResult,
        JudgeConfig,
        LLMGrade,
        grade_items,
    )
    from rankscope.llm_judge.inputs import FileTexts, Pair, TextSource
    from rankscope.llm_judge.parse import parse_grade
    from rankscope.llm_judge.prompts import PromptTemplate, load_template
    from rankscope.llm_judge.snapshots import SnapshotTexts


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)


class _CallablePackage(types.ModuleType):
    """This package, callable as :func:`rankscope.llm_judge.api.judge`."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from rankscope.llm_judge.api import judge as run_judge

        return run_judge(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
