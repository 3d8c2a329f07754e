"""The webhook adapter: against the in-process fake receiver and a real loopback receiver."""

from __future__ import annotations

import json
import socket
import ssl
import threading
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import pytest

from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.models.post import Channel
from scheduled_posts.platforms.base import DeliveryRequest
from scheduled_posts.platforms.registry import (
    UnknownPlatformError,
    get_adapter,
    platform_names,
)
from scheduled_posts.platforms.signing import sign, signature_headers, verify
from scheduled_posts.platforms.transport import (
    MAX_RESPONSE_BYTES,
    TransportError,
    Urllib3Transport,
    outcome_for_status,
)
from scheduled_posts.platforms.url_policy import Destination, check_destination
from scheduled_posts.platforms.webhook import USER_AGENT, WebhookAdapter, parse_retry_after
from scheduled_posts.settings import Settings
from tests.support.http_receiver import HttpReceiver
from tests.support.receiver import PUBLIC_ADDRESS, Answer, FakeReceiver

NOW = datetime(2026, 11, 29, 13, 0, 0, tzinfo=UTC)
URL = "https://hooks.example.com/in"
KEY = "sch_1:ch_1"


class FixedNow:
    def __init__(self, now: datetime) -> None:
        self.instant = now

    def now(self) -> datetime:
        return self.instant


def make_channel(url: str = URL, **extra: object) -> Channel:
    return Channel(
        channel_id="ch_1",
        owner="alice",
        platform="webhook",
        name="hooks",
        url=url,
        signing_secret="new-secret",
        created_at=NOW - timedelta(days=1),
        **extra,  # type: ignore[arg-type]
    )


def make_request(attempt: int = 1) -> DeliveryRequest:
    return DeliveryRequest(
        schedule_id="sch_1",
        channel_id="ch_1",
        content="hello, world ✓",
        media_ids=("m1", "m2"),
        publish_at=NOW,
        attempt=attempt,
        idempotency_key=KEY,
    )


@pytest.fixture
def receiver() -> FakeReceiver:
    fake = FakeReceiver(FixedNow(NOW))
    fake.add_secret(URL, "new-secret")
    return fake


@pytest.fixture
def adapter(receiver: FakeReceiver) -> WebhookAdapter:
    return WebhookAdapter(Settings(), transport=receiver, resolver=receiver.resolver)


def deliver(adapter: WebhookAdapter, channel: Channel | None = None, now: datetime = NOW):
    return adapter.deliver(channel or make_channel(), make_request(), now=now)


# -- 2xx ------------------------------------------------------------------------------------


def test_deliver_2xx_with_json_id_published_with_remote_id(
    adapter: WebhookAdapter, receiver: FakeReceiver
) -> None:
    receiver.script(Answer.ok("post-42", status=201))

    result = deliver(adapter)

    assert (result.outcome, result.http_status, result.remote_id) == ("published", 201, "post-42")


def test_deliver_2xx_without_json_published_without_remote_id(
    adapter: WebhookAdapter, receiver: FakeReceiver
) -> None:
    receiver.script(Answer.raw(200, b"OK thanks", {"Content-Type": "text/plain"}))

    result = deliver(adapter)

    assert (result.outcome, result.remote_id) == ("published", None)


def test_deliver_2xx_json_without_id_published_without_remote_id(
    adapter: WebhookAdapter, receiver: FakeReceiver
) -> None:
    receiver.script(Answer.raw(204, b'["not", "an object"]'))

    assert deliver(adapter).remote_id is None


def test_deliver_body_is_the_contract_json(adapter: WebhookAdapter, receiver: FakeReceiver) -> None:
    deliver(adapter)

    assert receiver.requests[0].payload == {
        "schedule_id": "sch_1",
        "channel_id": "ch_1",
        "content": "hello, world ✓",
        "media_ids": ["m1", "m2"],
        "publish_at": "2026-11-29T13:00:00.000Z",
        "attempt": 1,
        "idempotency_key": KEY,
    }


