"""A fake webhook receiver, used in-process as the webhook adapter's transport (no sockets).

It records every request (simulated time, headers, body, Idempotency-Key, whether the
signatures verify), answers from a script, and keeps the ledger the exactly-once checks read:
a delivery is **accepted** when it is the first 2xx answered for its Idempotency-Key; every
later 2xx for the same key is a **raw re-send** (what a real receiver would dedupe by key).

Typical use::

    receiver = FakeReceiver(clock)
    receiver.add_secret(channel.url, channel.signing_secret)
    receiver.script(Answer.error(503), Answer.error(503), url=channel.url)  # then 200s
    adapter = WebhookAdapter(settings, transport=receiver, resolver=receiver.resolver)
    ...
    assert receiver.accepted(f"{schedule_id}:{channel_id}") == 1
    assert receiver.raw_resends() == 0 and not receiver.early_requests()

Answer priority for a request: the responder (if set and it returns an answer), then the
script for its Idempotency-Key, for its URL, the global script (per call), then the default
for its URL, then the global default (``Answer.ok()``). Scripts are consumed in order.
``Answer.timeout()`` and ``Answer.connect_error()`` do not move the simulated clock.
Thread-safe: the worker may deliver to several channels at once.

A request's signature is valid for a secret when **both** schemes verify: the deprecated
``X-Signature`` (``scheduled_posts.platforms.signing.verify``) and Standard Webhooks, checked with
the ``standardwebhooks`` package (a verifier we did not write): ``Webhook.verify`` when the
receiver's clock is the real one; under a simulated clock (the library checks its 5-minute
tolerance against the real time) the library's ``Webhook.sign`` computes the expected
``v1,...`` for the received id and timestamp, compared in constant time with each sent one, and
the timestamp is checked against the simulated clock with the same tolerance.
"""

from __future__ import annotations

import hmac
import json
import threading
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from scheduled_posts.clock import parse_instant
from scheduled_posts.platforms.signing import standard_secret, verify
from scheduled_posts.platforms.transport import TransportError, TransportResponse, header
from tests.support.transport import AnsweringTransport, SentRequest

#: What a resolver built by :meth:`FakeReceiver.resolver` answers for any name: a public
#: address (TEST-NET would be refused by the URL policy; this one is in 93.184.216.0/24).
PUBLIC_ADDRESS = "93.184.216.34"


class _Now(Protocol):
    def now(self) -> datetime: ...


class _RealNow:
    def now(self) -> datetime:
        return datetime.now(UTC)


def standard_webhooks_valid(
    headers: Mapping[str, str],
    secret: str,
    body: bytes,
    *,
    at: datetime | None,
    tolerance_seconds: int = 300,
) -> bool:
    """Whether the Standard Webhooks headers sign ``body`` with ``secret`` (its ``whsec_`` form,
    ``standard_secret``). ``at=None``: the real clock, ``standardwebhooks.Webhook.verify``;
    otherwise the simulated receiver time (see the module docstring)."""
    from standardwebhooks import Webhook, WebhookVerificationError

    webhook = Webhook(standard_secret(secret))
    lower = {k.lower(): v for k, v in headers.items()}
    try:
        if at is None:
            webhook.verify(body, lower, json_parse=False)
            return True
        msg_id, stamp = lower.get("webhook-id"), lower.get("webhook-timestamp")
        sent = lower.get("webhook-signature")
        if not (msg_id and stamp and sent) or abs(at.timestamp() - int(stamp)) > tolerance_seconds:
            return False
        when = datetime.fromtimestamp(int(stamp), tz=UTC)
        expected = webhook.sign(msg_id, when, body.decode("utf-8"))
    except (WebhookVerificationError, ValueError):
        return False
    return any(hmac.compare_digest(expected.encode(), s.encode()) for s in sent.split(" "))


