"""The cost of a one-image post: what one ready PNG upload adds to a text post (``bench/cost.py``).

**Measured.** In the same moto run as the text posts' (``run_pipeline(media=True)``), each post
first gets its own upload made as a creator would: ``POST /v1/media`` (phase ``media-create``: a
pending item and a pre-signed POST form), the object put into moto's bucket (phase ``upload``:
botocore's ``PutObject``, billed as the browser's ``PostObject``, both PUT-tier requests), then
``POST /v1/media/{id}/complete`` (phase ``media-complete``: ``HeadObject``, ``GetObject``, the
Pillow probe, a conditional UpdateItem); the post then names it in ``media_ids`` (phase
``create``: the API's BatchGetItem of the uploads, and the attach that keeps it: a second
BatchGetItem, a conditional UpdateItem and ``DeleteObjectTagging``) and the worker reads the
upload item at publish time (phase ``worker``; the webhook's pre-signed GET link is no request).
The meter counts every S3 request and DynamoDB unit of those phases.

**Timed, on this machine's CPU (not Lambda's).** The probe (``logic.media_probe.probe``: SHA-256
and Pillow reading the image) is timed in-process with ``time.perf_counter``; the first call
is reported apart (Pillow is already imported: the test image is made with it). The complete
invocation's Lambda time is *modelled* as in ``bench/cost.py`` (calls x
``ASSUMED_CALL_SECONDS`` + overhead) plus the median probe time.

**Storage** is one month of the image's bytes in S3 Standard (an attached upload stays until
its owner deletes it; the lifecycle rule removes only uploads never attached).
"""

from __future__ import annotations

import io
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from bench.prices import PRICES, s3_request_cost

#: The phases of the upload itself (per post; the post's own phases are ``create``/``worker``).
MEDIA_PHASES = ("media-create", "upload", "media-complete")
#: The test image: a 1200 x 675 PNG (a common social-card size) of deterministic noise.
IMAGE_SIZE = (1200, 675)
#: Months an image is stored for the storage figure.
STORAGE_MONTHS = 1.0
GB = 1024**3


def png_bytes(size: tuple[int, int] = IMAGE_SIZE) -> bytes:
    """A deterministic PNG of ``size`` pixels (grey noise, so it does not compress to nothing)."""
    from PIL import Image

    out = io.BytesIO()
    Image.effect_noise(size, 64).convert("RGB").save(out, format="PNG")
    return out.getvalue()


@dataclass
class Uploader:
    """Makes one ready upload per post through the API, metered per phase, probe timed."""

    meter: Any
    bucket: str
    image: bytes = field(default_factory=png_bytes)
    probe_seconds: list[float] = field(default_factory=list)
    uploads: int = 0

    def __post_init__(self) -> None:
        import boto3

        from scheduled_posts.data.media_objects import s3_client

        boto3.client("s3", region_name="us-east-1").create_bucket(Bucket=self.bucket)
        s3_client.cache_clear()  # the service's client is made (and metered) from now on
        self._s3 = boto3.client("s3", region_name="us-east-1")

    @contextmanager
    def timed_probe(self) -> Iterator[None]:
        """Time every probe call while inside (the module attribute the complete call uses)."""
        from scheduled_posts.logic import media as media_logic

        original: Callable[..., Any] = media_logic.probe

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.probe_seconds.append(time.perf_counter() - started)

        media_logic.probe = timed  # type: ignore[assignment]
        try:
            yield
        finally:
            media_logic.probe = original

    def upload(self, client: Any) -> str:
        """One ready PNG for ``client`` (an ``ApiClient``): its ``media_id``. Restores the
        meter's phase to ``create``."""
        meter = self.meter
        meter.phase = "media-create"
        body = {"content_type": "image/png", "size": len(self.image), "alt_text": "a picture"}
        created = client.post("/v1/media", body)
        if created.status != 201:
            raise RuntimeError(f"media create failed: {created.status} {created.json}")
        media_id = str(created.json["media_id"])
        meter.phase = "upload"
        key = created.json["upload"]["fields"]["key"]
        self._s3.put_object(Bucket=self.bucket, Key=key, Body=self.image)
        meter.phase = "media-complete"
        done = client.post(f"/v1/media/{media_id}/complete")
        if done.status != 200 or done.json["status"] != "ready":
            raise RuntimeError(f"media complete failed: {done.status} {done.json}")
        meter.phase = "create"
        self.uploads += 1
        return media_id

    def stats(self) -> dict[str, Any]:
        """The probe timings (seconds) and the image's size, for :func:`media_cost`."""
        warm = self.probe_seconds[1:] or self.probe_seconds
        return {
            "uploads": self.uploads,
            "image_bytes": len(self.image),
            "image_pixels": list(IMAGE_SIZE),
            "probe_first_s": round(self.probe_seconds[0], 4) if self.probe_seconds else None,
            "probe_median_s": round(statistics.median(warm), 4) if warm else 0.0,
            "probe_max_s": round(max(warm), 4) if warm else 0.0,
        }


