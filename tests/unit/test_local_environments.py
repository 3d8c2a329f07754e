"""Worker processes as Lambda execution environments: one invocation at a time each, own state."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from local.emulation.environments import InvocationError, ProcessFunction


@pytest.fixture
def function() -> Iterator[ProcessFunction]:
    fn = ProcessFunction(
        "environment", 30, environments=2, module="tests.support.environment_handler"
    )
    fn.start()
    yield fn
    fn.stop()


def test_each_environment_is_its_own_process_with_its_own_module_state(
    function: ProcessFunction,
) -> None:
    answers = [function.invoke({})[0] for _ in range(4)]

    pids = [a["pid"] for a in answers]
    assert os.getpid() not in pids
    assert len(set(pids)) == 2  # two environments, each reused (warm)
    by_pid: dict[int, list[int]] = {}
    for answer in answers:
        by_pid.setdefault(answer["pid"], []).append(answer["invocations"])
    assert sorted(by_pid.values()) == [[1, 2], [1, 2]]  # no state shared between them
    assert len({a["request_id"] for a in answers}) == 4


def test_a_handler_error_is_raised_and_the_environment_stays(function: ProcessFunction) -> None:
    with pytest.raises(InvocationError, match="asked to fail"):
        function.invoke({"fail": True})
    _, context = function.invoke({})
    assert context.get_remaining_time_in_millis() > 0


def test_a_dead_environment_is_replaced_by_a_cold_one(function: ProcessFunction) -> None:
    with pytest.raises(InvocationError, match="died"):
        function.invoke({"exit": True})
    answers = [function.invoke({})[0] for _ in range(2)]
    assert sorted(a["invocations"] for a in answers) == [1, 1]  # one new, one never used


def test_an_environment_ignores_ctrl_c_and_stops_when_its_parent_stops_it(
    function: ProcessFunction,
) -> None:
    # Given a warm environment, when Ctrl-C's SIGINT reaches it (the terminal signals the whole
    # process group), then it prints no traceback and keeps serving; stop() still ends it.
    import signal

    pids = {function.invoke({})[0]["pid"] for _ in range(4)}
    for pid in pids:
        os.kill(pid, signal.SIGINT)
    assert {function.invoke({})[0]["pid"] for _ in range(4)} <= pids  # none died or was replaced
    function.stop()  # joins its processes
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