def test_deliver_headers_carry_contract_values(
    adapter: WebhookAdapter, receiver: FakeReceiver
) -> None:
    deliver(adapter)

    headers = receiver.requests[0].headers
    assert {k: headers[k] for k in ("Content-Type", "Idempotency-Key", "User-Agent", "Host")} == {
        "Content-Type": "application/json",
        "Idempotency-Key": KEY,
        "User-Agent": USER_AGENT,
        "Host": "hooks.example.com",
    }


def test_deliver_signature_verifies_with_channel_secret(
    adapter: WebhookAdapter, receiver: FakeReceiver
) -> None:
    deliver(adapter)

    assert receiver.requests[0].signature_valid is True


def test_deliver_signature_t_is_send_time(adapter: WebhookAdapter, receiver: FakeReceiver) -> None:
    deliver(adapter, now=NOW + timedelta(seconds=90))

    assert (receiver.requests[0].signature or "").startswith(f"t={int(NOW.timestamp()) + 90},")


def test_deliver_retry_keeps_idempotency_key(
    adapter: WebhookAdapter, receiver: FakeReceiver
) -> None:
    adapter.deliver(make_channel(), make_request(attempt=1), now=NOW)
    adapter.deliver(make_channel(), make_request(attempt=2), now=NOW)

    assert [r.idempotency_key for r in receiver.requests_for(KEY)] == [KEY, KEY]


def test_deliver_webhook_id_is_the_idempotency_key_on_every_retry(
    adapter: WebhookAdapter, receiver: FakeReceiver
) -> None:
    adapter.deliver(make_channel(), make_request(attempt=1), now=NOW)
    adapter.deliver(make_channel(), make_request(attempt=2), now=NOW + timedelta(seconds=30))

    sent = receiver.requests_for(KEY)
    assert [r.webhook_id for r in sent] == [KEY, KEY]
    assert [r.headers["webhook-timestamp"] for r in sent] == [
        str(int(NOW.timestamp())),
        str(int(NOW.timestamp()) + 30),
    ]
    assert all(r.signature_valid for r in sent)


@pytest.mark.parametrize("dropped", ["webhook-signature", "X-Signature"])
def test_receiver_ledger_requires_both_signature_schemes(
    receiver: FakeReceiver, dropped: str
) -> None:
    body = b'{"idempotency_key":"sch_1:ch_1"}'
    headers = signature_headers(["new-secret"], KEY, int(NOW.timestamp()), body)

    whole, _ = receiver.handle(URL, PUBLIC_ADDRESS, headers, body)
    partial, _ = receiver.handle(
        URL, PUBLIC_ADDRESS, {k: v for k, v in headers.items() if k != dropped}, body
    )

    assert (whole.signature_valid, partial.signature_valid) == (True, False)


def test_receiver_ledger_refuses_a_standard_signature_of_another_id(
    receiver: FakeReceiver,
) -> None:
    body = b"{}"
    headers = signature_headers(["new-secret"], KEY, int(NOW.timestamp()), body)

    record, _ = receiver.handle(URL, PUBLIC_ADDRESS, {**headers, "webhook-id": "other"}, body)

    assert record.signature_valid is False


# -- secret rotation overlap ----------------------------------------------------------------


def rotated_channel() -> Channel:
    return make_channel(
        previous_signing_secret="old-secret",
        previous_secret_expires_at=NOW + timedelta(hours=1),
    )


def test_deliver_during_overlap_verifies_with_either_secret(receiver: FakeReceiver) -> None:
    receiver.add_secret(URL, "old-secret")
    adapter = WebhookAdapter(Settings(), transport=receiver, resolver=receiver.resolver)

    deliver(adapter, rotated_channel())

    assert receiver.requests[0].verified_with == ("new-secret", "old-secret")


def test_deliver_during_overlap_sends_new_signature_first(
    adapter: WebhookAdapter, receiver: FakeReceiver
) -> None:
    deliver(adapter, rotated_channel())

    request = receiver.requests[0]
    t = int(NOW.timestamp())
    new = sign(["new-secret"], t, request.body).split(",")[1]
    old = sign(["old-secret"], t, request.body).split(",")[1]
    assert request.signature == f"t={t},{new},{old}"


