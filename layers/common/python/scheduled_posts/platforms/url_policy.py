"""Which webhook URLs the service may call: the server-side request forgery (SSRF) policy.

A channel URL is checked twice with :func:`check_destination`: when the channel is created
(the API answers 422 on a refusal) and again at every send (the webhook adapter connects only
to the addresses checked then, so a DNS answer that changes between the check and the connect,
"DNS rebinding", cannot reach a private address).

Rules (issue 2):

- ``https`` only, and every resolved address must be globally reachable by our pinned
  :data:`SPECIAL_RANGES` (IANA's special-purpose registries; an IPv6 address also in
  ``2000::/3``), never :mod:`ipaddress`'s ``is_global``, which changed between Python patch
  releases (decision "The URL policy's own table of special-purpose addresses").
- Origins listed in ``OUTBOUND_ALLOWED_ORIGINS`` (formerly ``WEBHOOK_ALLOWED_ORIGINS``, still
  read; ``scheme://host[:port]``; an entry without a
  port matches any port) may use ``http`` and may resolve to private addresses: the local
  stack lists ``http://127.0.0.1`` so loopback receivers work.
- Ports (issue 17): a URL that is not an allowed origin may use only the scheme's usual port
  (443 for ``https``) or one the operator lists in ``WEBHOOK_ALLOWED_PORTS``; a port in
  ``WEBHOOK_REFUSED_PORTS`` is refused even for an allowed origin (the local stack lists its
  own API and embedded-AWS ports there, so a channel can never call the service itself).
- No userinfo (``user:pass@``), no fragment, a host is required, at most 2,048 characters,
  no whitespace or control characters, no IPv6 zone ids, no ambiguous numeric hosts
  (``127.1``, ``0x7f000001``) that resolvers read as IP addresses.

IP-literal hosts are checked like resolved ones. Tests inject a :data:`Resolver`; they never
resolve real names.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

#: ``host -> addresses`` (IPv4 dotted quads or IPv6 text). Raises ``OSError`` when the name does
#: not resolve. :func:`system_resolver` in production; a dict lookup in tests.
Resolver = Callable[[str], Sequence[str]]

#: Longest accepted URL, in characters (a common de-facto limit; RFC 9110 section 4.1
#: recommends supporting at least 8,000 octets, we accept far less on purpose).
MAX_URL_LENGTH = 2048

_DEFAULT_PORTS = {"https": 443, "http": 80}
_CONTROL_OR_SPACE = re.compile(r"[\x00-\x20\x7f]")
# Hosts made only of digits, dots and hex that are not canonical dotted quads: inet_aton reads
# "127.1", "0177.0.0.1" or "0x7f000001" as loopback, so refuse them rather than guess.
_NUMERIC_HOST = re.compile(r"^(0x[0-9a-f]*|[0-9]+)(\.(0x[0-9a-f]*|[0-9]*))*\.?$")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")  # RFC 4291 section 2.4


@dataclass(frozen=True)
class SpecialRange:
    """One row of the IANA IPv4 / IPv6 Special-Purpose Address Registries (RFC 6890, RFC 8190):
    the block, its name, its RFC and the "Globally Reachable" column (``None``: N/A)."""

    network: ipaddress.IPv4Network | ipaddress.IPv6Network
    name: str
    rfc: str
    globally_reachable: bool | None


#: The registries as of 2025-10-09 (last rows: ``100:0:0:1::/64``, ``192.88.99.2/32``), pinned
#: 2026-12-01, plus the address-space registries' multicast and deprecated site-local blocks.
SPECIAL_RANGES: tuple[SpecialRange, ...] = tuple(
    SpecialRange(ipaddress.ip_network(block), name, rfc, reachable)
    for block, name, rfc, reachable in (
        ("0.0.0.0/8", '"This network"', "RFC 791 section 3.2", False),
        ("0.0.0.0/32", '"This host on this network"', "RFC 1122 section 3.2.1.3", False),
        ("10.0.0.0/8", "Private-Use", "RFC 1918", False),
        ("100.64.0.0/10", "Shared Address Space", "RFC 6598", False),
        ("127.0.0.0/8", "Loopback", "RFC 1122 section 3.2.1.3", False),
        ("169.254.0.0/16", "Link Local", "RFC 3927", False),
        ("172.16.0.0/12", "Private-Use", "RFC 1918", False),
        ("192.0.0.0/24", "IETF Protocol Assignments", "RFC 6890 section 2.1", False),
        ("192.0.0.0/29", "IPv4 Service Continuity Prefix", "RFC 7335", False),
        ("192.0.0.8/32", "IPv4 dummy address", "RFC 7600", False),
        ("192.0.0.9/32", "Port Control Protocol Anycast", "RFC 7723", True),
        ("192.0.0.10/32", "Traversal Using Relays around NAT Anycast", "RFC 8155", True),
        ("192.0.0.170/31", "NAT64/DNS64 Discovery", "RFC 8880", False),  # .170 and .171
        ("192.0.2.0/24", "Documentation (TEST-NET-1)", "RFC 5737", False),
        ("192.31.196.0/24", "AS112-v4", "RFC 7535", True),
        ("192.52.193.0/24", "AMT", "RFC 7450", True),
        ("192.88.99.0/24", "Deprecated (6to4 Relay Anycast)", "RFC 7526", None),
        ("192.88.99.2/32", "6a44-relay anycast address", "RFC 6751", False),
        ("192.168.0.0/16", "Private-Use", "RFC 1918", False),
        ("192.175.48.0/24", "Direct Delegation AS112 Service", "RFC 7534", True),
        ("198.18.0.0/15", "Benchmarking", "RFC 2544", False),
        ("198.51.100.0/24", "Documentation (TEST-NET-2)", "RFC 5737", False),
        ("203.0.113.0/24", "Documentation (TEST-NET-3)", "RFC 5737", False),
        ("224.0.0.0/4", "Multicast", "RFC 5771", False),
        ("240.0.0.0/4", "Reserved", "RFC 1112 section 4", False),
        ("255.255.255.255/32", "Limited Broadcast", "RFC 919 section 7", False),
        ("::1/128", "Loopback Address", "RFC 4291", False),
        ("::/128", "Unspecified Address", "RFC 4291", False),
        ("::ffff:0:0/96", "IPv4-mapped Address", "RFC 4291", False),
        ("64:ff9b::/96", "IPv4-IPv6 Translation", "RFC 6052", True),
        ("64:ff9b:1::/48", "Local-use IPv4/IPv6 Translation", "RFC 8215", False),
        ("100::/64", "Discard-Only Address Block", "RFC 6666", False),
        ("100:0:0:1::/64", "Dummy IPv6 Prefix", "RFC 9780", False),
        ("2001::/23", "IETF Protocol Assignments", "RFC 2928", False),
        ("2001::/32", "TEREDO", "RFC 4380", None),
        ("2001:1::1/128", "Port Control Protocol Anycast", "RFC 7723", True),
        ("2001:1::2/128", "Traversal Using Relays around NAT Anycast", "RFC 8155", True),
        ("2001:1::3/128", "DNS-SD Service Registration Protocol Anycast", "RFC 9665", True),
        ("2001:2::/48", "Benchmarking", "RFC 5180", False),
        ("2001:3::/32", "AMT", "RFC 7450", True),
        ("2001:4:112::/48", "AS112-v6", "RFC 7535", True),
        ("2001:10::/28", "Deprecated (previously ORCHID)", "RFC 4843", None),
        ("2001:20::/28", "ORCHIDv2", "RFC 7343", True),
        ("2001:30::/28", "Drone Remote ID Protocol Entity Tags (DETs) Prefix", "RFC 9374", True),
        ("2001:db8::/32", "Documentation", "RFC 3849", False),
        ("2002::/16", "6to4", "RFC 3056", None),
        ("2620:4f:8000::/48", "Direct Delegation AS112 Service", "RFC 7534", True),
        ("3fff::/20", "Documentation", "RFC 9637", False),
        ("5f00::/16", "Segment Routing (SRv6) SIDs", "RFC 9602", False),
        ("fc00::/7", "Unique-Local", "RFC 4193", False),
        ("fe80::/10", "Link-Local Unicast", "RFC 4291", False),
        ("fec0::/10", "Site-Local, deprecated", "RFC 3879", False),
        ("ff00::/8", "Multicast", "RFC 4291", False),
    )
)


def special_range(address: str) -> SpecialRange | None:
    """The most specific row of :data:`SPECIAL_RANGES` holding ``address``, or ``None``;
    raises ``ValueError`` when ``address`` is not an IP address."""
    ip = ipaddress.ip_address(address)
    rows = [r for r in SPECIAL_RANGES if r.network.version == ip.version and ip in r.network]
    return max(rows, key=lambda r: r.network.prefixlen, default=None)


class UnsafeDestinationError(ValueError):
    """The URL may not be called. ``str(exc)`` is a message safe to show to the caller."""


class UnresolvableDestinationError(UnsafeDestinationError):
    """The host did not resolve (now). At channel create it is a refusal like any other; at
    send time the webhook adapter treats it as retryable (DNS failures are often transient)."""


@dataclass(frozen=True)
class Destination:
    """A checked URL.

    ``host`` is the lower-case ASCII (IDNA) host name, or the IP literal without brackets;
    ``port`` is explicit or the scheme's default; ``target`` is the request target (path and
    query, ``/`` when empty); ``addresses`` are the checked addresses to connect to, in resolver
    order (never empty).
    """

    url: str
    scheme: str
    host: str
    port: int
    target: str
    addresses: tuple[str, ...]

    @property
    def host_header(self) -> str:
        """The ``Host`` header value (RFC 9110 section 7.2): brackets for IPv6, the port only
        when it is not the scheme's default."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        if self.port != _DEFAULT_PORTS[self.scheme]:
            return f"{host}:{self.port}"
        return host


