"""The uploads of a fault world (``tests/support/scenario.py``): each user uploads two PNGs and a
GIF (a GIF is processed in the background by Mastodon: 202, then polled) through the API (``POST
/v1/media``, the object put in the moto bucket, ``complete``), and about a quarter of the posts
carry one or two of their user's uploads.

The checks: a published webhook delivery's body lists the post's media in order (id, SHA-256,
alt text) with a link; a published network delivery shows them on the network in order with
their alt texts (``tests/support/networks.py``): nothing is published without its media.
"""

from __future__ import annotations

import hashlib
import io
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import boto3

from scheduled_posts.data.media_objects import s3_client
from scheduled_posts.settings import Settings

#: Share of a world's posts that carry media.
MEDIA_SHARE = 0.25


def _image(kind: str, width: int, height: int, color: tuple[int, int, int]) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (width, height), color).save(out, format=kind)
    return out.getvalue()


@dataclass
class Upload:
    media_id: str
    data: bytes
    alt_text: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


@dataclass
class WorldMedia:
    """The world's uploads by user, and the media of each post (see the module docstring)."""

    seed: int
    settings: Settings
    #: ``call(user, method, path, body) -> answer`` (the world's retried API client).
    call: Callable[..., Any]
    uploads: dict[str, list[Upload]] = field(default_factory=dict)
    by_id: dict[str, Upload] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.rng = random.Random(f"media-{self.seed}")  # leaves the world's own draws alone
        boto3.client("s3", region_name="us-east-1").create_bucket(
            Bucket=self.settings.MEDIA_BUCKET_NAME
        )
        s3_client.cache_clear()

    def build(self, users: list[str]) -> None:
        """Two PNGs and a GIF per user, each ready with its alt text."""
        s3 = boto3.client("s3", region_name="us-east-1")
        for u, user in enumerate(users):
            files = [
                ("PNG", "image/png", _image("PNG", 8 + u, 6, (200, 10 * u, self.seed % 250))),
                ("PNG", "image/png", _image("PNG", 5, 9 + u, (10 * u, 90, self.seed % 250))),
                ("GIF", "image/gif", _image("GIF", 7, 7 + u, (30, 30, 10 * u))),
            ]
            self.uploads[user] = []
            for k, (_, content_type, data) in enumerate(files):
                alt = f"picture {k} of {user}"
                body = {"content_type": content_type, "size": len(data), "alt_text": alt}
                created = self.call(user, "POST", "/v1/media", body)
                assert created.status == 201, created.json
                media_id = created.json["media_id"]
                key = created.json["upload"]["fields"]["key"]
                s3.put_object(Bucket=self.settings.MEDIA_BUCKET_NAME, Key=key, Body=data)
                done = self.call(user, "POST", f"/v1/media/{media_id}/complete")
                assert done.status == 200 and done.json["status"] == "ready", done.json
                upload = Upload(media_id, data, alt)
                self.uploads[user].append(upload)
                self.by_id[media_id] = upload

    def choose(self, user: str) -> list[str]:
        """A post's ``media_ids``: none for most, one or two of ``user``'s uploads for some."""
        if self.rng.random() >= MEDIA_SHARE or not self.uploads.get(user):
            return []
        count = self.rng.choice([1, 1, 2])
        return [u.media_id for u in self.rng.sample(self.uploads[user], count)]

    def alts(self, media_ids: list[str]) -> list[str]:
        """The alt texts of ``media_ids`` in order (what a network must show)."""
        return [self.by_id[m].alt_text for m in media_ids]

    def check_webhook(self, key: str, payload: dict[str, Any], media_ids: list[str]) -> list[str]:
        """The problems of a webhook body against the post's ``media_ids``."""
        if not media_ids:
            return (
                [f"{key}: the body lists media of a post without"] if payload.get("media") else []
            )
        listed = payload.get("media") or []
        got = [(m.get("media_id"), m.get("sha256"), m.get("alt_text")) for m in listed]
        want = [(m, self.by_id[m].sha256, self.by_id[m].alt_text) for m in media_ids]
        if got != want:
            return [f"{key}: the body lists media {got}, the post has {want}"]
        if not all(str(m.get("url") or "").startswith("http") for m in listed):
            return [f"{key}: a media item without its link"]
        return []
