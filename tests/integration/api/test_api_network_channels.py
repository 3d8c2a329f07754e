"""Mastodon and Bluesky channels through the API: credential checks with the network (the
Mastodon stand-in; a refusing or unreachable network), sealed credentials, PATCH (issue 12)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from local.mastodon import Account, MastodonStandIn
from scheduled_posts.api_app import get_dependencies
from tests.support.api import ApiClient, install_api, uninstall_api
from tests.support.fixtures import AwsResources


@pytest.fixture
def stand_in() -> Iterator[tuple[MastodonStandIn, str]]:
    state = MastodonStandIn(max_characters=800, characters_reserved_per_url=30)
    with state.serving() as base:
        yield state, base


@pytest.fixture
def api(aws: AwsResources, clock: Any) -> Iterator[ApiClient]:
    key_id = boto3.client("kms", region_name="us-east-1").create_key()["KeyMetadata"]["KeyId"]
    settings = aws.settings.model_copy(
        update={"OUTBOUND_ALLOWED_ORIGINS": "http://127.0.0.1", "CREDENTIALS_KEY_ID": key_id}
    )
    install_api(settings, clock)
    yield ApiClient("alice")
    uninstall_api()


@pytest.fixture
def account(stand_in: tuple[MastodonStandIn, str]) -> Account:
    return stand_in[0].add_account("alice", token="tok-alice-secret-0001")


@pytest.fixture
def mastodon_channel(
    api: ApiClient, stand_in: tuple[MastodonStandIn, str], account: Account
) -> str:
    """The id of alice's channel to ``account`` on the stand-in."""
    answer = api.post("/v1/channels", mastodon_body(stand_in[1], account.token))
    assert answer.status == 201, answer.json
    return str(answer.json["channel_id"])


def mastodon_body(base: str, token: str) -> dict[str, Any]:
    return {"platform": "mastodon", "name": "toots", "instance_url": base, "access_token": token}


def bluesky_body(local_pds: Any, handle: str, app_password: str) -> dict[str, Any]:
    return {
        "platform": "bluesky",
        "name": "sky",
        "service_url": local_pds.url,
        "handle": handle,
        "app_password": app_password,
    }


def second_token(state: MastodonStandIn, account: Account, token: str) -> Account:
    """Another token of ``account`` (a reconnect of the same account)."""
    state.accounts[token] = Account(id=account.id, username=account.username, token=token)
    return state.accounts[token]


def channel_item(aws: AwsResources, owner: str, channel_id: str) -> dict[str, Any]:
    table = boto3.resource("dynamodb", region_name="us-east-1").Table(aws.settings.POSTS_TABLE_NAME)
    return table.get_item(Key={"pk": f"OWNER#{owner}", "sk": f"CHANNEL#{channel_id}"})["Item"]


def test_create_mastodon_channel_returns_account_and_instance_limits(
    api: ApiClient, stand_in: tuple[MastodonStandIn, str], account: Account
) -> None:
    answer = api.post("/v1/channels", mastodon_body(stand_in[1], account.token))
    assert answer.status == 201, answer.json
    assert answer.json["account"] == {
        "id": account.id,
        "acct": "alice",
        "did": None,
        "handle": None,
    }
    assert answer.json["limits"]["max_characters"] == 800
    assert answer.json["limits"]["characters_reserved_per_url"] == 30
    assert (answer.json["status"], answer.json["signing_secret"]) == ("active", None)
    assert answer.json["url"] == stand_in[1]


def test_mastodon_channel_media_limits_are_kept_and_listed(
    api: ApiClient, stand_in: tuple[MastodonStandIn, str], account: Account
) -> None:
    # The stand-in's instance gives no media_attachments: the documented defaults hold.
    created = api.post("/v1/channels", mastodon_body(stand_in[1], account.token)).json
    listed = api.get("/v1/channels").json["items"]
    limits = next(c for c in listed if c["channel_id"] == created["channel_id"])["limits"]
    assert limits["max_characters"] == 800
    assert (limits["max_media_attachments"], limits["description_limit"]) == (4, 1500)
    assert (limits["image_size_limit"], limits["video_size_limit"]) == (16_777_216, 103_809_024)
    assert "image/png" in limits["supported_mime_types"]


