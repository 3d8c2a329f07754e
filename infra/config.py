"""Typed stage configuration: every value the CDK app needs, validated once, read once in app.py.

A stage (``-c stage=dev|prod``) starts from :data:`STAGE_DEFAULTS` and may be overridden by the
context object ``scheduled-posts:<stage>`` (in ``cdk.json`` or ``-c``). Service settings are the
fields of :class:`scheduled_posts.settings.Settings` under the same names, so the Lambdas read
exactly what the stage config says; resource names (tables, queues, the cursor secret) are set
by the stack, never by the config. Constructs receive a :class:`StageConfig` and never read the
environment.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from scheduled_posts import sizing
from scheduled_posts.settings import SQS_MAX_DELAY_SECONDS, Settings

#: EventBridge Scheduler's smallest rate is one minute (EventBridge Scheduler User Guide,
#: "Schedule types": ``rate(value unit)`` with unit minutes/hours/days).
SCHEDULE_MIN_PERIOD_SECONDS = 60

#: How much longer than the sweep period the lookahead must be: the sweeper's own run time
#: (its Lambda timeout, :attr:`StageConfig.sweeper_timeout_seconds`, at most 50 s) plus the
#: scheduler's delivery delay. With a shorter lookahead a post could fall due before the next
#: sweep has sent it.
LOOKAHEAD_MARGIN_SECONDS = 60

#: CloudWatch Logs retention values accepted by ``AWS::Logs::LogGroup`` (days).
LOG_RETENTION_DAYS_ALLOWED = frozenset(
    {1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557,
     2922, 3288, 3653}
)  # fmt: skip

#: Settings set by the stack from its resources, never by a stage config.
RESOURCE_SETTINGS = frozenset(
    {
        "POSTS_TABLE_NAME",
        "DUE_INDEX_TABLE_NAME",
        "IDEMPOTENCY_TABLE_NAME",
        "DISPATCH_QUEUE_URL",
        "DISPATCH_QUEUE_URLS",
        "DISPATCH_DLQ_URL",
        "EVENT_BUS_NAME",
        "NOTIFY_QUEUE_URL",
        "NOTIFY_DLQ_URL",
        "IMPORT_QUEUE_URL",
        "IMPORT_DLQ_URL",
        "CURSOR_SECRET",
        "CURSOR_SECRET_ARN",
        "CREDENTIALS_KEY_ID",
        "MEDIA_BUCKET_NAME",
    }
)

#: The Settings fields a stage config passes to every Lambda (all tunables).
SERVICE_SETTINGS: tuple[str, ...] = tuple(
    name for name in Settings.model_fields if name not in RESOURCE_SETTINGS
)


class StageConfig(BaseModel):
    """One deployment stage. Durations in seconds, sizes in MB, rates per second.

    Raises
    ------
    pydantic.ValidationError
        When a value is out of range or the values do not fit together (lookahead versus the
        sweep period, worker timeout versus batch size, lease versus one post's processing).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    stage: Literal["dev", "prod"]
    service_name: str = "scheduled-posts"
    metrics_namespace: str = "ScheduledPosts"
    #: RETAIN tables, user pool, secret and log groups on stack deletion (prod), else DESTROY.
    retain_data: bool
    log_retention_days: int = 30
    #: Lambda runtime minor version of Python 3 (12 means python3.12); the layer's wheels are
    #: resolved for the same version.
    python_minor: int = Field(12, ge=12, le=14)

    #: SNS topic for alarms; the stack creates an encrypted one when None.
    alarm_topic_arn: str | None = None
    #: External JWT issuer and audience; None creates a Cognito user pool and app client.
    jwt_issuer: str | None = None
    jwt_audience: tuple[str, ...] = ()

    #: X-Ray tracing: the functions' tracing mode Active and Powertools' Tracer on
    #: (``POWERTOOLS_TRACE_DISABLED=false``); off, the functions are not traced and no
    #: handler imports the X-Ray SDK (about 105 ms of each cold start, ``bench/cold_start.py``;
    #: docs/decisions.md "Tracing off unless a stage turns it on").
    tracing_enabled: bool = False

    api_throttle_rate_limit: float = Field(50.0, gt=0)
    api_throttle_burst_limit: int = Field(100, ge=1)

    #: Worker sizing defaults and rules: :mod:`scheduled_posts.sizing` (shared with local/).
    worker_batch_size: int = Field(sizing.DEFAULT_WORKER_BATCH_SIZE, ge=1, le=10)
    worker_timeout_seconds: int = Field(sizing.DEFAULT_WORKER_TIMEOUT_SECONDS, ge=10, le=900)
    #: SQS event-source maximum concurrency, 2 to 1000 (AWS Lambda Developer Guide), per
    #: dispatch queue: the worker may run ``dispatch_queue_count`` times as many batches.
    worker_max_concurrency: int = Field(10, ge=2, le=1000)
    #: Dispatch queues, each with its own event source mapping to the worker (decision "Several
    #: dispatch queues, and the settings named for a million posts a minute"). One mapping scales to
    #: 1,000 concurrent batches at most, adding at most 300 a minute (AWS Lambda Developer Guide,
    #: "SQS event source mapping" scaling): ten carry a million posts due in one minute in the
    #: capacity model (``docs/capacity.md``). All share one DLQ.
    dispatch_queue_count: int = Field(1, ge=1, le=20)
    #: Warm throughput (write request units per second) of the posts and idempotency tables, or
    #: None for a new on-demand table's 4,000 (DynamoDB Developer Guide, "On-demand capacity
    #: mode" and "Understanding DynamoDB warm throughput"). The capacity model
    #: (``docs/capacity.md``) sizes it for a burst of due posts: about 6 posts-table and 2
    #: idempotency write units per one-channel post per second of the burst.
    table_warm_write_units_per_second: int | None = Field(None, ge=4000, le=400_000)
    api_timeout_seconds: int = Field(29, ge=3, le=30)
    sweeper_timeout_seconds: int = Field(50, ge=10, le=LOOKAHEAD_MARGIN_SECONDS - 10)
    watchdog_timeout_seconds: int = Field(50, ge=10, le=900)
    reconciler_timeout_seconds: int = Field(240, ge=10, le=900)
    materializer_timeout_seconds: int = Field(120, ge=10, le=900)
    #: The verifier reads at most ``VERIFY_MAX_POSTS_PER_RUN`` posts back, each read bounded by
    #: the outbound timeouts.
    verifier_timeout_seconds: int = Field(240, ge=10, le=900)
    #: Every function's memory (MB). The worker's stays 512: it holds a post's media whole, and
    #: a smaller size would save at most $0.36 per million posts (decisions, "Cost per post:
    #: the worker's Lambda time").
    memory_mb: int = Field(512, ge=128, le=10_240)
    #: The sweeper's memory when not ``memory_mb``: its share of a vCPU (one at 1,769 MB; Lambda
    #: Developer Guide, "Configure Lambda function memory") bounds how many due posts a run can
    #: send (about 4,400 a second at one vCPU, ``bench/sweeper_cpu.py``; decision "The sweeper stops
    #: before its timeout, and the million's sweep is priced in CPU").
    sweeper_memory_mb: int | None = Field(None, ge=128, le=10_240)

    #: Scheduler retry policy for the three scheduled Lambdas.
    schedule_retry_attempts: int = Field(2, ge=0, le=185)

    lag_alarm_p99_seconds: float = Field(60.0, gt=0)
    #: Alarm when the oldest stream record the relay has not sent is older than this (its
    #: ``IteratorAge``): outcome events are that late.
    relay_iterator_age_alarm_seconds: int = Field(60, ge=1)

    settings: Settings = Field(default_factory=Settings)

    @model_validator(mode="after")
    def _check(self) -> StageConfig:
        s = self.settings
        if self.log_retention_days not in LOG_RETENTION_DAYS_ALLOWED:
            raise ValueError(
                f"log_retention_days must be one of {sorted(LOG_RETENTION_DAYS_ALLOWED)}"
            )
        if (self.jwt_issuer is None) != (not self.jwt_audience):
            raise ValueError("jwt_issuer and jwt_audience are given together or not at all")
        for name in ("SWEEP_INTERVAL_SECONDS", "WATCHDOG_INTERVAL_SECONDS",
                     "RECONCILE_INTERVAL_SECONDS"):  # fmt: skip
            value = getattr(s, name)
            if value < SCHEDULE_MIN_PERIOD_SECONDS or value % 60:
                raise ValueError(f"{name} must be a whole number of minutes, at least 60")
        minimum = s.SWEEP_INTERVAL_SECONDS + LOOKAHEAD_MARGIN_SECONDS
        if not minimum < s.LOOKAHEAD_SECONDS <= SQS_MAX_DELAY_SECONDS:
            raise ValueError(
                f"LOOKAHEAD_SECONDS must be > SWEEP_INTERVAL_SECONDS + {LOOKAHEAD_MARGIN_SECONDS}"
                f" ({minimum}) and <= {SQS_MAX_DELAY_SECONDS}"
            )
        if s.allowed_origins:
            raise ValueError(
                "OUTBOUND_ALLOWED_ORIGINS (and WEBHOOK_ALLOWED_ORIGINS) must be empty in AWS"
                " (local testing only)"
            )
        errors = sizing.worker_sizing_errors(self.worker_timeout_seconds, self.worker_batch_size, s)
        if errors:
            raise ValueError("; ".join(errors))
        return self

    @property
    def post_seconds(self) -> float:
        """Worst-case seconds for one post: one delivery timeout plus overhead (concurrent)."""
        return sizing.post_seconds(self.settings.DELIVERY_TIMEOUT_SECONDS)

    @property
    def visibility_timeout_seconds(self) -> int:
        """Dispatch queue visibility timeout: 6 x the worker's timeout."""
        return sizing.visibility_timeout_seconds(self.worker_timeout_seconds)

    @property
    def python_version(self) -> str:
        """``3.<minor>``, for the runtime and pip's ``--python-version``."""
        return f"3.{self.python_minor}"

    def service_environment(self) -> dict[str, str]:
        """Every tunable Settings field as a Lambda environment variable (same names)."""
        dumped = self.settings.model_dump()
        return {name: _env_value(dumped[name]) for name in SERVICE_SETTINGS}


def _env_value(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


#: Per-stage defaults; ``scheduled-posts:<stage>`` context overrides any of them.
STAGE_DEFAULTS: dict[str, dict[str, Any]] = {
    "dev": {
        "stage": "dev",
        "retain_data": False,
        "log_retention_days": 14,
        "worker_max_concurrency": 5,
        "tracing_enabled": False,
        "api_throttle_rate_limit": 20.0,
        "api_throttle_burst_limit": 40,
        "settings": {"RETENTION_DAYS": 14},
    },
    "prod": {
        "stage": "prod",
        "retain_data": True,
        "log_retention_days": 90,
        # 100,000 one-channel posts due in one minute: p99 lag 17.7 s in the capacity model
        # with these two (docs/capacity.md, row "CDK prod defaults"; decision "The CDK app's
        # defaults carry the capacity model's answer for 100,000 posts a minute, in prod").
        "worker_max_concurrency": 500,
        "table_warm_write_units_per_second": 20_000,
        # Traces of the live service are worth the X-Ray SDK's import in each cold start.
        "tracing_enabled": True,
        "api_throttle_rate_limit": 200.0,
        "api_throttle_burst_limit": 400,
        # SWEEP_PARALLELISM 8: the model's longest sweep for 100,000 posts is 12.9 s, where
        # the shards in turn take 101 s, past the sweeper's 50 s timeout (decision "The sweeper
        # sweeps shards on threads").
        "settings": {"WRITE_SHARD_COUNT": 16, "SWEEP_PARALLELISM": 8},
    },
}

#: The settings ``docs/capacity.md`` names for 1,000,000 one-channel posts due in one minute
#: (decision "Several dispatch queues, and the settings named for a million posts a minute"), as a
#: ``scheduled-posts:prod`` context override: ten dispatch queues and worker mappings of up to 1,000
#: concurrent batches each, posts and idempotency tables pre-warmed to 100,000 write units/s, 64
#: write shards swept on 64 threads by a sweeper with one full vCPU (1,769 MB: the million's sweep
#: is CPU-bound, decision "The sweeper stops before its timeout, and the million's sweep is priced
#: in CPU"). Beside them, the account's Lambda concurrency in the Region raised to 4,000 (a Service
#: Quotas request; the model's peak is 3,836 concurrent batches). ``tests/infrastructure``
#: synthesizes prod with it.
MILLION_A_MINUTE_OVERRIDES: dict[str, Any] = {
    "dispatch_queue_count": 10,
    "worker_max_concurrency": 1000,
    "table_warm_write_units_per_second": 100_000,
    "sweeper_memory_mb": 1769,
    "settings": {"WRITE_SHARD_COUNT": 64, "SWEEP_PARALLELISM": 64},
}


def load_stage_config(stage: str, overrides: Mapping[str, Any] | None = None) -> StageConfig:
    """Build and validate the config of ``stage`` from its defaults and ``overrides``.

    ``overrides`` may hold any :class:`StageConfig` field; its ``settings`` object is merged
    into the stage's settings (unknown or resource-set setting names are refused).

    Raises
    ------
    ValueError
        Unknown stage or setting name. ``pydantic.ValidationError`` (a ``ValueError``) for
        invalid values.
    """
    if stage not in STAGE_DEFAULTS:
        raise ValueError(f"unknown stage {stage!r}; expected one of {sorted(STAGE_DEFAULTS)}")
    merged: dict[str, Any] = {**STAGE_DEFAULTS[stage], **dict(overrides or {})}
    settings = {
        **STAGE_DEFAULTS[stage].get("settings", {}),
        **(overrides or {}).get("settings", {}),
    }
    unknown = sorted(set(settings) - set(SERVICE_SETTINGS))
    if unknown:
        raise ValueError(f"settings not settable by a stage config: {unknown}")
    merged["settings"] = Settings.model_validate(settings)
    merged["stage"] = stage
    return StageConfig.model_validate(merged)
