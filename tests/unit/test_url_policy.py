"""The webhook URL policy (issue 2): https only, public addresses only, allowed origins."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence

import pytest

from scheduled_posts.platforms.special_addresses import (
    SPECIAL_RANGES,
    non_global_reason,
    special_range,
)
from scheduled_posts.platforms.url_policy import (
    MAX_URL_LENGTH,
    Destination,
    UnresolvableDestinationError,
    UnsafeDestinationError,
    check_destination,
    origin_allowed,
)

PUBLIC_V4 = "93.184.216.34"
PUBLIC_V6 = "2606:2800:220:1:248:1893:25c8:1946"


class FakeResolver:
    """A dict of host -> addresses that records every lookup; unknown names do not resolve."""

    def __init__(self, answers: dict[str, Sequence[str]]) -> None:
        self.answers = answers
        self.calls: list[str] = []

    def __call__(self, host: str) -> Sequence[str]:
        self.calls.append(host)
        if host not in self.answers:
            raise OSError(f"{host}: name does not resolve")
        return self.answers[host]


def check(url: str, answers: dict[str, Sequence[str]] | None = None, allowed: Sequence[str] = ()):
    return check_destination(
        url,
        allowed_origins=allowed,
        resolver=FakeResolver(
            answers if answers is not None else {"hooks.example.com": [PUBLIC_V4]}
        ),
    )


def test_check_destination_public_https_url_returns_destination() -> None:
    destination = check("https://Hooks.Example.com/in/post?x=1")

    assert destination == Destination(
        url="https://Hooks.Example.com/in/post?x=1",
        scheme="https",
        host="hooks.example.com",
        port=443,
        target="/in/post?x=1",
        addresses=(PUBLIC_V4,),
    )


def test_check_destination_empty_path_targets_root() -> None:
    assert check("https://hooks.example.com").target == "/"


def test_check_destination_explicit_port_kept_in_host_header() -> None:
    destination = check_destination(
        "https://hooks.example.com:8443/x",
        allowed_origins=(),
        resolver=FakeResolver({"hooks.example.com": [PUBLIC_V4]}),
        allowed_ports=(8443,),
    )

    assert (destination.port, destination.host_header) == (8443, "hooks.example.com:8443")


def test_check_destination_default_port_omitted_from_host_header() -> None:
    assert check("https://hooks.example.com:443/x").host_header == "hooks.example.com"


def test_check_destination_public_ipv6_literal_accepted_without_lookup() -> None:
    resolver = FakeResolver({})

    destination = check_destination(
        f"https://[{PUBLIC_V6}]/hook", allowed_origins=(), resolver=resolver
    )

    assert (destination.addresses, destination.host_header, resolver.calls) == (
        (PUBLIC_V6,),
        f"[{PUBLIC_V6}]",
        [],
    )


def test_check_destination_http_refused() -> None:
    with pytest.raises(UnsafeDestinationError, match="https"):
        check("http://hooks.example.com/")


@pytest.mark.parametrize(
    "url", ["ftp://hooks.example.com/", "file:///etc/passwd", "hooks.example.com"]
)
def test_check_destination_other_scheme_refused(url: str) -> None:
    with pytest.raises(UnsafeDestinationError, match="https"):
        check(url)


@pytest.mark.parametrize(
    "address",
    [
        "10.1.2.3",  # private (RFC 1918)
        "172.16.0.1",  # private
        "192.168.1.1",  # private
        "127.0.0.1",  # loopback
        "169.254.169.254",  # link-local (instance metadata)
        "100.64.0.1",  # shared address space, CGNAT (RFC 6598)
        "0.0.0.0",  # unspecified
        "224.0.0.1",  # multicast
        "240.0.0.1",  # reserved
        "255.255.255.255",  # broadcast
        "192.0.2.10",  # documentation
        "::1",  # IPv6 loopback
        "::",  # IPv6 unspecified
        "fe80::1",  # IPv6 link-local
        "fd12:3456::1",  # IPv6 unique local (ULA)
        "ff02::1",  # IPv6 multicast
        "::ffff:10.0.0.1",  # IPv4-mapped private
        "::ffff:127.0.0.1",  # IPv4-mapped loopback
        "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
        "2002:c0a8:0101::1",  # 6to4 of 192.168.1.1
        "2001:db8::1",  # IPv6 documentation
    ],
)
def test_check_destination_name_resolving_to_non_public_address_refused(address: str) -> None:
    with pytest.raises(UnsafeDestinationError, match="public addresses"):
        check("https://hooks.example.com/", {"hooks.example.com": [address]})


@pytest.mark.parametrize(
    "host",
    ["10.0.0.1", "127.0.0.1", "169.254.169.254", "[::1]", "[fd00::1]", "[::ffff:192.168.0.1]"],
)
def test_check_destination_non_public_ip_literal_refused(host: str) -> None:
    with pytest.raises(UnsafeDestinationError, match="public addresses"):
        check(f"https://{host}/hook", {})


def test_check_destination_one_private_address_among_public_refused() -> None:
    with pytest.raises(UnsafeDestinationError, match=r"10\.0\.0\.9"):
        check("https://hooks.example.com/", {"hooks.example.com": [PUBLIC_V4, "10.0.0.9"]})


@pytest.mark.parametrize("host", ["127.1", "0x7f000001", "2130706433", "0177.0.0.1"])
def test_check_destination_ambiguous_numeric_host_refused(host: str) -> None:
    with pytest.raises(UnsafeDestinationError, match="numeric"):
        check(f"https://{host}/", {host: [PUBLIC_V4]})


def test_check_destination_ipv6_zone_id_refused() -> None:
    with pytest.raises(UnsafeDestinationError, match="zone id"):
        check("https://[fe80::1%25eth0]/", {})


def test_check_destination_userinfo_refused() -> None:
    with pytest.raises(UnsafeDestinationError, match="userinfo"):
        check("https://user:pw@hooks.example.com/")


def test_check_destination_userinfo_disguising_host_refused() -> None:
    with pytest.raises(UnsafeDestinationError, match="userinfo"):
        check("https://hooks.example.com@10.0.0.1/")


@pytest.mark.parametrize("url", ["https://hooks.example.com/#frag", "https://hooks.example.com/#"])
def test_check_destination_fragment_refused(url: str) -> None:
    with pytest.raises(UnsafeDestinationError, match="fragment"):
        check(url)


@pytest.mark.parametrize("url", ["https:///path", "https://:443/", "https://"])
def test_check_destination_missing_host_refused(url: str) -> None:
    with pytest.raises(UnsafeDestinationError, match="host"):
        check(url)


def test_check_destination_url_at_length_limit_accepted() -> None:
    base = "https://hooks.example.com/"
    url = base + "a" * (MAX_URL_LENGTH - len(base))

    assert check(url).url == url


def test_check_destination_url_over_length_limit_refused() -> None:
    base = "https://hooks.example.com/"
    with pytest.raises(UnsafeDestinationError, match="2048"):
        check(base + "a" * (MAX_URL_LENGTH - len(base) + 1))


@pytest.mark.parametrize("url", ["https://hooks.example.com/a b", "https://hooks.example.com/\n"])
def test_check_destination_whitespace_refused(url: str) -> None:
    with pytest.raises(UnsafeDestinationError, match="whitespace"):
        check(url)


@pytest.mark.parametrize("port", ["0", "65536", "x"])
def test_check_destination_invalid_port_refused(port: str) -> None:
    with pytest.raises(UnsafeDestinationError, match="port"):
        check(f"https://hooks.example.com:{port}/")


def test_check_destination_unresolvable_host_raises_unresolvable() -> None:
    with pytest.raises(UnresolvableDestinationError, match="does not resolve"):
        check("https://nowhere.example/", {})


def test_check_destination_empty_answer_raises_unresolvable() -> None:
    with pytest.raises(UnresolvableDestinationError):
        check("https://hooks.example.com/", {"hooks.example.com": []})


def test_check_destination_international_name_resolved_as_punycode() -> None:
    resolver = FakeResolver({"xn--bcher-kva.example": [PUBLIC_V4]})

    check_destination("https://bücher.example/", allowed_origins=(), resolver=resolver)

    assert resolver.calls == ["xn--bcher-kva.example"]


def test_check_destination_allowed_origin_permits_http_loopback() -> None:
    destination = check("http://127.0.0.1:8123/hook", {}, allowed=["http://127.0.0.1"])

    assert (destination.scheme, destination.addresses, destination.port) == (
        "http",
        ("127.0.0.1",),
        8123,
    )


def test_check_destination_allowed_origin_permits_private_name() -> None:
    destination = check(
        "https://internal.test/hook",
        {"internal.test": ["10.0.0.5"]},
        allowed=["https://internal.test"],
    )

    assert destination.addresses == ("10.0.0.5",)


def test_check_destination_allowed_origin_with_port_refuses_other_port() -> None:
    with pytest.raises(UnsafeDestinationError, match="https"):
        check("http://127.0.0.1:9000/", {}, allowed=["http://127.0.0.1:8123"])


def test_check_destination_allowed_origin_other_scheme_not_allowed() -> None:
    with pytest.raises(UnsafeDestinationError, match="public addresses"):
        check("https://127.0.0.1/", {}, allowed=["http://127.0.0.1"])


def test_check_destination_allowed_origin_other_host_not_allowed() -> None:
    with pytest.raises(UnsafeDestinationError, match="https"):
        check("http://localhost:8123/", {"localhost": ["127.0.0.1"]}, allowed=["http://127.0.0.1"])


def test_origin_allowed_default_port_matches_entry_with_that_port() -> None:
    assert origin_allowed("http", "127.0.0.1", 80, ["http://127.0.0.1:80"])


def test_origin_allowed_ipv6_compares_by_value() -> None:
    assert origin_allowed("http", "::1", 8080, ["http://[0:0::1]"])


def test_origin_allowed_malformed_entry_matches_nothing() -> None:
    assert not origin_allowed("http", "127.0.0.1", 80, ["127.0.0.1", "http://[::1", ""])


# -- issue 17: ports -------------------------------------------------------------------------


@pytest.mark.parametrize("port", [22, 25, 80, 6379, 8080, 8443, 65535])
def test_check_destination_public_url_unusual_port_refused(port: int) -> None:
    with pytest.raises(UnsafeDestinationError, match="url port must be 443"):
        check(f"https://hooks.example.com:{port}/x")


def test_check_destination_operator_allowed_port_accepted() -> None:
    destination = check_destination(
        "https://hooks.example.com:9443/x",
        allowed_origins=(),
        resolver=FakeResolver({"hooks.example.com": [PUBLIC_V4]}),
        allowed_ports=(9443,),
    )

    assert destination.port == 9443


def test_check_destination_allowed_origin_any_port_accepted() -> None:
    destination = check("http://127.0.0.1:9000/hook", allowed=("http://127.0.0.1",))

    assert destination.port == 9000


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080/v1/channels", "http://127.0.0.1:4566/"])
def test_check_destination_refused_port_refused_even_for_allowed_origin(url: str) -> None:
    with pytest.raises(UnsafeDestinationError, match="is refused on this deployment"):
        check_destination(
            url,
            allowed_origins=("http://127.0.0.1",),
            resolver=FakeResolver({}),
            refused_ports=(8080, 4566),
        )


def test_settings_allowed_origins_join_outbound_and_the_old_webhook_name() -> None:
    from scheduled_posts.settings import Settings

    settings = Settings(
        OUTBOUND_ALLOWED_ORIGINS="http://127.0.0.1, http://localhost:8",
        WEBHOOK_ALLOWED_ORIGINS="http://127.0.0.1,http://old.example",
    )
    assert settings.allowed_origins == (
        "http://127.0.0.1",
        "http://localhost:8",
        "http://old.example",
    )


# -- the pinned special-purpose table ----------------------------------------------------------

# The IANA IPv4 and IPv6 Special-Purpose Address Registries' "Globally Reachable" column, as of
# 2025-10-09 (None: N/A), plus the address-space registries' multicast and site-local blocks,
# written out here by hand so a changed row in the module fails this list.
REGISTRY: dict[str, bool | None] = {
    "0.0.0.0/8": False,
    "0.0.0.0/32": False,
    "10.0.0.0/8": False,
    "100.64.0.0/10": False,
    "127.0.0.0/8": False,
    "169.254.0.0/16": False,
    "172.16.0.0/12": False,
    "192.0.0.0/24": False,
    "192.0.0.0/29": False,
    "192.0.0.8/32": False,
    "192.0.0.9/32": True,
    "192.0.0.10/32": True,
    "192.0.0.170/31": False,
    "192.0.2.0/24": False,
    "192.31.196.0/24": True,
    "192.52.193.0/24": True,
    "192.88.99.0/24": None,
    "192.88.99.2/32": False,
    "192.168.0.0/16": False,
    "192.175.48.0/24": True,
    "198.18.0.0/15": False,
    "198.51.100.0/24": False,
    "203.0.113.0/24": False,
    "224.0.0.0/4": False,
    "240.0.0.0/4": False,
    "255.255.255.255/32": False,
    "::1/128": False,
    "::/128": False,
    "::ffff:0:0/96": False,
    "64:ff9b::/96": True,
    "64:ff9b:1::/48": False,
    "100::/64": False,
    "100:0:0:1::/64": False,
    "2001::/23": False,
    "2001::/32": None,
    "2001:1::1/128": True,
    "2001:1::2/128": True,
    "2001:1::3/128": True,
    "2001:2::/48": False,
    "2001:3::/32": True,
    "2001:4:112::/48": True,
    "2001:10::/28": None,
    "2001:20::/28": True,
    "2001:30::/28": True,
    "2001:db8::/32": False,
    "2002::/16": None,
    "2620:4f:8000::/48": True,
    "3fff::/20": False,
    "5f00::/16": False,
    "fc00::/7": False,
    "fe80::/10": False,
    "fec0::/10": False,
    "ff00::/8": False,
}


def _edges(block: str) -> list[str]:
    """The first, a middle and the last address of ``block``."""
    network = ipaddress.ip_network(block)
    middle = network.network_address + network.num_addresses // 2
    return [str(network.network_address), str(middle), str(network.broadcast_address)]


def test_special_ranges_are_the_registry_rows() -> None:
    pinned = {str(r.network): r.globally_reachable for r in SPECIAL_RANGES}

    assert pinned == REGISTRY


@pytest.mark.parametrize("block", sorted(REGISTRY))
def test_special_range_edges_belong_to_their_row(block: str) -> None:
    # Embedding blocks (6to4, Teredo, NAT64, mapped) may also be refused for what they embed;
    # the row is what must hold every address of the block, up to more specific rows.
    for address in _edges(block):
        row = special_range(address)
        assert row is not None
        assert row.network.subnet_of(ipaddress.ip_network(block))  # type: ignore[arg-type]


@pytest.mark.parametrize("block", sorted(b for b, g in REGISTRY.items() if g is not True))
def test_check_destination_address_in_non_global_block_refused(block: str) -> None:
    for address in _edges(block):
        row = special_range(address)
        if row is not None and row.globally_reachable:  # a more specific global row inside
            continue
        with pytest.raises(UnsafeDestinationError, match="public addresses"):
            check("https://hooks.example.com/", {"hooks.example.com": [address]})


@pytest.mark.parametrize(
    "address",
    [
        "192.0.0.9",  # PCP anycast, inside 192.0.0.0/24
        "192.0.0.10",  # TURN anycast
        "192.31.196.1",  # AS112-v4
        "192.52.193.255",  # AMT
        "192.175.48.0",  # direct-delegation AS112
        "64:ff9b::5db8:d822",  # NAT64 of 93.184.216.34
        "2001:1::1",  # PCP anycast, inside 2001::/23
        "2001:1::2",
        "2001:1::3",
        "2001:3::1",  # AMT
        "2001:3:ffff:ffff:ffff:ffff:ffff:ffff",
        "2001:4:112::1",  # AS112-v6
        "2001:20::1",  # ORCHIDv2
        "2001:3f:ffff:ffff:ffff:ffff:ffff:ffff",  # the last of DETs 2001:30::/28
        "2620:4f:8000::6",  # direct-delegation AS112
        "3fff:1000::1",  # just past 3fff::/20
        "3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff",  # just before it
        "2000::1",  # first of global unicast
        "3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",  # last of global unicast
        "192.0.1.255",  # between 192.0.0.0/24 and 192.0.2.0/24
        "100.128.0.0",  # just past 100.64.0.0/10
        "172.32.0.0",  # just past 172.16.0.0/12
        "198.20.0.0",  # just past 198.18.0.0/15
        "223.255.255.255",  # just before multicast
    ],
)
def test_check_destination_globally_reachable_address_accepted(address: str) -> None:
    assert check("https://hooks.example.com/", {"hooks.example.com": [address]}).addresses == (
        address,
    )


@pytest.mark.parametrize(
    ("address", "named"),
    [
        ("fec0::1", "fec0::/10"),  # deprecated site-local (RFC 3879)
        ("feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "fec0::/10"),
        ("3fff::1", "3fff::/20"),  # documentation (RFC 9637)
        ("3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", "3fff::/20"),
        ("2001:1::4", "2001::/23"),  # not one of the three anycast addresses
        ("2001:2::1", "2001:2::/48"),
        ("2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", "2001::/23"),
        ("2002:5db8:d822::1", "2002::/16"),  # 6to4 of a public address: N/A, refused
        ("192.88.99.1", "192.88.99.0/24"),  # deprecated 6to4 relay anycast: N/A, refused
        ("5f00::1", "5f00::/16"),
        ("4000::1", "2000::/3"),  # outside global unicast
        ("1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2000::/3"),
        ("::ffff:93.184.216.34", "::ffff:0:0/96"),  # mapped: not reachable whatever it maps
    ],
)
def test_check_destination_address_refusal_names_its_block(address: str, named: str) -> None:
    with pytest.raises(UnsafeDestinationError, match=re.escape(named)):
        check("https://hooks.example.com/", {"hooks.example.com": [address]})


def test_non_global_reason_never_reads_ipaddress_classification(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # ipaddress's is_global/is_private changed between Python patch releases (2001:1::1 ...):
    # the policy's verdicts must come from the pinned table alone.
    def refuse(_self: object) -> bool:
        raise AssertionError("ipaddress classification read")

    for cls in (ipaddress.IPv4Address, ipaddress.IPv6Address):
        for name in (
            "is_global",
            "is_private",
            "is_reserved",
            "is_loopback",
            "is_link_local",
            "is_multicast",
            "is_unspecified",
            "is_site_local",
        ):
            if hasattr(cls, name):
                monkeypatch.setattr(cls, name, property(refuse))

    verdicts = [non_global_reason(a) is None for a in ("2001:1::1", "10.0.0.1", "fec0::1", "::")]

    assert verdicts == [True, False, False, False]
