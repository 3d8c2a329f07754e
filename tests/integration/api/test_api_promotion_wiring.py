"""The handler's default promoter is the fire path's: a near post reaches the queue at once."""

from __future__ import annotations

import json

from scheduled_posts.api_app import ApiDependencies, set_dependencies
from tests.support.api import ApiClient, fake_resolver


def test_create_post_near_default_promoter_sends_to_dispatch_queue(aws, clock, promoted) -> None:
    set_dependencies(ApiDependencies(settings=aws.settings, clock=clock, resolver=fake_resolver))
    alice = ApiClient("alice")
    created = alice.schedule("2026-11-29T12:01:00Z", [alice.create_channel()])
    clock.advance(61)
    messages = aws.sqs.receive_message(
        QueueUrl=aws.settings.DISPATCH_QUEUE_URL, MaxNumberOfMessages=10
    ).get("Messages", [])
    assert [json.loads(m["Body"])["schedule_id"] for m in messages] == [created["schedule_id"]]
