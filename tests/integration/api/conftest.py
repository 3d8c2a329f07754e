"""Fixtures of the API tests: the handler pointed at moto and the SimClock, two callers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.api import ApiClient, RecordingPromoter, install_api, uninstall_api
from tests.support.fixtures import AwsResources


@pytest.fixture
def promoted(aws: AwsResources, clock) -> Iterator[RecordingPromoter]:
    """Install the API on the test's moto tables; yields the recording promoter."""
    recorder = install_api(aws.settings, clock)
    yield recorder
    uninstall_api()


@pytest.fixture
def alice(promoted: RecordingPromoter) -> ApiClient:
    return ApiClient("alice")


@pytest.fixture
def bob(promoted: RecordingPromoter) -> ApiClient:
    return ApiClient("bob")
