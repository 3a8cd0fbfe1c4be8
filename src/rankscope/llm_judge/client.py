"""A small client for LLM chat endpoints (httpx, no SDK).

OpenAI, Azure OpenAI, vLLM, llama.cpp's server and Ollama all answer
``POST {base}/chat/completions`` with ``choices[0].message.content`` and a
``usage`` record (the ``openai`` provider, the default); another API is a
provider of :mod:`rankscope.llm_judge.providers` (``ollama``: Ollama's own
``/api/chat``). This client sends one request per answer and:

- retries 429, 5xx, a 200 whose body is not JSON, timeouts and connection
  errors through the one retrying transport (:mod:`rankscope.retry`):
  exponential backoff with full jitter, or exactly what a ``Retry-After``
  header asks (seconds or an HTTP date; capped at ``max_retry_after``);
- fails fast: until the endpoint has given a completion, requests go one at
  a time; when the first one gets no HTTP answer at all (nothing listening,
  a wrong host, no answer within the timeout) the run stops at once
  (:class:`~rankscope.errors.JudgeError`), without retrying, and so it does
  when the first 3 requests fail for good (a server answering 500 or 400 to
  everything); once the endpoint has answered, ``max_unanswered`` requests
  in a row without an answer stop the run
  (:class:`~rankscope.errors.JudgeUnreachableError`);
- paces requests to at most ``rpm`` a minute;
- asks a :class:`Budget` before every request, retries included, and sends
  nothing once it is spent;
- stops the run (:class:`~rankscope.errors.JudgeError`) on 401, 403 and 404,
  which no retry mends; other 4xx fail the one request;
- follows redirects and reaches hosts by the rules of :mod:`rankscope.outbound`
  (the key never goes to another origin; a refusal stops the run);
- counts what it did (:class:`ClientStats`: requests, retries, statuses,
  requests in flight and their peak).

``sleep`` and ``clock`` are injectable, so tests of the waiting are instant.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rankscope.errors import (
    DependencyError,
    JudgeError,
    JudgeRequestError,
    JudgeUnreachableError,
    OptionError,
    OutboundError,
)
from rankscope.llm_judge.providers import Completion, Provider, get_provider
from rankscope.outbound.hosts import HostPolicy
from rankscope.outbound.transport import guarded_transport
from rankscope.retry import (
    Backoff,
    ClientStats,
    NoAnswer,
    Pacer,
    Retryable,
    exchange,
    parse_retry_after,
    retry_after_of,
    retrying,
)
from rankscope.retry import Sleep as Sleep  # re-exported: the judge's modules import it here

__all__ = ["Budget", "ChatClient", "ClientStats", "Completion", "chat_url", "check_endpoint"]

_FATAL = {401: "unauthorised (check the API key)", 403: "forbidden", 404: "not found (check "
          "the endpoint URL and the model name)"}
MAX_UNANSWERED = 8
"""Requests in a row without any HTTP answer after which a run stops."""
FIRST_FAILURES = 3
"""Requests failed for good, before any completion came, that show an unusable endpoint."""
MAX_CONNECT_SECONDS = 10.0
"""The longest wait for a connection (a host that accepts none is not waited for a minute)."""


def check_endpoint(endpoint: str) -> str:
    """The endpoint URL, stripped, if it is an http(s) URL with a host.

    Raises
    ------
    OptionError
        Anything else (``notaurl``, ``ftp://x``, ``http://``).

    Examples
    --------
    >>> check_endpoint(" http://127.0.0.1:8080/v1 ")
    'http://127.0.0.1:8080/v1'
    >>> check_endpoint("notaurl")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    rankscope.errors.OptionError: the endpoint must be an http(s) URL ... not 'notaurl'
    """
    from urllib.parse import urlsplit

    text = endpoint.strip()
    try:
        parts = urlsplit(text)
        host = parts.hostname
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError:
        host = None
    if parts.scheme.lower() not in ("http", "https") or not host or any(
            c.isspace() for c in text):
        raise OptionError("the endpoint must be an http(s) URL such as "
                          f"http://127.0.0.1:8080/v1, not {endpoint!r}")
    return text


def chat_url(endpoint: str, provider: str | Provider = "openai") -> str:
    """Where requests go: ``{endpoint}/chat/completions`` unless the URL already names
    that path (another provider: its own, :mod:`rankscope.llm_judge.providers`)."""
    return get_provider(provider).url(endpoint)


class Budget:
    """A cap on requests and tokens, checked before each request.

    A request starts only while fewer than ``max_calls`` were sent, and when
    the tokens used, plus the estimates of requests in flight, plus this
    request's estimate stay within ``max_tokens`` (when only the requests in
    flight stand in the way, it waits for them to settle). When an answer
    arrives its estimate is replaced by the tokens the endpoint reports.
    """

    def __init__(self, max_calls: int | None = None, max_tokens: int | None = None) -> None:
        self.max_calls = max_calls
        self.max_tokens = max_tokens
        self.calls = 0
        self.tokens = 0
        self._reserved = 0
        self._settled: asyncio.Event | None = None
        self.exhausted: str | None = None

    async def acquire(self, estimate: int) -> bool:
        """Reserve one request of about ``estimate`` tokens; False once spent."""
        while True:
            if self.exhausted is not None:
                return False
            if self.max_calls is not None and self.calls >= self.max_calls:
                self.exhausted = f"the call budget ({self.max_calls}) is spent"
                return False
            if self.max_tokens is None or (
                self.tokens + self._reserved + estimate <= self.max_tokens
            ):
                break
            if self.tokens + estimate > self.max_tokens or self._reserved == 0:
                self.exhausted = f"the token budget ({self.max_tokens}) is spent"
                return False
            self._settled = self._settled or asyncio.Event()
            await self._settled.wait()
        self.calls += 1
        self._reserved += estimate
        return True

    def settle(self, estimate: int, actual: int | None) -> None:
        """Replace a reservation by what the request really used (None: the estimate)."""
        self._reserved -= estimate
        self.tokens += estimate if actual is None else actual
        if self._settled is not None:
            self._settled.set()
            self._settled = None


_retry_after = parse_retry_after  # the shared rule (rankscope.retry)


def _body_text(response: Any) -> str:
    text = str(response.text).strip().replace("\n", " ")
    return text[:200]


class ChatClient:
    """Send chat-completions requests to one endpoint and model.

    Parameters
    ----------
    endpoint : str
        The API base (``http://localhost:8080/v1``) or the full
        ``.../chat/completions`` URL (query string kept, as Azure needs).
    model : str
        The model name sent with every request.
    api_key : str, optional
        Sent as ``Authorization: Bearer KEY`` (or in ``auth_header`` as is).
    auth_header : str, default "Authorization"
        Another header name for the key (Azure: ``api-key``).
    timeout : float, default 60
        Seconds for one request.
    max_retries : int, default 5
        Retries after the first request (429, 5xx, timeout, connection error).
    backoff, max_backoff : float
        The n-th retry (from 0) waits a uniform draw in
        ``[0, min(max_backoff, backoff * 2**n))`` seconds, unless Retry-After
        says otherwise (:class:`rankscope.retry.Backoff`).
    max_retry_after : float, default 300
        The longest Retry-After honoured.
    max_unanswered : int, default 8
        Requests in a row without an HTTP answer that stop the run.
    rpm : float, optional
        At most this many requests a minute.
    budget : Budget, optional
        Asked before every request.
    sleep, clock, rng : callables
        ``asyncio.sleep``, ``time.monotonic`` and ``random.random`` unless given.
    outbound : HostPolicy, optional
        The hosts that may be reached (the web app's); None: any.
    provider : str or Provider, default "openai"
        How requests are written and answers read
        (:mod:`rankscope.llm_judge.providers`: ``openai``, ``ollama``, or one registered).
    """

    def __init__(
        self,
        endpoint: str,
        model: str,
        *,
        api_key: str | None = None,
        auth_header: str = "Authorization",
        timeout: float = 60.0,
        max_retries: int = 5,
        backoff: float = 1.0,
        max_backoff: float = 60.0,
        max_retry_after: float = 300.0,
        max_unanswered: int = MAX_UNANSWERED,
        rpm: float | None = None,
        budget: Budget | None = None,
        sleep: Sleep | None = None,
        clock: Callable[[], float] | None = None,
        rng: Callable[[], float] | None = None,
        outbound: HostPolicy | None = None,
        provider: str | Provider = "openai",
    ) -> None:
        try:
            import httpx
        except ImportError:
            raise DependencyError("httpx", "judge", "LLM judges") from None
        self.provider = get_provider(provider)
        self.endpoint = check_endpoint(endpoint)
        self.url = self.provider.url(self.endpoint)
        self.model = model
        headers = self.provider.headers(api_key, auth_header)
        self._http = httpx.AsyncClient(
            timeout=httpx.Timeout(timeout, connect=min(timeout, MAX_CONNECT_SECONDS)),
            headers=headers,
            transport=guarded_transport(policy=outbound, secret_headers=(auth_header,)))
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_unanswered = max_unanswered
        self._answered = False  # the endpoint has given an HTTP answer
        self._completed = False  # ... and a completion
        self._failed_first = 0  # requests failed for good before any completion
        self._unusable: str | None = None  # why the endpoint cannot be used at all
        self._first = asyncio.Lock()
        self._unanswered = 0  # requests in a row without an HTTP answer
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_after = max_retry_after
        self._backoff = Backoff(backoff, max_backoff, max_retry_after)
        self.rpm = rpm
        self.budget = budget or Budget()
        self._sleep: Sleep = sleep or asyncio.sleep
        self._clock = clock or time.monotonic
        self._rng = rng or random.random
        self._pacer = Pacer(60.0 / rpm if rpm else 0.0, sleep=self._sleep, clock=self._clock)
        self.stats = ClientStats()

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    async def _pace(self) -> None:
        await self._pacer.wait()

    def _delay(self, retry: int, retry_after: float | None) -> float:
        return self._backoff.delay(retry, retry_after, self._rng)

    async def complete(
        self,
        messages: Sequence[Mapping[str, str]],
        settings: Mapping[str, Any],
        *,
        estimate: int = 0,
    ) -> Completion | None:
        """One answer, retried as needed; None when the budget allows no (more) request.

        Until the endpoint has given a completion, requests go one at a time: the
        first ones find out whether it can be used at all.

        Raises
        ------
        JudgeRequestError
            The request failed for good (retries spent, a 4xx, a malformed body).
        JudgeError
            The endpoint refuses every request (401, 403, 404), the first request
            got no HTTP answer, or the first 3 requests failed for good.
        JudgeUnreachableError
            ``max_unanswered`` requests in a row got no HTTP answer.
        """
        if not self._completed:
            async with self._first:
                if self._unusable is not None:
                    raise JudgeError(self._unusable)
                if not self._completed:
                    try:
                        return await self._ask(messages, settings, estimate,
                                               first=not self._answered)
                    except JudgeRequestError as exc:
                        self._failed_first += 1
                        if self._failed_first < FIRST_FAILURES:
                            raise
                        self._unusable = (
                            f"cannot use the endpoint {self.url}: its first "
                            f"{self._failed_first} requests failed, none gave a completion "
                            f"(last: {exc})")
                        raise JudgeError(self._unusable) from None
        return await self._ask(messages, settings, estimate, first=False)

    def _no_answer(self, first: bool, last: str) -> None:
        """After a request without an HTTP answer: stop the run when it is time."""
        self._unanswered += 1
        if first:
            self._unusable = (
                f"cannot use the endpoint {self.url}: the first request got no answer "
                f"({last}); is the server running, and is the URL right?")
            raise JudgeError(self._unusable)
        if self._unanswered >= self.max_unanswered:
            raise JudgeUnreachableError(
                f"the endpoint {self.url} stopped answering: {self._unanswered} requests in "
                f"a row got no answer (last: {last})")

    async def _ask(
        self,
        messages: Sequence[Mapping[str, str]],
        settings: Mapping[str, Any],
        estimate: int,
        *,
        first: bool,
    ) -> Completion | None:

        body = self.provider.body(self.model, messages, settings)

        async def attempt(n: int, retried: tuple[str, ...]) -> Completion | Retryable | None:
            if not await self.budget.acquire(estimate):
                return None
            await self._pace()
            try:
                response = await exchange(self._http, "POST", self.url, stats=self.stats,
                                          attempt=n, json=body)
            except OutboundError as exc:
                self.budget.settle(estimate, 0)
                raise JudgeError(str(exc)) from None
            if isinstance(response, NoAnswer):
                last = (f"no answer within {self.timeout:g} s (--timeout)"
                        if response.kind == "timeout"
                        else f"connection error: {response.detail}")
                self.budget.settle(estimate, 0)
                self._no_answer(first, last)
                return Retryable(response.kind, last)
            return self._answer(response, estimate, n)

        outcome = await retrying(attempt, max_retries=self.max_retries, backoff=self._backoff,
                                 sleep=self._sleep, rng=self._rng)
        if not isinstance(outcome, Retryable):
            return outcome
        raise JudgeRequestError(
            f"gave up after {self.max_retries + 1} requests; last: {outcome.message}",
            status=outcome.status, attempts=self.max_retries + 1,
        )

    def _answer(self, response: Any, estimate: int, n: int) -> Completion | Retryable:
        """A completion from an HTTP answer, a retry, or the error it calls for."""
        self._unanswered = 0
        self._answered = True
        status = response.status_code
        if status == 200:
            try:
                data = response.json()
            except ValueError:
                self.stats.count("200 not JSON")
                self.budget.settle(estimate, 0)
                return Retryable("200 not JSON", "HTTP 200 with a body that is not JSON: "
                                 f"{_body_text(response)}", status)
            self.stats.count("200")
            try:
                done = self.provider.completion(data)
            except (ValueError, KeyError, IndexError, TypeError) as exc:
                self.budget.settle(estimate, 0)
                raise JudgeRequestError(
                    f"malformed response body ({exc}): {_body_text(response)}",
                    status=status, attempts=n + 1,
                ) from None
            self.budget.settle(estimate, done.tokens)
            self._completed = True
            return done
        self.stats.count(str(status))
        self.budget.settle(estimate, 0)
        if status in _FATAL:
            raise JudgeError(f"{self.url} answered {status} {_FATAL[status]}: "
                             f"{_body_text(response)}")
        last = f"HTTP {status}: {_body_text(response)}"
        if status != 429 and status < 500:
            raise JudgeRequestError(last, status=status, attempts=n + 1)
        return Retryable(f"HTTP {status}", last, status,
                         retry_after_of(response.headers, time.time()))