def test_deliver_after_overlap_signs_with_new_secret_only() -> None:
    old_only = FakeReceiver(FixedNow(NOW + timedelta(hours=2)))
    old_only.add_secret(URL, "old-secret")
    adapter = WebhookAdapter(Settings(), transport=old_only, resolver=old_only.resolver)

    deliver(adapter, rotated_channel(), now=NOW + timedelta(hours=2))

    request = old_only.requests[0]
    assert (request.signature_valid, (request.signature or "").count("v1=")) == (False, 1)


# -- retryable and permanent failures -------------------------------------------------------


def test_deliver_429_delta_seconds_raises_rate_limited(
    adapter: WebhookAdapter, receiver: FakeReceiver
) -> None:
    receiver.script(Answer.rate_limited("5"))

    with pytest.raises(RetryableDeliveryError) as caught:
        deliver(adapter)

    assert (
        caught.value.rate_limited,
        caught.value.retry_after_seconds,
        caught.value.http_status,
    ) == (
        True,
        5.0,
        429,
    )


def test_deliver_429_http_date_raises_with_seconds_until_date(
    adapter: WebhookAdapter, receiver: FakeReceiver
) -> None:
    receiver.script(Answer.rate_limited(format_datetime(NOW + timedelta(seconds=120), usegmt=True)))

    with pytest.raises(RetryableDeliveryError) as caught:
        deliver(adapter)

    assert caught.value.retry_after_seconds == 120.0


def test_deliver_429_without_retry_after_raises_without_delay(
    adapter: WebhookAdapter, receiver: FakeReceiver
) -> None:
    receiver.script(Answer.rate_limited(None))

    with pytest.raises(RetryableDeliveryError) as caught:
        deliver(adapter)

    assert (caught.value.rate_limited, caught.value.retry_after_seconds) == (True, None)


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_deliver_5xx_raises_retryable_not_rate_limited(
    adapter: WebhookAdapter, receiver: FakeReceiver, status: int
) -> None:
    receiver.script(Answer.error(status))

    with pytest.raises(RetryableDeliveryError) as caught:
        deliver(adapter)

    assert (caught.value.http_status, caught.value.rate_limited) == (status, False)


def test_deliver_timeout_raises_retryable(adapter: WebhookAdapter, receiver: FakeReceiver) -> None:
    receiver.script(Answer.timeout())

    with pytest.raises(RetryableDeliveryError, match="timed out"):
        deliver(adapter)


def test_deliver_connection_error_raises_retryable(
    adapter: WebhookAdapter, receiver: FakeReceiver
) -> None:
    receiver.script(Answer.connect_error())

    with pytest.raises(RetryableDeliveryError, match="connection"):
        deliver(adapter)


def test_deliver_accepted_then_lost_response_raises_retryable_and_counts_accepted(
    adapter: WebhookAdapter, receiver: FakeReceiver
) -> None:
    receiver.script(Answer.accept_then_timeout())

    with pytest.raises(RetryableDeliveryError):
        deliver(adapter)

    assert receiver.accepted(KEY) == 1


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410, 422])
def test_deliver_permanent_4xx_failed_after_one_request(
    adapter: WebhookAdapter, receiver: FakeReceiver, status: int
) -> None:
    receiver.script(Answer.reject(status))

    result = deliver(adapter)

    assert (result.outcome, result.http_status, receiver.count()) == ("failed", status, 1)


def test_deliver_4xx_error_includes_body_excerpt(
    adapter: WebhookAdapter, receiver: FakeReceiver
) -> None:
    receiver.script(Answer.raw(400, b"bad   payload\n" + b"x" * 1000))

    error = deliver(adapter).error or ""

    assert error.startswith("http_400: bad payload") and len(error) < 260


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_deliver_redirect_failed_and_not_followed(
    adapter: WebhookAdapter, receiver: FakeReceiver, status: int
) -> None:
    receiver.script(Answer.redirect("https://hooks.example.com/elsewhere", status))

    result = deliver(adapter)

    assert (result.outcome, receiver.count()) == ("failed", 1)


# -- send-time destination checks -----------------------------------------------------------


class SequenceResolver:
    """Answers each lookup of a host with the next answer in ``answers`` (the last one repeats)."""

    def __init__(self, *answers: Sequence[str]) -> None:
        self.answers = list(answers)
        self.calls = 0

    def __call__(self, host: str) -> Sequence[str]:
        answer = self.answers[min(self.calls, len(self.answers) - 1)]
        self.calls += 1
        return answer


