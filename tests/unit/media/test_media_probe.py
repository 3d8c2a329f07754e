"""The probe reads real files made here with Pillow (and one MP4 built box by box): each kind is
recognised with its dimensions, and each hostile or broken file is refused with its reason."""

from __future__ import annotations

import hashlib
import io
import struct
import zlib

import pytest
from PIL import Image

from scheduled_posts.logic.media_probe import probe
from scheduled_posts.models.media import RejectionReason

LIMIT = 33_177_600


def image(fmt: str, size: tuple[int, int] = (3, 2)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, (200, 10, 10)).save(buffer, format=fmt)
    return buffer.getvalue()


def run(data: bytes, declared: str, **kwargs: object):
    args = {"declared_size": len(data), "declared_sha256": None, "max_pixels": LIMIT, **kwargs}
    return probe(data, declared_type=declared, **args)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("fmt", "content_type"),
    [("PNG", "image/png"), ("JPEG", "image/jpeg"), ("GIF", "image/gif"), ("WEBP", "image/webp")],
)
def test_each_image_kind_is_ready_with_its_facts(fmt: str, content_type: str) -> None:
    data = image(fmt)
    outcome = run(data, content_type, declared_sha256=hashlib.sha256(data).hexdigest().upper())
    assert outcome.reason is None
    assert outcome.probed is not None
    assert (outcome.probed.content_type, outcome.probed.width, outcome.probed.height) == (
        content_type,
        3,
        2,
    )
    assert outcome.probed.size == len(data)
    assert outcome.probed.sha256 == hashlib.sha256(data).hexdigest()


def test_a_png_declared_as_jpeg_is_a_type_mismatch_showing_the_real_type() -> None:
    outcome = run(image("PNG"), "image/jpeg")
    assert outcome.reason == RejectionReason.TYPE_MISMATCH
    assert outcome.probed is not None and outcome.probed.content_type == "image/png"


def test_a_truncated_png_is_refused_as_truncated() -> None:
    data = image("PNG", (64, 64))
    assert run(data[: len(data) // 2], "image/png").reason == RejectionReason.TRUNCATED


@pytest.mark.parametrize(
    "data",
    [
        b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>',
        b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n",
        b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff" + b"\x00" * 48 + b"PE\x00\x00",
        b"\x7fELF\x02\x01\x01" + b"\x00" * 40,
        b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic",
        b"\x00\x00\x00\x14ftypqt  \x00\x00\x00\x00qt  ",
        image("BMP"),
        image("TIFF"),
    ],
    ids=["svg", "pdf", "exe", "elf", "heic", "quicktime", "bmp", "tiff"],
)
def test_other_kinds_are_unsupported_whatever_they_are_declared(data: bytes) -> None:
    outcome = run(data, "image/jpeg")
    assert (outcome.reason, outcome.probed) == (RejectionReason.UNSUPPORTED_TYPE, None)


def test_an_empty_file_is_refused_as_empty() -> None:
    assert run(b"", "image/png", declared_size=1).reason == RejectionReason.EMPTY


def chunk(kind: bytes, payload: bytes) -> bytes:
    return (
        struct.pack(">I", len(payload))
        + kind
        + payload
        + struct.pack(">I", zlib.crc32(kind + payload))
    )


def png_header(width: int, height: int) -> bytes:
    """A PNG claiming ``width`` x ``height`` with a few bytes of pixel data (cheap to make)."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00" * 100)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def test_a_bomb_over_the_pixel_limit_is_refused_before_decoding() -> None:
    outcome = run(png_header(50_000, 50_000), "image/png")
    assert outcome.reason == RejectionReason.TOO_MANY_PIXELS
    just_over = run(png_header(7681, 4320), "image/png")  # 8K UHD + one column
    assert just_over.reason == RejectionReason.TOO_MANY_PIXELS


def test_the_pixel_limit_is_the_callers() -> None:
    assert run(image("PNG", (4, 4)), "image/png", max_pixels=15).reason == (
        RejectionReason.TOO_MANY_PIXELS
    )
    assert run(image("PNG", (4, 4)), "image/png", max_pixels=16).reason is None


def test_a_declared_size_or_sha256_the_bytes_contradict_is_refused() -> None:
    data = image("PNG")
    assert run(data, "image/png", declared_size=len(data) + 1).reason == (
        RejectionReason.SIZE_MISMATCH
    )
    assert run(data, "image/png", declared_sha256="0" * 64).reason == (
        RejectionReason.SHA256_MISMATCH
    )


def box(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", 8 + len(payload)) + kind + payload


def mp4(width: int = 640, height: int = 360, seconds: int = 3, cut: int = 0) -> bytes:
    """A minimal MP4 (ISO/IEC 14496-12): ftyp, and moov with mvhd (timescale 1000) and one
    video trak (tkhd with the size, mdia/hdlr ``vide``); no samples."""
    ftyp = box(b"ftyp", b"isom\x00\x00\x02\x00isomiso2mp41")
    mvhd = box(b"mvhd", b"\x00" * 4 + struct.pack(">IIII", 0, 0, 1000, seconds * 1000) + bytes(80))
    tkhd_payload = (
        b"\x00\x00\x00\x03"
        + struct.pack(">IIIII", 0, 0, 1, 0, seconds * 1000)
        + bytes(8)
        + bytes(8)
        + bytes(36)
        + struct.pack(">II", width << 16, height << 16)
    )
    hdlr = box(b"hdlr", b"\x00" * 4 + b"\x00" * 4 + b"vide" + bytes(12) + b"video\x00")
    trak = box(b"trak", box(b"tkhd", tkhd_payload) + box(b"mdia", hdlr))
    data = ftyp + box(b"moov", mvhd + trak)
    return data[: len(data) - cut] if cut else data


def test_an_mp4_is_ready_with_its_duration_and_track_size() -> None:
    outcome = run(mp4(), "video/mp4")
    assert outcome.reason is None and outcome.probed is not None
    assert outcome.probed.content_type == "video/mp4"
    assert (outcome.probed.width, outcome.probed.height) == (640, 360)
    assert outcome.probed.duration_seconds == 3.0


def test_an_mp4_declared_as_an_image_is_a_mismatch_and_a_cut_one_truncated() -> None:
    assert run(mp4(), "image/png").reason == RejectionReason.TYPE_MISMATCH
    assert run(mp4(cut=30), "video/mp4").reason == RejectionReason.TRUNCATED


def test_an_mp4_without_a_video_track_is_unsupported() -> None:
    assert run(mp4(width=0, height=0), "video/mp4").reason == RejectionReason.UNSUPPORTED_TYPE
