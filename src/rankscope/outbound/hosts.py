"""The hosts a server's HTTP requests may reach: the web app's :class:`HostPolicy`.

The rules (see :mod:`rankscope.outbound`): by default every public address
may be reached, the non-public ranges and the cloud metadata addresses
(:data:`METADATA_ADDRESSES`) are refused (:func:`address_refusal`); the
operator allows names, addresses and ranges (``rankscope serve
--allow-hosts``). A URL is checked when given (:meth:`HostPolicy.check_url`)
and each connection goes to an address checked after DNS resolution
(:meth:`HostPolicy.connect_address`, which the transport of
:mod:`rankscope.outbound.transport` calls on every request).

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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from rankscope.errors import OptionError, OutboundError

__all__ = [
    "METADATA_ADDRESSES",
    "HostPolicy",
    "Resolver",
    "address_refusal",
    "system_resolver",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], Sequence[str]]
"""``(host, port) -> addresses``: a name's addresses, best first (OSError when none)."""

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