def test_mastodon_token_never_in_answers_items_or_logs(
    api: ApiClient,
    aws: AwsResources,
    stand_in: tuple[MastodonStandIn, str],
    account: Account,
    capsys: pytest.CaptureFixture[str],
) -> None:
    created = api.post("/v1/channels", mastodon_body(stand_in[1], account.token))
    listed = api.get("/v1/channels")
    item = channel_item(aws, "alice", created.json["channel_id"])
    captured = capsys.readouterr()
    for text in (
        json.dumps(created.json),
        json.dumps(listed.json),
        json.dumps(item, default=str),
        captured.out + captured.err,
    ):
        assert account.token not in text
    assert json.loads(item["credentials"])["v"] == 1


def test_sealed_credentials_open_to_the_token(
    api: ApiClient, aws: AwsResources, stand_in: tuple[MastodonStandIn, str], account: Account
) -> None:
    created = api.post("/v1/channels", mastodon_body(stand_in[1], account.token))
    channel = get_dependencies().channels.get("alice", created.json["channel_id"])
    assert channel is not None
    access = get_dependencies().channel_secrets.access(channel)
    assert access.access_token.get_secret_value() == account.token
    assert access.account_id == account.id


def test_create_mastodon_channel_refused_token_is_422_quoting_the_instance(
    api: ApiClient, stand_in: tuple[MastodonStandIn, str]
) -> None:
    answer = api.post("/v1/channels", mastodon_body(stand_in[1], "not-a-valid-token-42"))
    assert answer.status == 422
    [error] = answer.json["errors"]
    assert error["loc"] == ["body", "access_token"]
    assert "The access token is invalid" in error["msg"]
    assert "not-a-valid-token-42" not in json.dumps(answer.json)
    assert api.get("/v1/channels").json["items"] == []


def test_create_mastodon_channel_unreachable_instance_is_502_nothing_stored(
    api: ApiClient, stand_in: tuple[MastodonStandIn, str], account: Account
) -> None:
    stand_in[0].fail_next(503, path="/api/v1/accounts/verify_credentials")
    answer = api.post("/v1/channels", mastodon_body(stand_in[1], account.token))
    assert answer.status == 502
    assert answer.headers["Content-Type"] == "application/problem+json"
    assert api.get("/v1/channels").json["items"] == []


def test_create_mastodon_channel_private_instance_url_is_422(api: ApiClient) -> None:
    body = mastodon_body("https://10.0.0.8", "tok")
    answer = api.post("/v1/channels", body)
    assert answer.status == 422
    assert answer.json["errors"][0]["loc"] == ["body", "instance_url"]


def test_create_mastodon_channel_without_token_is_422(api: ApiClient) -> None:
    answer = api.post(
        "/v1/channels", {"platform": "mastodon", "name": "t", "instance_url": "https://m.example"}
    )
    assert answer.status == 422


def test_create_webhook_channel_with_a_token_field_is_422(api: ApiClient) -> None:
    body = {"platform": "webhook", "name": "w", "url": "https://hooks.example.com/in"}
    answer = api.post("/v1/channels", {**body, "access_token": "x"})
    assert answer.status == 422


def test_patch_mastodon_channel_replaces_token_and_reactivates(
    api: ApiClient,
    aws: AwsResources,
    stand_in: tuple[MastodonStandIn, str],
    account: Account,
) -> None:
    created = api.post("/v1/channels", mastodon_body(stand_in[1], account.token)).json
    channel_id = created["channel_id"]
    repo = get_dependencies().channels
    from scheduled_posts.models.network import ChannelStatus

    repo.set_status("alice", channel_id, ChannelStatus.NEEDS_REAUTHORIZATION, reason="HTTP 401")
    assert api.get(f"/v1/channels/{channel_id}").json["status"] == "needs_reauthorization"
    fresh = second_token(stand_in[0], account, "tok-fresh-0002")
    answer = api.patch(
        f"/v1/channels/{channel_id}", {"name": "renamed", "access_token": fresh.token}
    )
    assert answer.status == 200, answer.json
    assert (answer.json["name"], answer.json["status"]) == ("renamed", "active")
    assert answer.json["account"]["id"] == account.id
    channel = repo.get("alice", channel_id)
    assert channel is not None
    opened = get_dependencies().channel_secrets.access(channel)
    assert opened.access_token.get_secret_value() == fresh.token


def test_patch_with_refused_token_is_422_and_keeps_the_old_one(
    api: ApiClient, mastodon_channel: str, account: Account
) -> None:
    channel_id = mastodon_channel
    answer = api.patch(f"/v1/channels/{channel_id}", {"access_token": "revoked-token"})
    assert answer.status == 422
    channel = get_dependencies().channels.get("alice", channel_id)
    assert channel is not None
    opened = get_dependencies().channel_secrets.access(channel)
    assert opened.access_token.get_secret_value() == account.token