@dataclass(frozen=True)
class Answer:
    """One scripted answer. Build with the class methods.

    ``kind``: ``"http"`` (send ``status``/``headers``/``body``), ``"timeout"`` (no response),
    ``"connect_error"`` (the connection failed before anything was sent), or
    ``"accept_then_timeout"`` (the receiver processes the request as a 2xx, then the response is
    lost: the sender sees a timeout). ``body=None`` on a 2xx means ``{"id": "<generated>"}``.
    ``delay_seconds`` is honoured only by the real loopback receiver (it sleeps).
    """

    kind: str = "http"
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes | None = None
    delay_seconds: float = 0.0

    @classmethod
    def ok(cls, remote_id: str | None = None, *, status: int = 200) -> Answer:
        """2xx with ``{"id": remote_id}`` (a generated id when ``None``)."""
        body = None if remote_id is None else json.dumps({"id": remote_id}).encode()
        return cls(status=status, body=body)

    @classmethod
    def raw(
        cls, status: int, body: bytes = b"", headers: Mapping[str, str] | None = None
    ) -> Answer:
        """Any status with exactly this body and these headers (e.g. a 2xx without JSON)."""
        return cls(status=status, body=body, headers=dict(headers or {}))

    @classmethod
    def error(cls, status: int = 503, *, retry_after: str | None = None) -> Answer:
        """A 5xx (retryable), optionally with ``Retry-After``."""
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        return cls(status=status, body=b'{"error":"unavailable"}', headers=headers)

    @classmethod
    def rate_limited(cls, retry_after: str | None = "5") -> Answer:
        """429 with ``Retry-After`` (delta-seconds or an HTTP-date; ``None`` for none)."""
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        return cls(status=429, body=b'{"error":"slow down"}', headers=headers)

    @classmethod
    def reject(cls, status: int = 400) -> Answer:
        """A permanent 4xx."""
        return cls(status=status, body=b'{"error":"rejected"}')

    @classmethod
    def redirect(cls, location: str, status: int = 302) -> Answer:
        """A 3xx with ``Location`` (must never be followed)."""
        return cls(status=status, headers={"Location": location})

    @classmethod
    def timeout(cls, delay_seconds: float = 0.0) -> Answer:
        """No response (the sender times out); nothing is processed."""
        return cls(kind="timeout", status=0, delay_seconds=delay_seconds)

    @classmethod
    def connect_error(cls) -> Answer:
        """The connection is refused; nothing is processed."""
        return cls(kind="connect_error", status=0)

    @classmethod
    def accept_then_timeout(cls) -> Answer:
        """Processed and accepted like a 200, but the sender never sees the response."""
        return cls(kind="accept_then_timeout", status=200)

    @property
    def succeeds(self) -> bool:
        """Whether the receiver processed the request as a success (2xx)."""
        return self.kind in ("http", "accept_then_timeout") and 200 <= self.status < 300


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the receiver saw it.

    ``at`` is the receiver's (simulated) clock; ``payload`` the parsed JSON body (``None`` when
    unparseable); ``signature_valid`` is ``None`` when no secret is known for the URL;
    ``verified_with`` lists which of the known secrets verified it (with both schemes: see the
    module docstring); ``webhook_id`` is the ``webhook-id`` header; ``accepted`` /
    ``raw_resend`` follow the ledger rules of the module docstring.
    """

    seq: int
    at: datetime
    url: str
    address: str
    headers: Mapping[str, str]
    body: bytes
    payload: dict[str, Any] | None
    idempotency_key: str | None
    signature: str | None
    signature_valid: bool | None
    verified_with: tuple[str, ...]
    answer: Answer
    accepted: bool
    raw_resend: bool
    webhook_id: str | None = None

    @property
    def publish_at(self) -> datetime | None:
        """``publish_at`` of the payload, parsed."""
        value = (self.payload or {}).get("publish_at")
        return parse_instant(value) if isinstance(value, str) else None

    @property
    def early(self) -> bool:
        """Whether the request arrived before the payload's ``publish_at``."""
        publish_at = self.publish_at
        return publish_at is not None and self.at < publish_at

    @property
    def attempt(self) -> int | None:
        value = (self.payload or {}).get("attempt")
        return value if isinstance(value, int) else None


Responder = Callable[[str, str | None, dict[str, Any] | None], Answer | None]


