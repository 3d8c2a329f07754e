"""The embedded AWS: a moto server on a loopback port, and the service's tables and queues in it.

The server runs in its own process (``python -m local aws``), so the service processes can be
restarted while it keeps its (in-memory) state; :func:`ensure_server` reuses a server already
listening on the port. Resources are built from :mod:`scheduled_posts.tables`, the definitions
the CDK app uses, and only the missing ones are created, so a reused server keeps every post.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import boto3
from botocore.config import Config

from local.emulation import resources
from local.emulation.s3_post_policy import PostPolicyApp
from local.moto_speed import fast_moto_transactions
from scheduled_posts.buckets import MEDIA_BUCKET
from scheduled_posts.tables import (
    ALL_QUEUES,
    ALL_TABLES,
    IMPORT_MAX_RECEIVES,
    IMPORT_QUEUES,
    NOTIFY_QUEUES,
)

log = logging.getLogger("local.aws")

HOST = "127.0.0.1"
REGION = "us-east-1"
#: Fake credentials: the local stack can never reach a real AWS account.
FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "local",
    "AWS_SECRET_ACCESS_KEY": "local",
    "AWS_SESSION_TOKEN": "local",
}
#: Physical names of the local resources (the CDK app lets CloudFormation generate its own).
QUEUE_NAMES = {"DispatchQueue": "scheduled-posts-dispatch", "DispatchDLQ": "scheduled-posts-dlq"}
#: The notify queue and its DLQ.
NOTIFY_QUEUE_NAMES = {
    "NotifyQueue": "scheduled-posts-notify",
    "NotifyDLQ": "scheduled-posts-notify-dlq",
}
#: The import queue and its DLQ (decision "Bulk import").
IMPORT_QUEUE_NAMES = {
    "ImportQueue": "scheduled-posts-import",
    "ImportDLQ": "scheduled-posts-import-dlq",
}
_FAIL_FAST = Config(retries={"max_attempts": 1}, connect_timeout=2, read_timeout=30)
#: How often a long poll (``ReceiveMessage`` with ``WaitTimeSeconds``) is retried as a short one.
LONG_POLL_STEP_SECONDS = 0.1

StartResponse = Callable[..., Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


class SerialisedApp:
    """WSGI middleware: one request at a time into moto, whose backends are not thread-safe.

    moto's server answers each request on its own thread, and two concurrent
    ``TransactWriteItems`` can fail inside moto (``RuntimeError: dictionary changed size during
    iteration`` while it copies a table), which botocore then retries against a transaction
    that may have committed. Here every request runs under one lock, response body included.

    A long poll (SQS ``ReceiveMessage`` with ``WaitTimeSeconds`` > 0) would hold the lock for
    its whole wait and stall every other request, so it is run as short receives
    (``WaitTimeSeconds`` 0) every ``poll_step_seconds`` until a message arrives or the wait is
    over, outside the lock in between (SQS Developer Guide, "Amazon SQS short and long
    polling": a long poll returns as soon as a message is available).
    """

    def __init__(self, app: WsgiApp, *, poll_step_seconds: float = LONG_POLL_STEP_SECONDS) -> None:
        self.app = app
        self.lock = threading.Lock()
        self.poll_step_seconds = poll_step_seconds

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> list[bytes]:
        wait_seconds, body = _long_poll(environ)
        if not wait_seconds:
            status, headers, payload = self._call(environ)
            start_response(status, headers)
            return [payload]
        deadline = time.monotonic() + wait_seconds
        while True:
            status, headers, payload = self._call(
                {**environ, "wsgi.input": io.BytesIO(body), "CONTENT_LENGTH": str(len(body))}
            )
            done = not status.startswith("200") or _has_messages(payload)
            if done or time.monotonic() + self.poll_step_seconds >= deadline:
                start_response(status, headers)
                return [payload]
            time.sleep(self.poll_step_seconds)

    def _call(self, environ: dict[str, Any]) -> tuple[str, list[tuple[str, str]], bytes]:
        answer: dict[str, Any] = {}
        chunks: list[bytes] = []

        def capture(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            answer["status"], answer["headers"] = status, headers
            return chunks.append

        with self.lock:
            result = self.app(environ, capture)
            try:
                chunks.extend(result)
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()
        return answer["status"], answer["headers"], b"".join(chunks)


def _long_poll(environ: dict[str, Any]) -> tuple[float, bytes]:
    """``(WaitTimeSeconds, the body rewritten with WaitTimeSeconds 0)`` of an SQS long poll
    (JSON or query protocol), else ``(0, b"")``. Reads ``wsgi.input`` only when it must, and
    then puts an equal stream back."""
    target = environ.get("HTTP_X_AMZ_TARGET", "")
    form = str(environ.get("CONTENT_TYPE", "")).startswith("application/x-www-form-urlencoded")
    if target != "AmazonSQS.ReceiveMessage" and not form:
        return 0, b""
    length = int(environ.get("CONTENT_LENGTH") or 0)
    raw = environ["wsgi.input"].read(length) if length else b""
    environ["wsgi.input"] = io.BytesIO(raw)
    try:
        if target:
            request = json.loads(raw or b"{}")
            wait = float(request.get("WaitTimeSeconds") or 0)
            request["WaitTimeSeconds"] = 0
            return wait, json.dumps(request).encode()
        fields = urllib.parse.parse_qsl(raw.decode(), keep_blank_values=True)
        if ("Action", "ReceiveMessage") not in fields:
            return 0, b""
        wait = float(dict(fields).get("WaitTimeSeconds") or 0)
        fields = [(k, "0" if k == "WaitTimeSeconds" else v) for k, v in fields]
        return wait, urllib.parse.urlencode(fields).encode()
    except (ValueError, TypeError, AttributeError):
        return 0, b""  # moto answers the malformed request itself


def _has_messages(payload: bytes) -> bool:
    """True when a ``ReceiveMessage`` answer (JSON or XML) holds at least one message."""
    try:
        return bool(json.loads(payload).get("Messages"))
    except (ValueError, AttributeError):
        return b"<Message>" in payload


def moto_app() -> SerialisedApp:
    """moto's server WSGI application (every service), behind :class:`SerialisedApp`, with
    S3 browser uploads held to their POST policy (:class:`PostPolicyApp`)."""
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app

    return SerialisedApp(PostPolicyApp(DomainDispatcherApplication(create_backend_app)))


def endpoint_url(port: int) -> str:
    """``http://127.0.0.1:<port>``."""
    return f"http://{HOST}:{port}"


def quiet_request_logs() -> None:
    """Set werkzeug's and moto's loggers to ERROR (otherwise every request is logged)."""
    for name in ("werkzeug", "moto", "botocore", "urllib3"):
        logging.getLogger(name).setLevel(logging.ERROR)


def is_listening(port: int, host: str = HOST) -> bool:
    """True when something accepts TCP connections on ``host:port``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def is_moto(port: int) -> bool:
    """True when the server on ``port`` answers moto's ``/moto-api/data.json``."""
    try:
        url = f"{endpoint_url(port)}/moto-api/data.json"
        with urllib.request.urlopen(url, timeout=3) as r:  # noqa: S310 (a fixed http URL)
            json.loads(r.read())
            return True
    except (OSError, ValueError, urllib.error.URLError):
        return False


@dataclass
class EmbeddedAws:
    """A moto server the stack talks to. ``process`` is set only when this stack started it."""

    port: int
    process: subprocess.Popen[bytes] | None = None

    @property
    def endpoint_url(self) -> str:
        """The URL every boto3 client is pointed at."""
        return endpoint_url(self.port)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the server if this stack started it (its state is lost: it lives in memory)."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=timeout)


def ensure_server(port: int, *, start_timeout: float = 60.0) -> EmbeddedAws:
    """Reuse the moto server listening on ``port``, or start one in a child process.

    Raises
    ------
    RuntimeError
        When something that is not moto holds the port, or the child does not come up within
        ``start_timeout`` seconds.
    """
    if is_listening(port):
        if not is_moto(port):
            raise RuntimeError(
                f"AWS_PORT={port}: {HOST}:{port} is taken by something that is not moto; stop it "
                f"or choose another, e.g. AWS_PORT={port + 1} make run"
            )
        log.info("reusing the embedded AWS on port %s", port)
        return EmbeddedAws(port=port)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "local",
            "aws",
            "--port",
            str(port),
            "--exit-with-parent",
            str(os.getpid()),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,  # its banner would be a second line on ours
        start_new_session=True,  # Ctrl-C reaches us; we stop it after our own threads.
    )
    deadline = time.monotonic() + start_timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the embedded AWS exited with code {process.returncode}")
        if is_listening(port) and is_moto(port):
            return EmbeddedAws(port=port, process=process)
        time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"the embedded AWS did not start on port {port}")


