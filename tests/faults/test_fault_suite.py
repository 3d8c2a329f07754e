"""The fault suite at CI size (issue 4): 10 seeds x 50 posts through the real API, sweeper,
worker and watchdog handlers, under seeded faults, in two parallel processes; plus checks that
the harness injects what it claims and that its checks can fail. Each world also has a Mastodon
channel (the stand-in) and a Bluesky channel (the reference PDS, one for the session), counted
on the network (issue 12, ``tests/support/networks.py``).

A failing seed prints the command that replays it:
``.venv/bin/python -m tests.faults.run --seed <seed> --posts 50``.
"""

from __future__ import annotations

import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any
from unittest import mock

import boto3
import pytest
import time_machine
from botocore.exceptions import ClientError
from moto import mock_aws

from local.emulation.streams import streams_client
from local.moto_speed import fast_moto_transactions
from scheduled_posts.api_app import set_dependencies
from scheduled_posts.clock import format_instant
from scheduled_posts.data.aws import reset_clients
from tests.faults.run import CI_POSTS, CI_SEEDS, _chunk, report, summarize
from tests.support.clock import SimClock
from tests.support.faults import FaultPlan, FaultRates, FaultySqs, FaultyTable
from tests.support.fixtures import START
from tests.support.networks import FORCED_KINDS, PDS_URL_ENV, forced_kind
from tests.support.outbox_check import check_outbox
from tests.support.scenario import World, seeded_uuid4


@pytest.fixture(scope="module")
def pds_url(request: pytest.FixtureRequest) -> str:
    """``FAULT_PDS_URL`` when a caller runs one (``make mutants``, from scratch copies without
    ``.pds/``), else the session's reference PDS."""
    return os.environ.get(PDS_URL_ENV) or str(request.getfixturevalue("local_pds").url)


@pytest.fixture(scope="module")
def ci_results(pds_url: str) -> list[dict[str, Any]]:
    halves = [CI_SEEDS[::2], CI_SEEDS[1::2]]
    with ThreadPoolExecutor(max_workers=2) as pool:
        chunks = pool.map(lambda s: _chunk(s, CI_POSTS, pds_url=pds_url), halves)
        return [r for chunk in chunks for r in chunk]


def test_fault_suite_ci_seeds_every_promise_holds(ci_results: list[dict[str, Any]]) -> None:
    totals, _ = summarize(ci_results)
    assert totals["posts"] >= 500
    failed = [r for r in ci_results if r["problems"]]
    assert not failed, report(ci_results, 0)
    assert totals["duplicates"] == totals["early"] == totals["stuck"] == totals["dlq"] == 0


def test_fault_suite_ci_seeds_publish_on_both_networks_and_end_refusals_reauthorized(
    ci_results: list[dict[str, Any]],
) -> None:
    totals, _ = summarize(ci_results)
    assert totals["network_mastodon_posts"] > 0
    assert totals["network_bluesky_posts"] > 0
    assert totals["network_delivery_published"] > 0
    assert totals["network_refused_keys"] > 0
    assert totals["network_reauthorization_required"] > 0


def test_fault_suite_ci_seeds_inject_every_fault_kind(ci_results: list[dict[str, Any]]) -> None:
    # the network kinds are also forced, one per network per world in turn by seed
    # (tests/support/networks.forced_kind), so the ten CI seeds inject each at least once
    _, faults = summarize(ci_results)
    prefixes = [
        "crash_before_claim",
        "crash_after_claim",
        "crash_mid_delivery",
        "crash_after_2xx",
        "crash_before_final_write",
        "concurrent_duplicate_",
        "sweepers_at_once_",
        "sweeper_outage",
        "throttle_api",
        "throttle_worker",
        "throttle_sweeper",
        "send_duplicated_",
        "send_refused_",
        "answer_5xx",
        "answer_429",
        "answer_timeout",
        "answer_4xx",
        "answer_accept_then_timeout",
        # the network channels (issue 12)
        "network_mastodon_5xx",
        "network_mastodon_429",
        "network_mastodon_budget_spent",
        "network_mastodon_accept_then_lose",
        "network_mastodon_401_mid_run",
        "network_mastodon_hostile_answer",
        "network_bluesky_5xx",
        "network_bluesky_429",
        "network_bluesky_budget_spent",
        "network_bluesky_accept_then_lose",
        "network_bluesky_401_mid_run",
        "network_bluesky_hostile_answer",
    ]
    missing = [p for p in prefixes if not any(k.startswith(p) for k in faults)]
    assert not missing, dict(faults)


