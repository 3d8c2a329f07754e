"""Several dispatch queues (issue 16): a post's messages go to the queue of its id's hash, every
send reports per message in input order, and the sweeper spreads a sweep over them. moto."""

from __future__ import annotations

import json
import zlib
from datetime import UTC, datetime, timedelta
from typing import Any

from scheduled_posts.data.queue import DispatchQueue, Outgoing
from scheduled_posts.logic.sweep import Sweeper
from scheduled_posts.models.messages import DispatchMessage, DispatchReason
from tests.support.clock import SimClock
from tests.support.factories import create_post
from tests.support.fixtures import AwsResources

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def _queues(aws: AwsResources, count: int) -> list[str]:
    return [aws.sqs.create_queue(QueueName=f"dispatch-{n}")["QueueUrl"] for n in range(count)]


def _bodies(aws: AwsResources, url: str) -> list[dict[str, Any]]:
    bodies = []
    while True:
        got = aws.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
        if not got:
            return bodies
        for message in got:
            bodies.append(json.loads(message["Body"]))
            aws.sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])


def _message(n: int) -> DispatchMessage:
    return DispatchMessage(
        schedule_id=f"post-{n:03d}", version=1, publish_at=T0, attempt=1,
        reason=DispatchReason.SWEEP,
    )  # fmt: skip


def test_send_batch_puts_each_message_on_its_ids_queue_in_batches_of_at_most_ten(
    aws: AwsResources,
) -> None:
    urls = _queues(aws, 3)
    queue = DispatchQueue(urls)
    messages = [_message(n) for n in range(40)]
    # When 40 messages are sent at once
    accepted = queue.send_batch([Outgoing(m) for m in messages])
    # Then all were accepted, and each sits on the queue crc32(schedule_id) % 3 names
    assert accepted == [True] * 40
    for index, url in enumerate(urls):
        expected = sorted(
            m.schedule_id for m in messages if zlib.crc32(m.schedule_id.encode()) % 3 == index
        )
        assert sorted(b["schedule_id"] for b in _bodies(aws, url)) == expected
        assert expected  # the hash spreads 40 ids over all three queues


def test_send_one_message_goes_to_the_same_queue_as_its_batch_send(aws: AwsResources) -> None:
    urls = _queues(aws, 4)
    queue = DispatchQueue(urls)
    queue.send(_message(7), delay_seconds=0)
    (url,) = [u for u in urls if _bodies(aws, u)]
    assert url == queue.queue_for("post-007")


def test_one_refused_message_is_reported_at_its_own_place(aws: AwsResources) -> None:
    urls = _queues(aws, 2)
    queue = DispatchQueue(urls)
    real = aws.sqs

    class RefusesOne:
        """SQS that refuses the entry of ``post-005`` (as SendMessageBatch may, per entry)."""

        def send_message_batch(self, QueueUrl: str, Entries: list[dict[str, Any]]) -> Any:
            keep = [e for e in Entries if "post-005" not in e["MessageBody"]]
            answer = real.send_message_batch(QueueUrl=QueueUrl, Entries=keep)
            failed = [e for e in Entries if e not in keep]
            answer["Failed"] = [{"Id": e["Id"], "Code": "x", "SenderFault": False} for e in failed]
            return answer

    refusing = DispatchQueue(urls, sqs=RefusesOne())
    accepted = refusing.send_batch([Outgoing(_message(n)) for n in range(12)])
    assert accepted == [n != 5 for n in range(12)]
    assert sum(len(_bodies(aws, u)) for u in queue.queue_urls) == 11


def test_sweeper_on_several_queues_sends_each_due_post_once(
    aws: AwsResources, clock: SimClock
) -> None:
    urls = _queues(aws, 3)
    settings = aws.settings.model_copy(update={"DISPATCH_QUEUE_URLS": ",".join(urls)})
    now = clock.now()
    posts = [
        create_post(
            settings, now=now, publish_at=now + timedelta(seconds=30 + i), channel_ids=["c"]
        )
        for i in range(20)
    ]
    result = Sweeper(settings, clock=clock).sweep()
    assert result.enqueued == 20
    clock.advance(60)
    seen = [b["schedule_id"] for u in urls for b in _bodies(aws, u)]
    assert sorted(seen) == sorted(p.schedule_id for p in posts)
    assert _bodies(aws, aws.settings.DISPATCH_QUEUE_URL) == []  # the default queue is not listed


def test_settings_list_the_queues_or_fall_back_to_the_one_url(aws: AwsResources) -> None:
    one = aws.settings.model_copy(update={"DISPATCH_QUEUE_URLS": ""})
    assert one.dispatch_queue_urls == (one.DISPATCH_QUEUE_URL,)
    two = aws.settings.model_copy(update={"DISPATCH_QUEUE_URLS": " https://q/a , https://q/b ,"})
    assert two.dispatch_queue_urls == ("https://q/a", "https://q/b")