def test_patch_mastodon_channel_with_a_bluesky_field_is_422(
    api: ApiClient, mastodon_channel: str
) -> None:
    channel_id = mastodon_channel
    answer = api.patch(f"/v1/channels/{channel_id}", {"app_password": "x"})
    assert answer.status == 422
    assert answer.json["errors"][0]["loc"] == ["body", "app_password"]


def test_patch_webhook_url_is_checked_by_the_url_policy(api: ApiClient) -> None:
    channel_id = api.create_channel()
    bad = api.patch(f"/v1/channels/{channel_id}", {"url": "https://127.0.0.1/in"})
    good = api.patch(f"/v1/channels/{channel_id}", {"url": "https://hooks.example.com/new"})
    assert bad.status == 422
    assert (good.status, good.json["url"]) == (200, "https://hooks.example.com/new")


def test_rotate_secret_of_a_mastodon_channel_is_409_and_changes_nothing(
    api: ApiClient, aws: AwsResources, mastodon_channel: str
) -> None:
    # Given a network channel (no signing secret: its deliveries are not signed)
    before = channel_item(aws, "alice", mastodon_channel)
    # When its owner asks for a new signing secret
    answer = api.post(f"/v1/channels/{mastodon_channel}/rotate-secret")
    # Then it is refused with a problem naming the reason, and the channel is unchanged
    assert answer.status == 409, answer.json
    assert answer.headers["Content-Type"].startswith("application/problem+json")
    assert "mastodon channels have no signing secret" in answer.json["detail"]
    assert "signing_secret" not in answer.json
    assert channel_item(aws, "alice", mastodon_channel) == before


def test_patch_other_users_channel_is_404(api: ApiClient, mastodon_channel: str) -> None:
    channel_id = mastodon_channel
    assert ApiClient("bob").patch(f"/v1/channels/{channel_id}", {"name": "x"}).status == 404


def test_create_bluesky_channel_on_the_reference_pds_returns_did_and_limits(
    api: ApiClient, local_pds: Any
) -> None:
    account = local_pds.create_account("apichan")
    answer = api.post("/v1/channels", bluesky_body(local_pds, account.handle, account.app_password))
    assert answer.status == 201, answer.json
    assert answer.json["account"]["did"] == account.did
    assert answer.json["account"]["handle"] == account.handle
    assert answer.json["limits"] == {
        "max_characters": None,
        "characters_reserved_per_url": None,
        "max_graphemes": 300,
        "max_bytes": 3000,
        # app.bsky.embed.images and .video; the reference PDS's 5 MiB blob upload limit.
        "max_media_attachments": 4,
        "image_size_limit": 2_000_000,
        "video_size_limit": 5_242_880,
        "description_limit": 2000,
        "supported_mime_types": ["image/gif", "image/jpeg", "image/png", "image/webp", "video/mp4"],
    }
    assert account.app_password not in json.dumps(answer.json)
    channel = get_dependencies().channels.get("alice", answer.json["channel_id"])
    assert channel is not None and channel.session  # the check's session is cached, sealed
    session = get_dependencies().channel_secrets.open_session(channel)
    assert session is not None and session.did == account.did


def test_create_bluesky_channel_wrong_app_password_is_422_quoting_the_pds(
    api: ApiClient, local_pds: Any
) -> None:
    account = local_pds.create_account("apiwrong")
    answer = api.post(
        "/v1/channels", bluesky_body(local_pds, account.handle, "aaaa-bbbb-cccc-dddd")
    )
    assert answer.status == 422
    assert answer.json["errors"][0]["loc"] == ["body", "app_password"]
    assert "Invalid identifier or password" in answer.json["errors"][0]["msg"]


PUBLISH_AT = "2026-11-29T13:00:00Z"


def test_post_over_the_mastodon_limit_is_422_naming_channel_rule_count_limit(
    api: ApiClient, mastodon_channel: str
) -> None:
    channel_id = mastodon_channel
    url = "https://example.com/" + "p" * 100  # counts as 30 on this instance
    fits = "x" * (800 - 31) + " " + url
    over = "x" * (800 - 30) + " " + url
    assert api.schedule(PUBLISH_AT, [channel_id], fits)["content"] == fits
    answer = api.post(
        "/v1/scheduled-posts",
        {"content": over, "publish_at": PUBLISH_AT, "channel_ids": [channel_id]},
    )
    assert answer.status == 422
    [error] = answer.json["errors"]
    assert error["loc"] == ["body", "content"]
    assert "channel toots" in error["msg"] and channel_id in error["msg"]
    assert "at most 800 characters" in error["msg"]
    assert "the text has 801, the limit is 800" in error["msg"]