def test_fault_suite_ci_seeds_carry_threads_a_queue_and_an_import(
    ci_results: list[dict[str, Any]],
) -> None:
    # Issues 26 and 27: the worlds' threads, first comments, queued posts and crashed import
    # were played (their promises are checked per seed by the promise test), not skipped.
    totals, faults = summarize(ci_results)
    assert totals["network_mastodon_thread_parts"] > 0, dict(totals)
    assert totals["network_bluesky_thread_parts"] > 0, dict(totals)
    assert totals["network_comment_published"] > 0, dict(totals)
    assert any(k.endswith("part_answer_lost") for k in faults), dict(faults)
    assert totals["queue_live_posts"] > 0, dict(totals)
    assert totals["import_crash_mid_chunk"] > 0, dict(totals)
    assert totals["import_rows_done"] > 0, dict(totals)


def test_fault_suite_ci_seeds_notifications_survive_endpoint_failures(
    ci_results: list[dict[str, Any]],
) -> None:
    # Issue 14: endpoint 5xx, 429 and timeouts were injected, and every expected notification
    # was still accepted once (outbox_check's problems fail the promise test otherwise).
    totals, _ = summarize(ci_results)
    assert totals["notification_failures_injected"] > 0
    assert totals["notifications_expected"] > 0
    assert totals["notifications_accepted"] == totals["notifications_expected"]


# -- the harness itself ------------------------------------------------------------------------


class _Table:
    name = "t"

    class meta:
        client = None

    def get_item(self, **kwargs: Any) -> dict[str, Any]:
        return {"Item": {"pk": "x"}}


def test_fault_plan_same_seed_same_decisions() -> None:
    first, second = FaultPlan(seed=7), FaultPlan(seed=7)
    picks = [[p.chance(0.5, "k", i) for i in range(50)] for p in (first, second)]
    assert picks[0] == picks[1]
    assert 0 < sum(picks[0]) < 50


def test_faulty_table_throttle_raises_provisioned_throughput_exceeded() -> None:
    plan = FaultPlan(seed=1, rates=FaultRates(throttle=1.0))
    table = FaultyTable(_Table(), plan, "worker")
    with pytest.raises(ClientError) as caught:
        table.get_item(Key={"pk": "POST#1", "sk": "POST"})
    assert caught.value.response["Error"]["Code"] == "ProvisionedThroughputExceededException"
    assert plan.injected["throttle_worker"] == 1


def test_faulty_sqs_duplicate_rate_one_sends_twice() -> None:
    sent: list[dict[str, Any]] = []

    class _Sqs:
        def send_message(self, **kwargs: Any) -> dict[str, Any]:
            sent.append(kwargs)
            return {"MessageId": str(len(sent))}

    plan = FaultPlan(seed=1, rates=FaultRates(duplicate_send=1.0, refuse_send=0.0))
    FaultySqs(_Sqs(), plan, "sweeper").send_message(QueueUrl="q", MessageBody="{}")
    assert len(sent) == 2


def test_scenario_check_early_request_is_reported() -> None:
    # Given a small fault-free world played to the end
    with seeded_uuid4(5), time_machine.travel(START, tick=False) as traveller, mock_aws():
        world = World(5, 8, SimClock(traveller), rates=FaultRates.none(), concurrent_rate=0)
        try:
            world.build()
            world.play()
            # When a request reaches the receiver before its publish_at
            post = world.posts[0]
            future = world.clock.now() + timedelta(seconds=60)
            world.receiver.handle(
                "https://hooks.example.com/x",
                "93.184.216.34",
                {"Idempotency-Key": f"{post.schedule_id}:{post.channel_ids[0]}"},
                json.dumps(
                    {
                        "schedule_id": post.schedule_id,
                        "channel_id": post.channel_ids[0],
                        "publish_at": format_instant(future),
                    }
                ).encode(),
            )
            result = world.check()
        finally:
            set_dependencies(None)
            reset_clients()
    # Then the check reports it
    assert result.totals["early"] == 1
    assert any(p.startswith("early request") for p in result.problems)


