"""The one httpx transport every HTTP client of rankscope sends through.

:class:`GuardedTransport` follows redirects itself (at most
:data:`MAX_REDIRECTS` hops, the method never changed, credentials never sent
to another origin, only http and https) and, with a
:class:`~rankscope.outbound.hosts.HostPolicy`, connects only to addresses the
policy allows, checked after DNS resolution on every request, redirects
included (the rules: :mod:`rankscope.outbound`).
"""

from __future__ import annotations

import urllib.request
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from rankscope.errors import OutboundError

if TYPE_CHECKING:
    import httpx

    from rankscope.outbound.hosts import HostPolicy

__all__ = [
    "CREDENTIAL_HEADERS",
    "MAX_REDIRECTS",
    "GuardedTransport",
    "guarded_transport",
]

MAX_REDIRECTS = 10
REDIRECTS = frozenset({301, 302, 303, 307, 308})
CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})
"""Headers never sent to another origin after a redirect (besides the client's own)."""


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port


def _environment_proxy(url: httpx.URL) -> str | None:
    """The proxy the environment names for ``url`` (``HTTPS_PROXY``, ``NO_PROXY`` ...)."""
    proxies = urllib.request.getproxies_environment()
    bypass = getattr(urllib.request, "proxy_bypass_environment")  # noqa: B009 (untyped in typeshed)
    if not proxies or bypass(url.host, proxies):
        return None
    return proxies.get(url.scheme) or proxies.get("all")


class GuardedTransport:
    """An httpx async transport keeping the redirect and host rules (see the module docs).

    Parameters
    ----------
    inner : httpx transport, optional
        Sends each request (default ``httpx.AsyncHTTPTransport``; tests give
        ``httpx.MockTransport``).
    policy : HostPolicy, optional
        The hosts that may be reached; None: any (the command line).
    secret_headers : collection of str
        Headers that carry credentials: never sent to another origin.
    verify : bool
        Check TLS certificates (the default transport's).
    max_redirects : int
        Hops followed at most.
    """

    def __init__(self, inner: Any = None, *, policy: HostPolicy | None = None,
                 secret_headers: Collection[str] = (), verify: bool = True,
                 max_redirects: int = MAX_REDIRECTS) -> None:
        self._inner = inner
        self._verify = verify
        self._by_proxy: dict[str | None, Any] = {}
        self.policy = policy
        self.secret_headers = CREDENTIAL_HEADERS | {h.lower() for h in secret_headers}
        self.max_redirects = max_redirects
        self.redirects_followed = 0
        """Redirect hops followed so far (for tests and summaries)."""

    def _transport_for(self, url: httpx.URL) -> Any:
        if self._inner is not None:
            return self._inner
        import httpx

        proxy = _environment_proxy(url) if self.policy is None else None
        if proxy not in self._by_proxy:
            self._by_proxy[proxy] = httpx.AsyncHTTPTransport(verify=self._verify, proxy=proxy)
        return self._by_proxy[proxy]

    async def _pinned(self, request: httpx.Request) -> httpx.Request:
        """The request to send: to a checked address when the policy resolved the name."""
        import httpx

        if self.policy is None:
            return request
        if request.url.scheme not in ("http", "https"):
            raise OutboundError(f"only http and https may be reached, not {request.url.scheme}:")
        port = request.url.port or (443 if request.url.scheme == "https" else 80)
        address = await self.policy.connect_address(request.url.host, port)
        if address is None:
            return request
        extensions = dict(request.extensions)
        if request.url.scheme == "https":
            extensions["sni_hostname"] = request.url.host  # TLS checks the name, not the address
        return httpx.Request(request.method, request.url.copy_with(host=address),
                             headers=request.headers, stream=request.stream,
                             extensions=extensions)

    async def _next(self, request: httpx.Request, response: httpx.Response) -> httpx.Request:
        """The request a redirect answer asks for, or OutboundError when the rules refuse it."""
        import httpx

        status = response.status_code
        location = response.headers["location"]
        try:
            target = request.url.join(location)
        except httpx.InvalidURL:
            raise OutboundError(f"{request.url} redirected to an invalid URL",
                                value=location) from None
        if target.scheme not in ("http", "https"):
            raise OutboundError(f"{request.url} redirected to a {target.scheme}: URL; only http "
                                "and https are followed", value=str(target))
        method = request.method
        if status in (301, 302, 303) and method not in ("GET", "HEAD"):
            raise OutboundError(
                f"{method} {request.url} answered {status}, a redirect to {target} that clients "
                f"follow with a GET without the body, so the engine would run another query; "
                f"point the endpoint at the final URL")
        if not target.fragment and request.url.fragment:
            target = target.copy_with(fragment=request.url.fragment)
        headers = httpx.Headers(request.headers)
        headers.pop("host", None)
        if _origin(target) != _origin(request.url):
            for name in list(headers.keys()):
                if name.lower() in self.secret_headers:
                    del headers[name]
        body = await request.aread() if method not in ("GET", "HEAD") else None
        if body is None:
            headers.pop("content-length", None)
            headers.pop("transfer-encoding", None)
        extensions = {k: v for k, v in request.extensions.items() if k != "sni_hostname"}
        return httpx.Request(method, target, headers=headers, content=body,
                             extensions=extensions)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request``, following redirects by the rules."""
        current = request
        for _ in range(self.max_redirects + 1):
            sent = await self._pinned(current)
            response: httpx.Response = await self._transport_for(current.url) \
                .handle_async_request(sent)
            if response.status_code not in REDIRECTS or "location" not in response.headers:
                return response
            try:
                current = await self._next(current, response)
            finally:
                await response.aread()
                await response.aclose()
            self.redirects_followed += 1
        raise OutboundError(f"{request.url} redirected more than {self.max_redirects} times")

    async def aclose(self) -> None:
        """Close the transports."""
        if self._inner is not None:
            await self._inner.aclose()
        for transport in self._by_proxy.values():
            await transport.aclose()
        self._by_proxy.clear()

    async def __aenter__(self) -> GuardedTransport:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def guarded_transport(inner: Any = None, *, policy: HostPolicy | None = None,
                      secret_headers: Collection[str] = (), verify: bool = True) -> Any:
    """A :class:`GuardedTransport`, typed for ``httpx.AsyncClient(transport=...)``.

    It keeps httpx's transport contract (``handle_async_request``, ``aclose``,
    async context manager) without importing httpx here: the core install has
    no httpx, and the web app parses its policy before any client exists.
    """
    return GuardedTransport(inner, policy=policy, secret_headers=secret_headers, verify=verify)
