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

The redirect rules are :mod:`rankscope.outbound.transport` (the transport and
:func:`~rankscope.outbound.transport.guarded_transport`); the host rules are
:mod:`rankscope.outbound.hosts` (:class:`~rankscope.outbound.hosts.HostPolicy`,
:func:`~rankscope.outbound.hosts.address_refusal`).
"""