def serve_forever(port: int, exit_with_parent: int | None = None) -> None:
    """Run moto's server on ``127.0.0.1:port`` until SIGINT/SIGTERM (``python -m local aws``).

    With ``exit_with_parent``, also exit when that process is gone (so a killed ``make run``
    does not leave an orphan holding the port).
    """
    from moto.moto_server.werkzeug_app import MotoRequestHandler
    from werkzeug.serving import make_server

    quiet_request_logs()
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    # Threaded, so a slow client never blocks the socket; moto itself sees one request at a time.
    server = make_server(HOST, port, moto_app(), threaded=True, request_handler=MotoRequestHandler)
    thread = threading.Thread(target=server.serve_forever, name="embedded-aws", daemon=True)
    with fast_moto_transactions():  # transactions cost per item touched, not per table size
        thread.start()
        print(f"Embedded AWS (moto, in memory) at {endpoint_url(port)}", flush=True)
        while not stop.wait(1.0):
            if exit_with_parent is not None and not _alive(exit_with_parent):
                break
        server.shutdown()
        thread.join(timeout=5)


def _alive(pid: int) -> bool:
    """True while ``pid`` is still this process's parent (a dead parent re-parents us)."""
    return os.getppid() == pid


def client_environment(port: int) -> dict[str, str]:
    """Environment that points every boto3 client of this process at the embedded AWS.

    Credentials are always fake (set even when real ones are present), so the local stack can
    never touch a real account.
    """
    return {
        "AWS_ENDPOINT_URL": endpoint_url(port),
        "AWS_DEFAULT_REGION": REGION,
        "AWS_REGION": REGION,
        **FAKE_CREDENTIALS,
    }


