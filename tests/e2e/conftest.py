"""Fixtures shared by the local-stack tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from local.emulation.receiver import Receiver


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A webhook (and notification) receiver on loopback, stopped after the test."""
    rcv = Receiver().start()
    yield rcv
    rcv.stop()
