"""Where an HTTP request of rankscope may go, and how a redirect is followed.

Every HTTP client of rankscope (the search endpoints'
:mod:`rankscope.search.client`, the LLM judges' :mod:`rankscope.llm_judge.client`)
sends through one httpx transport, :class:`GuardedTransport`, which keeps two
sets of rules.

**Redirects** (always, on the command line too) are followed by the
transport itself, at most :data:`MAX_REDIRECTS` hops:

- a redirect never changes the method: a ``301``, ``302`` or ``303`` answer
  to a POST (which browsers and httpx turn into a GET without the body) is
  an :class:`~rankscope.errors.OutboundError`, since the engine would run
  another query; ``307`` and ``308`` keep the method and the body;
- a redirect to another origin (scheme, host or port) never carries
  ``Authorization``, ``Proxy-Authorization``, ``Cookie`` or any header the
  client names as a credential (an endpoint's ``headers_env`` and ``auth``
  headers, a judge's key header);
- only ``http`` and ``https`` are followed.

**Hosts** (the web app's: a :class:`HostPolicy`, set by the operator with
``rankscope serve --allow-hosts``). By default every public address may be
reached and these are refused: loopback (127.0.0.0/8, ::1), link-local
(169.254.0.0/16, fe80::/10), private (10/8, 172.16/12, 192.168/16),
unique-local (fc00::/7), the other non-public ranges (0.0.0.0/8,
100.64.0.0/10, multicast, reserved) and the cloud metadata addresses
(:data:`METADATA_ADDRESSES`); an IPv4-mapped IPv6 address counts as the IPv4
address it maps. The operator allows host names (exact, or ``*.example.org``
for its subdomains), single addresses (allowing ``127.0.0.1`` allows that
address, not the rest of 127.0.0.0/8) and CIDR ranges; a metadata address
is reached only when it is allowed by itself, never through a range nor
through an allowed name that resolves to it. A URL
is checked when it is given (:meth:`HostPolicy.check_url`) and again on
every request, redirects included, after DNS resolution: the connection
goes to an address that passed the check (the URL's host stays in the
``Host`` header and in TLS's server name), so a name cannot be rebound to
another address between the check and the connection. With a policy, the
proxies of the environment (``HTTPS_PROXY`` ...) are not used, since a
proxy would resolve the name itself; without one (the command line) they
are.

Examples
--------
>>> policy = HostPolicy.parse(["10.0.0.0/8", "search.internal"])
>>> policy.refusal("10.1.2.3") is None, policy.refusal("192.168.1.1")
(True, 'a private address')
>>> HostPolicy().refusal("::ffff:127.0.0.1")
'a loopback address'
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
import urllib.parse
import urllib.request
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rankscope.errors import OptionError, OutboundError

if TYPE_CHECKING:
    import httpx

__all__ = [
    "CREDENTIAL_HEADERS",
    "MAX_REDIRECTS",
    "METADATA_ADDRESSES",
    "GuardedTransport",
    "HostPolicy",
    "Resolver",
    "address_refusal",
    "guarded_transport",
    "system_resolver",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], Sequence[str]]
"""``(host, port) -> addresses``: a name's addresses, best first (OSError when none)."""

MAX_REDIRECTS = 10
REDIRECTS = frozenset({301, 302, 303, 307, 308})
CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})
"""Headers never sent to another origin after a redirect (besides the client's own)."""

METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254",  # AWS, Azure, GCP, OpenStack, DigitalOcean, Oracle instance metadata
    "169.254.170.2",    # AWS ECS task metadata and credentials
    "169.254.170.23",   # AWS EKS pod identity
    "fd00:ec2::254",    # AWS instance metadata over IPv6
    "fd00:ec2::23",     # AWS EKS pod identity over IPv6
    "100.100.100.200",  # Alibaba Cloud metadata
))
"""Cloud metadata services: refused unless allowed one by one."""

_UNIQUE_LOCAL = ipaddress.ip_network("fc00::/7")
_LABEL = r"[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?"
_HOST_NAME = re.compile(rf"^(?:\*\.)?{_LABEL}(?:\.{_LABEL})*$")


