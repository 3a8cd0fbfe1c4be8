"""What a judging run asks: its settings resolved (:class:`RunSpec`), and each pair's
messages, cache keys and hash (:func:`render_jobs`)."""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rankscope.errors import InputError, OptionError
from rankscope.judgments.scales import Scale
from rankscope.llm_judge.cache import cache_key, endpoint_identity
from rankscope.llm_judge.examples import Example
from rankscope.llm_judge.inputs import Pair, TextSource, document_fields, query_need
from rankscope.llm_judge.parse import PARSE_MODES
from rankscope.llm_judge.prompts import Message, PromptTemplate, with_examples

__all__ = ["Job", "RunSpec", "build_spec", "estimate_tokens", "messages_sha256",
           "render_jobs"]


def estimate_tokens(messages: Sequence[Message]) -> int:
    """About four characters a token, plus a few for each message's framing.

    Examples
    --------
    >>> estimate_tokens([{"role": "user", "content": "x" * 10}])
    7
    """
    return sum(math.ceil(len(m["content"]) / 4) + 4 for m in messages)


def messages_sha256(messages: Sequence[Message]) -> str:
    """SHA-256 of the canonical JSON of the messages (recorded with each grade)."""
    text = json.dumps([dict(m) for m in messages], sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class RunSpec:
    """Everything a judging run needs, resolved.

    ``parse`` is the answer reader (strict or lenient); ``examples`` the
    few-shot examples shown before every pair (see :mod:`rankscope.llm_judge.examples`).
    """

    endpoint: str
    model: str
    rater: str
    scale: Scale
    template: PromptTemplate
    settings: Mapping[str, Any]
    samples: int = 1
    guidelines: str = ""
    max_doc_chars: int | None = 6000
    concurrency: int = 8
    parse: str = "strict"
    examples: tuple[Example, ...] = ()
    provider: str = "openai"

    @property
    def settings_json(self) -> str:
        """The settings as canonical JSON (recorded with every grade)."""
        return json.dumps(dict(self.settings), sort_keys=True, separators=(",", ":"))

    @property
    def answer_tokens(self) -> int:
        """Tokens expected in one answer: ``max_tokens`` when set, else the template's."""
        cap = self.settings.get("max_tokens", self.settings.get("max_completion_tokens"))
        return int(cap) if isinstance(cap, int) and cap > 0 else self.template.answer_tokens

    def configuration(self) -> dict[str, str]:
        """How this run's grades are made, as the grades file records it per row."""
        return {"model": self.model,
                "endpoint": endpoint_identity(self.endpoint, self.provider),
                "scale": self.scale.describe(), "template_sha256": self.template.sha256,
                "settings": self.settings_json, "samples": str(self.samples),
                "parse": self.parse}


def build_spec(
    *,
    endpoint: str,
    model: str,
    scale: Scale | str = "graded",
    prompt: PromptTemplate | str | os.PathLike[str] | None = None,
    rater: str | None = None,
    temperature: float = 0.0,
    settings: Mapping[str, Any] | None = None,
    samples: int = 1,
    guidelines: str = "",
    max_doc_chars: int | None = 6000,
    concurrency: int = 8,
    parse: str = "strict",
    examples: Sequence[Example] = (),
    provider: str = "openai",
) -> RunSpec:
    """A checked :class:`RunSpec` (the settings sent are the temperature plus ``settings``).

    Raises
    ------
    OptionError
        ``samples`` or ``concurrency`` below 1, a model name missing, an
        endpoint that is not an http(s) URL, an unknown answer reader.
    JudgeError, FileAccessError
        The prompt template cannot be read or compiled.
    """
    from rankscope.judgments.scales import GRADED, get_scale
    from rankscope.llm_judge.client import check_endpoint
    from rankscope.llm_judge.prompts import load_template

    if not endpoint or not model:
        raise OptionError("an endpoint URL and a model name are both needed")
    endpoint = check_endpoint(endpoint)
    if samples < 1:
        raise OptionError(f"samples must be >= 1, not {samples}")
    if concurrency < 1:
        raise OptionError(f"concurrency must be >= 1, not {concurrency}")
    if parse not in PARSE_MODES:
        raise OptionError(f"the answer reader is strict or lenient, not {parse!r}")
    from rankscope.llm_judge.providers import get_provider

    get_provider(provider)  # an unknown name refused before any request
    sc = get_scale(scale) or GRADED
    return RunSpec(
        endpoint=endpoint, model=model, rater=rater or f"llm:{model}", scale=sc,
        template=load_template(prompt, sc),
        settings={"temperature": temperature, **(settings or {})}, samples=samples,
        guidelines=guidelines, max_doc_chars=max_doc_chars, concurrency=concurrency,
        parse=parse, examples=tuple(examples), provider=provider,
    )


@dataclass(frozen=True)
class Job:
    """One pair to ask: its messages, one cache key per sample, and the messages' hash."""

    pair: Pair
    messages: list[Message]
    keys: list[str]
    sha256: str


def _render(spec: RunSpec, texts: TextSource, pair: Pair) -> list[Message] | None:
    query = texts.query_text(pair.query_id)
    fields = document_fields(texts, pair)
    if query is None or fields is None:
        return None
    return spec.template.render(
        query_id=pair.query_id, query=query, doc_id=pair.doc_id, fields=fields,
        scale=spec.scale, guidelines=spec.guidelines, max_doc_chars=spec.max_doc_chars,
        need=query_need(texts, pair.query_id),
    )


def render_jobs(
    spec: RunSpec, pairs: Sequence[Pair], texts: TextSource, *, required: bool = True
) -> list[Job]:
    """The job of each pair (in order), its messages rendered with the few-shot examples.

    Raises
    ------
    InputError
        ``required`` and a pair's query or document has no text.
    JudgeError
        The template fails to render.
    """
    if required:
        missing_q = [p.query_id for p in pairs if texts.query_text(p.query_id) is None]
        missing_d = [p.doc_id for p in pairs if document_fields(texts, p) is None]
        for what, ids in (("query", missing_q), ("document", missing_d)):
            if ids:
                distinct = list(dict.fromkeys(ids))
                raise InputError(
                    f"no text for {len(distinct)} {what}(s) to grade, e.g. {distinct[0]!r}; "
                    "check the queries / documents files"
                )
    shots: list[tuple[list[Message], str]] = []
    for example in spec.examples:
        shown = _render(spec, texts, example.pair)
        if shown is None:
            raise InputError(f"no text for the few-shot example {example.query_id} "
                             f"{example.doc_id}")
        shots.append((shown, spec.template.answer_for(example.grade)))
    named = [e.key() for e in spec.examples]
    jobs = []
    for p in pairs:
        rendered = _render(spec, texts, p)
        if rendered is None:
            continue
        messages = with_examples(rendered, shots)
        keys = [cache_key(spec.endpoint, spec.model, messages, spec.settings, sample=s,
                          examples=named, provider=spec.provider)
                for s in range(spec.samples)]
        jobs.append(Job(p, messages, keys, messages_sha256(messages)))
    return jobs
