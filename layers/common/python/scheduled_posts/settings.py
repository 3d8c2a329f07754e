"""Service settings, read from the environment once, with units in the names.

The same names are used by the deployed Lambdas (set by the CDK app from the stage config) and
by ``make run`` (read from its environment), so a tester can shrink any of them without editing
code. Logic functions receive values from a :class:`Settings`, never ``os.environ``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import lru_cache

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

#: SQS ``DelaySeconds`` maximum (Amazon SQS Developer Guide, "Amazon SQS delay queues").
SQS_MAX_DELAY_SECONDS = 900


class Settings(BaseModel):
    """Every tunable of the service. Field names equal the environment variable names."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    POSTS_TABLE_NAME: str = "scheduled-posts-posts"
    DUE_INDEX_TABLE_NAME: str = "scheduled-posts-due-index"
    IDEMPOTENCY_TABLE_NAME: str = "scheduled-posts-idempotency"
    DISPATCH_QUEUE_URL: str = ""
    #: Every dispatch queue, comma-separated, when there are several (decision "Several dispatch
    #: queues, and the settings named for a million posts a minute": one event source mapping scales
    #: to 1,000 concurrent batches at most); empty: only ``DISPATCH_QUEUE_URL``. Read through
    #: :attr:`dispatch_queue_urls`.
    DISPATCH_QUEUE_URLS: str = ""
    DISPATCH_DLQ_URL: str = ""
    #: The stack's EventBridge custom bus the relay puts outcome events on (``docs/events.md``).
    EVENT_BUS_NAME: str = "scheduled-posts-events"

    LOOKAHEAD_SECONDS: int = Field(600, ge=1, le=SQS_MAX_DELAY_SECONDS)
    SWEEP_INTERVAL_SECONDS: int = Field(60, ge=1, le=3600)
    MISFIRE_GRACE_SECONDS: int = Field(86_400, ge=0)
    RETRY_BASE_SECONDS: float = Field(30.0, gt=0)
    RETRY_CAP_SECONDS: float = Field(900.0, gt=0)
    MAX_ATTEMPTS: int = Field(6, ge=1, le=100)
    LEASE_SECONDS: int = Field(60, ge=5, le=3600)
    MAX_PENDING_POSTS: int = Field(1000, ge=1)
    #: Most drafts one user keeps (decision "Drafts"); drafts never count as pending posts.
    MAX_DRAFTS: int = Field(200, ge=1)
    MAX_SCHEDULE_AHEAD_DAYS: int = Field(30, ge=1, le=365)
    WRITE_SHARD_COUNT: int = Field(8, ge=1, le=1000)
    #: Threads the sweeper sweeps shards on at once (decision "The sweeper sweeps shards on
    #: threads"), each shard on one thread: a
    #: shard's sends and watermark writes are one after another, so a sweep of many due posts
    #: takes about (its SQS batches x their latency) / this. 1: the shards in turn.
    SWEEP_PARALLELISM: int = Field(1, ge=1, le=64)
    #: Origins (``scheme://host[:port]``) outbound calls (webhooks, Mastodon, Bluesky) may reach
    #: over http or at private addresses (``platforms/url_policy.py``). ``WEBHOOK_ALLOWED_ORIGINS``
    #: is its former name, still read: the two lists are joined.
    OUTBOUND_ALLOWED_ORIGINS: str = ""
    WEBHOOK_ALLOWED_ORIGINS: str = ""
    #: Ports besides 443 a webhook URL on a public address may use ("8443,9443"; decision "Outbound
    #: ports and attempt error words").
    WEBHOOK_ALLOWED_PORTS: str = ""
    #: Ports no webhook URL may use, even an allowed origin's (the local stack: its own ports).
    WEBHOOK_REFUSED_PORTS: str = ""
    #: Bounds of a destination's ``Retry-After`` wait, in seconds (decision "`Retry-After` is
    #: clamped, never trusted"): every form of the
    #: header gives a wait in ``[floor, cap]``.
    RETRY_AFTER_FLOOR_SECONDS: float = Field(1.0, ge=0)
    RETRY_AFTER_CAP_SECONDS: float = Field(3600.0, gt=0, le=86_400)
    #: Most waits a destination may ask for per delivery (429s and ``Retry-After``s) before
    #: the delivery fails (decision "One pure retry decision"): with ``MAX_ATTEMPTS`` it bounds the
    #: requests per post.
    MAX_DESTINATION_WAITS: int = Field(10, ge=0, le=1000)
    #: Consecutive timeouts, connection errors or 5xx of one channel that open its breaker
    #: (decision "A breaker per destination"; 0: no breaker).
    BREAKER_FAILURES: int = Field(3, ge=0, le=100)
    #: How long an open breaker defers the channel's deliveries before one probe attempt.
    BREAKER_COOLDOWN_SECONDS: int = Field(60, ge=1, le=3600)
    #: Most channels per user (decision "Channel limit by a counter item in the create
    #: transaction": one ``GET /v1/channels`` page must stay far below the
    #: 6 MB Lambda response quota).
    MAX_CHANNELS_PER_USER: int = Field(50, ge=1, le=10_000)
    #: The KMS key (id or ARN) whose data keys seal channel credentials (``data/credentials.py``).
    CREDENTIALS_KEY_ID: str = ""
    RETENTION_DAYS: int = Field(90, ge=1)
    SECRET_OVERLAP_SECONDS: int = Field(86_400, ge=0)
    DELIVERY_TIMEOUT_SECONDS: float = Field(10.0, gt=0, le=60)
    MAX_RECEIVE_COUNT: int = Field(5, ge=2, le=1000)
    WATCHDOG_INTERVAL_SECONDS: int = Field(60, ge=1)
    RECONCILE_INTERVAL_SECONDS: int = Field(300, ge=1)
    RECONCILE_WINDOW_SECONDS: int = Field(3600, ge=60)
    #: Scheduled verification (``logic/verify_job.py``): how often it runs, how far back it looks
    #: for published deliveries (hours; at most 24, since due entries live
    #: ``MISFIRE_GRACE_SECONDS`` + 1 day), how old a ``verified_at`` may be before it is read
    #: again, and the most posts one run reads back.
    VERIFY_INTERVAL_SECONDS: int = Field(300, ge=60, le=86_400)
    VERIFY_WINDOW_HOURS: int = Field(6, ge=1, le=24)
    VERIFY_REVERIFY_SECONDS: int = Field(3600, ge=60)
    VERIFY_MAX_POSTS_PER_RUN: int = Field(50, ge=1, le=1000)
    #: Recurring schedules (``docs/recurring.md``): the shortest wall-clock gap between two
    #: occurrences (cron's resolution is a minute), how far ahead occurrences exist as posts (the
    #: earlier of the two limits), how often the materializer runs, and active series per user.
    MIN_RECURRENCE_INTERVAL_SECONDS: int = Field(300, ge=60, le=86_400)
    RECURRENCE_HORIZON_HOURS: int = Field(48, ge=1, le=24 * 30)
    RECURRENCE_MAX_AHEAD: int = Field(20, ge=1, le=1000)
    MATERIALIZE_INTERVAL_SECONDS: int = Field(300, ge=1, le=3600)
    MAX_SERIES_PER_USER: int = Field(100, ge=1)
    #: Media uploads (``docs/api.md``, "Media"): the private bucket of their bytes, the largest
    #: upload (bytes; at most ``models.media.MAX_MEDIA_BYTES``, 100 MiB), how long a pre-signed
    #: upload form is valid, pending uploads per user at once (a 409 past it), and the largest
    #: image in pixels: Mastodon's default ``image_matrix_limit`` (33,177,600 = 7680 x 4320,
    #: ``app/models/media_attachment.rb``), a guard against decompression bombs.
    #: The private bucket of uploads (``scheduled_posts/buckets.py``).
    MEDIA_BUCKET_NAME: str = "scheduled-posts-media"
    MAX_MEDIA_BYTES: int = Field(100 * 1024 * 1024, ge=1, le=100 * 1024 * 1024)
    MEDIA_UPLOAD_EXPIRES_SECONDS: int = Field(900, ge=60, le=3600)
    MAX_PENDING_MEDIA_PER_USER: int = Field(100, ge=1, le=10_000)
    MEDIA_MAX_PIXELS: int = Field(33_177_600, ge=1, le=178_956_970)
    #: HMAC key for pagination cursors. Locally a plain value; in AWS the CDK app stores it in
    #: Secrets Manager and passes ``CURSOR_SECRET_ARN`` instead.
    CURSOR_SECRET: str = ""
    CURSOR_SECRET_ARN: str = ""
    #: Notification endpoints (``docs/events.md``): the notify queue and its DLQ,
    #: deliveries per notification before the DLQ (the queue's ``maxReceiveCount``), one
    #: request's wall-clock bound, the backoff between tries (full jitter; the cap stays within
    #: the 12 h SQS visibility ceiling) and endpoints per user.
    NOTIFY_QUEUE_URL: str = ""
    NOTIFY_DLQ_URL: str = ""
    NOTIFY_MAX_ATTEMPTS: int = Field(8, ge=1, le=1000)
    NOTIFY_TIMEOUT_SECONDS: float = Field(5.0, gt=0, le=30)
    NOTIFY_RETRY_BASE_SECONDS: float = Field(30.0, gt=0)
    NOTIFY_RETRY_CAP_SECONDS: float = Field(3600.0, gt=0, le=43_200)
    #: Bulk imports (decision "Bulk import"): the import queue (one message per chunk of 100
    #: rows) and its DLQ, whose arrival marks the import ``failed``.
    IMPORT_QUEUE_URL: str = ""
    IMPORT_DLQ_URL: str = ""
    MAX_NOTIFICATION_ENDPOINTS_PER_USER: int = Field(10, ge=1, le=1000)
    #: Event types the relay puts on the EventBridge bus, comma-separated (``*``: every type;
    #: empty: none). Every event stays in the feed and goes to notifications whatever this says
    #: (decisions, "The bus carries the outcomes a deployment asks for").
    BUS_EVENT_TYPES: str = (
        "post.published,post.partially_published,post.failed,post.missed,delivery.failed"
    )

    @field_validator("OUTBOUND_ALLOWED_ORIGINS", "WEBHOOK_ALLOWED_ORIGINS")
    @classmethod
    def _strip_origins(cls, value: str) -> str:
        return ",".join(part.strip() for part in value.split(",") if part.strip())

    @field_validator("BUS_EVENT_TYPES")
    @classmethod
    def _check_bus_types(cls, value: str) -> str:
        from scheduled_posts.models.events import EventType

        parts = [part.strip() for part in value.split(",") if part.strip()]
        known = {t.value for t in EventType} | {"*"}
        for part in parts:
            if part not in known:
                raise ValueError(f"{part!r} is not an event type (docs/events.md) or *")
        return ",".join(parts)

    @property
    def bus_event_types(self) -> frozenset[str] | None:
        """The types :attr:`BUS_EVENT_TYPES` names; None: every type."""
        parts = frozenset(p for p in self.BUS_EVENT_TYPES.split(",") if p)
        return None if "*" in parts else parts

    @field_validator("WEBHOOK_ALLOWED_PORTS", "WEBHOOK_REFUSED_PORTS")
    @classmethod
    def _check_ports(cls, value: str) -> str:
        parts = [part.strip() for part in value.split(",") if part.strip()]
        for part in parts:
            if not part.isdigit() or not 1 <= int(part) <= 65535:
                raise ValueError(f"{part!r} is not a port from 1 to 65535")
        return ",".join(parts)

    @model_validator(mode="after")
    def _check_retry(self) -> Settings:
        if self.RETRY_CAP_SECONDS < self.RETRY_BASE_SECONDS:
            raise ValueError("RETRY_CAP_SECONDS must be >= RETRY_BASE_SECONDS")
        if self.NOTIFY_RETRY_CAP_SECONDS < self.NOTIFY_RETRY_BASE_SECONDS:
            raise ValueError("NOTIFY_RETRY_CAP_SECONDS must be >= NOTIFY_RETRY_BASE_SECONDS")
        if self.RETRY_AFTER_CAP_SECONDS < self.RETRY_AFTER_FLOOR_SECONDS:
            raise ValueError("RETRY_AFTER_CAP_SECONDS must be >= RETRY_AFTER_FLOOR_SECONDS")
        return self

    @property
    def dispatch_queue_urls(self) -> tuple[str, ...]:
        """The dispatch queues' URLs in order: ``DISPATCH_QUEUE_URLS`` split on commas, else
        ``DISPATCH_QUEUE_URL`` alone."""
        listed = tuple(u.strip() for u in self.DISPATCH_QUEUE_URLS.split(",") if u.strip())
        return listed or (self.DISPATCH_QUEUE_URL,)

    @property
    def allowed_ports(self) -> tuple[int, ...]:
        """``WEBHOOK_ALLOWED_PORTS`` as integers."""
        return tuple(int(p) for p in self.WEBHOOK_ALLOWED_PORTS.split(",") if p)

    @property
    def refused_ports(self) -> tuple[int, ...]:
        """``WEBHOOK_REFUSED_PORTS`` as integers."""
        return tuple(int(p) for p in self.WEBHOOK_REFUSED_PORTS.split(",") if p)

    @property
    def allowed_origins(self) -> tuple[str, ...]:
        """``OUTBOUND_ALLOWED_ORIGINS`` and ``WEBHOOK_ALLOWED_ORIGINS`` split into
        ``scheme://host[:port]`` entries, without repeats."""
        joined = f"{self.OUTBOUND_ALLOWED_ORIGINS},{self.WEBHOOK_ALLOWED_ORIGINS}"
        return tuple(dict.fromkeys(o for o in joined.split(",") if o))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Build from an environment mapping (default ``os.environ``); unknown names are ignored.

        Raises
        ------
        pydantic.ValidationError
            When a value is out of range (e.g. ``LOOKAHEAD_SECONDS`` > 900).
        """
        env = os.environ if environ is None else environ
        names = cls.model_fields.keys()
        return cls.model_validate({k: env[k] for k in names if k in env and env[k] != ""})


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once from ``os.environ``."""
    return Settings.from_env()