def _address(text: str) -> IPAddress | None:
    """An IP address literal (brackets and an IPv6 zone dropped), else None."""
    text = text.strip().strip("[]").split("%", 1)[0]
    try:
        found = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(found, ipaddress.IPv6Address) and found.ipv4_mapped is not None:
        return found.ipv4_mapped
    return found


def address_refusal(address: str | IPAddress) -> str | None:
    """Why an address is not public (None when it is): what the default policy refuses.

    Examples
    --------
    >>> address_refusal("93.184.215.14") is None
    True
    >>> address_refusal("169.254.169.254"), address_refusal("fe80::1")
    ('a cloud metadata address', 'a link-local address')
    >>> address_refusal("fd12::1"), address_refusal("0.0.0.0")
    ('a unique-local address', 'not a public address')
    """
    ip = _address(str(address)) if not isinstance(address, IPAddress) else address
    if ip is None:
        raise ValueError(f"not an IP address: {address!r}")
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip in METADATA_ADDRESSES:
        return "a cloud metadata address"
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_unspecified or ip.is_multicast or ip.is_reserved:
        return "not a public address"
    if isinstance(ip, ipaddress.IPv6Address) and ip in _UNIQUE_LOCAL:
        return "a unique-local address"
    if ip.is_private:
        return "a private address"
    if not ip.is_global:
        return "not a public address"
    return None


def system_resolver(host: str, port: int) -> list[str]:
    """The addresses of ``host`` from the system's resolver (``getaddrinfo``), in its order."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _url_parts(url: str, key: str) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of an http(s) URL (OutboundError otherwise)."""
    try:
        parts = urllib.parse.urlsplit(url.strip())
        port = parts.port
    except ValueError:
        raise OutboundError(f"{key} is not a valid URL", value=url) from None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").rstrip(".").lower()
    if scheme not in ("http", "https") or not host:
        raise OutboundError(f"{key} must be an http:// or https:// address", value=url)
    return scheme, host, port or (443 if scheme == "https" else 80)


