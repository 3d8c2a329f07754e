"""One upload as the account export lists it (``GET /v1/me/export`` ``media``).

Read from the media items of the ``OWNER#<sub>`` partition (``sk`` ``MEDIA#<media_id>``) by
``data/account.py``, whatever else the media resource stores on them; the export adds a
short-lived download link to each ``ready`` upload (decision "The media bucket, its limits per
network, erasure").
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ExportMedia(BaseModel):
    """An upload of the caller: ``media_id``, ``status`` (``pending``, ``ready``,
    ``rejected``), the probed ``content_type``, ``size`` (bytes), ``sha256`` (hex),
    ``width``/``height`` (pixels), ``duration_seconds`` (video), ``alt_text``, the probe's
    ``reason`` for a rejection, ``created_at`` (RFC 3339 UTC) and ``download_url``: a
    pre-signed ``GET`` of the bytes, valid for minutes (``null`` unless ``ready``)."""

    model_config = ConfigDict(frozen=True)

    media_id: str
    status: str | None = None
    content_type: str | None = None
    size: int | None = None
    sha256: str | None = None
    width: int | None = None
    height: int | None = None
    duration_seconds: float | None = None
    alt_text: str | None = None
    reason: str | None = None
    created_at: str | None = None
    download_url: str | None = None