def test_edit_over_the_bluesky_limit_is_422_and_keeps_the_post(
    api: ApiClient, local_pds: Any
) -> None:
    account = local_pds.create_account("apiedit")
    channel_id = api.post(
        "/v1/channels", bluesky_body(local_pds, account.handle, account.app_password)
    ).json["channel_id"]
    post = api.schedule(PUBLISH_AT, [channel_id], "short")
    zwj = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    answer = api.patch(f"/v1/scheduled-posts/{post['schedule_id']}", {"content": zwj * 301})
    assert answer.status == 422
    assert "the text has 301, the limit is 300" in answer.json["errors"][0]["msg"]
    assert api.get(f"/v1/scheduled-posts/{post['schedule_id']}").json["content"] == "short"


def test_webhook_channel_has_no_length_rule_beyond_the_api_maximum(api: ApiClient) -> None:
    channel_id = api.create_channel()
    assert api.schedule(PUBLISH_AT, [channel_id], "y" * 5000)["content"] == "y" * 5000


def test_post_language_is_stored_shown_and_editable(api: ApiClient) -> None:
    channel_id = api.create_channel()
    body = {"content": "olá", "publish_at": PUBLISH_AT, "channel_ids": [channel_id]}
    created = api.post("/v1/scheduled-posts", {**body, "language": "pt-BR"})
    assert (created.status, created.json["language"]) == (201, "pt-BR")
    patched = api.patch(f"/v1/scheduled-posts/{created.json['schedule_id']}", {"language": "pt"})
    assert (patched.status, patched.json["language"]) == (200, "pt")


@pytest.mark.parametrize("language", ["english!", "e", "en_US", "x" * 40])
def test_post_language_not_bcp47_is_422(api: ApiClient, language: str) -> None:
    channel_id = api.create_channel()
    body = {"content": "hi", "publish_at": PUBLISH_AT, "channel_ids": [channel_id]}
    answer = api.post("/v1/scheduled-posts", {**body, "language": language})
    assert answer.status == 422
    assert answer.json["errors"][0]["loc"] == ["body", "language"]


def test_export_shows_network_channels_without_credentials_or_session(
    api: ApiClient, aws: AwsResources, stand_in: tuple[MastodonStandIn, str], account: Account
) -> None:
    created = api.post("/v1/channels", mastodon_body(stand_in[1], account.token))
    channel_id = created.json["channel_id"]
    table = boto3.resource("dynamodb", region_name="us-east-1").Table(aws.settings.POSTS_TABLE_NAME)
    table.update_item(  # a stored session, as the worker keeps one (sealed) for Bluesky
        Key={"pk": "OWNER#alice", "sk": f"CHANNEL#{channel_id}"},
        UpdateExpression="SET #s = :s",
        ExpressionAttributeNames={"#s": "session"},
        ExpressionAttributeValues={":s": '{"v": 1, "sealed": "session-sealed-0001"}'},
    )
    item = channel_item(aws, "alice", channel_id)

    answer = api.get("/v1/me/export")

    assert answer.status == 200
    [exported] = answer.json["channels"]
    assert exported["channel_id"] == channel_id and exported["platform"] == "mastodon"
    assert "credentials" not in exported and "session" not in exported
    body = answer.raw["body"]
    sealed = [v for v in json.loads(item["credentials"]).values() if isinstance(v, str)]
    assert sealed  # the sealed parts (ciphertext, wrapped key) of the stored credentials
    for secret in (account.token, *sealed, "session-sealed-0001"):
        assert secret not in body


