"""Pagination cursors: opaque, tamper-proof, bound to the caller and to the filters."""

from __future__ import annotations

import pytest

from scheduled_posts.errors import InvalidCursorError
from scheduled_posts.logic.cursor import CursorCodec, codec_for, query_fingerprint
from scheduled_posts.settings import Settings

KEY = "2026-11-29T13:00:00.000Z#5f0c0000-0000-4000-8000-000000000001"
QUERY = query_fingerprint(None, None, None)


@pytest.fixture
def codec() -> CursorCodec:
    return CursorCodec(b"secret")


def test_cursor_roundtrip_returns_the_last_key(codec: CursorCodec) -> None:
    cursor = codec.encode(owner="alice", last_key=KEY, query=QUERY)
    assert codec.decode(cursor, owner="alice", query=QUERY) == KEY


def test_cursor_of_another_user_is_refused(codec: CursorCodec) -> None:
    cursor = codec.encode(owner="alice", last_key=KEY, query=QUERY)
    with pytest.raises(InvalidCursorError):
        codec.decode(cursor, owner="bob", query=QUERY)


def test_cursor_with_an_edited_payload_is_refused(codec: CursorCodec) -> None:
    cursor = codec.encode(owner="alice", last_key=KEY, query=QUERY)
    _payload, mac = cursor.split(".")
    forged = CursorCodec(b"other").encode(owner="alice", last_key=KEY[:-1] + "2", query=QUERY)
    with pytest.raises(InvalidCursorError):
        codec.decode(f"{forged.split('.')[0]}.{mac}", owner="alice", query=QUERY)


def test_cursor_signed_with_another_secret_is_refused(codec: CursorCodec) -> None:
    forged = CursorCodec(b"guess").encode(owner="alice", last_key=KEY, query=QUERY)
    with pytest.raises(InvalidCursorError):
        codec.decode(forged, owner="alice", query=QUERY)


def test_cursor_for_other_filters_is_refused(codec: CursorCodec) -> None:
    cursor = codec.encode(owner="alice", last_key=KEY, query=QUERY)
    with pytest.raises(InvalidCursorError):
        codec.decode(cursor, owner="alice", query=query_fingerprint("scheduled", None, None))


@pytest.mark.parametrize("garbage", ["", ".", "abc", "a.b", "x" * 5000, "é.é", "\x00.\x00"])
def test_cursor_garbage_is_refused(codec: CursorCodec, garbage: str) -> None:
    with pytest.raises(InvalidCursorError):
        codec.decode(garbage, owner="alice", query=QUERY)


def test_codec_for_secret_arn_reads_the_secret() -> None:
    seen: list[str] = []

    def fetch(arn: str) -> bytes:
        seen.append(arn)
        return b"from-secrets-manager"

    settings = Settings(CURSOR_SECRET="plain", CURSOR_SECRET_ARN="arn:aws:secretsmanager:x")
    cursor = codec_for(settings, fetch_secret=fetch).encode(owner="a", last_key=KEY, query=QUERY)
    assert seen == ["arn:aws:secretsmanager:x"]
    assert CursorCodec(b"from-secrets-manager").decode(cursor, owner="a", query=QUERY) == KEY
