"""LLM providers: one protocol, the OpenAI-compatible one by default, Ollama's native chat
API beside it, and a provider a user registers, each against a server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankscope.errors import OptionError
from rankscope.llm_judge import providers
from rankscope.llm_judge.cache import cache_key

from .conftest import Reply, csv_rows, judge_collection


def ollama_body(model: str, content: str, prompt: int, answer: int) -> str:
    """A non-streamed /api/chat answer as Ollama's API documentation shows it."""
    return json.dumps({
        "model": model, "created_at": "2026-11-27T05:00:00.000000Z",
        "message": {"role": "assistant", "content": content, "thinking": "the passage names it"},
        "done": True, "done_reason": "stop", "total_duration": 4883583458,
        "load_duration": 1334875, "prompt_eval_count": prompt, "prompt_eval_duration": 342546000,
        "eval_count": answer, "eval_duration": 4535599000,
    })


def test_ollama_native_chat_is_asked_and_read(server, collection, fast_sleep):
    grades = {"d3": 3, "d1": 1, "d2": 2, "d4": 0, "d5": 3, "d6": 0}
    server.script = lambda doc, n, body: Reply(body=ollama_body(
        body["model"], json.dumps({"grade": grades[doc]}), 90, 5))
    out = collection["dir"] / "grades.csv"
    result = judge_collection(server, collection, fast_sleep, output=out, provider="ollama",
                              settings={"max_tokens": 64, "seed": 7})
    # every request went to Ollama's own path, not streamed, its settings as options
    assert set(server.paths) == {"/v1/api/chat"}
    body = server.bodies[0]
    assert body["stream"] is False and body["model"] == "tiny-judge"
    assert body["options"] == {"temperature": 0.0, "num_predict": 64, "seed": 7}
    assert "max_tokens" not in body and "temperature" not in body
    rows = {(r["query_id"], r["doc_id"]): r for r in csv_rows(out)}
    assert {k[1]: int(r["grade"]) for k, r in rows.items()} == grades
    # 7 pairs (d1 twice), each 90 prompt and 5 answer tokens (prompt_eval_count, eval_count)
    assert result.usage.prompt_tokens == 7 * 90 and result.usage.completion_tokens == 7 * 5


def test_the_provider_is_part_of_the_answers_identity():
    # the same base URL and messages asked through another API are another question
    args = ("http://127.0.0.1:11434", "m", [{"role": "user", "content": "x"}], {})
    assert cache_key(*args) != cache_key(*args, provider="ollama")
    assert cache_key(*args) == cache_key(*args, provider="openai")


def test_an_unknown_provider_is_refused_by_name(collection):
    from rankscope.llm_judge.api import judge

    with pytest.raises(OptionError, match=r"unknown LLM provider 'nope'; choose one of .*"
                                          r"ollama, openai"):
        judge([("q1", "d1")], endpoint="http://127.0.0.1:9/v1", model="m", provider="nope",
              queries=collection["queries"], docs=collection["docs"])


ROOT = Path(__file__).resolve().parents[2]
MARKER = "<!-- an LLM provider: tests/llm_judge/test_judge_providers.py runs this code -->"


@pytest.fixture
def docs_provider(monkeypatch):
    """The example of docs/extending.md, run as it is written (it registers itself)."""
    monkeypatch.setattr(providers, "PROVIDERS", dict(providers.PROVIDERS))
    page = (ROOT / "docs" / "extending.md").read_text()
    code = page.split(MARKER, 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, "docs/extending.md", "exec"), {})
    return providers.PROVIDERS["echo-grade"]


def test_the_docs_provider_is_used_by_name(server, collection, fast_sleep, docs_provider):
    assert isinstance(docs_provider, providers.Provider)
    server.script = lambda doc, n, body: Reply(body=json.dumps(
        {"text": '{"grade": 1}', "tokens": [10, 2]}))
    result = judge_collection(server, collection, fast_sleep, provider="echo-grade")
    assert set(server.paths) == {"/v1/grade"} and "[[d3]]" in server.bodies[0]["prompt"]
    assert result.usage.graded == 7 and result.usage.prompt_tokens == 70


def test_register_refuses_an_object_without_the_protocol():
    with pytest.raises(TypeError, match="Provider protocol"):
        providers.register(object())  # type: ignore[arg-type]
