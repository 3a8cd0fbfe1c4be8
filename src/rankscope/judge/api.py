"""``rankscope.judge(...)``: grade query-document pairs with an LLM, end to end."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from rankscope.data._io import PathLike
from rankscope.errors import OptionError
from rankscope.judge.agreement import JudgeAgreement, judge_agreement
from rankscope.judge.cache import AnswerCache
from rankscope.judge.client import Budget, Sleep
from rankscope.judge.inputs import (
    FileTexts,
    Pair,
    TextSource,
    drop_graded,
    pairs_from_runs,
    read_pairs,
)
from rankscope.judge.output import ResultsFile, rows_frame
from rankscope.judge.prompts import load_template
from rankscope.judge.runner import Plan, RunSpec, Usage, plan, run
from rankscope.judgments.scales import GRADED, Scale, get_scale
from rankscope.judgments.table import Judgments

__all__ = ["JudgeResult", "judge", "judge_async"]


@dataclass(frozen=True)
class JudgeResult:
    """What a judging run produced.

    Attributes
    ----------
    rater : str
        The rater name of the grades (``llm:<model>`` unless given).
    template_sha256 : str
        The prompt template's hash, recorded with every grade.
    plan : Plan
        Pairs, cache hits, calls and tokens as counted before the run.
    usage : Usage or None
        What was done and what it cost (None for a dry run).
    rows : polars.DataFrame
        Every row of this rater in the grades file (see :mod:`rankscope.judge.output`).
    scale : Scale
        The grading scale.
    agreement : JudgeAgreement or None
        Agreement with the human grades given as ``human`` (when they overlap).
    """

    rater: str
    template_sha256: str
    plan: Plan
    usage: Usage | None
    rows: pl.DataFrame
    scale: Scale = GRADED
    agreement: JudgeAgreement | None = None

    @property
    def judgments(self) -> Judgments:
        """The grades as :class:`~rankscope.judgments.Judgments` (no grade = null)."""
        return Judgments(self.rows.select("query_id", "doc_id", "rater", "grade"),
                         source=f"<{self.rater}>", scale=self.scale)


def _pairs(
    pairs: Iterable[tuple[str, str] | Pair] | PathLike | None,
    runs: Sequence[Any],
    depth: int | None,
    holes_of: Any,
) -> list[Pair]:
    if pairs is not None and runs:
        raise OptionError("give the pairs to grade or the runs to take them from, not both")
    if pairs is None and not runs:
        raise OptionError("nothing to grade: give pairs, a pairs file, or runs")
    if isinstance(pairs, str | os.PathLike):
        chosen = read_pairs(pairs)
    elif pairs is not None:
        chosen = list(dict.fromkeys(p if isinstance(p, Pair) else Pair(str(p[0]), str(p[1]))
                                    for p in pairs))
    else:
        chosen = pairs_from_runs(runs, depth)
    if holes_of is not None:
        chosen = drop_graded(chosen, holes_of)
    return chosen


async def judge_async(
    pairs: Iterable[tuple[str, str] | Pair] | PathLike | None = None,
    *,
    endpoint: str,
    model: str,
    queries: PathLike | Mapping[str, str] | None = None,
    docs: PathLike | Mapping[str, Any] | None = None,
    texts: TextSource | None = None,
    runs: Sequence[Any] = (),
    depth: int | None = 10,
    holes_of: Any = None,
    scale: Scale | str = GRADED,
    prompt: PathLike | None = None,
    guidelines: str = "",
    doc_fields: Sequence[str] = ("title", "text"),
    max_doc_chars: int | None = 6000,
    output: PathLike | None = None,
    cache: PathLike | None = None,
    api_key: str | None = None,
    api_key_env: str | None = None,
    auth_header: str = "Authorization",
    rater: str | None = None,
    temperature: float = 0.0,
    settings: Mapping[str, Any] | None = None,
    samples: int = 1,
    concurrency: int = 8,
    rpm: float | None = None,
    timeout: float = 60.0,
    max_retries: int = 5,
    max_calls: int | None = None,
    max_tokens: int | None = None,
    dry_run: bool = False,
    retry_failed: bool = False,
    human: Any = None,
    sleep: Sleep | None = None,
) -> JudgeResult:
    """The coroutine behind :func:`judge` (same parameters), for code already in a loop."""
    sc = get_scale(scale) or GRADED
    if samples < 1:
        raise OptionError(f"samples must be >= 1, not {samples}")
    if concurrency < 1:
        raise OptionError(f"concurrency must be >= 1, not {concurrency}")
    for name, value in (("max_calls", max_calls), ("max_tokens", max_tokens)):
        if value is not None and value < 0:
            raise OptionError(f"{name} must be >= 0, not {value}")
    if api_key is None and api_key_env:
        api_key = os.environ.get(api_key_env)
        if not api_key:
            raise OptionError(f"the environment variable {api_key_env} holding the API key "
                              "is not set")
    chosen = _pairs(pairs, runs, depth, holes_of)
    if texts is None:
        if queries is None or docs is None:
            raise OptionError("give the queries and documents (files or mappings) or a texts "
                              "source")
        texts = FileTexts(queries, docs, fields=doc_fields, only={p.doc_id for p in chosen})
    template = load_template(prompt, sc)
    spec = RunSpec(
        endpoint=endpoint, model=model, rater=rater or f"llm:{model}", scale=sc,
        template=template, settings={"temperature": temperature, **(settings or {})},
        samples=samples, guidelines=guidelines, max_doc_chars=max_doc_chars,
        concurrency=concurrency,
    )
    results = ResultsFile(output)
    store = AnswerCache(cache) if cache is not None else None
    try:
        counted = plan(spec, chosen, texts, results, store, retry_failed=retry_failed)
        usage = None
        if not dry_run:
            usage = await run(
                spec, chosen, texts, results, store,
                {"api_key": api_key, "auth_header": auth_header, "timeout": timeout,
                 "max_retries": max_retries, "rpm": rpm},
                budget=Budget(max_calls, max_tokens), retry_failed=retry_failed, sleep=sleep,
            )
    finally:
        if store is not None:
            store.close()
    mine = rows_frame([r for r in results.rows if r.get("rater") == spec.rater])
    agreed = None
    if human is not None and usage is not None and mine.height:
        llm = Judgments(mine.select("query_id", "doc_id", "rater", "grade"),
                        source=f"<{spec.rater}>", scale=sc)
        found = judge_agreement(human, llm, scale=sc)
        agreed = found if found.n_items else None
    return JudgeResult(rater=spec.rater, template_sha256=template.sha256, plan=counted,
                       usage=usage, rows=mine, scale=sc, agreement=agreed)


def judge(
    pairs: Iterable[tuple[str, str] | Pair] | PathLike | None = None, **options: Any
) -> JudgeResult:
    """Grade query-document pairs with a model behind an OpenAI-compatible endpoint.

    Parameters
    ----------
    pairs : iterable of (query_id, doc_id), or a pairs file, optional
        The pairs to grade; or give ``runs`` to grade their top ``depth``.
    endpoint : str
        The API base (``http://localhost:8080/v1``) or a ``.../chat/completions`` URL.
    model : str
        The model's name; the grades' rater is ``llm:<model>`` unless ``rater`` is given.
    queries, docs : path or mapping
        Queries TSV (``query_id<TAB>text``) and documents JSONL (``id`` and the
        ``doc_fields``), or mappings; or a ``texts`` source instead.
    runs : sequence of runs, optional
        Grade the union of their top ``depth`` (default 10) results.
    holes_of : qrels or judgments (path or table), optional
        Leave out the pairs already graded there ("fill the holes").
    scale : Scale or str, default "graded"
        ``binary``, ``graded`` (0-3), ``detail`` (1-10) or any scale; picks the
        built-in prompt unless ``prompt`` names a template file.
    prompt : path, optional
        A Jinja template (see :mod:`rankscope.judge.prompts`).
    guidelines : str, optional
        The team's guidelines, given to the template.
    output : path, optional
        The grades file (CSV; TSV or JSONL by name), appended as answers
        arrive; an existing one is resumed.
    cache : path, optional
        The SQLite answer cache.
    api_key, api_key_env : str, optional
        The key, or the name of the environment variable holding it.
    temperature : float, default 0
        Sampling temperature; ``settings`` adds any other decoding setting
        (``top_p``, ``seed``, ``max_tokens``...), all part of the cache key.
    samples : int, default 1
        Answers per pair; the grade is their majority vote (a tie: no grade).
    concurrency, rpm : int, float
        Requests in flight (default 8) and per minute (default: no limit).
    timeout, max_retries : float, int
        Per request (default 60 s) and retries on 429, 5xx, timeouts and
        connection errors (default 5).
    max_calls, max_tokens : int, optional
        Budget: no request starts past these (retries count as calls).
    dry_run : bool, default False
        Count pairs, cache hits, calls and tokens; send nothing.
    retry_failed : bool, default False
        Ask again the pairs recorded as failed.
    human : judgments or qrels, optional
        Human grades to report agreement with (on the results both graded).

    Returns
    -------
    JudgeResult

    Examples
    --------
    >>> result = rankscope.judge(  # doctest: +SKIP
    ...     endpoint="http://localhost:8080/v1", model="qwen2.5-7b-instruct",
    ...     queries="queries.tsv", docs="corpus.jsonl", runs=["run.txt"], depth=10,
    ...     holes_of="qrels.txt", output="grades.csv", cache="answers.sqlite")
    >>> result.usage.requests, result.judgments  # doctest: +SKIP
    """
    coro = judge_async(pairs, **options)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    # Called from inside a running loop (a notebook): run in a thread of our own.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()
