"""The embedded AWS serialises requests into moto (not thread-safe) without stalling long polls."""

from __future__ import annotations

import io
import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto.moto_server.werkzeug_app import MotoRequestHandler
from werkzeug.serving import make_server

from local.embedded_aws import SerialisedApp, endpoint_url, moto_app


def _environ(body: bytes, **extra: str) -> dict[str, Any]:
    return {
        "REQUEST_METHOD": "POST",
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
        **extra,
    }


class RecordingApp:
    """A WSGI app that records the request bodies and whether the lock was held, body included."""

    def __init__(self, answers: list[bytes]) -> None:
        self.answers = answers
        self.bodies: list[bytes] = []
        self.locked: list[bool] = []
        self.wrapper: SerialisedApp | None = None

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterator[bytes]:
        assert self.wrapper is not None
        self.bodies.append(environ["wsgi.input"].read(int(environ["CONTENT_LENGTH"])))
        self.locked.append(self.wrapper.lock.locked())
        start_response("200 OK", [("Content-Type", "application/x-amz-json-1.0")])
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        yield answer
        self.locked.append(self.wrapper.lock.locked())  # while the body is being read


def _wrap(app: RecordingApp) -> SerialisedApp:
    app.wrapper = SerialisedApp(app, poll_step_seconds=0)
    return app.wrapper


def test_serialised_app_calls_moto_and_reads_its_body_under_the_lock() -> None:
    app = RecordingApp([b"{}"])
    wrapper = _wrap(app)

    body = wrapper(
        _environ(b'{"TableName": "t"}', HTTP_X_AMZ_TARGET="DynamoDB_20120810.DescribeTable"),
        lambda *_: None,
    )

    assert body == [b"{}"]
    assert app.locked == [True, True]
    assert app.bodies == [b'{"TableName": "t"}']
    assert not wrapper.lock.locked()


def test_serialised_app_long_poll_runs_as_short_receives_until_a_message() -> None:
    message = json.dumps({"Messages": [{"MessageId": "m"}]}).encode()
    app = RecordingApp([b"{}", b"{}", message])
    wrapper = _wrap(app)
    statuses: list[str] = []

    body = wrapper(
        _environ(
            json.dumps({"QueueUrl": "q", "WaitTimeSeconds": 20}).encode(),
            HTTP_X_AMZ_TARGET="AmazonSQS.ReceiveMessage",
        ),
        lambda status, _: statuses.append(status),
    )

    assert body == [message]
    assert statuses == ["200 OK"]
    assert [json.loads(b)["WaitTimeSeconds"] for b in app.bodies] == [0, 0, 0]


def test_serialised_app_query_protocol_long_poll_waits_zero_each_time() -> None:
    app = RecordingApp([b"<ReceiveMessageResult><Message><MessageId>m</MessageId></Message>"])
    wrapper = _wrap(app)

    wrapper(
        _environ(
            b"Action=ReceiveMessage&QueueUrl=q&WaitTimeSeconds=5",
            CONTENT_TYPE="application/x-www-form-urlencoded; charset=utf-8",
        ),
        lambda *_: None,
    )

    assert app.bodies == [b"Action=ReceiveMessage&QueueUrl=q&WaitTimeSeconds=0"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    """The embedded AWS's app behind werkzeug's threaded server, as ``serve_forever`` runs it."""
    port = _free_port()
    server = make_server(
        "127.0.0.1", port, moto_app(), threaded=True, request_handler=MotoRequestHandler
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield endpoint_url(port)
    server.shutdown()
    thread.join(timeout=5)


def _client(service: str, url: str) -> Any:
    return boto3.client(
        service,
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )


def test_moto_app_long_poll_does_not_stall_other_requests(served: str) -> None:
    sqs = _client("sqs", served)
    url = sqs.create_queue(QueueName="serialised")["QueueUrl"]
    received: list[Any] = []
    poller = threading.Thread(
        target=lambda: received.append(
            sqs.receive_message(QueueUrl=url, WaitTimeSeconds=10).get("Messages")
        )
    )
    poller.start()

    # Runs while the long poll is waiting: it would wait 10 s if the poll held the lock.
    _client("sqs", served).send_message(QueueUrl=url, MessageBody="hello")
    poller.join(timeout=5)

    assert not poller.is_alive()
    assert received and received[0][0]["Body"] == "hello"
