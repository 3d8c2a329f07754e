"""Local-stack configuration, read from the environment of ``make run``.

The service's own settings keep their :class:`scheduled_posts.settings.Settings` names (the ones
the deployed Lambdas get); the names below are the local stack's own (ports, the local JWT
check, the emulated Lambda limits).
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass

from scheduled_posts import sizing

DEFAULT_JWT_SECRET = "local-dev-secret-not-for-production"  # noqa: S105 (a documented dev default)
#: Loopback webhooks are allowed locally (the deployed default forbids them).
DEFAULT_ALLOWED_ORIGINS = "http://127.0.0.1"


@dataclass(frozen=True)
class LocalConfig:
    """Ports, the local JWT check and the emulated Lambda limits.

    Attributes
    ----------
    aws_port, api_port, receiver_port:
        ``AWS_PORT`` (4566), ``API_PORT`` (8080), ``RECEIVER_PORT`` (9000), on 127.0.0.1.
    jwt_secret, jwt_issuer, jwt_audience:
        ``LOCAL_JWT_SECRET`` (HS256 key), ``LOCAL_JWT_ISSUER`` and ``LOCAL_JWT_AUDIENCE``
        (checked only when set, like the deployed authorizer's configured issuer and audience).
    worker_timeout_seconds:
        ``WORKER_TIMEOUT_SECONDS`` (150, the deployed default): the emulated Lambda timeout of
        the publish worker; the context's remaining time counts down from it, and a created
        dispatch queue hides a received message for 6 x this (the AWS guidance for SQS event
        sources, :func:`scheduled_posts.sizing.visibility_timeout_seconds`).
    worker_batch_size:
        ``WORKER_BATCH_SIZE`` (5, the deployed default): the event source mapping's batch size
        (SQS maximum 10). Timeout and batch size must pass the deployed sizing rules
        (:func:`scheduled_posts.sizing.worker_sizing_errors`); the stack checks them at start.
    poll_wait_seconds:
        ``POLL_WAIT_SECONDS`` (2): long-poll wait of each receive (AWS's mapping uses 20; shorter
        here so Ctrl-C stops within a few seconds).
    poll_interval_seconds:
        ``POLL_INTERVAL_SECONDS`` (0.25): the long poll is emulated by short receives this far
        apart, so a delayed message is picked up about as soon as it becomes visible, as SQS
        does (moto's own long poll notices it only about a second later). ``0`` uses moto's.
    mapping_concurrency:
        ``MAPPING_CONCURRENCY`` (5, the concurrent batches Lambda's SQS event source mapping
        starts with: Lambda developer guide, "Understanding Lambda function scaling"): the
        worker batches in flight at once per dispatch queue, each in a worker process of its own
        (:mod:`local.emulation.environments`); ``1`` runs the worker in the stack's own process,
        one batch at a time.
    api_concurrency:
        ``API_CONCURRENCY`` (4): API requests served at once, each in an API process of its own
        (:mod:`local.emulation.environments`), as API Gateway hands concurrent requests to
        separate Lambda environments; ``1`` runs the API in the stack's own process, one
        request at a time.
    scheduled_timeout_seconds:
        ``SCHEDULED_TIMEOUT_SECONDS`` (60): emulated timeout of the sweeper, watchdog, reconciler.
    api_timeout_seconds:
        ``API_TIMEOUT_SECONDS`` (29): emulated API Lambda timeout (API Gateway's integration
        limit is 30 s).
    """

    aws_port: int = 4566
    api_port: int = 8080
    receiver_port: int = 9000
    jwt_secret: str = DEFAULT_JWT_SECRET
    jwt_issuer: str | None = None
    jwt_audience: str | None = None
    worker_timeout_seconds: int = sizing.DEFAULT_WORKER_TIMEOUT_SECONDS
    worker_batch_size: int = sizing.DEFAULT_WORKER_BATCH_SIZE
    poll_wait_seconds: int = 2
    poll_interval_seconds: float = 0.25
    mapping_concurrency: int = 5
    api_concurrency: int = 4
    scheduled_timeout_seconds: int = 60
    api_timeout_seconds: int = 29

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> LocalConfig:
        """Read from ``environ`` (default ``os.environ``); empty values mean the default.

        Raises
        ------
        ValueError
            When a number is malformed, ``WORKER_BATCH_SIZE`` is outside 1..10 or
            ``MAPPING_CONCURRENCY`` or ``API_CONCURRENCY`` is below 1.
        """
        env = os.environ if environ is None else environ

        def num(name: str, default: int) -> int:
            raw = env.get(name, "")
            return int(raw) if raw.strip() else default

        config = cls(
            aws_port=num("AWS_PORT", cls.aws_port),
            api_port=num("API_PORT", cls.api_port),
            receiver_port=num("RECEIVER_PORT", cls.receiver_port),
            jwt_secret=env.get("LOCAL_JWT_SECRET") or DEFAULT_JWT_SECRET,
            jwt_issuer=env.get("LOCAL_JWT_ISSUER") or None,
            jwt_audience=env.get("LOCAL_JWT_AUDIENCE") or None,
            worker_timeout_seconds=num("WORKER_TIMEOUT_SECONDS", cls.worker_timeout_seconds),
            worker_batch_size=num("WORKER_BATCH_SIZE", cls.worker_batch_size),
            poll_wait_seconds=num("POLL_WAIT_SECONDS", cls.poll_wait_seconds),
            poll_interval_seconds=float(env.get("POLL_INTERVAL_SECONDS") or 0.25),
            mapping_concurrency=num("MAPPING_CONCURRENCY", cls.mapping_concurrency),
            api_concurrency=num("API_CONCURRENCY", cls.api_concurrency),
            scheduled_timeout_seconds=num(
                "SCHEDULED_TIMEOUT_SECONDS", cls.scheduled_timeout_seconds
            ),
            api_timeout_seconds=num("API_TIMEOUT_SECONDS", cls.api_timeout_seconds),
        )
        if not 1 <= config.worker_batch_size <= 10:
            raise ValueError("WORKER_BATCH_SIZE must be 1..10 (the SQS receive maximum)")
        if config.mapping_concurrency < 1:
            raise ValueError("MAPPING_CONCURRENCY must be at least 1 (batches in flight at once)")
        if config.api_concurrency < 1:
            raise ValueError("API_CONCURRENCY must be at least 1 (requests served at once)")
        return config


def page_origins(config: LocalConfig) -> tuple[str, ...]:
    """The content calendar's local origins: ``make run`` serves it on the API's port
    (``local/static_site.py``), reached as ``127.0.0.1`` or ``localhost``; the media bucket's
    CORS allows these alone."""
    return tuple(f"http://{host}:{config.api_port}" for host in ("127.0.0.1", "localhost"))


def derived_cursor_secret(jwt_secret: str) -> str:
    """A default ``CURSOR_SECRET`` derived from the JWT secret (HMAC-SHA256, hex).

    Stable across restarts (cursors handed out before a restart stay valid), and different
    from the JWT secret itself.
    """
    return hmac.new(
        jwt_secret.encode(), b"scheduled-posts/cursor-secret", hashlib.sha256
    ).hexdigest()


def apply_service_defaults(environ: MutableMapping[str, str], config: LocalConfig) -> None:
    """Fill in the local defaults of service settings the user did not set.

    ``OUTBOUND_ALLOWED_ORIGINS`` = ``http://127.0.0.1`` (webhook receivers and the network
    stand-ins on loopback); ``WEBHOOK_REFUSED_PORTS`` = the stack's own API and embedded-AWS
    ports (decision "Outbound ports and attempt error words": a channel must never call the service
    itself), added to any the user set; ``CURSOR_SECRET`` derived from
    ``LOCAL_JWT_SECRET``; Powertools quiet (WARNING logs, no EMF on stdout, no X-Ray).
    """
    defaults = {
        "OUTBOUND_ALLOWED_ORIGINS": DEFAULT_ALLOWED_ORIGINS,
        "CURSOR_SECRET": derived_cursor_secret(config.jwt_secret),
        "POWERTOOLS_SERVICE_NAME": "scheduled-posts",
        "POWERTOOLS_LOG_LEVEL": "WARNING",
        "POWERTOOLS_METRICS_DISABLED": "true",
        "POWERTOOLS_TRACE_DISABLED": "true",
    }
    for name, value in defaults.items():
        if not environ.get(name):
            environ[name] = value
    own = [str(config.api_port), str(config.aws_port)]
    refused = [p.strip() for p in environ.get("WEBHOOK_REFUSED_PORTS", "").split(",") if p.strip()]
    environ["WEBHOOK_REFUSED_PORTS"] = ",".join(dict.fromkeys([*refused, *own]))