def _ip_literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    return None


def non_global_reason(address: str) -> str | None:
    """Why ``address`` is not globally reachable, or ``None`` when it is: the most specific
    row of :data:`SPECIAL_RANGES` decides (only "Globally Reachable" True passes; N/A does not),
    else an IPv6 address must be in ``2000::/3``. Raises ``ValueError`` for a non-address."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.scope_id:
            return "an IPv6 address with a zone id"
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            inner = non_global_reason(str(embedded))
            if inner is not None:
                return f"an IPv6 address embedding {embedded}, {inner}"
    row = special_range(str(ip))
    if row is not None:
        if row.globally_reachable:
            return None
        return f"in {row.network}, {row.name} ({row.rfc}), not globally reachable"
    if isinstance(ip, ipaddress.IPv6Address) and ip not in _GLOBAL_UNICAST:
        return "outside the IPv6 global unicast space 2000::/3 (RFC 4291 section 2.4)"
    return None


def _parse_origin(origin: str) -> tuple[str, str, int | None] | None:
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    return parts.scheme, _normalise_host(parts.hostname), port


def _normalise_host(host: str) -> str:
    host = host.strip().lower().rstrip(".")
    literal = _ip_literal(host)
    if literal is not None:
        return str(literal)
    return host


def origin_allowed(scheme: str, host: str, port: int, allowed_origins: Sequence[str]) -> bool:
    """Whether ``scheme://host:port`` matches an entry of ``allowed_origins``.

    Entries are ``scheme://host[:port]``; one without a port matches any port. Hosts compare
    case-insensitively; IP literals compare by value (``[::1]`` matches ``[0::1]``). Malformed
    entries match nothing.
    """
    for entry in allowed_origins:
        parsed = _parse_origin(entry)
        if parsed is None:
            continue
        e_scheme, e_host, e_port = parsed
        if e_scheme == scheme and e_host == host and (e_port is None or e_port == port):
            return True
    return False


def _ascii_host(raw: str) -> str:
    host = raw.lower().rstrip(".")
    if not host:
        raise UnsafeDestinationError("url must name a host")
    if "%" in host:
        raise UnsafeDestinationError("url host must not carry an IPv6 zone id")
    if _ip_literal(host) is not None:
        return str(_ip_literal(host))
    if _NUMERIC_HOST.match(host):
        raise UnsafeDestinationError(
            "url host is an ambiguous numeric address; write a dotted-quad IPv4 address"
        )
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError as exc:
        raise UnsafeDestinationError("url host is not a valid domain name") from exc
    if not re.fullmatch(r"[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?", ascii_host) or ".." in ascii_host:
        raise UnsafeDestinationError("url host is not a valid domain name")
    return ascii_host


def check_destination(  # noqa: C901, PLR0912, PLR0915 - decision L5
    url: str,
    *,
    allowed_origins: Sequence[str],
    resolver: Resolver,
    allowed_ports: Sequence[int] = (),
    refused_ports: Sequence[int] = (),
) -> Destination:
    """Check ``url`` against the policy above and resolve its host once.

    Parameters
    ----------
    url
        The channel URL as the user gave it.
    allowed_origins
        ``Settings.allowed_origins`` (``OUTBOUND_ALLOWED_ORIGINS`` split).
    resolver
        Name resolution; called once, and not at all for an IP-literal host.
    allowed_ports
        ``Settings.allowed_ports``: ports besides the scheme's default that a URL outside the
        allowed origins may use.
    refused_ports
        ``Settings.refused_ports``: ports no URL may use, allowed origin or not.

    Returns
    -------
    Destination
        With the addresses to connect to; every one of them passed the checks.

    Raises
    ------
    UnresolvableDestinationError
        When the host does not resolve (the resolver raised ``OSError`` or returned nothing).
    UnsafeDestinationError
        With one message per refusal (scheme, userinfo, fragment, length, host, address).
    """
    if not isinstance(url, str) or not url:
        raise UnsafeDestinationError("url is required")
    if len(url) > MAX_URL_LENGTH:
        raise UnsafeDestinationError(f"url must be at most {MAX_URL_LENGTH} characters")
    if _CONTROL_OR_SPACE.search(url):
        raise UnsafeDestinationError("url must not contain whitespace or control characters")
    if "#" in url:
        raise UnsafeDestinationError("url must not contain a fragment")
    if "\\" in url:
        raise UnsafeDestinationError("url must not contain a backslash")
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise UnsafeDestinationError("url is malformed") from exc
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise UnsafeDestinationError("url scheme must be https")
    if not parts.netloc:
        raise UnsafeDestinationError("url must name a host")
    if "@" in parts.netloc:
        raise UnsafeDestinationError("url must not contain userinfo (user:password@)")
    try:
        explicit_port = parts.port
    except ValueError as exc:
        raise UnsafeDestinationError("url port must be a number from 1 to 65535") from exc
    if explicit_port == 0:
        raise UnsafeDestinationError("url port must be a number from 1 to 65535")
    if parts.netloc.endswith(":"):
        raise UnsafeDestinationError("url port must be a number from 1 to 65535")
    host = _ascii_host(parts.hostname or "")
    port = explicit_port if explicit_port is not None else _DEFAULT_PORTS[scheme]
    if port in refused_ports:
        raise UnsafeDestinationError(f"url port {port} is refused on this deployment")
    allowed = origin_allowed(scheme, host, port, allowed_origins)
    if scheme != "https" and not allowed:
        raise UnsafeDestinationError("url scheme must be https")
    if not allowed and port != _DEFAULT_PORTS[scheme] and port not in allowed_ports:
        raise UnsafeDestinationError(
            f"url port must be {_DEFAULT_PORTS[scheme]} (the operator may allow more ports)"
        )

    literal = _ip_literal(host)
    if literal is not None:
        addresses: tuple[str, ...] = (str(literal),)
    else:
        try:
            answer = resolver(host)
        except OSError as exc:
            raise UnresolvableDestinationError(f"url host {host} does not resolve") from exc
        addresses = tuple(dict.fromkeys(str(a) for a in answer))
        if not addresses:
            raise UnresolvableDestinationError(f"url host {host} does not resolve")
    if not allowed:
        for address in addresses:
            try:
                reason = non_global_reason(address)
            except ValueError as exc:
                raise UnresolvableDestinationError(
                    f"url host {host} resolved to a non-address"
                ) from exc
            if reason is not None:
                where = (
                    f"url address {host} is"
                    if literal
                    else f"url host {host} resolves to {address},"
                )
                raise UnsafeDestinationError(
                    f"{where} {reason}; webhooks may only call public addresses"
                )
    target = parts.path or "/"
    if parts.query:
        target = f"{target}?{parts.query}"
    return Destination(
        url=url,
        scheme=scheme,
        host=host,
        port=port,
        target=target,
        addresses=addresses,
    )


def system_resolver(host: str) -> list[str]:
    """Resolve ``host`` with ``socket.getaddrinfo`` (TCP), unique addresses in answer order.

    Raises
    ------
    OSError
        ``socket.gaierror`` when the name does not resolve.
    """
    infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))
