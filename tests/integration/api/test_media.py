"""``/v1/media`` through the API handler on moto: create, upload with the returned POST form
(``requests`` inside ``mock_aws``: moto answers S3 URLs in-process), complete, read, list, alt
text, delete; another user's upload is a 404; and what moto does not enforce of the policy.

moto stores a POST form's file without checking the policy's ``content-length-range`` or
``Content-Type`` (the team's toolchain notes on moto S3's gaps): the tests show the service's
own guards (the HeadObject size, the probe) refuse such files, and check the policy's
conditions as written.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
import requests
from PIL import Image

from scheduled_posts.data.media_objects import s3_client
from scheduled_posts.settings import Settings
from tests.support.api import ApiClient, install_api
from tests.support.fixtures import AwsResources


def png(size: tuple[int, int] = (4, 3)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, (0, 90, 200)).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.fixture
def s3(aws: AwsResources) -> Any:
    client = boto3.client("s3", region_name="us-east-1")
    client.create_bucket(Bucket=aws.settings.MEDIA_BUCKET_NAME)
    s3_client.cache_clear()
    return client


@pytest.fixture
def media_api(s3: Any, alice: ApiClient) -> Iterator[ApiClient]:
    yield alice


def create(client: ApiClient, data: bytes, content_type: str = "image/png", **extra: Any) -> dict:
    answer = client.post("/v1/media", {"content_type": content_type, "size": len(data), **extra})
    assert answer.status == 201, answer.json
    return dict(answer.json)


def upload(created: dict, data: bytes, content_type: str | None = None) -> int:
    """Post the form as a browser would (``curl -F``): every field, then the file."""
    fields = dict(created["upload"]["fields"])
    if content_type is not None:
        fields["Content-Type"] = content_type
    answer = requests.post(
        created["upload"]["url"], data=fields, files={"file": ("a.png", data)}, timeout=5
    )
    return answer.status_code


def uploaded(client: ApiClient, data: bytes, **extra: Any) -> dict:
    created = create(client, data, **extra)
    assert upload(created, data) == 204
    answer = client.post(f"/v1/media/{created['media_id']}/complete")
    assert answer.status == 200, answer.json
    return dict(answer.json)


def test_create_upload_complete_makes_a_ready_png_with_its_facts(
    media_api: ApiClient, s3: Any, aws: AwsResources
) -> None:
    data = png()
    created = create(
        media_api, data, alt_text="a blue square", sha256=hashlib.sha256(data).hexdigest()
    )
    assert created["status"] == "pending" and created["content_type"] is None
    assert created["declared"] == {
        "content_type": "image/png",
        "size": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    assert created["upload"]["expires_at"] == "2026-11-29T12:15:00.000Z"  # 900 s
    assert created["upload"]["fields"]["key"] == f"media/{created['media_id']}"
    assert upload(created, data) == 204
    path = f"/v1/media/{created['media_id']}"
    done = media_api.post(f"{path}/complete").json
    assert done["status"] == "ready" and done["expires_at"] == "2026-11-30T12:00:00.000Z"
    assert (done["content_type"], done["size"], done["width"], done["height"]) == (
        "image/png",
        len(data),
        4,
        3,
    )
    assert done["sha256"] == hashlib.sha256(data).hexdigest()
    assert done["alt_text"] == "a blue square"
    assert media_api.get(path).json == done
    again = media_api.post(f"{path}/complete")
    assert (again.status, again.json) == (200, done)  # idempotent


def test_the_upload_form_tags_pending_and_the_first_post_naming_it_removes_the_tag(
    media_api: ApiClient, s3: Any, aws: AwsResources
) -> None:
    """The lifecycle rule expires objects still tagged pending after a day: the form makes S3
    tag the upload (a policy condition); a ready upload keeps the tag and its expiry until a
    post names it, which removes both (moto drops a POST form's tagging, so the object is put
    tagged as S3 would store it)."""
    data = png()
    created = create(media_api, data)
    fields = created["upload"]["fields"]
    assert "<Key>state</Key><Value>pending</Value>" in fields["tagging"]
    key = fields["key"]
    bucket = aws.settings.MEDIA_BUCKET_NAME
    s3.put_object(Bucket=bucket, Key=key, Body=data, Tagging="state=pending")
    path = f"/v1/media/{created['media_id']}"
    done = media_api.post(f"{path}/complete").json
    assert done["status"] == "ready" and done["expires_at"] == created["expires_at"]
    assert s3.get_object_tagging(Bucket=bucket, Key=key)["TagSet"] == [
        {"Key": "state", "Value": "pending"}
    ]
    [listed] = media_api.get("/v1/media").json["items"]
    assert listed["expires_at"] == created["expires_at"]
    post = media_api.post(
        "/v1/scheduled-posts", post_body([created["media_id"]], media_api.create_channel())
    )
    assert post.status == 201, post.json
    assert s3.get_object_tagging(Bucket=bucket, Key=key)["TagSet"] == []
    assert media_api.get(path).json["expires_at"] is None


def test_complete_before_any_upload_is_409_problem(media_api: ApiClient) -> None:
    created = create(media_api, png())
    answer = media_api.post(f"/v1/media/{created['media_id']}/complete")
    assert answer.status == 409
    assert answer.headers["Content-Type"] == "application/problem+json"
    assert "nothing was uploaded" in answer.json["detail"]


def test_another_users_upload_is_not_found_on_every_route(
    media_api: ApiClient, bob: ApiClient
) -> None:
    ready = uploaded(media_api, png())
    path = f"/v1/media/{ready['media_id']}"
    for answer in (
        bob.get(path),
        bob.patch(path, {"alt_text": "mine"}),
        bob.delete(path),
        bob.post(f"{path}/complete"),
    ):
        assert answer.status == 404, answer.json
        assert answer.headers["Content-Type"] == "application/problem+json"
    assert bob.get("/v1/media").json == {"items": [], "next_cursor": None}
    assert media_api.get(path).json["alt_text"] is None


def test_a_png_declared_as_jpeg_is_rejected_and_its_bytes_deleted(
    media_api: ApiClient, s3: Any, aws: AwsResources
) -> None:
    data = png()
    created = create(media_api, data, content_type="image/jpeg")
    assert upload(created, data) == 204
    done = media_api.post(f"/v1/media/{created['media_id']}/complete").json
    assert (done["status"], done["reason"], done["content_type"]) == (
        "rejected",
        "type_mismatch",
        "image/png",
    )
    assert "content_type you declared" in done["reason_detail"]
    again = media_api.post(f"/v1/media/{created['media_id']}/complete")
    assert (again.status, again.json) == (200, done)  # its bytes are gone: not probed again
    listed = s3.list_objects_v2(Bucket=aws.settings.MEDIA_BUCKET_NAME)
    assert listed.get("KeyCount") == 0


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"<svg xmlns='http://www.w3.org/2000/svg'/>", "unsupported_type"),
        (b"%PDF-1.4\n", "unsupported_type"),
        (b"MZ\x90\x00" + bytes(60), "unsupported_type"),
        (png((40, 40))[:60], "truncated"),
    ],
    ids=["svg", "pdf", "exe", "truncated"],
)
def test_files_that_are_not_our_kinds_are_rejected_with_their_reason(
    media_api: ApiClient, data: bytes, reason: str
) -> None:
    done = uploaded(media_api, data)
    assert (done["status"], done["reason"]) == ("rejected", reason)


def test_moto_stores_a_bigger_or_other_typed_file_the_policy_forbids_and_the_probe_refuses_it(
    media_api: ApiClient, s3: Any, aws: AwsResources
) -> None:
    small, big = png((2, 2)), png((60, 60))
    created = create(media_api, small)
    policy = json.loads(base64.b64decode(created["upload"]["fields"]["policy"]))
    assert ["content-length-range", len(small), len(small)] in policy["conditions"]
    assert {"Content-Type": "image/png"} in policy["conditions"]
    # moto accepts what S3 would refuse (403): a larger file, with another Content-Type.
    assert upload(created, big, content_type="image/gif") == 204
    head = s3.head_object(Bucket=aws.settings.MEDIA_BUCKET_NAME, Key=f"media/{created['media_id']}")
    assert (head["ContentLength"], head["ContentType"]) == (len(big), "image/gif")
    done = media_api.post(f"/v1/media/{created['media_id']}/complete").json
    assert (done["status"], done["reason"], done["content_type"]) == (
        "rejected",
        "size_mismatch",
        None,
    )


def test_a_declared_sha256_the_bytes_contradict_is_rejected(media_api: ApiClient) -> None:
    done = uploaded(media_api, png(), sha256="0" * 64)
    assert (done["status"], done["reason"]) == ("rejected", "sha256_mismatch")


def test_the_list_is_newest_first_and_pages_with_a_cursor_bound_to_it(
    media_api: ApiClient, clock: Any
) -> None:
    made = []
    for _ in range(3):
        made.append(create(media_api, png())["media_id"])
        clock.advance(1)
    first = media_api.get("/v1/media", query={"limit": "2"}).json
    assert [m["media_id"] for m in first["items"]] == made[:0:-1]
    second = media_api.get("/v1/media", query={"limit": "2", "cursor": first["next_cursor"]})
    assert [m["media_id"] for m in second.json["items"]] == made[:1]
    assert second.json["next_cursor"] is None
    media_api.create_channel()
    media_api.create_channel("second")
    channels = media_api.get("/v1/channels", query={"limit": "1"}).json
    refused = media_api.get("/v1/media", query={"cursor": channels["next_cursor"]})
    assert refused.status == 400


def test_a_pending_upload_is_forgotten_after_a_day(media_api: ApiClient, clock: Any) -> None:
    created = create(media_api, png())
    clock.advance(86_400)
    assert media_api.get(f"/v1/media/{created['media_id']}").status == 404
    assert media_api.get("/v1/media").json["items"] == []


def test_alt_text_is_set_cleared_and_limited(media_api: ApiClient) -> None:
    ready = uploaded(media_api, png())
    path = f"/v1/media/{ready['media_id']}"
    assert media_api.patch(path, {"alt_text": "a square"}).json["alt_text"] == "a square"
    assert media_api.patch(path, {"alt_text": None}).json["alt_text"] is None
    too_long = media_api.patch(path, {"alt_text": "x" * 2001})
    assert too_long.status == 422
    assert too_long.json["errors"][0]["loc"] == ["body", "alt_text"]
    assert media_api.patch(path, {}).status == 422
    assert media_api.patch(path, {"alt_text": "x", "focus": [0, 0]}).status == 422


def test_create_refuses_bad_fields_by_name(media_api: ApiClient) -> None:
    for body, field in (
        ({"content_type": "image/svg+xml", "size": 10}, "content_type"),
        ({"content_type": "image/png", "size": 0}, "size"),
        ({"content_type": "image/png", "size": 10, "sha256": "xyz"}, "sha256"),
        ({"content_type": "image/png", "size": 10, "name": "a.png"}, "name"),
    ):
        answer = media_api.post("/v1/media", body)
        assert answer.status == 422, body
        assert [e["loc"] for e in answer.json["errors"]] == [["body", field]]
    assert media_api.get("/v1/media").json["items"] == []


def test_the_size_limit_and_the_pending_cap_come_from_the_settings(
    s3: Any, aws: AwsResources, clock: Any
) -> None:
    settings = aws.settings.model_copy(
        update={"MAX_MEDIA_BYTES": 100, "MAX_PENDING_MEDIA_PER_USER": 2}
    )
    install_api(Settings.model_validate(settings.model_dump()), clock)
    carol = ApiClient("carol")
    big = carol.post("/v1/media", {"content_type": "image/png", "size": 101})
    assert big.status == 422 and big.json["errors"][0]["type"] == "too_large"
    assert "the limit is 100" in big.json["errors"][0]["msg"]
    for _ in range(2):
        assert carol.post("/v1/media", {"content_type": "image/png", "size": 10}).status == 201
    over = carol.post("/v1/media", {"content_type": "image/png", "size": 10})
    assert over.status == 409 and "MAX_PENDING_MEDIA_PER_USER" in over.json["detail"]
    assert (
        ApiClient("dave").post("/v1/media", {"content_type": "image/png", "size": 10}).status == 201
    )
    clock.advance(86_400)  # the pending ones expired: room again
    assert carol.post("/v1/media", {"content_type": "image/png", "size": 10}).status == 201


FAR = "2026-11-30T09:30:00Z"


def test_delete_is_409_while_a_scheduled_post_uses_it_then_removes_item_and_bytes(
    media_api: ApiClient, s3: Any, aws: AwsResources
) -> None:
    ready = uploaded(media_api, png())
    channel = media_api.create_channel()
    post = media_api.post(
        "/v1/scheduled-posts",
        {
            "content": "look",
            "media_ids": [ready["media_id"]],
            "publish_at": FAR,
            "channel_ids": [channel],
        },
    )
    assert post.status == 201, post.json
    path = f"/v1/media/{ready['media_id']}"
    refused = media_api.delete(path)
    assert refused.status == 409 and post.json["schedule_id"] in refused.json["detail"]
    assert media_api.delete(f"/v1/scheduled-posts/{post.json['schedule_id']}").status == 200
    assert media_api.delete(path).status == 204
    assert media_api.get(path).status == 404
    assert s3.list_objects_v2(Bucket=aws.settings.MEDIA_BUCKET_NAME).get("KeyCount") == 0


def post_body(media_ids: list[str], channel: str) -> dict:
    return {"content": "look", "media_ids": media_ids, "publish_at": FAR, "channel_ids": [channel]}


def test_a_posts_media_must_be_the_callers_ready_uploads(
    media_api: ApiClient, bob: ApiClient
) -> None:
    channel = media_api.create_channel()
    ready = uploaded(media_api, png())["media_id"]
    pending = create(media_api, png())["media_id"]
    rejected = uploaded(media_api, b"%PDF-1.4\n")["media_id"]
    bobs = uploaded(bob, png())["media_id"]
    answer = media_api.post(
        "/v1/scheduled-posts", post_body([ready, "m1", bobs, pending, rejected], channel)
    )
    assert answer.status == 422, answer.json
    errors = {tuple(e["loc"]): e for e in answer.json["errors"]}
    assert set(errors) == {("body", "media_ids", i) for i in (1, 2, 3, 4)}
    assert {e["type"] for e in errors.values()} == {"media_not_ready"}
    missing, foreign = errors[("body", "media_ids", 1)], errors[("body", "media_ids", 2)]
    assert missing["msg"].replace("'m1'", "ID") == foreign["msg"].replace(repr(bobs), "ID")
    assert "pending" in errors[("body", "media_ids", 3)]["msg"]
    assert "rejected" in errors[("body", "media_ids", 4)]["msg"]
    assert media_api.get("/v1/scheduled-posts").json["items"] == []
    created = media_api.post("/v1/scheduled-posts", post_body([ready], channel))
    assert (created.status, created.json["media_ids"]) == (201, [ready])


def test_an_edit_naming_an_unready_upload_is_422_and_keeps_the_post(media_api: ApiClient) -> None:
    channel = media_api.create_channel()
    post = media_api.schedule(FAR, [channel])
    path = f"/v1/scheduled-posts/{post['schedule_id']}"
    answer = media_api.patch(path, {"media_ids": ["old-opaque-id"]})
    assert answer.status == 422
    assert answer.json["errors"][0]["loc"] == ["body", "media_ids", 0]
    assert media_api.get(path).json["version"] == 1


def test_a_webhook_post_takes_up_to_ten_uploads(media_api: ApiClient) -> None:
    channel = media_api.create_channel()
    ids = [uploaded(media_api, png())["media_id"] for _ in range(11)]
    assert media_api.post("/v1/scheduled-posts", post_body(ids[:10], channel)).status == 201
    over = media_api.post("/v1/scheduled-posts", post_body(ids, channel))
    assert over.status == 422 and over.json["errors"][0]["loc"] == ["body", "media_ids"]


def test_a_posts_media_must_fit_each_networks_rules_naming_the_channel_and_limit(
    media_api: ApiClient, aws: AwsResources
) -> None:
    """Five images for a Bluesky channel (the lexicon's 4) and an alt text over Mastodon's
    1,500 are refused with the rule, the value and the limit; nothing is stored."""
    from tests.integration.api.test_api_network_media import network_channel

    sky = network_channel(aws, "bluesky")
    toot = network_channel(aws, "mastodon")
    five = [uploaded(media_api, png((i + 1, 1)))["media_id"] for i in range(5)]
    body = {"content": "look", "publish_at": "2026-11-29T13:00:00Z", "media_ids": five}
    answer = media_api.post("/v1/scheduled-posts", {**body, "channel_ids": [sky]})
    assert answer.status == 422, answer.json
    [error] = answer.json["errors"]
    assert error["type"] == "media_count" and sky in error["msg"]
    assert "5" in error["msg"] and "4" in error["msg"]
    long_alt = uploaded(media_api, png((9, 9)), alt_text="a" * 1501)["media_id"]
    answer = media_api.post(
        "/v1/scheduled-posts", {**body, "media_ids": [long_alt], "channel_ids": [toot]}
    )
    assert answer.status == 422, answer.json
    [error] = answer.json["errors"]
    assert error["type"] == "media_alt_text" and "1500" in error["msg"].replace(",", "")
    assert media_api.get("/v1/scheduled-posts").json["items"] == []


def test_a_ready_upload_never_attached_within_a_day_is_forgotten_and_refused(
    media_api: ApiClient, clock: Any
) -> None:
    channel = media_api.create_channel()
    kept = uploaded(media_api, png())["media_id"]
    assert media_api.post("/v1/scheduled-posts", post_body([kept], channel)).status == 201
    late = uploaded(media_api, png((2, 2)))["media_id"]
    clock.advance(86_400)
    assert media_api.get(f"/v1/media/{late}").status == 404
    assert [m["media_id"] for m in media_api.get("/v1/media").json["items"]] == [kept]
    later = {"publish_at": "2026-12-05T09:00:00Z"}
    answer = media_api.post("/v1/scheduled-posts", {**post_body([kept, late], channel), **later})
    assert answer.status == 422, answer.json
    [error] = answer.json["errors"]
    assert (error["loc"], error["type"]) == (["body", "media_ids", 1], "media_expired")
    assert len(media_api.get("/v1/scheduled-posts").json["items"]) == 1
    again = media_api.post("/v1/scheduled-posts", {**post_body([kept], channel), **later})
    assert again.status == 201  # an attached upload is kept however old


def test_an_upload_is_kept_before_the_post_write_even_when_that_write_is_refused(
    s3: Any, aws: AwsResources, clock: Any
) -> None:
    """The upload is kept before the post is written: a write refused after it (here the
    pending-post limit) leaves the upload kept and no post, never a post whose upload expires."""
    settings = aws.settings.model_copy(update={"MAX_PENDING_POSTS": 1})
    install_api(Settings.model_validate(settings.model_dump()), clock)
    carol = ApiClient("carol")
    channel = carol.create_channel()
    carol.schedule(FAR, [channel])
    media_id = uploaded(carol, png())["media_id"]
    refused = carol.post("/v1/scheduled-posts", post_body([media_id], channel))
    assert refused.status == 429, refused.json  # MAX_PENDING_POSTS, at the post write
    assert len(carol.get("/v1/scheduled-posts").json["items"]) == 1
    assert carol.get(f"/v1/media/{media_id}").json["expires_at"] is None


def test_edits_and_recurring_schedules_attach_their_uploads(
    media_api: ApiClient, clock: Any
) -> None:
    channel = media_api.create_channel()
    post = media_api.schedule(FAR, [channel])
    edited = uploaded(media_api, png())["media_id"]
    path = f"/v1/scheduled-posts/{post['schedule_id']}"
    assert media_api.patch(path, {"media_ids": [edited]}).status == 200
    template = uploaded(media_api, png((2, 2)))["media_id"]
    series = media_api.post(
        "/v1/recurring-schedules",
        {
            "content": "weekly",
            "media_ids": [template],
            "channel_ids": [channel],
            "timezone": "UTC",
            "cron": "0 9 * * 1",
        },
    )
    assert series.status == 201, series.json
    for media_id in (edited, template):
        assert media_api.get(f"/v1/media/{media_id}").json["expires_at"] is None
    clock.advance(2 * 86_400)
    for media_id in (edited, template):
        assert media_api.get(f"/v1/media/{media_id}").status == 200


def test_an_upload_named_only_by_a_thread_part_is_kept_and_cannot_be_deleted(
    media_api: ApiClient,
) -> None:
    """A thread part's upload is attached as a post's own is: its expiry goes at the create,
    and a DELETE while the post is still to publish is a 409 (it would publish without it)."""
    channel = media_api.create_channel()
    media = uploaded(media_api, png())
    assert media["expires_at"] is not None
    body = post_body([], channel) | {
        "parts": [{"content": "two", "media_ids": [media["media_id"]]}]
    }
    post = media_api.post("/v1/scheduled-posts", body)
    assert post.status == 201, post.json
    path = f"/v1/media/{media['media_id']}"
    assert media_api.get(path).json["expires_at"] is None
    refused = media_api.delete(path)
    assert refused.status == 409, refused.json
    assert post.json["schedule_id"] in refused.json["detail"]