def test_deliver_dns_rebinding_to_private_address_refused_at_send(receiver: FakeReceiver) -> None:
    resolver = SequenceResolver([PUBLIC_ADDRESS], ["169.254.169.254"])
    check_destination(URL, allowed_origins=(), resolver=resolver)  # channel create: public
    adapter = WebhookAdapter(Settings(), transport=receiver, resolver=resolver)

    result = deliver(adapter)

    assert (result.outcome, receiver.count()) == ("failed", 0)
    assert "169.254.169.254" in (result.error or "")


def test_deliver_connects_to_checked_address(receiver: FakeReceiver) -> None:
    adapter = WebhookAdapter(
        Settings(), transport=receiver, resolver=SequenceResolver(["1.1.1.1"], ["10.0.0.1"])
    )

    deliver(adapter)

    assert receiver.requests[0].address == "1.1.1.1"


def test_deliver_resolves_once_per_send(receiver: FakeReceiver) -> None:
    resolver = SequenceResolver([PUBLIC_ADDRESS])
    adapter = WebhookAdapter(Settings(), transport=receiver, resolver=resolver)

    deliver(adapter)

    assert resolver.calls == 1


def test_deliver_http_url_not_allowed_failed_without_request(
    adapter: WebhookAdapter, receiver: FakeReceiver
) -> None:
    result = deliver(adapter, make_channel("http://hooks.example.com/in"))

    assert (result.outcome, receiver.count()) == ("failed", 0)


def test_deliver_unresolvable_host_raises_retryable(receiver: FakeReceiver) -> None:
    def nowhere(host: str) -> Sequence[str]:
        raise socket.gaierror("no such name")

    adapter = WebhookAdapter(Settings(), transport=receiver, resolver=nowhere)

    with pytest.raises(RetryableDeliveryError, match="does not resolve"):
        deliver(adapter)


def test_deliver_connect_failure_tries_next_checked_address(receiver: FakeReceiver) -> None:
    receiver.addresses["hooks.example.com"] = ["1.1.1.1", "8.8.8.8"]
    receiver.script(Answer.connect_error(), Answer.ok("x"))
    adapter = WebhookAdapter(Settings(), transport=receiver, resolver=receiver.resolver)

    result = deliver(adapter)

    assert (result.remote_id, [r.address for r in receiver.requests]) == (
        "x",
        ["1.1.1.1", "8.8.8.8"],
    )


def test_deliver_timeout_does_not_try_next_address(receiver: FakeReceiver) -> None:
    receiver.addresses["hooks.example.com"] = ["1.1.1.1", "8.8.8.8"]
    receiver.script(Answer.timeout())
    adapter = WebhookAdapter(Settings(), transport=receiver, resolver=receiver.resolver)

    with pytest.raises(RetryableDeliveryError):
        deliver(adapter)

    assert receiver.count() == 1


def test_deliver_passes_delivery_timeout_to_transport(receiver: FakeReceiver) -> None:
    adapter = WebhookAdapter(
        Settings(DELIVERY_TIMEOUT_SECONDS=7), transport=receiver, resolver=receiver.resolver
    )

    deliver(adapter)

    assert 6.0 < receiver.timeouts_seen[0] <= 7.0


# -- Retry-After ----------------------------------------------------------------------------


def test_parse_retry_after_past_date_floor() -> None:
    value = format_datetime(NOW - timedelta(minutes=5), usegmt=True)

    assert parse_retry_after(value, now=NOW) == Settings().RETRY_AFTER_FLOOR_SECONDS


@pytest.mark.parametrize("value", [None, "", "soon", "1.5"])
def test_parse_retry_after_malformed_none(value: str | None) -> None:
    assert parse_retry_after(value, now=NOW) is None


# -- registry -------------------------------------------------------------------------------


def test_get_adapter_webhook_returns_webhook_adapter(receiver: FakeReceiver) -> None:
    adapter = get_adapter("webhook", settings=Settings(), transport=receiver)

    assert isinstance(adapter, WebhookAdapter) and adapter.transport is receiver