def test_fast_moto_transactions_failed_condition_writes_nothing() -> None:
    # Given a post item and the faster transaction backup of the scenario
    with fast_moto_transactions(), mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(
            TableName="t",
            KeySchema=[
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "S"},
            ],
            BillingMode="PAY_PER_REQUEST",
        )
        post = {"pk": {"S": "POST#1"}, "sk": {"S": "POST"}, "n": {"N": "1"}}
        client.put_item(TableName="t", Item=post)
        # When a transaction puts a new item, updates the post, then fails a condition
        with pytest.raises(ClientError):
            client.transact_write_items(
                TransactItems=[
                    {"Put": {"TableName": "t", "Item": {"pk": {"S": "POST#1"}, "sk": {"S": "A"}}}},
                    {
                        "Update": {
                            "TableName": "t",
                            "Key": {"pk": {"S": "POST#1"}, "sk": {"S": "POST"}},
                            "UpdateExpression": "SET n = :two",
                            "ExpressionAttributeValues": {":two": {"N": "2"}},
                        }
                    },
                    {
                        "ConditionCheck": {
                            "TableName": "t",
                            "Key": {"pk": {"S": "POST#2"}, "sk": {"S": "POST"}},
                            "ConditionExpression": "attribute_exists(pk)",
                        }
                    },
                ]
            )
        items = client.scan(TableName="t")["Items"]
    # Then nothing changed
    assert items == [post]


