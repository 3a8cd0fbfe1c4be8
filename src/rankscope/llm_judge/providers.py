"""LLM providers: how a request is addressed and written and how its answer is read.

A provider is an object with the :class:`Provider` protocol, registered under
its name with :func:`register`; :class:`~rankscope.llm_judge.client.ChatClient`
sends every request through the one retrying transport
(:mod:`rankscope.retry`) and asks its provider only for the URL, the headers,
the body and the reading of a 200 answer. Two ship with rankscope:

- ``openai``: ``POST {base}/chat/completions``, the OpenAI chat-completions
  API that OpenAI, Azure OpenAI, vLLM, llama.cpp's server, LM Studio and
  Ollama's compatibility layer all answer;
- ``ollama``: Ollama's own ``POST {base}/api/chat`` (``"stream": false``),
  the settings sent as its ``options`` (``max_tokens`` as ``num_predict``),
  the answer's ``thinking`` kept as the reasoning.

How to add one: docs/extending.md, "An LLM provider".
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from rankscope.errors import OptionError

__all__ = ["PROVIDERS", "Completion", "OllamaChat", "OpenAIChat", "Provider", "get_provider",
           "register"]


@dataclass(frozen=True)
class Completion:
    """One answer: its text, the tokens the endpoint says it used, why it ended, and the
    reasoning the endpoint returned apart (``reasoning_content``), if any."""

    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    finish_reason: str | None = None
    reasoning: str | None = None

    @property
    def tokens(self) -> int | None:
        """Prompt + completion tokens (None when the endpoint did not say)."""
        if self.prompt_tokens is None and self.completion_tokens is None:
            return None
        return (self.prompt_tokens or 0) + (self.completion_tokens or 0)


@runtime_checkable
class Provider(Protocol):
    """What a provider tells the client (every method pure: no request sent here)."""

    name: str

    def url(self, endpoint: str) -> str:
        """The URL a request is sent to, from the endpoint the user gave."""
        ...

    def headers(self, api_key: str | None, auth_header: str) -> dict[str, str]:
        """The headers of every request (the key in them, if any)."""
        ...

    def body(self, model: str, messages: Sequence[Mapping[str, str]],
             settings: Mapping[str, Any]) -> dict[str, Any]:
        """The JSON body of one request."""
        ...

    def completion(self, data: Any) -> Completion:
        """The answer in a 200 response's JSON; raises ValueError, KeyError, IndexError or
        TypeError when the body is not one (a malformed answer, not retried)."""
        ...


PROVIDERS: dict[str, Provider] = {}
"""The providers by name (:func:`register` adds one)."""


def register(provider: Provider) -> Provider:
    """Make ``provider`` available under its ``name`` (replacing any of that name)."""
    if not isinstance(provider, Provider):
        raise TypeError(f"{provider!r} does not have the Provider protocol's methods")
    PROVIDERS[provider.name] = provider
    return provider


def get_provider(name: str | Provider) -> Provider:
    """The provider named ``name`` (a Provider is returned as it is).

    Raises
    ------
    OptionError
        No provider has that name.

    Examples
    --------
    >>> get_provider("ollama").url("http://127.0.0.1:11434")
    'http://127.0.0.1:11434/api/chat'
    """
    if not isinstance(name, str):
        return name
    try:
        return PROVIDERS[name]
    except KeyError:
        raise OptionError(f"unknown LLM provider {name!r}; choose one of "
                          f"{', '.join(sorted(PROVIDERS))}") from None


def _with_path(endpoint: str, path: str) -> str:
    """``{endpoint}{path}`` unless the URL already ends with it (the query string kept)."""
    base, _, query = endpoint.strip().partition("?")
    base = base.rstrip("/")
    if not base.endswith(path):
        base += path
    return base + ("?" + query if query else "")


def _text(content: Any) -> str:
    """A message's text: a string, or content parts (a list of ``{"type": "text", ...}``)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    raise TypeError(f"content is {type(content).__name__}")


def _count(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _bearer(api_key: str | None, auth_header: str) -> dict[str, str]:
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers[auth_header] = (f"Bearer {api_key}" if auth_header == "Authorization"
                                else api_key)
    return headers


class OpenAIChat:
    """The OpenAI chat-completions API (``choices[0].message``, ``usage``)."""

    name = "openai"

    def url(self, endpoint: str) -> str:
        return _with_path(endpoint, "/chat/completions")

    def headers(self, api_key: str | None, auth_header: str) -> dict[str, str]:
        return _bearer(api_key, auth_header)

    def body(self, model: str, messages: Sequence[Mapping[str, str]],
             settings: Mapping[str, Any]) -> dict[str, Any]:
        return {"model": model, "messages": [dict(m) for m in messages], **settings}

    def completion(self, data: Any) -> Completion:
        if isinstance(data, str):
            data = json.loads(data)
        choice = data["choices"][0]
        message = choice["message"]
        # reasoning models served by vLLM, llama.cpp or DeepSeek return their reasoning apart
        reasoning = message.get("reasoning_content", message.get("reasoning"))
        finish = choice.get("finish_reason")
        usage = data.get("usage") or {}
        return Completion(
            text=_text(message.get("content")),
            prompt_tokens=_count(usage.get("prompt_tokens")),
            completion_tokens=_count(usage.get("completion_tokens")),
            finish_reason=finish if isinstance(finish, str) else None,
            reasoning=_text(reasoning) or None,
        )


_OLLAMA_TOP = ("format", "keep_alive", "think")
"""Settings Ollama reads beside ``options``, at the top of the body."""


class OllamaChat:
    """Ollama's native chat API (``/api/chat``, not streamed)."""

    name = "ollama"

    def url(self, endpoint: str) -> str:
        return _with_path(endpoint, "/api/chat")

    def headers(self, api_key: str | None, auth_header: str) -> dict[str, str]:
        return _bearer(api_key, auth_header)  # a proxy in front of Ollama may want a key

    def body(self, model: str, messages: Sequence[Mapping[str, str]],
             settings: Mapping[str, Any]) -> dict[str, Any]:
        options = {("num_predict" if k in ("max_tokens", "max_completion_tokens") else k): v
                   for k, v in settings.items() if k not in _OLLAMA_TOP}
        body: dict[str, Any] = {"model": model, "messages": [dict(m) for m in messages],
                                "stream": False, "options": options}
        body.update({k: settings[k] for k in _OLLAMA_TOP if k in settings})
        return body

    def completion(self, data: Any) -> Completion:
        if isinstance(data, str):
            data = json.loads(data)
        message = data["message"]
        finish = data.get("done_reason")
        return Completion(
            text=_text(message.get("content")),
            prompt_tokens=_count(data.get("prompt_eval_count")),
            completion_tokens=_count(data.get("eval_count")),
            finish_reason=finish if isinstance(finish, str) else None,
            reasoning=_text(message.get("thinking")) or None,
        )


register(OpenAIChat())
register(OllamaChat())