def test_get_adapter_unknown_platform_raises() -> None:
    with pytest.raises(UnknownPlatformError):
        get_adapter("myspace", settings=Settings())


def test_known_platforms_lists_webhook() -> None:
    assert "webhook" in platform_names()


# -- over real HTTP on loopback -------------------------------------------------------------


@pytest.fixture
def loopback() -> Iterator[HttpReceiver]:
    with HttpReceiver() as server:
        server.add_secret(None, "new-secret")
        yield server


def loopback_adapter(timeout: float = 5.0) -> WebhookAdapter:
    settings = Settings(
        WEBHOOK_ALLOWED_ORIGINS="http://127.0.0.1", DELIVERY_TIMEOUT_SECONDS=timeout
    )
    return WebhookAdapter(settings)  # the real urllib3 transport and system resolver


def test_loopback_2xx_published_and_signature_verifies(loopback: HttpReceiver) -> None:
    loopback.script(Answer.ok("remote-7"))

    result = loopback_adapter().deliver(
        make_channel(loopback.url("/hook")), make_request(), now=datetime.now(UTC)
    )

    request = loopback.requests[0]
    assert (result.remote_id, request.signature_valid, request.idempotency_key) == (
        "remote-7",
        True,
        KEY,
    )


def test_loopback_host_header_names_origin(loopback: HttpReceiver) -> None:
    loopback_adapter().deliver(
        make_channel(loopback.url("/hook?x=1")), make_request(), now=datetime.now(UTC)
    )

    assert loopback.requests[0].url == loopback.url("/hook?x=1")


def test_loopback_redirect_not_followed(loopback: HttpReceiver) -> None:
    loopback.script(Answer.redirect(loopback.url("/other")), url=loopback.url("/hook"))

    result = loopback_adapter().deliver(
        make_channel(loopback.url("/hook")), make_request(), now=datetime.now(UTC)
    )

    assert (result.outcome, [r.url for r in loopback.requests]) == (
        "failed",
        [loopback.url("/hook")],
    )


def test_loopback_503_raises_retryable(loopback: HttpReceiver) -> None:
    loopback.script(Answer.error(503, retry_after="3"))

    with pytest.raises(RetryableDeliveryError) as caught:
        loopback_adapter().deliver(
            make_channel(loopback.url()), make_request(), now=datetime.now(UTC)
        )

    assert (caught.value.http_status, caught.value.retry_after_seconds) == (503, 3.0)


def test_loopback_slow_receiver_times_out(loopback: HttpReceiver) -> None:
    loopback.script(Answer.timeout(delay_seconds=1.0))

    with pytest.raises(RetryableDeliveryError, match=r"^timeout: "):
        loopback_adapter(timeout=0.3).deliver(
            make_channel(loopback.url()), make_request(), now=datetime.now(UTC)
        )


def test_loopback_closed_port_raises_retryable() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(RetryableDeliveryError, match="connection"):
        loopback_adapter().deliver(
            make_channel(f"http://127.0.0.1:{port}/hook"), make_request(), now=datetime.now(UTC)
        )


def test_loopback_response_read_capped_at_64_kib(loopback: HttpReceiver) -> None:
    loopback.script(Answer.raw(200, json.dumps({"id": "x", "pad": "a" * 200_000}).encode()))
    destination = Destination(
        url=loopback.url(),
        scheme="http",
        host="127.0.0.1",
        port=loopback.port,
        target="/hook",
        addresses=("127.0.0.1",),
    )

    response = Urllib3Transport().send(
        destination, "127.0.0.1", b"{}", {"Host": f"127.0.0.1:{loopback.port}"}, 5.0
    )

    assert (response.status, len(response.body)) == (200, MAX_RESPONSE_BYTES)


def test_loopback_oversized_json_published_without_remote_id(loopback: HttpReceiver) -> None:
    loopback.script(Answer.raw(200, json.dumps({"id": "x", "pad": "a" * 200_000}).encode()))

    result = loopback_adapter().deliver(
        make_channel(loopback.url()), make_request(), now=datetime.now(UTC)
    )

    assert (result.outcome, result.remote_id) == ("published", None)


