"""The special-purpose IP addresses the URL policy refuses (``url_policy.py``): the pinned
rows of IANA's IPv4 and IPv6 Special-Purpose Address Registries, and why an address is not
globally reachable (decision "The URL policy's own table of special-purpose addresses")."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

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
