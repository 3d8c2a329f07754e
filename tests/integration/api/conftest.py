"""Fixtures of the API tests: the handler pointed at moto and the SimClock, two callers."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from moto import mock_aws

from scheduled_posts.settings import Settings
from tests.support.api import ApiClient, RecordingPromoter, install_api, uninstall_api
from tests.support.fixtures import AwsResources


@pytest.fixture
def promoted(aws: AwsResources, clock) -> Iterator[RecordingPromoter]:
    """Install the API on the test's moto tables; yields the recording promoter."""
    recorder = install_api(aws.settings, clock)
    yield recorder
    uninstall_api()


@pytest.fixture
def bare(clock) -> Iterator[ApiClient]:  # type: ignore[no-untyped-def]
    """Caller ``alice`` on a moto backend without tables: for requests that must be refused
    before any I/O (a test that reaches DynamoDB gets a 500 and fails)."""
    with mock_aws():
        install_api(Settings(CURSOR_SECRET="x"), clock)
        yield ApiClient("alice")
        uninstall_api()


@pytest.fixture
def alice(promoted: RecordingPromoter) -> ApiClient:
    return ApiClient("alice")


@pytest.fixture
def bob(promoted: RecordingPromoter) -> ApiClient:
    return ApiClient("bob")


@dataclass
class Tables:
    """boto3 ``Table`` resources of the test's moto tables, for arranging and asserting."""

    posts: Any
    due: Any

    def post_item(self, schedule_id: str) -> dict[str, Any] | None:
        return self.posts.get_item(Key={"pk": f"POST#{schedule_id}", "sk": "POST"}).get("Item")

    def due_items(self) -> list[dict[str, Any]]:
        return list(self.due.scan()["Items"])

    def set_post(self, post_id: str, /, **attributes: Any) -> None:
        """Overwrite attributes of a post item directly (to play the worker's part)."""
        schedule_id = post_id
        names = {f"#a{i}": k for i, k in enumerate(attributes)}
        values = {f":a{i}": v for i, v in enumerate(attributes.values())}
        self.posts.update_item(
            Key={"pk": f"POST#{schedule_id}", "sk": "POST"},
            UpdateExpression="SET " + ", ".join(f"#a{i} = :a{i}" for i in range(len(names))),
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=values,
        )


@pytest.fixture
def tables(aws: AwsResources) -> Tables:
    dynamodb = boto3.resource("dynamodb", region_name="us-east-1")
    return Tables(
        posts=dynamodb.Table(aws.settings.POSTS_TABLE_NAME),
        due=dynamodb.Table(aws.settings.DUE_INDEX_TABLE_NAME),
    )


def pytest_configure(config: pytest.Config) -> None:
    # Powertools warns when an invocation emitted no metric; that is expected for reads.
    config.addinivalue_line("filterwarnings", "ignore:No application metrics:UserWarning")