def test_urllib3_transport_closed_port_raises_connect_failed() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    destination = Destination(
        url=f"http://127.0.0.1:{port}/",
        scheme="http",
        host="127.0.0.1",
        port=port,
        target="/",
        addresses=("127.0.0.1",),
    )

    with pytest.raises(TransportError) as caught:
        Urllib3Transport().send(destination, "127.0.0.1", b"{}", {}, 2.0)

    assert caught.value.connect_failed


# -- TLS: connect to the checked IP, verify the certificate against the host name ------------


def _certificates(tmp_path: Path, host: str) -> tuple[Path, Path, Path]:
    """A throwaway CA and a leaf certificate for ``host`` signed by it (PEM files)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    def name(common: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])

    start = datetime.now(UTC) - timedelta(days=1)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(name("test ca"))
        .issuer_name(name("test ca"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(name(host))
        .issuer_name(ca.subject)
        .public_key(leaf_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + timedelta(days=2))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    ca_pem, cert_pem, key_pem = tmp_path / "ca.pem", tmp_path / "leaf.pem", tmp_path / "key.pem"
    ca_pem.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_pem.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    key_pem.write_bytes(
        leaf_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return ca_pem, cert_pem, key_pem


@pytest.fixture
def tls_receiver(tmp_path: Path) -> Iterator[tuple[HttpReceiver, str, list[str | None]]]:
    ca_pem, cert_pem, key_pem = _certificates(tmp_path, "hooks.test")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_pem, key_pem)
    server_names: list[str | None] = []
    context.sni_callback = lambda _sock, server_name, _ctx: server_names.append(server_name)
    with HttpReceiver(tls=context) as server:
        yield server, str(ca_pem), server_names


def tls_destination(host: str, port: int) -> Destination:
    return Destination(
        url=f"https://{host}:{port}/hook",
        scheme="https",
        host=host,
        port=port,
        target="/hook",
        addresses=("127.0.0.1",),
    )


def test_urllib3_transport_tls_to_checked_ip_verifies_host_name_and_sends_sni(
    tls_receiver: tuple[HttpReceiver, str, list[str | None]],
) -> None:
    server, ca_pem, server_names = tls_receiver
    destination = tls_destination("hooks.test", server.port)

    response = Urllib3Transport(ca_certs=ca_pem).send(
        destination, "127.0.0.1", b"{}", {"Host": destination.host_header}, 5.0
    )

    assert (response.status, server_names, server.requests[0].url) == (
        200,
        ["hooks.test"],
        f"https://hooks.test:{server.port}/hook",
    )


def test_urllib3_transport_tls_certificate_for_other_host_refused(
    tls_receiver: tuple[HttpReceiver, str, list[str | None]],
) -> None:
    server, ca_pem, _ = tls_receiver
    destination = tls_destination("other.test", server.port)

    with pytest.raises(TransportError) as caught:
        Urllib3Transport(ca_certs=ca_pem).send(
            destination, "127.0.0.1", b"{}", {"Host": destination.host_header}, 5.0
        )

    assert caught.value.connect_failed and server.count() == 0


def test_urllib3_transport_tls_untrusted_certificate_refused(
    tls_receiver: tuple[HttpReceiver, str, list[str | None]],
) -> None:
    server, _, _ = tls_receiver
    destination = tls_destination("hooks.test", server.port)

    with pytest.raises(TransportError):
        Urllib3Transport().send(
            destination, "127.0.0.1", b"{}", {"Host": destination.host_header}, 5.0
        )

    assert server.count() == 0


# -- the fake receiver's ledger (what the fire-path and fault tests assert on) --------------


def test_receiver_second_2xx_for_key_is_raw_resend(
    adapter: WebhookAdapter, receiver: FakeReceiver
) -> None:
    deliver(adapter)
    deliver(adapter)

    assert (receiver.accepted(KEY), receiver.successes(KEY), receiver.raw_resends()) == (1, 2, 1)


def test_receiver_failed_answers_are_not_accepted(
    adapter: WebhookAdapter, receiver: FakeReceiver
) -> None:
    receiver.script(Answer.error(503), Answer.reject(400))
    with pytest.raises(RetryableDeliveryError):
        deliver(adapter)
    deliver(adapter)

    assert (receiver.accepted(KEY), receiver.accepted_keys(), len(receiver.requests_for(KEY))) == (
        0,
        set(),
        2,
    )


def test_receiver_script_per_url_leaves_other_urls_default(receiver: FakeReceiver) -> None:
    other = "https://other.example.com/in"
    receiver.script(Answer.reject(410), url=other)
    adapter = WebhookAdapter(Settings(), transport=receiver, resolver=receiver.resolver)

    results = [deliver(adapter, make_channel(u)).outcome for u in (other, URL)]

    assert results == ["failed", "published"]


def test_receiver_early_request_reported() -> None:
    early = FakeReceiver(FixedNow(NOW - timedelta(seconds=1)))
    adapter = WebhookAdapter(Settings(), transport=early, resolver=early.resolver)

    deliver(adapter, now=NOW - timedelta(seconds=1))

    assert [r.idempotency_key for r in early.early_requests()] == [KEY]


# -- issue 17: the status table, bounded Retry-After, signed key, error words, deadline -------

#: docs/dispatch.md "Status codes and outcomes": one row each.
STATUS_TABLE = [
    (200, "published"),
    (201, "published"),
    (202, "published"),
    (204, "published"),
    (299, "published"),
    (100, "failed"),
    (199, "failed"),
    (301, "failed"),
    (302, "failed"),
    (304, "failed"),
    (307, "failed"),
    (308, "failed"),
    (400, "failed"),
    (401, "failed"),
    (403, "failed"),
    (404, "failed"),
    (405, "failed"),
    (409, "failed"),
    (410, "failed"),
    (413, "failed"),
    (422, "failed"),
    (408, "retry"),
    (425, "retry"),
    (429, "rate_limited"),
    (500, "retry"),
    (501, "retry"),
    (502, "retry"),
    (503, "retry"),
    (504, "retry"),
    (599, "retry"),
    (600, "failed"),
    (999, "failed"),
]


@pytest.mark.parametrize(("status", "outcome"), STATUS_TABLE)
def test_outcome_for_status_matches_documented_table(status: int, outcome: str) -> None:
    assert outcome_for_status(status) == outcome


def test_status_table_is_the_one_in_docs_dispatch() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "dispatch.md").read_text(encoding="utf-8")
    for status, outcome in STATUS_TABLE:
        assert f"| {status} | {outcome} |" in docs


@pytest.mark.parametrize("status", [408, 425])
def test_deliver_408_425_retryable_with_http_word(
    adapter: WebhookAdapter, receiver: FakeReceiver, status: int
) -> None:
    receiver.script(Answer.error(status, retry_after="7"))

    with pytest.raises(RetryableDeliveryError) as caught:
        deliver(adapter)

    error = caught.value
    assert (str(error), error.http_status, error.rate_limited, error.retry_after_seconds) == (
        f"http_{status}",
        status,
        False,
        7.0,
    )


@pytest.mark.parametrize(
    "answer",
    [
        Answer.rate_limited("99999999999999999999"),
        Answer.error(503, retry_after="99999999999999999999"),
    ],
)
def test_deliver_huge_retry_after_capped(
    adapter: WebhookAdapter, receiver: FakeReceiver, answer: Answer
) -> None:
    receiver.script(answer)

    with pytest.raises(RetryableDeliveryError) as caught:
        deliver(adapter)

    assert caught.value.retry_after_seconds == Settings().RETRY_AFTER_CAP_SECONDS


@pytest.mark.parametrize("answer", [Answer.rate_limited("0"), Answer.error(503, retry_after="-3")])
def test_deliver_zero_or_negative_retry_after_floored(
    adapter: WebhookAdapter, receiver: FakeReceiver, answer: Answer
) -> None:
    receiver.script(answer)

    with pytest.raises(RetryableDeliveryError) as caught:
        deliver(adapter)

    assert caught.value.retry_after_seconds == Settings().RETRY_AFTER_FLOOR_SECONDS


def test_deliver_body_idempotency_key_covered_by_signature(
    adapter: WebhookAdapter, receiver: FakeReceiver
) -> None:
    deliver(adapter)
    sent = receiver.requests[0]
    replayed = json.loads(sent.body)
    replayed["idempotency_key"] = "sch_1:other"
    forged_body = json.dumps(replayed, ensure_ascii=False, separators=(",", ":")).encode()
    header_value = sent.headers["X-Signature"]
    timestamp = int(NOW.timestamp())

    assert verify(header_value, "new-secret", sent.body, now=timestamp)
    assert sent.payload["idempotency_key"] == sent.headers["Idempotency-Key"] == KEY
    assert not verify(header_value, "new-secret", forged_body, now=timestamp)


@pytest.mark.parametrize(
    ("answer", "word"),
    [(Answer.timeout(), "timeout"), (Answer.connect_error(), "connect_failed")],
)
def test_deliver_transport_errors_use_stable_words(
    adapter: WebhookAdapter, receiver: FakeReceiver, answer: Answer, word: str
) -> None:
    receiver.script(answer)

    with pytest.raises(RetryableDeliveryError) as caught:
        deliver(adapter)

    assert str(caught.value).startswith(f"{word}: ")


def test_deliver_unresolvable_host_dns_error(receiver: FakeReceiver) -> None:
    def no_dns(host: str) -> list[str]:
        raise OSError("no such host")

    adapter = WebhookAdapter(Settings(), transport=receiver, resolver=no_dns)

    with pytest.raises(RetryableDeliveryError, match=r"^dns_error: "):
        deliver(adapter)


def test_deliver_public_url_on_unusual_port_refused(
    adapter: WebhookAdapter, receiver: FakeReceiver
) -> None:
    result = deliver(adapter, make_channel("https://hooks.example.com:6379/in"))

    assert (result.outcome, receiver.count()) == ("failed", 0)
    assert (result.error or "").startswith("destination_refused: url port must be 443")


def test_loopback_tls_failure_tls_error_word(loopback: HttpReceiver) -> None:
    # An https URL against the plain-HTTP loopback receiver: the handshake fails.
    url = loopback.url("/hook").replace("http://", "https://")
    settings = Settings(WEBHOOK_ALLOWED_ORIGINS="https://127.0.0.1", DELIVERY_TIMEOUT_SECONDS=2)

    with pytest.raises(RetryableDeliveryError, match=r"^tls_error: "):
        WebhookAdapter(settings).deliver(make_channel(url), make_request(), now=datetime.now(UTC))


class DrippingServer:
    """A raw loopback server that answers every connection by sending ``head`` at once, then
    ``drip`` one byte every ``interval`` seconds (a receiver that never stops trickling)."""

    def __init__(self, head: bytes, drip: bytes, interval: float = 0.05) -> None:
        self.head, self.drip, self.interval = head, drip, interval
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1)
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        try:
            conn, _ = self.sock.accept()
        except OSError:
            return
        with conn:
            try:
                conn.recv(65536)
                conn.sendall(self.head)
                for byte in self.drip:
                    if self.stop.wait(self.interval):
                        return
                    conn.sendall(bytes([byte]))
            except OSError:
                return

    def close(self) -> None:
        self.stop.set()
        self.sock.close()
        self.thread.join(timeout=5)


@pytest.mark.parametrize(
    ("head", "drip"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 200\r\n\r\n", b"x" * 200),
        (b"HTTP/1.1 200 OK\r\n", b"X-Slow: " + b"y" * 200 + b"\r\n\r\n"),
    ],
    ids=["body", "headers"],
)
def test_loopback_dripping_receiver_cut_at_deadline(head: bytes, drip: bytes) -> None:
    # Given a receiver that sends its status line at once, then one byte every 50 ms (10 s in
    # all), and a 0.5 s delivery timeout: each read gets a byte well within any read timeout.
    server = DrippingServer(head, drip)
    try:
        adapter = loopback_adapter(timeout=0.5)
        # When the adapter delivers, then it gives up at the deadline as a timeout.
        with pytest.raises(RetryableDeliveryError, match=r"^timeout: "):
            adapter.deliver(
                make_channel(f"http://127.0.0.1:{server.port}/hook"),
                make_request(),
                now=datetime.now(UTC),
            )
    finally:
        server.close()
