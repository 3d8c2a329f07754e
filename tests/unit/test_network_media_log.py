"""The network's media ids of a delivery (``data/network_media.py``), on moto: stored once,
the first holder's id wins, read back per delivery."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from moto import mock_aws

from scheduled_posts.data.aws import reset_clients
from scheduled_posts.data.network_media import NetworkMediaLog
from tests.support.fixtures import create_resources

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)


@pytest.fixture
def log() -> Iterator[NetworkMediaLog]:
    with mock_aws():
        reset_clients()
        yield NetworkMediaLog(create_resources().settings.POSTS_TABLE_NAME)
        reset_clients()


def test_an_id_is_stored_once_and_the_first_wins(log: NetworkMediaLog) -> None:
    assert log.known("s1:c1") == {}
    assert log.remember("s1:c1", "m1", "109", now=NOW) == "109"
    assert log.remember("s1:c1", "m1", "110", now=NOW) == "109"  # a racing holder's upload
    assert log.remember("s1:c1", "m2", "111", now=NOW) == "111"
    assert log.known("s1:c1") == {"m1": "109", "m2": "111"}


def test_ids_are_per_delivery(log: NetworkMediaLog) -> None:
    log.remember("s1:c1", "m1", "109", now=NOW)
    assert log.known("s1:c2") == {} and log.known("s2:c1") == {}