@dataclass(frozen=True)
class HostPolicy:
    """The hosts a server may send requests to (see the module docstring).

    Parameters
    ----------
    names : frozenset of str
        Host names allowed whatever they resolve to (lower case;
        ``*.example.org`` allows its subdomains).
    addresses : frozenset of addresses
        Single addresses allowed.
    networks : tuple of networks
        CIDR ranges allowed (a metadata address inside one stays refused).
    resolver : callable, optional
        ``(host, port) -> addresses``; the system's resolver unless given
        (tests give their own).
    """

    names: frozenset[str] = frozenset()
    addresses: frozenset[IPAddress] = frozenset()
    networks: tuple[IPNetwork, ...] = ()
    resolver: Resolver | None = field(default=None, compare=False, repr=False)

    @classmethod
    def parse(cls, entries: Iterable[str], *, resolver: Resolver | None = None) -> HostPolicy:
        """A policy from the operator's list: host names, addresses, CIDR ranges.

        Raises
        ------
        OptionError
            An entry that is none of these (a port, a URL, a bad range).

        Examples
        --------
        >>> HostPolicy.parse(["127.0.0.1", "10.0.0.0/8", "ES.internal."]).names
        frozenset({'es.internal'})
        """
        names: set[str] = set()
        addresses: set[IPAddress] = set()
        networks: list[IPNetwork] = []
        for raw in entries:
            entry = raw.strip()
            if not entry:
                continue
            if "/" in entry:
                try:
                    networks.append(ipaddress.ip_network(entry, strict=False))
                except ValueError:
                    raise OptionError(f"allowed host {entry!r} is not a CIDR range such as "
                                      "10.0.0.0/8") from None
                continue
            address = _address(entry)
            if address is not None:
                addresses.add(address)
                continue
            name = entry.rstrip(".").lower()
            if not _HOST_NAME.match(name):
                raise OptionError(f"allowed host {entry!r} is not a host name, an address or a "
                                  "CIDR range (no scheme, no port)")
            names.add(name)
        return cls(frozenset(names), frozenset(addresses), tuple(networks), resolver)

    def describe(self) -> list[str]:
        """The allowed entries, as the operator wrote them (sorted)."""
        return sorted([*self.names, *(str(a) for a in self.addresses),
                       *(str(n) for n in self.networks)])

    def name_allowed(self, host: str) -> bool:
        """Whether ``host`` is allowed by name (whatever it resolves to)."""
        host = host.rstrip(".").lower()
        return host in self.names or any(
            n.startswith("*.") and host.endswith(n[1:]) for n in self.names)

    def refusal(self, address: str | IPAddress) -> str | None:
        """Why the policy refuses ``address`` (None when it may be reached)."""
        ip = _address(str(address))
        if ip is None:
            raise ValueError(f"not an IP address: {address!r}")
        if ip in self.addresses:
            return None
        reason = address_refusal(ip)
        if reason is None:
            return None
        if ip not in METADATA_ADDRESSES and any(ip in n for n in self.networks):
            return None
        return reason

    def _resolve(self, host: str, port: int) -> Sequence[str]:
        return (self.resolver or system_resolver)(host, port)

    @staticmethod
    def _refused(what: str, host: str, address: str, reason: str) -> OutboundError:
        named = _address(host) is None
        allow = f"{host} or {address}" if named else address
        where = f"{host}, which resolves to {address}," if named else f"{host},"
        return OutboundError(f"{what} points at {where} {reason}; this server reaches it only "
                             f"if its operator allows it (rankscope serve --allow-hosts {allow})")

    def _address_refusal(self, ip: IPAddress, by_name: bool) -> str | None:
        """Why ``ip`` may not be reached; a name the operator allowed reaches any address but
        a metadata one (unless that address is allowed by itself)."""
        if not by_name:
            return self.refusal(ip)
        if ip in METADATA_ADDRESSES and ip not in self.addresses:
            return "a cloud metadata address"
        return None

    def _choose(self, host: str, found: Sequence[str],
                what: str) -> tuple[str | None, OutboundError | None]:
        """The first address of ``found`` that may be reached, or the refusal of the first."""
        by_name = self.name_allowed(host)
        refused: OutboundError | None = None
        for address in found:
            ip = _address(address)
            if ip is None:
                continue
            reason = self._address_refusal(ip, by_name)
            if reason is None:
                return str(ip), None
            refused = refused or self._refused(what, host, str(ip), reason)
        return None, refused

    def check_url(self, url: str, *, key: str = "url") -> None:
        """Refuse a URL whose host the policy refuses (when the URL is given).

        A host name that does not resolve now passes: every request is
        checked again after its own resolution.

        Raises
        ------
        OutboundError
            Not http(s), or a host (or every address of a name) refused.
        """
        _, host, port = _url_parts(url, key)
        literal = _address(host)
        if literal is not None:
            reason = self.refusal(literal)
            if reason is not None:
                raise self._refused(key, host, str(literal), reason)
            return
        try:
            found = list(self._resolve(host, port))
        except OSError:
            return
        address, refused = self._choose(host, found, key)
        if address is None and refused is not None:
            raise refused

    async def connect_address(self, host: str, port: int) -> str | None:
        """The address to connect to for ``host`` (None: ``host`` is an address already).

        A name is resolved and the request sent to the first address the
        policy lets through (for a name the operator allowed: any but a
        metadata address), never to the name, which could resolve again.

        Raises
        ------
        OutboundError
            The host, or every address it resolves to, is refused.
        httpx.ConnectError
            The name does not resolve (retried like any connection error).
        """
        import httpx

        host = host.rstrip(".").lower()
        literal = _address(host)
        if literal is not None:
            reason = self.refusal(literal)
            if reason is not None:
                raise self._refused("the request", host, str(literal), reason)
            return None
        try:
            found = await asyncio.get_running_loop().run_in_executor(
                None, self._resolve, host, port)
        except OSError as exc:
            raise httpx.ConnectError(f"cannot resolve {host} ({exc})") from None
        address, refused = self._choose(host, found, "the request")
        if address is not None:
            return address
        if refused is None:
            raise httpx.ConnectError(f"cannot resolve {host} (no address)")
        raise refused


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