def s3_requests(rows: list[dict[str, Any]], posts: int) -> dict[str, float]:
    """S3 billed requests per post by operation (every phase but ``setup``)."""
    counts: Counter[str] = Counter()
    for row in rows:
        if row["service"] == "s3" and row["phase"] != "setup":
            counts[row["operation"]] += row["billed_requests"]
    return {op: round(n / posts, 4) for op, n in sorted(counts.items())}


def phase_totals(rows: list[dict[str, Any]], phase: str, posts: int) -> dict[str, float]:
    """Per-post DynamoDB units and calls of one phase."""
    mine = [r for r in rows if r["phase"] == phase]
    return {
        "write_units": sum(r["write_units"] for r in mine) / posts,
        "read_units": sum(r["read_units"] for r in mine) / posts,
        "calls": sum(r["calls"] for r in mine) / posts,
    }


def media_cost(
    text: dict[str, Any],
    media: dict[str, Any],
    rows: list[dict[str, Any]],
    posts: int,
    stats: dict[str, Any],
    *,
    lambda_cost: Callable[[float, float], float],
    call_seconds: float,
    overhead_seconds: float,
) -> dict[str, Any]:
    """The one-image post's model row and its details.

    ``text`` and ``media`` are ``service_cost`` of the text run and of the media run (its
    ``create``/``worker`` phases include the post's media reads); ``rows`` the media run's
    operations; ``lambda_cost(invocations, seconds_each)`` the cost module's Lambda price.
    """
    million = 1e6
    phases = {p: phase_totals(rows, p, posts) for p in MEDIA_PHASES}
    upload_wu = sum(p["write_units"] for p in phases.values())
    upload_ru = sum(p["read_units"] for p in phases.values())
    wu = media["write_units_per_post"] + upload_wu
    ru = media["read_units_per_post"] + upload_ru
    s3 = s3_requests(rows, posts)
    create_seconds = phases["media-create"]["calls"] * call_seconds + overhead_seconds
    complete_seconds = (
        phases["media-complete"]["calls"] * call_seconds
        + overhead_seconds
        + stats["probe_median_s"]
    )
    storage_gb_months = stats["image_bytes"] / GB * STORAGE_MONTHS
    extra = {
        "api_gateway": PRICES["http_api_request"].cost(2 * million),
        "lambda": lambda_cost(million, create_seconds) + lambda_cost(million, complete_seconds),
        "dynamodb": PRICES["dynamodb_write_unit"].cost(upload_wu * million)
        + PRICES["dynamodb_read_unit"].cost(upload_ru * million),
        "s3_requests": sum(s3_request_cost(op, n * million) for op, n in s3.items()),
        "s3_storage": PRICES["s3_storage_gb_month"].cost(storage_gb_months * million),
    }
    usd = dict(media["usd_per_million_posts"])
    usd.pop("total")
    for name in ("api_gateway", "lambda", "dynamodb"):
        usd[name] += extra[name]
    usd["s3"] = extra["s3_requests"] + extra["s3_storage"]
    usd["total"] = sum(usd.values())
    text_usd = text["usd_per_million_posts"]["total"]
    text_wu = text["write_units_per_post"] + text["outbox_write_units_per_post"]
    text_ru = text["read_units_per_post"] + text["per_post"]["relay_read_units"]
    media_wu = wu + media["outbox_write_units_per_post"]
    media_ru = ru + media["per_post"]["relay_read_units"]
    return {
        "write_units_per_post": round(wu, 3),
        "outbox_write_units_per_post": media["outbox_write_units_per_post"],
        "read_units_per_post": round(ru, 3),
        "usd_per_million_posts": {k: round(v, 2) for k, v in usd.items()},
        "fixed_usd_per_month": media["fixed_usd_per_month"],
        "media": {
            "posts": posts,
            "s3_requests_per_post": s3,
            "phases_per_post": {
                p: {k: round(v, 3) for k, v in t.items()} for p, t in phases.items()
            },
            "extra_write_units_over_text": round(media_wu - text_wu, 3),
            "extra_read_units_over_text": round(media_ru - text_ru, 3),
            "extra_api_invocations": 2,
            "complete_lambda_seconds_modelled": round(complete_seconds, 4),
            "create_lambda_seconds_modelled": round(create_seconds, 4),
            **stats,
            "storage_months": STORAGE_MONTHS,
            "storage_usd_per_million_posts_per_day": round(
                PRICES["s3_storage_gb_month"].cost(stats["image_bytes"] / GB * million) / 30, 2
            ),
            "extra_usd_per_million_posts": {k: round(v, 2) for k, v in extra.items()},
            "text_usd_per_million_posts": text_usd,
            "usd_per_million_posts": round(usd["total"], 2),
            "note": "probe times are this machine's CPU (x86_64 CPython in-process), not Lambda's",
        },
    }
