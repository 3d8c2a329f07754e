"""Channels: create (secret once), read, list, delete, URL policy, isolation."""

from __future__ import annotations

import re

import pytest

from tests.support.api import ApiClient, install_api

WEBHOOK = {"platform": "webhook", "name": "main", "url": "https://hooks.example.com/in"}


def test_create_channel_valid_returns_201_with_secret(alice: ApiClient) -> None:
    answer = alice.post("/v1/channels", {**WEBHOOK, "rate_limit_per_minute": 60})
    assert answer.status == 201
    assert re.fullmatch(r"whsec_[A-Za-z0-9+/]{43}=", answer.json["signing_secret"])
    assert answer.json["rate_limit_per_minute"] == 60
    assert answer.json["created_at"] == "2026-11-29T12:00:00.000Z"
    assert set(answer.json) == {
        "channel_id",
        "platform",
        "name",
        "url",
        "rate_limit_per_minute",
        "signing_secret",
        "created_at",
        "status",
        "status_reason",
        "account",
        "limits",
    }
    assert (answer.json["status"], answer.json["account"]) == ("active", None)
    # A webhook has no length limits; its media limits are its spec's (10 items, any kind).
    assert answer.json["limits"] == {
        "max_characters": None,
        "characters_reserved_per_url": None,
        "max_graphemes": None,
        "max_bytes": None,
        "max_media_attachments": 10,
        "image_size_limit": None,
        "video_size_limit": None,
        "description_limit": None,
        "supported_mime_types": ["image/gif", "image/jpeg", "image/png", "image/webp", "video/mp4"],
    }


def test_get_channel_never_shows_the_secret(alice: ApiClient) -> None:
    channel_id = alice.create_channel()
    answer = alice.get(f"/v1/channels/{channel_id}")
    assert answer.status == 200
    assert "signing_secret" not in answer.json
    assert answer.json["channel_id"] == channel_id


def test_list_channels_returns_only_the_callers(alice: ApiClient, bob: ApiClient) -> None:
    mine = {alice.create_channel("a"), alice.create_channel("b")}
    bob.create_channel("c")
    answer = alice.get("/v1/channels")
    assert {c["channel_id"] for c in answer.json["items"]} == mine
    assert all("signing_secret" not in c for c in answer.json["items"])


def test_create_channel_secret_is_never_logged(
    alice: ApiClient, capsys: pytest.CaptureFixture[str]
) -> None:
    answer = alice.post("/v1/channels", WEBHOOK)
    captured = capsys.readouterr()
    assert answer.json["signing_secret"] not in captured.out + captured.err


def test_delete_channel_then_get_is_404(alice: ApiClient) -> None:
    channel_id = alice.create_channel()
    assert alice.delete(f"/v1/channels/{channel_id}").status == 204
    assert alice.get(f"/v1/channels/{channel_id}").status == 404
    assert alice.delete(f"/v1/channels/{channel_id}").status == 404


@pytest.mark.parametrize(
    "url",
    [
        "http://hooks.example.com/in",  # not https
        "https://internal.example.com/in",  # resolves to a private address
        "https://127.0.0.1/in",  # loopback literal
        "https://169.254.169.254/latest",  # link-local (instance metadata)
        "https://unknown.example.com/in",  # does not resolve
        "not a url",
    ],
)
def test_create_channel_unsafe_url_is_422_on_url(bare: ApiClient, url: str) -> None:
    answer = bare.post("/v1/channels", {**WEBHOOK, "url": url})
    assert answer.status == 422
    assert answer.headers["Content-Type"] == "application/problem+json"
    assert answer.json["errors"][0]["loc"] == ["body", "url"]


def test_create_channel_allowed_origin_may_be_loopback_http(aws, clock, promoted) -> None:
    install_api(
        aws.settings.model_copy(update={"WEBHOOK_ALLOWED_ORIGINS": "http://127.0.0.1"}), clock
    )
    answer = ApiClient("alice").post("/v1/channels", {**WEBHOOK, "url": "http://127.0.0.1:9000/in"})
    assert answer.status == 201


def test_create_channel_unknown_platform_is_422(bare: ApiClient) -> None:
    answer = bare.post("/v1/channels", {**WEBHOOK, "platform": "carrier-pigeon"})
    assert answer.status == 422
    assert answer.json["errors"][0]["loc"] == ["body", "platform"]


def test_channel_of_another_user_is_404_for_every_verb(alice: ApiClient, bob: ApiClient) -> None:
    channel_id = alice.create_channel()
    assert bob.get(f"/v1/channels/{channel_id}").status == 404
    assert bob.delete(f"/v1/channels/{channel_id}").status == 404
    assert alice.get(f"/v1/channels/{channel_id}").status == 200


def test_channel_path_id_malformed_is_422(bare: ApiClient) -> None:
    answer = bare.get("/v1/channels/bad%00id")
    assert answer.status == 422
    assert answer.json["errors"][0]["loc"][0] == "path"
