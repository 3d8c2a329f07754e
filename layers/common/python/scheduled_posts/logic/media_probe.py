"""Probe an upload's bytes: what they really are, never what their name or the creator says.

:func:`probe` returns the facts (:class:`~scheduled_posts.models.media.Probed`: real type,
size, SHA-256, pixel dimensions, video duration) and, when the upload must be refused, a
:class:`~scheduled_posts.models.media.RejectionReason` (decision "Media uploads and the
probe"):

* Images are identified by Pillow, restricted to the JPEG, PNG, GIF and WebP decoders
  (``Image.open(..., formats=...)``: SVG, HEIC, PDF, BMP, an executable named ``.jpg`` are
  ``unsupported_type``), then decoded in full (``img.load()``) so a truncated file is
  ``truncated``. An image over ``max_pixels`` (Mastodon's default ``image_matrix_limit``,
  33,177,600) is ``too_many_pixels`` before anything is decoded: Pillow's
  ``DecompressionBombWarning`` is raised as an error at that limit.
* MP4 is identified by its ``ftyp`` box (ISO/IEC 14496-12 section 4.3) with an MP4 brand
  (``isom``, ``iso2``-``iso9``, ``mp41``, ``mp42``, ``avc1``, ``dash``, ``M4V ``); HEIF/AVIF
  images and QuickTime files, which share the box, are ``unsupported_type``. ``mutagen.mp4``
  reads the duration; the pixel size comes from the first track header (``tkhd``, 16.16 fixed
  point, ISO/IEC 14496-12 section 8.3.2) with mutagen's atom tree. An MP4 without a track of
  non-zero width (audio only) is ``unsupported_type``.
* A type other than the declared one is ``type_mismatch`` (never stored under the real type:
  the creator's client chose the type, its bytes contradict it, so it is asked to say again);
  a size or SHA-256 other than the declared ones is ``size_mismatch``/``sha256_mismatch``.

Pillow and mutagen are imported inside the functions: the API's cold start pays for them only
when a probe runs.
"""

from __future__ import annotations

import hashlib
import io
import struct
import warnings
from dataclasses import dataclass
from typing import Any

from scheduled_posts.models.media import MEDIA_KINDS, Probed, RejectionReason

#: Brands of an MP4 file in its ``ftyp`` box (ISO/IEC 14496-12 and 14496-14; the MP4
#: registration authority's brand list).
MP4_BRANDS = frozenset(
    {b"isom", b"iso2", b"iso3", b"iso4", b"iso5", b"iso6", b"iso7", b"iso8", b"iso9"}
    | {b"mp41", b"mp42", b"avc1", b"dash", b"M4V ", b"M4VP", b"mmp4"}
)
#: Brands of still images and QuickTime in the same box (HEIF, ISO/IEC 23008-12; AVIF): never
#: MP4 video, whatever else they list.
NOT_MP4_BRANDS = frozenset({b"heic", b"heix", b"heim", b"heis", b"mif1", b"msf1", b"avif"})
NOT_MP4_BRANDS |= frozenset({b"avis", b"qt  ", b"M4A ", b"M4B "})


@dataclass(frozen=True)
class ProbeOutcome:
    """What the bytes are (``probed``; ``None`` when not one of our kinds) and why they are
    refused (``reason``; ``None``: ready)."""

    probed: Probed | None
    reason: RejectionReason | None


def probe(
    data: bytes,
    *,
    declared_type: str,
    declared_size: int,
    declared_sha256: str | None,
    max_pixels: int,
) -> ProbeOutcome:
    """Probe ``data`` against what was declared; see the module's rules.

    Never raises on hostile bytes: every failure to read them is a refusal.
    """
    if not data:
        return ProbeOutcome(None, RejectionReason.EMPTY)
    sha256 = hashlib.sha256(data).hexdigest()
    if data[4:8] == b"ftyp":
        facts, refusal = _probe_mp4(data)
    else:
        facts, refusal = _probe_image(data, max_pixels)
    if facts is None:
        return ProbeOutcome(None, refusal or RejectionReason.UNSUPPORTED_TYPE)
    probed = Probed(sha256=sha256, size=len(data), **facts)
    width, height = probed.width or 0, probed.height or 0
    if refusal is None and width * height > max_pixels:
        refusal = RejectionReason.TOO_MANY_PIXELS
    if refusal is None and probed.content_type != declared_type:
        refusal = RejectionReason.TYPE_MISMATCH
    if refusal is None and probed.size != declared_size:
        refusal = RejectionReason.SIZE_MISMATCH
    if refusal is None and declared_sha256 is not None and declared_sha256.lower() != sha256:
        refusal = RejectionReason.SHA256_MISMATCH
    return ProbeOutcome(probed, refusal)


