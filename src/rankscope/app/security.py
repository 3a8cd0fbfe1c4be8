"""Cross-origin request refusal, upload size limits, and who is asking (cookie or token).

**CSRF.** A state-changing request (not GET, HEAD, OPTIONS) is refused with
403 when the browser says it comes from elsewhere: ``Sec-Fetch-Site`` other
than ``same-origin`` or ``none`` (sent by every current browser, and not
settable by a page's script), or, for a browser that sends no
``Sec-Fetch-Site``, an ``Origin`` whose scheme, host and port differ from the
request's own. A request with neither header is not a browser's and passes
(it carries no ambient cookie of ours unless its author put it there); so
does one authenticated by ``Authorization: Bearer`` without a cookie. This
is the approach of Go 1.25's ``http.CrossOriginProtection`` (Filippo
Valsorda, "CSRF", 2025), which datasette also follows.

**Sizes.** A request body larger than the limit is refused with 413, by its
``Content-Length`` or while it streams.

**Sessions.** The cookie holds a random token (HttpOnly, SameSite=Lax,
Secure when the request came over https); only its SHA-256 is stored.

**Headers.** Every response carries a Content-Security-Policy
(:data:`CONTENT_SECURITY_POLICY`: scripts, styles and connections from this
site only, so no inline script or style runs and nothing is loaded from
elsewhere but result images; no framing; forms post here only),
``X-Content-Type-Options: nosniff``, ``X-Frame-Options: DENY``, a
``Referrer-Policy`` of ``no-referrer`` (a result opened from a page learns
nothing of the app's addresses) and ``Cross-Origin-Opener-Policy:
same-origin`` (:class:`SecurityHeaders`).
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "COOKIE",
    "SECURITY_HEADERS",
    "BodyLimit",
    "CrossOriginGuard",
    "SecurityHeaders",
    "origin_tuple",
]

COOKIE = "rankscope_session"
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: http:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
"""Results' images may come from their own sites (http(s) only); everything else from here."""
SECURITY_HEADERS = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
)
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
DEFAULT_PORTS = {"http": 80, "https": 443}

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def origin_tuple(value: str) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of an origin, default ports filled in (ValueError if bad).

    Examples
    --------
    >>> origin_tuple("http://127.0.0.1:8000")
    ('http', '127.0.0.1', 8000)
    >>> origin_tuple("https://Example.org")
    ('https', 'example.org', 443)
    """
    parts = urllib.parse.urlsplit(value)
    scheme, host = (parts.scheme or "").lower(), (parts.hostname or "").lower()
    if not scheme or not host:
        raise ValueError(f"not an origin: {value!r}")
    port = parts.port or DEFAULT_PORTS.get(scheme)
    if port is None:
        raise ValueError(f"no default port for {scheme!r}")
    return scheme, host, port


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1")
            for k, v in scope.get("headers") or []}


async def _refuse(send: Send, status: int, message: str, scope: Scope) -> None:
    api = str(scope.get("path", "")).startswith("/api/")
    if api:
        body = json.dumps({"error": message}).encode()
        kind = b"application/json"
    else:
        body = (f"<!doctype html><title>{status}</title><h1>{status}</h1><p>"
                + message.replace("&", "&amp;").replace("<", "&lt;") + "</p>").encode()
        kind = b"text/html; charset=utf-8"
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", kind),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class SecurityHeaders:
    """ASGI middleware adding :data:`SECURITY_HEADERS` to every response (see the module docs)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers") or []}
                extra = [(k, v) for k, v in SECURITY_HEADERS if k not in present]
                message["headers"] = [*(message.get("headers") or []), *extra]
            await send(message)

        await self.app(scope, receive, with_headers)


class CrossOriginGuard:
    """ASGI middleware refusing cross-origin state-changing requests (see the module docs)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    def reason(self, scope: Scope) -> str | None:
        """Why the request must be refused, or None when it may pass."""
        if scope.get("method", "GET") in SAFE_METHODS:
            return None
        headers = _headers(scope)
        auth = headers.get("authorization", "")
        if auth.lower().startswith("bearer ") and "cookie" not in headers:
            return None  # no ambient credential: not forgeable by another site
        site = headers.get("sec-fetch-site")
        if site is not None:
            if site in ("same-origin", "none"):
                return None
            return f"cross-origin request refused (Sec-Fetch-Site: {site})"
        origin = headers.get("origin")
        if origin is None:
            return None  # neither header: not a browser
        host = headers.get("host", "")
        try:
            if origin_tuple(origin) == origin_tuple(f"{scope.get('scheme', 'http')}://{host}"):
                return None
        except ValueError:
            return f"cross-origin request refused (Origin {origin!r}, Host {host!r})"
        return f"cross-origin request refused (Origin {origin!r} is not {host!r})"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refused = self.reason(scope)
            if refused is not None:
                await _refuse(send, 403, refused, scope)
                return
        await self.app(scope, receive, send)


class BodyLimit:
    """ASGI middleware refusing request bodies larger than ``limit`` bytes with 413."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _headers(scope).get("content-length")
        too_big = f"the request is larger than {self.limit // (1024 * 1024)} MiB"
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await _refuse(send, 413, too_big, scope)
            return
        if declared is not None:
            await self.app(scope, receive, send)
            return
        # No length given (chunked): read the body first, at most limit + 1 bytes, then
        # hand it on, so an oversized stream is refused before the app sees any of it.
        chunks: list[bytes] = []
        seen = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            seen += len(chunks[-1])
            if seen > self.limit:
                await _refuse(send, 413, too_big, scope)
                return
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
