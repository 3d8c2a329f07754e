"""The worker's measured CPU (``bench/worker_cpu.py``) and its Lambda model (``bench/cost.py``)."""

from __future__ import annotations

import time

import pytest

from bench.cost import FULL_VCPU_MB, _worker_cost
from bench.prices import PRICES
from bench.worker_cpu import WorkerCpu


def _burn(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_worker_cpu_excluded_work_is_not_charged() -> None:
    # Given a worker invocation that spends CPU of its own and inside an excluded call
    cpu = WorkerCpu()
    emulated = cpu.excluding(_burn)

    # When it is measured
    cpu.measure(lambda: (_burn(0.02), emulated(0.2)))

    # Then only its own part is charged (the excluded 0.2 s is not)
    assert 0.015 <= cpu.seconds < 0.1
    assert cpu.invocations == 1


def _per(cpu_seconds: float, invocations: float) -> dict[str, float]:
    return {
        "worker_cpu_seconds": cpu_seconds,
        "worker_wait_seconds": 0.3,
        "worker_invocations": invocations,
    }


def test_worker_cost_batch_of_five_shares_the_wait() -> None:
    # The records of a batch run on threads: five posts in one batch wait once.
    alone = _worker_cost(_per(0.01, 1.0), 1.0, 512)
    batched = _worker_cost(_per(0.01, 0.2), 5.0, 512)
    assert batched < alone / 3


def test_worker_cost_cpu_stretches_below_one_vcpu() -> None:
    # Pure CPU (no wait) costs the same GB-seconds at any memory up to one vCPU.
    per = {**_per(0.5, 1.0), "worker_wait_seconds": 0.0}
    request = PRICES["lambda_request"].cost(1.0)
    small = _worker_cost(per, 1.0, 256) - request
    full = _worker_cost(per, 1.0, FULL_VCPU_MB) - request
    assert small == pytest.approx(full)
    # Waiting costs in proportion to the memory.
    waiting = {**_per(0.0, 1.0)}
    assert _worker_cost(waiting, 1.0, 1024) - request == pytest.approx(
        2 * (_worker_cost(waiting, 1.0, 512) - request)
    )