def test_fast_moto_transactions_failed_transaction_leaves_no_stream_record() -> None:
    # Given a streamed table and the faster transaction backup of the scenario
    with fast_moto_transactions(), mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        created = client.create_table(
            TableName="t",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
            StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
        )
        # When a transaction puts an item and then fails a condition
        with pytest.raises(ClientError):
            client.transact_write_items(
                TransactItems=[
                    {"Put": {"TableName": "t", "Item": {"pk": {"S": "a"}}}},
                    {
                        "ConditionCheck": {
                            "TableName": "t",
                            "Key": {"pk": {"S": "b"}},
                            "ConditionExpression": "attribute_exists(pk)",
                        }
                    },
                ]
            )
        client.put_item(TableName="t", Item={"pk": {"S": "c"}})
        streams = streams_client()
        arn = created["TableDescription"]["LatestStreamArn"]
        (shard,) = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
        iterator = streams.get_shard_iterator(
            StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        records = streams.get_records(ShardIterator=iterator)["Records"]
    # Then only the committed put is in the stream
    assert [r["dynamodb"]["Keys"]["pk"]["S"] for r in records] == ["c"]


def test_fast_moto_transactions_concurrent_writes_get_distinct_sequence_numbers() -> None:
    # Given a streamed table, written through moto's backend (as the fault runner's threads
    # reach it: the runner has no per-request lock, unlike this test session), and a second
    # write started while moto builds the first write's stream record (numbered, not appended)
    from moto.dynamodb.models import dynamodb_backends
    from moto.dynamodb.models import table as moto_table

    real_record = moto_table.StreamRecord
    others: list[threading.Thread] = []

    def record(*args: Any, **kwargs: Any) -> Any:
        if not others:
            others.append(threading.Thread(target=backend.put_item, args=("t", {"pk": {"S": "b"}})))
            others[0].start()
            others[0].join(timeout=0.5)  # without the lock the second write finishes here
        return real_record(*args, **kwargs)

    with fast_moto_transactions(), mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        created = client.create_table(
            TableName="t",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
            StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
        )
        backend = dynamodb_backends[created["TableDescription"]["TableArn"].split(":")[4]][
            "us-east-1"
        ]
        # When two writes run at once
        with mock.patch.object(moto_table, "StreamRecord", record):
            backend.put_item("t", {"pk": {"S": "a"}})
            others[0].join()
        streams = streams_client()
        arn = created["TableDescription"]["LatestStreamArn"]
        (shard,) = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
        iterator = streams.get_shard_iterator(
            StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        records = streams.get_records(ShardIterator=iterator)["Records"]
    # Then each has its own record, numbered in the order the stream holds them (as DynamoDB
    # numbers a shard's records; the outbox feed is keyed by these numbers)
    numbers = [int(r["dynamodb"]["SequenceNumber"]) for r in records]
    assert sorted(r["dynamodb"]["Keys"]["pk"]["S"] for r in records) == ["a", "b"]
    assert numbers == sorted(set(numbers)) and len(numbers) == 2


def test_forced_network_kinds_cover_every_kind_on_each_network_in_as_many_seeds() -> None:
    for network in ("mastodon", "bluesky"):
        for first in (101, 106, 1):
            seeds = range(first, first + len(FORCED_KINDS))
            kinds = {forced_kind(seed, network) for seed in seeds}
            assert kinds == set(FORCED_KINDS), (network, first)
    assert forced_kind(101, "mastodon") != forced_kind(101, "bluesky")


def test_network_check_reports_a_second_status_on_mastodon(pds_url: str) -> None:
    # Given a small fault-free world with network channels, played to the end
    with seeded_uuid4(7), time_machine.travel(START, tick=False) as traveller, mock_aws():
        world = World(
            7,
            12,
            SimClock(traveller),
            rates=FaultRates.none(),
            concurrent_rate=0,
            pds_url=pds_url,
        )
        assert world.networks is not None
        try:
            world.build()
            world.play()
            clean = world.check()
            # When a published status appears a second time on the instance
            [status] = world.networks.mastodon.statuses[:1]
            world.networks.mastodon.handle(
                "POST",
                "/api/v1/statuses",
                {},
                {"authorization": f"Bearer {world.networks.token}"},
                {"status": status.text},
            )
            result = world.check()
        finally:
            world.networks.stop()
            set_dependencies(None)
            reset_clients()
    # Then only the second check reports it, as a duplicate
    assert clean.problems == [] and clean.totals["duplicates"] == 0
    assert result.totals["duplicates"] == 1
    assert any("2 posts on mastodon" in p for p in result.problems), result.problems


@pytest.mark.parametrize("broken", ["lose", "reorder"])
def test_outbox_check_reports_a_relay_that_loses_or_reorders(broken: str) -> None:
    # Given a small fault-free world played to the end
    with seeded_uuid4(6), time_machine.travel(START, tick=False) as traveller, mock_aws():
        world = World(6, 3, SimClock(traveller), rates=FaultRates.none(), concurrent_rate=0)
        try:
            world.build()
            world.play()
            world.plan.enabled = False
            # When the relay drops the last event of a record, or reverses a record's events
            tamper = (lambda e: e[:-1]) if broken == "lose" else (lambda e: e[::-1])
            totals, problems = check_outbox(world, tamper=tamper, bus_event_types="*")
        finally:
            set_dependencies(None)
            reset_clients()
    # Then the check reports it
    assert totals["events_expected"] > 0
    assert any(p.startswith("outbox: post") for p in problems), problems


def test_outbox_check_reports_a_lost_notification() -> None:
    # Given a small fault-free world played to the end
    with seeded_uuid4(7), time_machine.travel(START, tick=False) as traveller, mock_aws():
        world = World(7, 3, SimClock(traveller), rates=FaultRates.none(), concurrent_rate=0)
        try:
            world.build()
            world.play()
            world.plan.enabled = False
            # When the fan-out drops the last event of every record
            totals, problems = check_outbox(world, notify_tamper=lambda e: e[:-1])
        finally:
            set_dependencies(None)
            reset_clients()
    # Then the check reports the notifications that never arrived
    assert totals["notifications_expected"] > totals["notifications_accepted"]
    assert any(p.startswith("notify: ") for p in problems), problems
