"""Fault-injecting wrappers of the collaborators the service already takes (issue 4).

Nothing here reaches into the service code: every fault is injected by wrapping something the
service is given (a DynamoDB ``Table``/client/resource, an SQS client, the webhook transport, a
clock).

* :class:`FaultPlan`: the seeded source of every decision. A decision is a hash of the seed and a
  stable identity (``role``, operation, key, how many times that identity was seen), never the
  order of calls across threads, so a seed reproduces the same faults. It counts what it
  injected, by kind.
* :class:`FaultyTable` / :class:`FaultyClient` / :class:`FaultyResource`: DynamoDB wrappers that
  throttle (``ProvisionedThroughputExceededException``, raised as botocore would after its
  retries) or crash the caller (:class:`WorkerCrash`) at a named step of the publish path:
  ``before_claim``, ``after_claim``, ``before_final_write``.
* :class:`FaultySqs`: an SQS client wrapper that duplicates sends (at-least-once delivery) or
  refuses them (``SendMessage`` errors, ``SendMessageBatch`` entries reported failed).
* :class:`FaultyTransport`: the webhook transport around the :class:`FakeReceiver`: crashes
  ``mid_delivery`` (before the request leaves) and ``after_2xx`` (the receiver accepted, the
  worker dies before it sees the answer); answers themselves come from the receiver's responder
  (:meth:`FaultPlan.responder`): 5xx, 429 with ``Retry-After``, timeouts, permanent 4xx,
  accept-then-timeout.
* :func:`skewed_clock`: another view of the simulated time, off by up to 2 s.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from scheduled_posts.platforms.webhook import parse_retry_after
from tests.support.clock import SimClock
from tests.support.driver import Crash
from tests.support.lateness import Touch, schedule_id_in
from tests.support.receiver import Answer, FakeReceiver

#: Steps of the publish path where a worker can be made to crash.
CRASH_POINTS = ("before_claim", "after_claim", "mid_delivery", "after_2xx", "before_final_write")
#: Kinds of receiver answer the plan can script (besides a plain 2xx).
ANSWER_FAULTS = ("5xx", "429", "timeout", "connect_error", "accept_then_timeout")
#: Retryable statuses the receiver answers (``answer_5xx``; 408 and 425 are retryable too,
#: ``platforms/transport.py`` ``outcome_for_status``), each as often.
RETRYABLE_STATUSES = (500, 502, 503, 504, 408, 425)
#: ``Retry-After`` forms sent with a 429 or a 5xx (``None``: no header): delta-seconds, zero,
#: negative, an HTTP-date in the past (before the worlds' start), garbage, a huge number, a
#: far-future HTTP-date (the service clamps both: ``platforms/retry_after.py``).
RETRY_AFTER_FORMS: tuple[str | None, ...] = (
    None,
    "1",
    "3",
    "5",
    "0",
    "-5",
    "Sat, 28 Nov 2026 12:00:00 GMT",
    "soon",
    "99999999999",
    "Fri, 01 Jan 2100 00:00:00 GMT",
)
#: Row of the failure table (``tests.support.lag_bounds``) that each role's throttle explains.
THROTTLE_ROWS = {
    "api": "promotion_refused",
    "sweeper": "sweeper_incomplete",
    "watchdog": "watchdog_incomplete",
}
#: ... and each role's refused send.
REFUSED_SEND_ROWS = {
    "api": "promotion_refused",
    "sweeper": "sweeper_send_refused",
    "watchdog": "watchdog_incomplete",
    "worker": "follow_up_refused",
}


class WorkerCrash(Crash):
    """A worker dies at a chosen step (a Lambda timeout or an out-of-memory kill). A
    ``BaseException`` (via :class:`Crash`), so no ``except Exception`` in the service or in
    Powertools sees it; the driver leaves the whole batch to reappear."""


def throttling_error(operation: str) -> ClientError:
    """The error boto3 raises once DynamoDB throttling outlasts its retries."""
    return ClientError(
        {
            "Error": {
                "Code": "ProvisionedThroughputExceededException",
                "Message": "Rate of requests exceeds the allowed throughput (injected).",
            },
            "ResponseMetadata": {"HTTPStatusCode": 400},
        },
        operation,
    )


def sqs_unavailable(operation: str) -> ClientError:
    """The error boto3 raises when SQS refuses a send after its retries."""
    return ClientError(
        {
            "Error": {"Code": "ServiceUnavailable", "Message": "injected"},
            "ResponseMetadata": {"HTTPStatusCode": 503},
        },
        operation,
    )


@dataclass
class FaultRates:
    """Probabilities of each fault per opportunity (0 disables it).

    ``throttle``: per DynamoDB call of a wrapped role; ``crash``: per crash point reached by a
    worker; ``duplicate_send``/``refuse_send``: per message sent; ``answer``: per request, that
    the receiver answers with a fault instead of a 2xx; ``reject``: per (post, channel), that the
    receiver rejects it for good (a permanent 4xx).
    """

    throttle: float = 0.01
    crash: float = 0.02
    duplicate_send: float = 0.05
    refuse_send: float = 0.02
    answer: float = 0.10
    reject: float = 0.03

    @classmethod
    def none(cls) -> FaultRates:
        return cls(0, 0, 0, 0, 0, 0)


@dataclass
class FaultPlan:
    """Seeded fault decisions and the count of faults injected, by kind.

    Worker faults (crash, throttle in the ``worker`` role) are injected only while
    :attr:`worker_budget_open` is true: the driver closes it for a batch whose records were
    already received ``MAX_RECEIVE_COUNT - 2`` times, so injected faults alone never push a
    message to the dead-letter queue (the DLQ must then hold nothing).
    """

    seed: int
    rates: FaultRates = field(default_factory=FaultRates)
    injected: Counter[str] = field(default_factory=Counter)
    enabled: bool = True
    worker_budget_open: bool = True
    #: Roles whose DynamoDB calls may be throttled.
    throttled_roles: frozenset[str] = frozenset(
        {"api", "worker", "sweeper", "watchdog", "reconciler"}
    )
    #: Idempotency-Keys the receiver rejects for good (decided on their first request).
    rejected_keys: set[str] = field(default_factory=set)
    #: 2xx the receiver processed but no worker learnt of (accept-then-timeout answers, crashes
    #: after a 2xx, throttled saves of a delivery's idempotency record): each may cause one
    #: legitimate raw re-send, so raw re-sends must never exceed it.
    unobserved_2xx: int = 0
    #: Every fault against the posts it touched (the lateness invariant reads them).
    touches: list[Touch] = field(default_factory=list)
    #: Every message sent: ``(role, sender's clock at the send, DelaySeconds, body)``.
    sends: list[tuple[str, datetime, int, dict[str, Any]]] = field(default_factory=list)
    #: Every send refused: ``(role, reference time, body)``.
    refused_sends: list[tuple[str, datetime, dict[str, Any]]] = field(default_factory=list)
    #: Roles whose first batch of two or more messages gets its last entry refused (when sends
    #: are refused at all): a partly accepted sweeper page in every world, which a sweep that
    #: moved its watermark past it would leave to the reconciler (``_check_sweeper_resends``).
    partial_refusal_pending: set[str] = field(default_factory=lambda: {"sweeper"})
    #: The reference clock (the worker's); set by the world.
    now: Callable[[], datetime] | None = None
    #: The world's backoff settings, to bound a retried answer's wait.
    retry_base_seconds: float = 30.0
    retry_cap_seconds: float = 900.0
    #: Posts whose every worker DynamoDB call is throttled (a poison: their messages exhaust
    #: their receives and go to the DLQ, whatever the worker budget says).
    poisoned: set[str] = field(default_factory=set)
    #: The last crash: ``(point, schedule id)`` (the driver spares that post's redelivery).
    last_crash: tuple[str, str | None] | None = None
    _seen: Counter[str] = field(default_factory=Counter)
    _lock: threading.RLock = field(default_factory=threading.RLock)

    # -- decisions --------------------------------------------------------------------------

    def draw(self, *parts: object) -> float:
        """A uniform number in ``[0, 1)`` fixed by the seed and ``parts``."""
        text = "|".join(str(p) for p in (self.seed, *parts))
        digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
        return int.from_bytes(digest, "big") / 2**64

    def occurrence(self, *parts: object) -> int:
        """How many times this identity was seen before (0 the first time)."""
        name = "|".join(str(p) for p in parts)
        with self._lock:
            n = self._seen[name]
            self._seen[name] = n + 1
            return n

    def chance(self, rate: float, *parts: object) -> bool:
        """Whether the fault identified by ``parts`` (and its occurrence) happens."""
        if not self.enabled or rate <= 0:
            return False
        n = self.occurrence(*parts)
        return self.draw(*parts, n) < rate

    def count(self, kind: str) -> None:
        with self._lock:
            self.injected[kind] += 1

    def touch(
        self, row: str, kind: str, schedule_id: str | None, seconds: float | None = None
    ) -> None:
        """Record that a fault of ``kind`` may delay ``schedule_id`` (``None``: every post in
        flight) by the bound of failure-table row ``row`` (or by ``seconds``)."""
        if self.now is None:
            return
        with self._lock:
            self.touches.append(Touch(row, kind, self.now(), schedule_id, seconds))

    def retry_ceiling(self, n: int) -> float:
        """The longest full-jitter wait after the ``n+1``-th attempt (seconds)."""
        return min(self.retry_cap_seconds, self.retry_base_seconds * 2 ** min(n, 30))

    def _worker_allowed(self, role: str) -> bool:
        return role != "worker" or self.worker_budget_open

    def maybe_throttle(self, role: str, operation: str, identity: str) -> None:
        """Raise a throttling ``ClientError`` for this call, if the plan says so."""
        if role == "worker" and self.poisoned and schedule_id_in(identity) in self.poisoned:
            self.count("poison_receive_throttled")
            raise throttling_error(operation)
        if role not in self.throttled_roles or not self._worker_allowed(role):
            return
        if self.chance(self.rates.throttle, "throttle", role, operation, identity):
            self.count(f"throttle_{role}")
            row = THROTTLE_ROWS.get(role)
            if row is not None:  # a worker's failed record is touched by the driver
                sid = None if role == "sweeper" else schedule_id_in(identity)
                self.touch(row, f"throttle_{role}", sid)
            raise throttling_error(operation)

    def maybe_crash(self, point: str, identity: str) -> None:
        """Raise :class:`WorkerCrash` at ``point``, if the plan says so."""
        if not self.worker_budget_open:
            return
        if self.chance(self.rates.crash, "crash", point, identity):
            self.count(f"crash_{point}")
            if point == "after_2xx":
                self.unobserved_2xx += 1
            sid = schedule_id_in(identity)
            self.last_crash = (point, sid)
            if point != "before_claim":
                row = "crash_after_2xx" if point == "after_2xx" else "worker_crash"
                self.touch(row, f"crash_{point}", sid)
            raise WorkerCrash(f"{point} ({identity})")

    # -- the receiver's answers ---------------------------------------------------------------

    def responder(
        self, receiver: FakeReceiver
    ) -> Callable[[str, str | None, dict[str, Any] | None], Answer | None]:
        """A :attr:`FakeReceiver.responder`: per request, a fault answer or ``None`` (a 2xx).

        A key the plan rejects gets a permanent 4xx on every request. A key already accepted
        is answered 2xx again (a real receiver replays its answer for a known Idempotency-Key),
        so every accepted delivery is one the sender can learn about.
        """

        def respond(url: str, key: str | None, payload: dict[str, Any] | None) -> Answer | None:
            if key is None or not self.enabled:
                return None
            if key in self.rejected_keys:
                self.count("answer_4xx")
                return Answer.reject(422)
            if key in receiver.accepted_keys():
                return None
            n = self.occurrence("answer", key)
            if n == 0 and self.draw("reject", key) < self.rates.reject:
                self.rejected_keys.add(key)
                self.count("answer_4xx")
                return Answer.reject(422)
            if self.draw("answer", key, n) >= self.rates.answer:
                return None
            kind = ANSWER_FAULTS[int(self.draw("answer-kind", key, n) * len(ANSWER_FAULTS))]
            self.count(f"answer_{kind}")
            if kind == "accept_then_timeout":
                self.unobserved_2xx += 1
                return Answer.accept_then_timeout()  # accepted now: no lag
            sid = schedule_id_in(key)
            retry_after = self._pick("retry-after", key, n, RETRY_AFTER_FORMS)
            if kind == "429":  # no Retry-After: the service's backoff
                wait = self._wait(retry_after, None, fallback=self.retry_ceiling(n))
                self.touch("destination_429", "answer_429", sid, wait)
                return Answer.rate_limited(retry_after)
            wait = self._wait(None, self.retry_ceiling(n))
            if kind == "5xx":
                status = self._pick("status", key, n, RETRYABLE_STATUSES)
                self.count(f"answer_http_{status}")
                wait = self._wait(retry_after, self.retry_ceiling(n))
                self.touch("destination_retry", f"answer_{status}", sid, wait)
                return Answer.error(status, retry_after=retry_after)
            self.touch("destination_retry", f"answer_{kind}", sid, wait)
            return Answer.timeout() if kind == "timeout" else Answer.connect_error()

        return respond

    def _pick(self, name: str, key: str, n: int, choices: tuple[Any, ...]) -> Any:
        return choices[int(self.draw(name, key, n) * len(choices))]

    def _wait(
        self, retry_after: str | None, ceiling: float | None, *, fallback: float = 0.0
    ) -> float:
        """The longest wait the service may choose for an answer: its ``Retry-After`` (read by
        the service's own parser), at least the backoff ``ceiling``; plus one second for the
        retry message's ``DelaySeconds`` rounded up."""
        now = self.now() if self.now is not None else datetime.now().astimezone()
        parsed = parse_retry_after(retry_after, now=now)
        if parsed is None:
            parsed = fallback
        return max(parsed, ceiling or 0.0) + 1.0


# -- DynamoDB ----------------------------------------------------------------------------------


def _identity(kwargs: Mapping[str, Any]) -> str:
    key = kwargs.get("Key") or kwargs.get("Item") or {}
    if isinstance(key, Mapping):
        parts = []
        for name in ("pk", "sk", "bucket", "due", "id"):
            value = key.get(name)
            if isinstance(value, Mapping):  # low-level attribute values
                value = next(iter(value.values()), None)
            if value is not None:
                parts.append(str(value))
        if parts:
            return "/".join(parts)
    if "KeyConditionExpression" in kwargs:
        values = kwargs.get("ExpressionAttributeValues") or {}
        return "query:" + str(kwargs.get("IndexName", "")) + str(sorted(map(str, values.values())))
    return "-"


def _is_claim(kwargs: Mapping[str, Any]) -> bool:
    """The claim (``lifecycle.transitions.claim`` rendered by ``PostStore``): status set to
    ``publishing`` from ``scheduled`` with a lease token."""
    values = {str(v) for v in (kwargs.get("ExpressionAttributeValues") or {}).values()}
    names = set((kwargs.get("ExpressionAttributeNames") or {}).values())
    return {"publishing", "scheduled"} <= values and "lease_token" in names


def _is_round_record(kwargs: Mapping[str, Any]) -> bool:
    """A round's record written as one ``UpdateItem`` (``PostStore.save_round`` with every
    attempt folded into the post item): deliveries changed under the lease token's guard,
    without setting a new lease token (a claim or a lease renewal does)."""
    names = kwargs.get("ExpressionAttributeNames") or {}
    token = [p for p, n in names.items() if n == "lease_token"]
    update = str(kwargs.get("UpdateExpression") or "")
    condition = str(kwargs.get("ConditionExpression") or "")
    return (
        "deliveries" in names.values()
        and bool(token)
        and all(p in condition and p not in update for p in token)
    )


class FaultyClient:
    """A low-level DynamoDB client wrapper: throttles any call; for the worker role, crashes
    ``before_final_write`` (the round's transaction)."""

    _CALLS = frozenset(
        {
            "get_item",
            "put_item",
            "update_item",
            "delete_item",
            "query",
            "transact_write_items",
            "batch_get_item",
        }
    )

    def __init__(self, client: Any, plan: FaultPlan, role: str) -> None:
        self._client = client
        self._plan = plan
        self._role = role

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if name not in self._CALLS:
            return attr

        def call(**kwargs: Any) -> Any:
            identity = _identity(kwargs)
            if name == "transact_write_items":
                first = (kwargs.get("TransactItems") or [{}])[0]
                inner = next(iter(first.values()), {}) if first else {}
                identity = _identity(inner)
                if self._role == "worker":
                    self._plan.maybe_crash("before_final_write", identity)
            try:
                self._plan.maybe_throttle(self._role, name, identity)
            except ClientError:
                if name == "update_item" and "deliver#" in identity:
                    self._plan.unobserved_2xx += 1  # a delivery's success not saved
                raise
            return attr(**kwargs)

        return call


class _Meta:
    def __init__(self, client: Any) -> None:
        self.client = client


class FaultyTable:
    """A boto3 ``Table`` wrapper (same methods, ``name`` and ``meta.client``): throttles; for the
    worker role, crashes ``before_claim``/``after_claim`` around the claim's conditional
    update, and ``before_final_write`` before a round recorded as one ``UpdateItem``."""

    def __init__(self, table: Any, plan: FaultPlan, role: str) -> None:
        self._table = table
        self._plan = plan
        self._role = role
        self.meta = _Meta(FaultyClient(table.meta.client, plan, role))

    @property
    def name(self) -> str:
        return str(self._table.name)

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._table, name)
        if name not in FaultyClient._CALLS:
            return attr

        def call(**kwargs: Any) -> Any:
            identity = _identity(kwargs)
            claim = self._role == "worker" and name == "update_item" and _is_claim(kwargs)
            if claim:
                self._plan.maybe_crash("before_claim", identity)
            elif self._role == "worker" and name == "update_item" and _is_round_record(kwargs):
                self._plan.maybe_crash("before_final_write", identity)
            self._plan.maybe_throttle(self._role, name, identity)
            result = attr(**kwargs)
            if claim:
                self._plan.maybe_crash("after_claim", identity)
            return result

        return call