class ReceiverLedger:
    """Scripts, secrets and the record of requests; shared by the fake and the loopback receiver."""

    def __init__(self, clock: _Now | None = None, *, tolerance_seconds: int = 300) -> None:
        self.clock: _Now = clock if clock is not None else _RealNow()
        self.tolerance_seconds = tolerance_seconds
        self._lock = threading.RLock()
        self._clear()

    def _clear(self) -> None:
        self._requests: list[RecordedRequest] = []
        self._secrets: dict[str, list[str]] = defaultdict(list)
        self._global_secrets: list[str] = []
        self._scripts: dict[str, deque[Answer]] = defaultdict(deque)
        self._key_scripts: dict[str, deque[Answer]] = defaultdict(deque)
        self._call_script: deque[Answer] = deque()
        self._defaults: dict[str, Answer] = {}
        self.default: Answer = Answer.ok()
        self.responder: Responder | None = None
        self._accepted: dict[str, RecordedRequest] = {}
        self._ids = 0

    # -- configuration ---------------------------------------------------------------------
    def add_secret(self, url: str | None, secret: str) -> None:
        """Verify requests to ``url`` (any URL when ``None``) with ``secret`` too."""
        with self._lock:
            (self._global_secrets if url is None else self._secrets[url]).append(secret)

    def set_secrets(self, url: str, secrets: Sequence[str]) -> None:
        """Replace the secrets known for ``url`` (e.g. only the new one after a rotation)."""
        with self._lock:
            self._secrets[url] = list(secrets)

    def script(self, *answers: Answer, url: str | None = None, key: str | None = None) -> None:
        """Queue ``answers`` for the next requests to ``url``, with Idempotency-Key ``key``, or
        (neither given) for the next requests whatever their URL."""
        with self._lock:
            if key is not None:
                self._key_scripts[key].extend(answers)
            elif url is not None:
                self._scripts[url].extend(answers)
            else:
                self._call_script.extend(answers)

    def set_default(self, answer: Answer, *, url: str | None = None) -> None:
        """The answer once scripts are used up, for ``url`` or for every URL."""
        with self._lock:
            if url is None:
                self.default = answer
            else:
                self._defaults[url] = answer

    def reset(self) -> None:
        """Forget requests, scripts, defaults and secrets."""
        with self._lock:
            self._clear()

    # -- handling --------------------------------------------------------------------------
    def _choose(self, url: str, key: str | None, payload: dict[str, Any] | None) -> Answer:
        if self.responder is not None:
            answer = self.responder(url, key, payload)
            if answer is not None:
                return answer
        for queue in (self._key_scripts.get(key or ""), self._scripts.get(url)):
            if queue:
                return queue.popleft()
        if self._call_script:
            return self._call_script.popleft()
        return self._defaults.get(url, self.default)

    def handle(
        self, url: str, address: str, headers: Mapping[str, str], body: bytes
    ) -> tuple[RecordedRequest, bytes]:
        """Record one request and decide its answer. Returns the record and the body to send."""
        with self._lock:
            at = self.clock.now()
            try:
                payload = json.loads(body)
                payload = payload if isinstance(payload, dict) else None
            except ValueError:
                payload = None
            key = header(headers, "Idempotency-Key")
            signature = header(headers, "X-Signature")
            secrets = [*self._secrets.get(url, []), *self._global_secrets]
            verified_with: tuple[str, ...] = ()
            valid: bool | None = None
            if secrets:
                verified_with = tuple(s for s in secrets if self._verifies(headers, s, body, at))
                valid = bool(verified_with)
            answer = self._choose(url, key, payload)
            accepted = raw_resend = False
            if answer.succeeds and key is not None:
                if key in self._accepted:
                    raw_resend = True
                else:
                    accepted = True
            response_body = answer.body
            if response_body is None and answer.succeeds:
                self._ids += 1
                response_body = json.dumps({"id": f"remote-{self._ids}"}).encode()
            record = RecordedRequest(
                seq=len(self._requests),
                at=at,
                url=url,
                address=address,
                headers=dict(headers),
                body=body,
                payload=payload,
                idempotency_key=key,
                signature=signature,
                signature_valid=valid,
                verified_with=verified_with,
                answer=answer,
                accepted=accepted,
                raw_resend=raw_resend,
                webhook_id=header(headers, "webhook-id"),
            )
            self._requests.append(record)
            if accepted and key is not None:
                self._accepted[key] = record
            return record, response_body or b""

    def _verifies(self, headers: Mapping[str, str], secret: str, body: bytes, at: datetime) -> bool:
        """Both schemes verify ``body`` with ``secret`` at the receiver's time ``at``."""
        signature = header(headers, "X-Signature")
        tolerance = self.tolerance_seconds
        return (
            signature is not None
            and verify(
                signature, secret, body, now=int(at.timestamp()), tolerance_seconds=tolerance
            )
            and standard_webhooks_valid(
                headers,
                secret,
                body,
                at=None if isinstance(self.clock, _RealNow) else at,
                tolerance_seconds=tolerance,
            )
        )

    # -- what the tests assert on -----------------------------------------------------------
    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request, in arrival order."""
        with self._lock:
            return list(self._requests)

    def requests_for(self, key: str) -> list[RecordedRequest]:
        """Every request carrying Idempotency-Key ``key``, in arrival order."""
        return [r for r in self.requests if r.idempotency_key == key]

    def requests_to(self, url: str) -> list[RecordedRequest]:
        """Every request to ``url``, in arrival order."""
        return [r for r in self.requests if r.url == url]

    def accepted(self, key: str) -> int:
        """Accepted deliveries for ``key``: 1 or 0 (later 2xx are raw re-sends)."""
        with self._lock:
            return 1 if key in self._accepted else 0

    def accepted_keys(self) -> set[str]:
        """Every Idempotency-Key with an accepted delivery."""
        with self._lock:
            return set(self._accepted)

    def accepted_request(self, key: str) -> RecordedRequest | None:
        """The accepted request for ``key`` (its time, payload, attempt...)."""
        with self._lock:
            return self._accepted.get(key)

    def accepted_at(self, key: str) -> datetime | None:
        """When the delivery for ``key`` was accepted."""
        record = self.accepted_request(key)
        return record.at if record is not None else None

    def successes(self, key: str) -> int:
        """2xx answered for ``key``: accepted plus raw re-sends."""
        return sum(1 for r in self.requests_for(key) if r.accepted or r.raw_resend)

    def raw_resends(self) -> int:
        """2xx answered for a key that was already accepted, over all keys."""
        return sum(1 for r in self.requests if r.raw_resend)

    def raw_resends_for(self, key: str) -> int:
        return sum(1 for r in self.requests_for(key) if r.raw_resend)

    def early_requests(self) -> list[RecordedRequest]:
        """Requests that arrived before their payload's ``publish_at`` (must be none)."""
        return [r for r in self.requests if r.early]

    def bad_signatures(self) -> list[RecordedRequest]:
        """Requests whose signature did not verify with any known secret."""
        return [r for r in self.requests if r.signature_valid is False]

    def count(self) -> int:
        """Number of requests received."""
        with self._lock:
            return len(self._requests)