@pytest.mark.parametrize(
    ("url", "found"),
    [
        ("http://127.0.0.1:9/prefix", "a path"),
        ("http://127.0.0.1:9/?q=1", "a query"),
        ("http://127.0.0.1:9#top", "a fragment"),
        ("http://user:pw@127.0.0.1:9", "user info"),
    ],
)
def test_create_channel_network_url_not_an_origin_is_422_naming_field_and_rule(
    api: ApiClient, url: str, found: str
) -> None:
    # Given a Mastodon instance_url and a Bluesky service_url that are not bare origins
    bodies = {
        "instance_url": mastodon_body(url, "tok-never-sent-0001"),
        "service_url": {
            "platform": "bluesky",
            "name": "sky",
            "service_url": url,
            "handle": "alice.test",
            "app_password": "aaaa-bbbb-cccc-dddd",
        },
    }
    for field, body in bodies.items():
        # When a channel is created with it
        answer = api.post("/v1/channels", body)
        # Then a 422 names the field and the origin rule, and nothing is stored
        assert answer.status == 422, answer.json
        [error] = answer.json["errors"]
        assert error["loc"] == ["body", field]
        assert "must be an origin (scheme://host[:port]" in error["msg"]
        assert found in error["msg"]
    assert api.get("/v1/channels").json["items"] == []


def test_patch_instance_url_with_a_path_is_422_and_keeps_the_channel(
    api: ApiClient, aws: AwsResources, mastodon_channel: str, stand_in: tuple[MastodonStandIn, str]
) -> None:
    before = channel_item(aws, "alice", mastodon_channel)
    answer = api.patch(
        f"/v1/channels/{mastodon_channel}",
        {"instance_url": stand_in[1] + "/prefix?q=", "access_token": "tok-alice-secret-0001"},
    )
    assert answer.status == 422, answer.json
    assert answer.json["errors"][0]["loc"] == ["body", "instance_url"]
    assert channel_item(aws, "alice", mastodon_channel) == before


def test_create_mastodon_channel_origin_with_trailing_slash_is_accepted(
    api: ApiClient, stand_in: tuple[MastodonStandIn, str], account: Account
) -> None:
    answer = api.post("/v1/channels", mastodon_body(stand_in[1] + "/", account.token))
    assert (answer.status, answer.json["url"]) == (201, stand_in[1])


def test_patch_mastodon_token_of_another_account_is_422_and_keeps_the_channel(
    api: ApiClient,
    aws: AwsResources,
    stand_in: tuple[MastodonStandIn, str],
    mastodon_channel: str,
    account: Account,
) -> None:
    # Given alice's channel to her account (id 101) and bob's token on the same instance
    before = channel_item(aws, "alice", mastodon_channel)
    bob = stand_in[0].add_account("bob", token="tok-bob-0004")
    # When the channel is reconnected with bob's token, without asking to switch
    answer = api.patch(f"/v1/channels/{mastodon_channel}", {"access_token": bob.token})
    # Then a 422 names switch_account and both accounts, and nothing changes
    assert answer.status == 422, answer.json
    [error] = answer.json["errors"]
    assert (error["loc"], error["type"]) == (["body", "switch_account"], "account_changed")
    assert f"bob ({bob.id})" in error["msg"] and f"alice ({account.id})" in error["msg"]
    assert bob.token not in json.dumps(answer.json)
    assert channel_item(aws, "alice", mastodon_channel) == before


def test_patch_mastodon_token_of_another_account_with_switch_account_moves_the_channel(
    api: ApiClient, stand_in: tuple[MastodonStandIn, str], mastodon_channel: str
) -> None:
    bob = stand_in[0].add_account("bob", token="tok-bob-0005")
    answer = api.patch(
        f"/v1/channels/{mastodon_channel}", {"access_token": bob.token, "switch_account": True}
    )
    assert answer.status == 200, answer.json
    assert (answer.json["account"]["id"], answer.json["account"]["acct"]) == (bob.id, "bob")


def test_patch_bluesky_app_password_of_another_did_needs_switch_account(
    api: ApiClient, local_pds: Any
) -> None:
    # Given a Bluesky channel of one account and another account's handle and app password
    first, other = local_pds.create_account("swfirst"), local_pds.create_account("swother")
    channel_id = api.post(
        "/v1/channels", bluesky_body(local_pds, first.handle, first.app_password)
    ).json["channel_id"]
    change = {"handle": other.handle, "app_password": other.app_password}
    # When the channel is reconnected to the other DID, first without asking, then asking
    refused = api.patch(f"/v1/channels/{channel_id}", change)
    switched = api.patch(f"/v1/channels/{channel_id}", {**change, "switch_account": True})
    # Then only the explicit switch moves it
    assert refused.status == 422, refused.json
    assert refused.json["errors"][0]["loc"] == ["body", "switch_account"]
    assert other.did in refused.json["errors"][0]["msg"]
    assert switched.status == 200, switched.json
    assert switched.json["account"]["did"] == other.did
