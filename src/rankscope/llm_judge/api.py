"""``rankscope.judge(...)``: grade query-document pairs with an LLM, end to end."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import polars as pl

from rankscope.data._io import PathLike
from rankscope.errors import OptionError
from rankscope.judgments.scales import GRADED, Scale
from rankscope.judgments.table import Judgments
from rankscope.llm_judge.agreement import JudgeAgreement, judge_agreement
from rankscope.llm_judge.cache import AnswerCache
from rankscope.llm_judge.client import Budget, Sleep
from rankscope.llm_judge.examples import Example, example_order, pick_examples
from rankscope.llm_judge.inputs import (
    FileTexts,
    MixedTexts,
    Pair,
    TextSource,
    document_fields,
    drop_graded,
    keep_graded,
    pairs_from_runs,
    read_needs,
    read_pairs,
    sample_pairs,
)
from rankscope.llm_judge.output import ResultsFile, rows_frame
from rankscope.llm_judge.prompts import PromptTemplate
from rankscope.llm_judge.runner import Plan, Progress, Usage, build_spec, plan, run, run_blocking
from rankscope.llm_judge.snapshots import SnapshotTexts

if TYPE_CHECKING:
    from rankscope.store.db import Store

__all__ = ["DEFAULT_DOC_FIELDS", "JudgeResult", "judge", "judge_async", "select_pairs"]

DEFAULT_DOC_FIELDS = ("title", "text")
"""The fields of a documents file shown to the judge unless ``doc_fields`` names others."""


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
        Every row of this rater in the grades file (see :mod:`rankscope.llm_judge.output`).
    scale : Scale
        The grading scale.
    agreement : JudgeAgreement or None
        Agreement with the human grades given as ``human`` (when they overlap).
    examples : list of Example
        The few-shot examples shown before every pair (empty without ``few_shot``).
    """

    rater: str
    template_sha256: str
    plan: Plan
    usage: Usage | None
    rows: pl.DataFrame
    scale: Scale = GRADED
    agreement: JudgeAgreement | None = None
    examples: tuple[Example, ...] = ()

    def incomplete(self) -> str | None:
        """What the run left undone and which option continues it (None: whole, or a dry
        run); see :meth:`~rankscope.llm_judge.runner.Usage.incomplete`."""
        return None if self.usage is None else self.usage.incomplete()

    @property
    def judgments(self) -> Judgments:
        """The grades as :class:`~rankscope.judgments.Judgments` (no grade = null)."""
        return Judgments(self.rows.select("query_id", "doc_id", "rater", "grade"),
                         source=f"<{self.rater}>", scale=self.scale)


def _chosen(
    pairs: Iterable[tuple[str, str] | Pair] | PathLike | None,
    runs: Sequence[Any],
    depth: int | None,
    snapshot_texts: SnapshotTexts | None,
) -> list[Pair]:
    """The pairs given, else the runs' top k, else the snapshots' top k."""
    if pairs is not None and runs:
        raise OptionError("give the pairs to grade or the runs to take them from, not both")
    if isinstance(pairs, str | os.PathLike):
        return read_pairs(pairs)
    if pairs is not None:
        return list(dict.fromkeys(p if isinstance(p, Pair) else Pair(str(p[0]), str(p[1]))
                                  for p in pairs))
    if runs:
        return pairs_from_runs(runs, depth)
    if snapshot_texts is not None:
        return snapshot_texts.pairs(depth)
    raise OptionError("nothing to grade: give pairs, a pairs file, runs or a snapshot")


def select_pairs(
    chosen: Sequence[Pair],
    *,
    holes_of: Any = None,
    graded_in: Any = None,
    sample: int | None = None,
    seed: int = 0,
) -> list[Pair]:
    """The pairs left after the filters: not graded in ``holes_of``, graded in
    ``graded_in``, then a seeded random sample of ``sample`` of them."""
    out = list(chosen)
    if holes_of is not None:
        out = drop_graded(out, holes_of)
    if graded_in is not None:
        out = keep_graded(out, graded_in)
    if sample is not None:
        out = sample_pairs(out, sample, seed)
    return out


