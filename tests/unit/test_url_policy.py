"""The webhook URL policy (issue 2): https only, public addresses only, allowed origins."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

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
