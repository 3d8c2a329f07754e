"""Request models of the API: field rules that need neither clock nor database."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from scheduled_posts.models.api import PostCreate, PostPatch
from scheduled_posts.models.channel_api import ChannelCreate

CHANNEL = "c0ffee00-0000-4000-8000-000000000001"


def _post(**overrides: object) -> dict[str, object]:
    body: dict[str, object] = {
        "content": "hello",
        "publish_at": "2026-11-29T13:00:00Z",
        "channel_ids": [CHANNEL],
    }
    body.update(overrides)
    return body


def _error_locs(exc: ValidationError) -> list[tuple[object, ...]]:
    return [tuple(e["loc"]) for e in exc.errors()]


def test_post_create_offset_is_converted_to_utc() -> None:
    post = PostCreate.model_validate(_post(publish_at="2026-11-29T14:30:00+01:30"))
    assert post.publish_at == datetime(2026, 11, 29, 13, 0, tzinfo=UTC)


def test_post_create_extra_digits_round_up_to_the_millisecond() -> None:
    post = PostCreate.model_validate(_post(publish_at="2026-11-29T13:00:00.0001Z"))
    assert post.publish_at == datetime(2026, 11, 29, 13, 0, 0, 1000, tzinfo=UTC)


@pytest.mark.parametrize(
    "value",
    [
        "2026-11-29T13:00:00",  # naive
        "2026-02-30T13:00:00Z",  # impossible date
        "2026-11-29T24:00:00Z",  # impossible time
        "2026-11-29 13:00",  # malformed
        "2026-11-29T13:00:00+25:00",  # impossible offset
        1_795_000_000,  # a number, not a string
        None,
        "",
    ],
)
def test_post_create_bad_publish_at_is_a_field_error(value: object) -> None:
    with pytest.raises(ValidationError) as info:
        PostCreate.model_validate(_post(publish_at=value))
    assert _error_locs(info.value) == [("publish_at",)]


def test_post_create_5000_code_points_are_accepted() -> None:
    post = PostCreate.model_validate(_post(content="😀" * 5000))
    assert len(post.content) == 5000


@pytest.mark.parametrize(
    "content", ["😀" * 5001, "", "   \n\t", "nul\x00byte", "lone \ud800 surrogate", 42, ["x"]]
)
def test_post_create_bad_content_is_a_field_error(content: object) -> None:
    with pytest.raises(ValidationError) as info:
        PostCreate.model_validate(_post(content=content))
    assert _error_locs(info.value)[0][0] == "content"


@pytest.mark.parametrize(
    "channel_ids",
    [
        [],
        [CHANNEL, CHANNEL],
        [f"c{i}" for i in range(11)],
        "c1",
        [1],
        ["../etc"],
        ["x" * 65],
    ],
)
def test_post_create_bad_channel_ids_is_a_field_error(channel_ids: object) -> None:
    with pytest.raises(ValidationError) as info:
        PostCreate.model_validate(_post(channel_ids=channel_ids))
    assert _error_locs(info.value)[0][0] == "channel_ids"


def test_post_create_eleven_media_ids_is_a_field_error() -> None:
    with pytest.raises(ValidationError) as info:
        PostCreate.model_validate(_post(media_ids=[f"m{i}" for i in range(11)]))
    assert _error_locs(info.value)[0][0] == "media_ids"


def test_post_create_unknown_field_is_refused() -> None:
    with pytest.raises(ValidationError) as info:
        PostCreate.model_validate(_post(status="published"))
    assert _error_locs(info.value) == [("status",)]


def test_post_patch_empty_body_is_refused() -> None:
    with pytest.raises(ValidationError):
        PostPatch.model_validate({})


def test_post_patch_null_field_is_refused() -> None:
    with pytest.raises(ValidationError):
        PostPatch.model_validate({"content": None})


def test_post_patch_one_field_is_enough() -> None:
    assert PostPatch.model_validate({"media_ids": []}).media_ids == []


def test_channel_create_unknown_platform_is_refused() -> None:
    with pytest.raises(ValidationError) as info:
        ChannelCreate.model_validate({"platform": "fax", "name": "n", "url": "https://a.b/"})
    assert _error_locs(info.value) == [("platform",)]


@pytest.mark.parametrize("rate", ["60", 0, 10**30, 1.5, True])
def test_channel_create_bad_rate_limit_is_refused(rate: object) -> None:
    with pytest.raises(ValidationError) as info:
        ChannelCreate.model_validate(
            {
                "platform": "webhook",
                "name": "n",
                "url": "https://a.b/",
                "rate_limit_per_minute": rate,
            }
        )
    assert _error_locs(info.value)[0][0] == "rate_limit_per_minute"


def test_channel_create_blank_name_is_refused() -> None:
    with pytest.raises(ValidationError):
        ChannelCreate.model_validate({"platform": "webhook", "name": "  ", "url": "https://a.b/"})


@pytest.mark.parametrize(
    ("content", "kind"),
    [
        ("\ufe0f", "variation selector (Mn, VS16)"),
        ("\U000e0100", "variation selector supplement (Mn, VS17)"),
        ("\u0301", "combining mark (Mn)"),
        ("\u20dd", "enclosing mark (Me)"),
        ("\u0903", "spacing mark (Mc)"),
        ("\u034f", "combining grapheme joiner (Mn)"),
        ("\ufffc", "object replacement character"),
        ("\U000e0041\U000e007f", "tag characters (Cf)"),
        ("\u200b\u0301 \ufe0f\ufffc", "a mix of them with white space"),
    ],
)
def test_post_create_content_of_invisible_characters_only_is_blank(content: str, kind: str) -> None:
    with pytest.raises(ValidationError) as exc:
        PostCreate.model_validate(_post(content=content))
    assert "must not be blank" in str(exc.value), kind


@pytest.mark.parametrize("content", ["e\u0301", "\u2764\ufe0f", "\u0915\u0903", "a\ufffc"])
def test_post_create_marks_on_a_visible_base_are_not_blank(content: str) -> None:
    assert PostCreate.model_validate(_post(content=content)).content == content