def _texts(
    *,
    texts: TextSource | None,
    queries: PathLike | Mapping[str, str] | None,
    docs: PathLike | Mapping[str, Any] | None,
    needs: PathLike | Mapping[str, str] | None,
    doc_fields: Sequence[str] | None,
    snapshot_texts: SnapshotTexts | None,
    wanted: set[str],
) -> TextSource:
    """Where texts come from: ``texts`` if given, else the snapshots (a queries or
    documents file replacing theirs), else the files; ``needs`` preferred to any."""
    need_map = None if needs is None else (
        dict(needs) if isinstance(needs, Mapping) else read_needs(needs))
    if texts is None and snapshot_texts is not None:
        query_source: TextSource = snapshot_texts
        doc_source: TextSource = snapshot_texts
        if queries is not None:
            query_source = FileTexts(queries, {}, fields=())
        if docs is not None:
            doc_source = FileTexts({}, docs, fields=doc_fields or DEFAULT_DOC_FIELDS,
                                   only=wanted)
        texts = MixedTexts(query_source, doc_source)
    elif texts is None:
        if queries is None or docs is None:
            raise OptionError("give the queries and documents (files or mappings), a "
                              "snapshot, or a texts source")
        texts = FileTexts(queries, docs, fields=doc_fields or DEFAULT_DOC_FIELDS, only=wanted)
    return MixedTexts(texts, texts, need_map) if need_map else texts