class FakeReceiver(ReceiverLedger, AnsweringTransport):
    """The in-process receiver: a :class:`scheduled_posts.platforms.transport.Transport`.

    Pass it as ``transport=`` and :meth:`resolver` as ``resolver=`` to the webhook adapter.
    """

    def __init__(
        self,
        clock: _Now | None = None,
        *,
        tolerance_seconds: int = 300,
        addresses: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        super().__init__(clock, tolerance_seconds=tolerance_seconds)
        self.addresses: dict[str, list[str]] = {k: list(v) for k, v in (addresses or {}).items()}
        self.timeouts_seen: list[float] = []

    def resolver(self, host: str) -> list[str]:
        """A resolver: ``addresses[host]`` when set, else :data:`PUBLIC_ADDRESS`."""
        return list(self.addresses.get(host, [PUBLIC_ADDRESS]))

    def answer(self, request: SentRequest) -> TransportResponse:
        """Answer a webhook delivery as the receiver's script says."""
        with self._lock:
            self.timeouts_seen.append(request.timeout)
        record, response_body = self.handle(
            request.destination.url, request.address, request.headers, request.body
        )
        answer = record.answer
        if answer.kind == "connect_error":
            raise TransportError("connection refused", connect_failed=True)
        if answer.kind in ("timeout", "accept_then_timeout"):
            raise TransportError("read timed out", timeout=True)
        return TransportResponse(
            status=answer.status, headers=dict(answer.headers), body=response_body[: 64 * 1024]
        )


def keys_of(pairs: Iterable[tuple[str, str]]) -> list[str]:
    """``[(schedule_id, channel_id), ...]`` -> Idempotency-Keys ``schedule_id:channel_id``."""
    return [f"{schedule_id}:{channel_id}" for schedule_id, channel_id in pairs]
