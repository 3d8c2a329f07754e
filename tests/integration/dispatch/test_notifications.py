"""Notifications end to end on moto (issue 14): the fire path publishes, the relay reads the
stream and fans out to the owner's endpoints through the notify queue, the notifier POSTs each
event signed to the fake receiver; the feed has the same event ids."""

from __future__ import annotations

from datetime import timedelta

from scheduled_posts.models.notifications import NotificationEndpoint
from scheduled_posts.platforms.signing import verify
from tests.integration.dispatch.conftest import FirePath
from tests.support.factories import cancel_post
from tests.support.notify import NotifyRig
from tests.support.outbox import RelayRig, build_relay
from tests.support.receiver import Answer, standard_webhooks_valid

URL = "https://hooks.example.com/notify"
SECRET = "whsec_" + "cd" * 32
OUTCOMES = (
    "post.published",
    "post.cancelled",
    "post.failed",
    "post.missed",
    "post.partially_published",
)


def _rigs(
    fire: FirePath, *, owner: str = "alice", types: tuple[str, ...] = OUTCOMES
) -> tuple[RelayRig, NotifyRig]:
    relay = build_relay(fire.settings, fire.clock)
    notify = NotifyRig(
        fire.settings,
        fire.aws.sqs,
        fire.clock,
        transport=fire.receiver,
        resolver=fire.receiver.resolver,
        uniform=lambda low, high: high,
    )
    relay.relay.notify = notify.fanout
    notify.endpoints.put_new(
        NotificationEndpoint(
            endpoint_id=f"{owner}-endpoint",
            owner=owner,
            url=URL,
            event_types=tuple(sorted(types)),
            signing_secret=SECRET,
            created_at=fire.clock.now(),
        ),
        max_endpoints=10,
    )
    fire.receiver.add_secret(URL, SECRET)
    return relay, notify


def _notifications(fire: FirePath) -> list[dict]:
    return [r.payload or {} for r in fire.receiver.requests_to(URL)]


def test_notify_published_post_signed_with_lag_and_same_id_as_feed(fire: FirePath) -> None:
    relay, notify = _rigs(fire)
    fire.channel("c1")
    post = fire.post(fire.clock.now() + timedelta(seconds=30), ["c1"])
    fire.driver.run_for(120)
    relay.poller.drain()
    notify.drain()
    [request] = fire.receiver.requests_to(URL)
    event = request.payload or {}
    assert event["type"] == "post.published"
    assert event["schedule_id"] == post.schedule_id
    assert event["publish_lag_seconds"] >= 0
    assert event["channels"][0]["remote_id"]
    assert request.idempotency_key == event["event_id"]
    assert verify(
        request.headers["X-Signature"], SECRET, request.body, now=int(fire.clock.now().timestamp())
    )
    assert request.webhook_id == event["event_id"]
    assert standard_webhooks_valid(request.headers, SECRET, request.body, at=fire.clock.now())
    now = fire.clock.now().timestamp()
    feed_ids = [
        s.event["event_id"] for s in relay.feed.post_events(post.schedule_id, now_epoch=now)
    ]
    assert event["event_id"] in feed_ids


def test_notify_cancelled_post_yields_post_cancelled_only(fire: FirePath) -> None:
    relay, notify = _rigs(fire)
    fire.channel("c1")
    post = fire.post(fire.clock.now() + timedelta(hours=2), ["c1"])
    cancel_post(fire.settings, post, now=fire.clock.now())
    fire.driver.run_for(60)
    relay.poller.drain()
    notify.drain()
    assert [e["type"] for e in _notifications(fire)] == ["post.cancelled"]


def test_notify_other_owners_endpoint_gets_nothing(fire: FirePath) -> None:
    relay, notify = _rigs(fire, owner="bob")
    fire.channel("c1")
    fire.post(fire.clock.now() + timedelta(seconds=30), ["c1"])  # alice's post
    fire.driver.run_for(120)
    relay.poller.drain()
    notify.drain()
    assert _notifications(fire) == []


def test_notify_failing_endpoint_does_not_delay_publishing(fire: FirePath) -> None:
    relay, notify = _rigs(fire, types=("post.scheduled", "post.claimed", *OUTCOMES))
    fire.receiver.set_default(Answer.timeout(), url=URL)
    fire.channel("c1")
    first = fire.post(fire.clock.now() + timedelta(seconds=30), ["c1"])
    relay.poller.drain()
    notify.drain()  # post.scheduled times out
    second = fire.post(fire.clock.now() + timedelta(seconds=60), ["c1"])
    fire.driver.run_for(120)
    for post in (first, second):
        assert fire.read(post).status.value == "published"
    relay.poller.drain()
    notify.poll()
    fire.receiver.set_default(Answer.ok(), url=URL)
    notify.drain(step_seconds=fire.settings.NOTIFY_RETRY_CAP_SECONDS + 1, rounds=12)
    delivered = [
        r.payload["event_id"]
        for r in fire.receiver.requests_to(URL)
        if r.payload and r.answer.succeeds
    ]
    events = [
        s.event
        for p in (first, second)
        for s in relay.feed.post_events(p.schedule_id, now_epoch=fire.clock.now().timestamp())
        if s.event["type"] in ("post.scheduled", "post.claimed", *OUTCOMES)
    ]
    assert sorted(set(delivered)) == sorted(e["event_id"] for e in events)
    assert notify.dead_letters() == []