class FaultyResource:
    """A boto3 DynamoDB resource wrapper: ``Table(name)`` and ``meta.client`` are faulty."""

    def __init__(self, resource: Any, plan: FaultPlan, role: str) -> None:
        self._resource = resource
        self._plan = plan
        self._role = role
        self.meta = _Meta(FaultyClient(resource.meta.client, plan, role))

    def Table(self, name: str) -> FaultyTable:
        return FaultyTable(self._resource.Table(name), self._plan, self._role)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._resource, name)


# -- SQS ---------------------------------------------------------------------------------------


class FaultySqs:
    """An SQS client wrapper for one sending role: duplicates sends (the same body twice, as an
    at-least-once queue may deliver it) and refuses them (an error for ``send_message``, entries
    reported ``Failed`` for ``send_message_batch``).

    ``before_send`` (optional) runs before each send call: the scenario uses it to interleave a
    second sweeper between a sweeper's reads and its sends.
    """

    def __init__(
        self, client: Any, plan: FaultPlan, role: str, clock: SimClock | None = None
    ) -> None:
        self._client = client
        self._plan = plan
        self._role = role
        self._clock = clock
        self.before_send: Callable[[], None] | None = None
        #: Called with each accepted send's visibility time (reference clock).
        self.on_visible: Callable[[datetime], None] | None = None

    def _sent(self, body: Any, delay: Any) -> None:
        """Record an accepted send (the never-early-surface check reads :attr:`FaultPlan.sends`)."""
        if self._clock is None:
            return
        try:
            parsed = json.loads(str(body))
        except ValueError:
            return
        seconds = int(delay or 0)
        with self._plan._lock:
            self._plan.sends.append((self._role, self._clock.now(), seconds, parsed))
        if self.on_visible is not None and self._plan.now is not None:
            self.on_visible(self._plan.now() + timedelta(seconds=seconds))

    def _refused(self, body: str) -> None:
        row = REFUSED_SEND_ROWS.get(self._role)
        if row is not None:
            self._plan.touch(row, f"send_refused_{self._role}", schedule_id_in(body))
        with contextlib.suppress(ValueError):
            parsed = json.loads(body)
            if self._plan.now is not None and isinstance(parsed, dict):
                with self._plan._lock:
                    self._plan.refused_sends.append((self._role, self._plan.now(), parsed))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def _hook(self) -> None:
        hook = self.before_send
        if hook is not None:
            hook()

    def send_message(self, **kwargs: Any) -> Any:
        self._hook()
        body = str(kwargs.get("MessageBody", ""))
        if self._plan.chance(self._plan.rates.refuse_send, "refuse", self._role, body):
            self._plan.count(f"send_refused_{self._role}")
            self._refused(body)
            raise sqs_unavailable("SendMessage")
        response = self._client.send_message(**kwargs)
        self._sent(body, kwargs.get("DelaySeconds"))
        if self._plan.chance(self._plan.rates.duplicate_send, "dup", self._role, body):
            self._plan.count(f"send_duplicated_{self._role}")
            self._client.send_message(**kwargs)
        return response

    def send_message_batch(self, **kwargs: Any) -> Any:
        self._hook()
        entries = list(kwargs.get("Entries", []))
        kept, refused = [], []
        for entry in entries:
            body = str(entry.get("MessageBody", ""))
            if self._plan.chance(self._plan.rates.refuse_send, "refuse", self._role, body):
                refused.append(entry)
            else:
                kept.append(entry)
        if len(kept) >= 2 and self._plan.rates.refuse_send > 0:
            with self._plan._lock:
                forced = self._role in self._plan.partial_refusal_pending
                self._plan.partial_refusal_pending.discard(self._role)
            if forced:
                refused.append(kept.pop())
        successful: list[dict[str, Any]] = []
        failed = [
            {"Id": e["Id"], "SenderFault": False, "Code": "ServiceUnavailable"} for e in refused
        ]
        if refused:
            self._plan.count(f"send_refused_{self._role}")
            for e in refused:
                self._refused(str(e.get("MessageBody", "")))
        if kept:
            response = self._client.send_message_batch(QueueUrl=kwargs["QueueUrl"], Entries=kept)
            successful = list(response.get("Successful", []))
            ok = {s["Id"] for s in successful}
            for e in kept:
                if e["Id"] in ok:
                    self._sent(e.get("MessageBody"), e.get("DelaySeconds"))
            failed += list(response.get("Failed", []))
            dups = [
                e
                for e in kept
                if self._plan.chance(
                    self._plan.rates.duplicate_send, "dup", self._role, e.get("MessageBody")
                )
            ]
            if dups:
                self._plan.count(f"send_duplicated_{self._role}")
                self._client.send_message_batch(QueueUrl=kwargs["QueueUrl"], Entries=dups)
        return {"Successful": successful, "Failed": failed}


# -- the webhook transport -----------------------------------------------------------------------


class FaultyTransport:
    """The webhook adapter's transport: the :class:`FakeReceiver`, plus worker crashes
    ``mid_delivery`` (the request never leaves) and ``after_2xx`` (the receiver processed a 2xx,
    the worker dies before reading it)."""

    def __init__(self, receiver: FakeReceiver, plan: FaultPlan) -> None:
        self._receiver = receiver
        self._plan = plan

    def send(
        self,
        destination: Any,
        address: str,
        body: bytes,
        headers: Mapping[str, str],
        timeout: float,
    ) -> Any:
        key = next((v for k, v in headers.items() if k.lower() == "idempotency-key"), "-")
        self._plan.maybe_crash("mid_delivery", key)
        before = self._receiver.count()
        response = self._receiver.send(destination, address, body, headers, timeout)
        if self._receiver.count() > before and 200 <= response.status < 300:
            self._plan.maybe_crash("after_2xx", key)
        return response


def skewed_clock(clock: SimClock, skew_seconds: float) -> SimClock:
    """``clock`` seen from a machine whose clock is off by ``skew_seconds`` (|skew| <= 2 s in
    the suite; the worker's clock is the reference and is never skewed)."""
    return clock.skewed(skew_seconds)