def apply_client_environment(port: int) -> None:
    """Put :func:`client_environment` into ``os.environ`` (and drop any ``AWS_PROFILE``)."""
    os.environ.update(client_environment(port))
    os.environ.pop("AWS_PROFILE", None)


def _clients(port: int) -> tuple[Any, Any]:
    session = boto3.session.Session(
        aws_access_key_id=FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        aws_session_token=FAKE_CREDENTIALS["AWS_SESSION_TOKEN"],
        region_name=REGION,
    )
    url = endpoint_url(port)
    return (
        session.client("dynamodb", endpoint_url=url, config=_FAIL_FAST),
        session.client("sqs", endpoint_url=url, config=_FAIL_FAST),
    )


def ensure_resources(
    port: int,
    table_names: dict[str, str],
    *,
    max_receive_count: int,
    worker_timeout_seconds: int,
) -> dict[str, str]:
    """Create the stack's missing tables and queues on the server on ``port``
    (:func:`local.emulation.resources.ensure_resources`, with the local queue names).

    Returns the queue settings and the credentials key: ``{"DISPATCH_QUEUE_URL": ...,
    "DISPATCH_DLQ_URL": ..., "CREDENTIALS_KEY_ID": <KMS key ARN>}``.
    """
    dynamodb, sqs = _clients(port)
    created = resources.ensure_resources(
        dynamodb,
        sqs,
        table_names=table_names,
        queue_names=QUEUE_NAMES,
        max_receive_count=max_receive_count,
        worker_timeout_seconds=worker_timeout_seconds,
    )
    settings = {queue.settings_name: created[queue.settings_name] for queue in ALL_QUEUES}
    settings["CREDENTIALS_KEY_ID"] = resources.ensure_credentials_key(_kms(port))
    return settings


