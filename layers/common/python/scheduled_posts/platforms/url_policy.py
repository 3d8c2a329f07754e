"""Which webhook URLs the service may call: the server-side request forgery (SSRF) policy.

A channel URL is checked twice with :func:`check_destination`: when the channel is created
(the API answers 422 on a refusal) and again at every send (the webhook adapter connects only
to the addresses checked then, so a DNS answer that changes between the check and the connect,
"DNS rebinding", cannot reach a private address).

Rules (decision "Webhook URL policy"):

- ``https`` only, and every resolved address must be globally reachable by our pinned
  ``SPECIAL_RANGES`` (``special_addresses.py``: IANA's special-purpose registries; an IPv6
  address also in ``2000::/3``), never :mod:`ipaddress`'s ``is_global``, which changed between
  Python patch releases (decision "The URL policy's own table of special-purpose addresses").
- Origins listed in ``OUTBOUND_ALLOWED_ORIGINS`` (formerly ``WEBHOOK_ALLOWED_ORIGINS``, still
  read; ``scheme://host[:port]``; an entry without a
  port matches any port) may use ``http`` and may resolve to private addresses: the local
  stack lists ``http://127.0.0.1`` so loopback receivers work.
- Ports (decision "Outbound ports and attempt error words"): a URL that is not an allowed origin may
use only the scheme's usual port
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
from urllib.parse import SplitResult, urlsplit

from scheduled_posts.platforms.special_addresses import non_global_reason

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


def check_destination(
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
    parts, explicit_port = _split(url)
    scheme = parts.scheme.lower()
    host = _ascii_host(parts.hostname or "")
    port = explicit_port if explicit_port is not None else _DEFAULT_PORTS[scheme]
    allowed = _check_reach(
        scheme, host, port, origins=allowed_origins, ports=allowed_ports, refused=refused_ports
    )
    literal = _ip_literal(host)
    addresses = (str(literal),) if literal is not None else _resolve(host, resolver)
    if not allowed:
        _refuse_non_global(host, addresses, literal=literal is not None)
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


def _split(url: str) -> tuple[SplitResult, int | None]:
    """``url`` split, and its explicit port (``None`` without one), after the checks of its
    text, scheme, host presence, userinfo and port number. Raises
    :class:`UnsafeDestinationError`."""
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
    if parts.scheme.lower() not in _DEFAULT_PORTS:
        raise UnsafeDestinationError("url scheme must be https")
    if not parts.netloc:
        raise UnsafeDestinationError("url must name a host")
    if "@" in parts.netloc:
        raise UnsafeDestinationError("url must not contain userinfo (user:password@)")
    try:
        explicit_port = parts.port
    except ValueError as exc:
        raise UnsafeDestinationError("url port must be a number from 1 to 65535") from exc
    if explicit_port == 0 or parts.netloc.endswith(":"):
        raise UnsafeDestinationError("url port must be a number from 1 to 65535")
    return parts, explicit_port


def _check_reach(
    scheme: str,
    host: str,
    port: int,
    *,
    origins: Sequence[str],
    ports: Sequence[int],
    refused: Sequence[int],
) -> bool:
    """Whether ``scheme://host:port`` is an allowed origin, after refusing a refused port, a
    scheme other than https outside the allowed origins, and there a port other than the
    scheme's default or an allowed one. Raises :class:`UnsafeDestinationError`."""
    if port in refused:
        raise UnsafeDestinationError(f"url port {port} is refused on this deployment")
    allowed = origin_allowed(scheme, host, port, origins)
    if scheme != "https" and not allowed:
        raise UnsafeDestinationError("url scheme must be https")
    if not allowed and port != _DEFAULT_PORTS[scheme] and port not in ports:
        raise UnsafeDestinationError(
            f"url port must be {_DEFAULT_PORTS[scheme]} (the operator may allow more ports)"
        )
    return allowed


def _resolve(host: str, resolver: Resolver) -> tuple[str, ...]:
    """The addresses ``host`` resolves to (once each, in the resolver's order). Raises
    :class:`UnresolvableDestinationError` when the resolver raises ``OSError`` or returns
    nothing."""
    try:
        answer = resolver(host)
    except OSError as exc:
        raise UnresolvableDestinationError(f"url host {host} does not resolve") from exc
    addresses = tuple(dict.fromkeys(str(a) for a in answer))
    if not addresses:
        raise UnresolvableDestinationError(f"url host {host} does not resolve")
    return addresses


def _refuse_non_global(host: str, addresses: tuple[str, ...], *, literal: bool) -> None:
    """Raise :class:`UnsafeDestinationError` for the first of ``addresses`` that is not a
    public address (``literal``: the host is that address), and
    :class:`UnresolvableDestinationError` for one that is no address at all."""
    for address in addresses:
        try:
            reason = non_global_reason(address)
        except ValueError as exc:
            raise UnresolvableDestinationError(
                f"url host {host} resolved to a non-address"
            ) from exc
        if reason is not None:
            where = (
                f"url address {host} is" if literal else f"url host {host} resolves to {address},"
            )
            raise UnsafeDestinationError(
                f"{where} {reason}; the service calls public addresses only"
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
