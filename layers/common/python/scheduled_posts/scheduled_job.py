"""The one Lambda entry point of the scheduled jobs (EventBridge Scheduler: the reconciler,
verifier, materializer and watchdog): run the job once, log its summary, fail the invocation
when any item failed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any, Protocol, TypeVar

from aws_lambda_powertools.utilities.typing import LambdaContext

from scheduled_posts.observability import logger, metrics, tracer

Handler = Callable[[dict[str, Any], LambdaContext], dict[str, Any]]


class JobResult(Protocol):
    """What a scheduled job's run returns: a dataclass with a count of failed items."""

    failures: int


R = TypeVar("R", bound=JobResult)


def scheduled_job_handler(
    name: str,
    run: Callable[[], R],
    *,
    failed: Callable[[int], str],
    fields: Sequence[str] | None = None,
) -> Handler:
    """A scheduled job's entry point: Powertools logging (context injected, state cleared),
    tracing and metrics around one ``run()``.

    Answers the run's summary: ``fields`` of the result (all of them, by ``asdict``, when
    ``None``), logged as ``"<name> run"``. Raises ``RuntimeError(failed(result.failures))``
    after the run when ``failures`` is not 0: after every other item was handled, failing the
    invocation makes the Lambda Errors alarm fire, and the next run retries what failed.
    """

    @logger.inject_lambda_context(clear_state=True)
    @tracer.capture_lambda_handler
    @metrics.log_metrics
    def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        result = run()
        if fields is None:
            summary = asdict(result)  # type: ignore[call-overload]
        else:
            summary = {field: getattr(result, field) for field in fields}
        logger.info(f"{name} run", extra=summary)
        if result.failures:
            raise RuntimeError(failed(result.failures))
        return dict(summary)

    return handler
