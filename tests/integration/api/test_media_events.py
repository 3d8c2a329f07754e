"""``media.rejected``: the probe's refusal is one event, in the caller's feed and to a
notification endpoint signed, however often ``complete`` is called (decision "Media uploads
and the probe")."""

from __future__ import annotations

from typing import Any

import boto3
import pytest

from scheduled_posts.data.media_objects import s3_client
from scheduled_posts.models.notifications import NotificationEndpoint
from tests.integration.api.test_media import create, png, upload, uploaded
from tests.support.api import ApiClient
from tests.support.fixtures import AwsResources
from tests.support.notify import NotifyRig
from tests.support.outbox import RelayRig, build_relay
from tests.support.receiver import FakeReceiver, standard_webhooks_valid

URL = "https://hooks.example.com/media"
SECRET = "whsec_" + "ef" * 32
PDF = b"%PDF-1.4\n"


@pytest.fixture
def media_api(aws: AwsResources, alice: ApiClient) -> ApiClient:
    boto3.client("s3", region_name="us-east-1").create_bucket(Bucket=aws.settings.MEDIA_BUCKET_NAME)
    s3_client.cache_clear()
    return alice


@pytest.fixture
def relay(aws: AwsResources, clock: Any, promoted: Any) -> RelayRig:
    return build_relay(aws.settings, clock)


def _events(client: ApiClient) -> list[dict[str, Any]]:
    answer = client.get("/v1/events")
    assert answer.status == 200
    return [item["event"] for item in answer.json["items"]]


def test_media_rejected_is_one_event_in_the_feed_even_when_completed_twice(
    media_api: ApiClient, relay: RelayRig, clock: Any
) -> None:
    # Given a PDF uploaded as a PNG
    created = create(media_api, PDF)
    assert upload(created, PDF) == 204
    path = f"/v1/media/{created['media_id']}/complete"
    # When complete is called twice
    first = media_api.post(path).json
    clock.advance(5)
    assert media_api.post(path).json == first
    relay.poller.drain()
    # Then the feed holds exactly one media.rejected with the probe's verdict
    [event] = [e for e in _events(media_api) if e["type"] == "media.rejected"]
    assert event == {
        "event_id": event["event_id"],
        "type": "media.rejected",
        "occurred_at": first["updated_at"],
        "owner": "alice",
        "media_id": created["media_id"],
        "content_type": "image/png",
        "size": len(PDF),
        "reason": "unsupported_type",
        "reason_detail": first["reason_detail"],
    }
    assert "url" not in str(event).lower()


def test_media_rejected_names_the_detected_type_and_a_ready_upload_reports_nothing(
    media_api: ApiClient, relay: RelayRig
) -> None:
    data = png()
    wrong = create(media_api, data, content_type="image/jpeg")
    assert upload(wrong, data) == 204
    media_api.post(f"/v1/media/{wrong['media_id']}/complete")
    uploaded(media_api, png((2, 2)))
    media_api.patch(f"/v1/media/{wrong['media_id']}", {"alt_text": "still rejected"})
    relay.poller.drain()
    [event] = _events(media_api)
    assert (event["type"], event["reason"]) == ("media.rejected", "type_mismatch")
    assert (event["content_type"], event["detected_content_type"]) == ("image/jpeg", "image/png")
    assert event["detected_size"] == len(data)


def test_media_rejected_is_invisible_to_another_user(
    media_api: ApiClient, bob: ApiClient, relay: RelayRig
) -> None:
    uploaded(media_api, PDF)
    relay.poller.drain()
    assert [e["type"] for e in _events(media_api)] == ["media.rejected"]
    assert _events(bob) == []


def test_media_rejected_reaches_a_notification_endpoint_signed(
    media_api: ApiClient, relay: RelayRig, aws: AwsResources, clock: Any
) -> None:
    receiver = FakeReceiver(clock)
    notify = NotifyRig(
        aws.settings,
        aws.sqs,
        clock,
        transport=receiver,
        resolver=receiver.resolver,
        uniform=lambda low, high: high,
    )
    relay.relay.notify = notify.fanout
    notify.endpoints.put_new(
        NotificationEndpoint(
            endpoint_id="alice-endpoint",
            owner="alice",
            url=URL,
            event_types=("media.rejected",),
            signing_secret=SECRET,
            created_at=clock.now(),
        ),
        max_endpoints=10,
    )
    receiver.add_secret(URL, SECRET)
    done = uploaded(media_api, PDF)
    relay.poller.drain()
    notify.drain()
    [request] = receiver.requests_to(URL)
    event = request.payload or {}
    assert (event["type"], event["media_id"]) == ("media.rejected", done["media_id"])
    assert request.webhook_id == event["event_id"] == request.idempotency_key
    assert standard_webhooks_valid(request.headers, SECRET, request.body, at=clock.now())
    assert [e["event_id"] for e in _events(media_api)] == [event["event_id"]]