async def judge_async(
    pairs: Iterable[tuple[str, str] | Pair] | PathLike | None = None,
    *,
    endpoint: str,
    model: str,
    queries: PathLike | Mapping[str, str] | None = None,
    docs: PathLike | Mapping[str, Any] | None = None,
    needs: PathLike | Mapping[str, str] | None = None,
    texts: TextSource | None = None,
    store: Store | PathLike | None = None,
    snapshot: str | int | Sequence[str | int] | None = None,
    partial: bool = False,
    runs: Sequence[Any] = (),
    depth: int | None = 10,
    holes_of: Any = None,
    graded_in: Any = None,
    sample: int | None = None,
    seed: int = 0,
    scale: Scale | str = GRADED,
    prompt: PromptTemplate | PathLike | None = None,
    guidelines: str = "",
    doc_fields: Sequence[str] | None = None,
    max_doc_chars: int | None = 6000,
    output: PathLike | None = None,
    cache: PathLike | None = None,
    api_key: str | None = None,
    api_key_env: str | None = None,
    auth_header: str = "Authorization",
    provider: str = "openai",
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
    retry_unrateable: bool = False,
    parse: str = "strict",
    few_shot: int = 0,
    few_shot_from: Any = None,
    few_shot_seed: int = 0,
    human: Any = None,
    sleep: Sleep | None = None,
    progress: Progress | None = None,
) -> JudgeResult:
    """The coroutine behind :func:`judge` (same parameters), for code already in a loop."""
    for name, value in (("max_calls", max_calls), ("max_tokens", max_tokens)):
        if value is not None and value < 0:
            raise OptionError(f"{name} must be >= 0, not {value}")
    if few_shot < 0:
        raise OptionError(f"few_shot must be >= 0, not {few_shot}")
    if few_shot and few_shot_from is None:
        raise OptionError("few-shot examples come from judgments: give few_shot_from "
                          "(--few-shot-from)")
    if api_key is None and api_key_env:
        api_key = os.environ.get(api_key_env)
        if not api_key:
            raise OptionError(f"the environment variable {api_key_env} holding the API key "
                              "is not set")
    spec = build_spec(endpoint=endpoint, model=model, scale=scale, prompt=prompt, rater=rater,
                      temperature=temperature, settings=settings, samples=samples,
                      guidelines=guidelines, max_doc_chars=max_doc_chars,
                      concurrency=concurrency, parse=parse, provider=provider)
    snapshot_texts = None
    if snapshot is not None or store is not None:
        if snapshot is None or store is None:
            raise OptionError("a snapshot needs its store, and a store the snapshot to read")
        refs = [snapshot] if isinstance(snapshot, str | int) else list(snapshot)
        snapshot_texts = SnapshotTexts(store, refs, fields=doc_fields, partial=partial)
    chosen = select_pairs(_chosen(pairs, runs, depth, snapshot_texts), holes_of=holes_of,
                          graded_in=graded_in, sample=sample, seed=seed)
    candidates: list[Example] = []
    if few_shot:
        candidates = example_order(few_shot_from, spec.scale, exclude=chosen,
                                   seed=few_shot_seed)
    source = _texts(texts=texts, queries=queries, docs=docs, needs=needs,
                    doc_fields=doc_fields, snapshot_texts=snapshot_texts,
                    wanted={p.doc_id for p in chosen}
                    | {e.doc_id for e in candidates[:20 * few_shot]})
    if few_shot:
        def known(pair: Pair) -> bool:
            return (source.query_text(pair.query_id) is not None
                    and document_fields(source, pair) is not None)

        spec = replace(spec, examples=tuple(pick_examples(candidates, few_shot, known,
                                                           seed=few_shot_seed)))
    results = ResultsFile(output)
    if dry_run:  # a dry run creates and changes no file: the cache is only read, if it exists
        answers = AnswerCache.open_read_only(cache) if cache is not None else None
    else:
        answers = AnswerCache(cache) if cache is not None else None
    try:
        counted = plan(spec, chosen, source, results, answers, retry_failed=retry_failed,
                       retry_unrateable=retry_unrateable, max_calls=max_calls,
                       max_tokens=max_tokens)
        usage = None
        if not dry_run:
            usage = await run(
                spec, chosen, source, results, answers,
                {"api_key": api_key, "auth_header": auth_header, "timeout": timeout,
                 "max_retries": max_retries, "rpm": rpm},
                budget=Budget(max_calls, max_tokens), retry_failed=retry_failed,
                retry_unrateable=retry_unrateable, sleep=sleep, progress=progress,
            )
    finally:
        if answers is not None:
            answers.close()
    mine = rows_frame([r for r in results.rows if r.get("rater") == spec.rater])
    agreed = None
    if human is not None and usage is not None and mine.height:
        llm = Judgments(mine.select("query_id", "doc_id", "rater", "grade"),
                        source=f"<{spec.rater}>", scale=spec.scale)
        found = judge_agreement(human, llm, scale=spec.scale)
        agreed = found if found.n_items else None
    return JudgeResult(rater=spec.rater, template_sha256=spec.template.sha256, plan=counted,
                       usage=usage, rows=mine, scale=spec.scale, agreement=agreed,
                       examples=spec.examples)


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
        Queries TSV (``query_id<TAB>text``; a header may name a ``need``
        column) and documents JSONL (``id`` and the ``doc_fields``), or
        mappings; or a snapshot, or a ``texts`` source instead. Given with a
        snapshot, they replace its queries or its documents.
    needs : path or mapping, optional
        Information needs (``query_id<TAB>need``), shown to the model with the
        query; preferred to the needs a queries file or snapshot holds.
    store, snapshot : store (path, URL or Store) and id/name (or several)
        Grade the snapshots' top ``depth`` (unless ``pairs`` or ``runs`` say
        which), with the queries, needs and display fields (title, snippet,
        URL, other fields) the store kept (see :mod:`rankscope.llm_judge.snapshots`).
    partial : bool, default False
        Accept a snapshot that is not complete.
    runs : sequence of runs, optional
        Grade the union of their top ``depth`` (default 10) results.
    holes_of : qrels or judgments (path or table), optional
        Leave out the pairs already graded there ("fill the holes").
    graded_in : qrels or judgments (path or table), optional
        Keep only the pairs graded there (to measure the judge against them).
    sample, seed : int, optional
        Grade a random sample of this many of the pairs (after the filters),
        the same for the same ``seed`` (default 0).
    scale : Scale or str, default "graded"
        ``binary``, ``graded`` (0-3), ``detail`` (1-10) or any scale; picks the
        built-in prompt unless ``prompt`` names a template file.
    prompt : path, built-in name or PromptTemplate, optional
        A Jinja template (see :mod:`rankscope.llm_judge.prompts`).
    guidelines : str, optional
        The team's guidelines, given to the template.
    doc_fields : sequence of str, optional
        The document fields shown, in order (files: ``title, text``;
        snapshots: ``title, snippet, url``, then the hits' other fields).
    output : path, optional
        The grades file (CSV; TSV or JSONL by name), appended as answers
        arrive; an existing one is resumed.
    cache : path, optional
        The SQLite answer cache.
    api_key, api_key_env : str, optional
        The key, or the name of the environment variable holding it.
    provider : str, default "openai"
        The API the endpoint speaks: ``openai`` (chat completions) or
        ``ollama`` (Ollama's own ``/api/chat``), or one registered
        (:mod:`rankscope.llm_judge.providers`).
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
        Count pairs, cache hits, calls and tokens (within ``max_calls`` and
        ``max_tokens``); send nothing, create and change no file.
    retry_failed : bool, default False
        Ask again the pairs recorded as failed.
    retry_unrateable : bool, default False
        Ask again the pairs recorded as unrateable, and every answer the
        cache holds that gives no grade (the new answer replaces it).
    parse : {"strict", "lenient"}, default "strict"
        The answer reader (see :mod:`rankscope.llm_judge.parse`): only the format
        the prompt asks for, or the tolerant reader.
    few_shot, few_shot_from, few_shot_seed : int, judgments, int
        Show ``few_shot`` examples graded in ``few_shot_from`` (qrels or
        judgments) before every pair: a fixed selection for the seed (see
        :mod:`rankscope.llm_judge.examples`), never a pair being graded.
    human : judgments or qrels, optional
        Human grades to report agreement with (on the results both graded).
    progress : callable, optional
        Called with the :class:`~rankscope.llm_judge.runner.Usage` so far as the
        run starts and after each pair (the command line draws a bar with it).

    Returns
    -------
    JudgeResult
        ``result.incomplete()`` says what a run left undone (failed pairs,
        pairs a budget or an endpoint that stopped answering left unasked).

    Raises
    ------
    OptionError
        A bad option, an endpoint that is not an http(s) URL, or a grades file
        holding this rater's grades made otherwise (another model, endpoint,
        scale, prompt, settings or messages): the difference is named.
    JudgeError
        The endpoint cannot be used at all (the first request got no answer,
        or failed after its retries; 401, 403, 404).

    Examples
    --------
    >>> result = rankscope.judge(  # doctest: +SKIP
    ...     endpoint="http://localhost:8080/v1", model="qwen2.5-7b-instruct",
    ...     queries="queries.tsv", docs="corpus.jsonl", runs=["run.txt"], depth=10,
    ...     holes_of="qrels.txt", output="grades.csv", cache="answers.sqlite")
    >>> result.usage.requests, result.judgments  # doctest: +SKIP
    >>> holes = rankscope.judge(  # doctest: +SKIP
    ...     endpoint="http://localhost:8080/v1", model="qwen2.5-7b-instruct",
    ...     store="demo/snapshots.sqlite", snapshot="demo-tuned", depth=20,
    ...     holes_of="demo/qrels.txt", needs="demo/needs.tsv", output="grades.csv")
    """
    return run_blocking(judge_async(pairs, **options))