_FORMATS = {kind.pillow_format: kind.content_type for kind in MEDIA_KINDS.values()}


def _probe_image(
    data: bytes, max_pixels: int
) -> tuple[dict[str, Any] | None, RejectionReason | None]:
    """``({"content_type", "width", "height"}, refusal)`` from Pillow; ``(None, reason)`` when
    Pillow's JPEG, PNG, GIF and WebP decoders do not know the bytes."""
    from PIL import Image, UnidentifiedImageError

    formats = [f for f in _FORMATS if f is not None]
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        previous, Image.MAX_IMAGE_PIXELS = Image.MAX_IMAGE_PIXELS, max_pixels
        try:
            with Image.open(io.BytesIO(data), formats=formats) as img:
                facts = {
                    "content_type": _FORMATS[img.format],
                    "width": img.width,
                    "height": img.height,
                }
                try:
                    img.load()
                except (Image.DecompressionBombError, Image.DecompressionBombWarning):
                    return facts, RejectionReason.TOO_MANY_PIXELS
                except (OSError, SyntaxError, ValueError, EOFError, struct.error):
                    return facts, RejectionReason.TRUNCATED
                return facts, None
        except (Image.DecompressionBombError, Image.DecompressionBombWarning):
            return None, RejectionReason.TOO_MANY_PIXELS
        except (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError, struct.error):
            return None, RejectionReason.UNSUPPORTED_TYPE
        finally:
            Image.MAX_IMAGE_PIXELS = previous


def _brands(data: bytes) -> set[bytes]:
    """The major and compatible brands of the leading ``ftyp`` box."""
    (size,) = struct.unpack(">I", data[:4])
    box = data[8 : min(size, len(data), 4096)]
    return {box[i : i + 4] for i in range(0, len(box) - 3, 4) if i != 4}


def _probe_mp4(data: bytes) -> tuple[dict[str, Any] | None, RejectionReason | None]:
    """``({"content_type": "video/mp4", "width", "height", "duration_seconds"}, refusal)`` from
    mutagen; ``(None, unsupported_type)`` for another ISO media file; ``truncated`` when the
    boxes cannot be read."""
    from mutagen import MutagenError
    from mutagen.mp4 import MP4, Atoms

    brands = _brands(data)
    if brands & NOT_MP4_BRANDS or not brands & MP4_BRANDS:
        return None, RejectionReason.UNSUPPORTED_TYPE
    facts: dict[str, Any] = {"content_type": "video/mp4"}
    try:
        info = MP4(io.BytesIO(data)).info
        if info is None:
            raise ValueError("no stream information")
        facts["duration_seconds"] = round(float(info.length), 3)
        size = _track_size(Atoms(io.BytesIO(data)), io.BytesIO(data))
    except (MutagenError, KeyError, ValueError, struct.error, OSError):
        return facts, RejectionReason.TRUNCATED
    if size is None:
        return None, RejectionReason.UNSUPPORTED_TYPE
    facts["width"], facts["height"] = size
    return facts, None


def _track_size(atoms: Any, fileobj: io.BytesIO) -> tuple[int, int] | None:
    """``(width, height)`` of the first track with a non-zero ``tkhd`` size, else ``None``."""
    for trak in atoms[b"moov",].findall(b"trak"):
        try:
            tkhd = trak[b"tkhd",]
        except KeyError:
            continue
        ok, payload = tkhd.read(fileobj)
        if not ok or not payload:
            raise ValueError("tkhd box is cut short")
        # version 1 has 64-bit times and duration: 12 more bytes before the common tail.
        offset = 4 + (32 if payload[0] == 1 else 20) + 8 + 8 + 36
        width, height = struct.unpack(">II", payload[offset : offset + 8])
        if width >> 16 and height >> 16:
            return width >> 16, height >> 16
    return None