def _kms(port: int) -> Any:
    return _client(port, "kms")


def _client(port: int, service: str) -> Any:
    session = boto3.session.Session(
        aws_access_key_id=FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        aws_session_token=FAKE_CREDENTIALS["AWS_SESSION_TOKEN"],
        region_name=REGION,
    )
    return session.client(service, endpoint_url=endpoint_url(port), config=_FAIL_FAST)


def ensure_media_bucket(port: int, name: str, *, origins: Iterable[str]) -> dict[str, str]:
    """Create the media bucket on the server on ``port`` when missing, with CORS for the page's
    ``origins`` (:func:`local.emulation.resources.ensure_media_bucket`);
    ``{"MEDIA_BUCKET_NAME": name}``. Its pre-signed POST URLs are path-style on
    :func:`endpoint_url` (an IP endpoint has no virtual hosts), so a creator's browser or curl
    on this machine uploads straight to the embedded AWS."""
    return resources.ensure_media_bucket(_client(port, "s3"), name=name, origins=origins)


def queue_arn(port: int, queue_url: str) -> str:
    """The ARN of a queue (for ``eventSourceARN`` in SQS records)."""
    _, sqs = _clients(port)
    with contextlib.suppress(Exception):
        return str(
            sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"][
                "QueueArn"
            ]
        )
    return f"arn:aws:sqs:{REGION}:123456789012:{queue_url.rsplit('/', 1)[-1]}"


def resource_environment(port: int) -> dict[str, str]:
    """Client environment plus the resource settings of the stack on ``port``.

    Table and bucket names come from :class:`Settings` (defaults or the environment); queue
    URLs are looked up on the server. Raises botocore errors when no stack's queues exist there.
    """
    from scheduled_posts.settings import Settings

    settings = Settings.from_env()
    _, sqs = _clients(port)
    env = client_environment(port)
    for table in ALL_TABLES:
        env[table.settings_name] = str(getattr(settings, table.settings_name))
    for queue in ALL_QUEUES:
        env[queue.settings_name] = sqs.get_queue_url(QueueName=QUEUE_NAMES[queue.logical_id])[
            "QueueUrl"
        ]
    for queues, names in ((NOTIFY_QUEUES, NOTIFY_QUEUE_NAMES), (IMPORT_QUEUES, IMPORT_QUEUE_NAMES)):
        for queue in queues:
            with contextlib.suppress(sqs.exceptions.QueueDoesNotExist):
                env[queue.settings_name] = sqs.get_queue_url(QueueName=names[queue.logical_id])[
                    "QueueUrl"
                ]
    env["CREDENTIALS_KEY_ID"] = resources.ensure_credentials_key(_kms(port))
    env[MEDIA_BUCKET.settings_name] = str(getattr(settings, MEDIA_BUCKET.settings_name))
    return env


def ensure_notify_queues(
    port: int, *, max_attempts: int, notifier_timeout_seconds: int
) -> dict[str, str]:
    """Create the notify queue and its DLQ on the server on ``port`` when missing
    (:func:`local.emulation.resources.ensure_notify_queues`); ``NOTIFY_QUEUE_URL`` and
    ``NOTIFY_DLQ_URL``."""
    _, sqs = _clients(port)
    return resources.ensure_notify_queues(
        sqs,
        queue_names=NOTIFY_QUEUE_NAMES,
        max_attempts=max_attempts,
        notifier_timeout_seconds=notifier_timeout_seconds,
    )


def ensure_import_queues(port: int, *, importer_timeout_seconds: int) -> dict[str, str]:
    """Create the import queue and its DLQ on the server on ``port`` when missing
    (:func:`local.emulation.resources.ensure_import_queues`); ``IMPORT_QUEUE_URL`` and
    ``IMPORT_DLQ_URL``."""
    _, sqs = _clients(port)
    return resources.ensure_import_queues(
        sqs,
        queue_names=IMPORT_QUEUE_NAMES,
        max_receives=IMPORT_MAX_RECEIVES,
        importer_timeout_seconds=importer_timeout_seconds,
    )
