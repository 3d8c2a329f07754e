"""Posts, deliveries, attempts and channels as the domain sees them.

Instants are aware UTC datetimes; ``to_item``/``from_item`` convert to and from the DynamoDB
item shapes of ``docs/data-model.md`` (boto3 resource types: ``Decimal`` numbers).
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from scheduled_posts import keys
from scheduled_posts.clock import format_instant, instant_from_storage

# The states live in ``lifecycle/states.py``; re-exported here for the models' users.
from scheduled_posts.lifecycle.states import (  # noqa: F401
    TERMINAL_DELIVERY_STATUSES,
    TERMINAL_POST_STATUSES,
    DeliveryStatus,
    PostStatus,
)
from scheduled_posts.models.link_card import LinkCard
from scheduled_posts.models.network import ChannelAccount, ChannelLimits, ChannelStatus
from scheduled_posts.models.receipt import Receipt
from scheduled_posts.models.thread import CommentOutcome, FirstComment, Part, PublishedPart
from scheduled_posts.models.variants import Variant


def _opt_instant(value: Any) -> datetime | None:
    return instant_from_storage(value) if value else None


def _opt_str(value: datetime | None) -> str | None:
    return format_instant(value) if value is not None else None


def _num(value: Any) -> float | None:
    return float(value) if value is not None else None


def _dec(value: float | None) -> Decimal | None:
    return Decimal(str(round(value, 3))) if value is not None else None


class Delivery(BaseModel):
    """The state of one (post, channel) delivery. ``attempts`` counts tries that used an attempt."""

    model_config = ConfigDict(extra="ignore")

    channel_id: str
    status: DeliveryStatus = DeliveryStatus.PENDING
    attempts: int = 0
    remote_id: str | None = None
    #: The post's public page on the network (Mastodon status ``url``; Bluesky bsky.app URL).
    remote_url: str | None = None
    published_at: datetime | None = None
    last_error: str | None = None
    next_attempt_at: datetime | None = None
    lag_seconds: float | None = None
    #: When the first attempt started: a network adapter looks for a post whose answer was lost
    #: after this instant (``DeliveryRequest.first_attempt_at``).
    first_attempt_at: datetime | None = None
    #: The UTC minute (``YYYY-MM-DDTHH:MM``) of a rate-limit slot reserved for this delivery
    #: while it waits for that minute (``logic/rate_limit.py``); None otherwise.
    rate_slot: str | None = None
    #: Waits the destination asked for (429s and ``Retry-After``s), bounded by
    #: ``MAX_DESTINATION_WAITS`` (``lifecycle/retry.plan_retry``).
    destination_waits: int = 0
    #: ``attempts`` when its owner last retried it (``POST .../retry``): attempt numbers go on
    #: from there (each attempt keeps its own number), and the ``MAX_ATTEMPTS`` budget counts
    #: from here (decision "A retried delivery's attempts go on numbering").
    attempts_before_retry: int = 0
    #: The start of the attempt this map itself records (decision "The round's attempts live on the
    #: post item where they can"): while the delivery is owed, the attempt in flight (written by the
    #: lease write that starts the round, so no ``started`` row is needed); once ``published``, the
    #: published attempt, folded into the post item instead of an ``ATTEMPT#`` row. None when every
    #: attempt has its own row.
    started_at: datetime | None = None
    #: The HTTP status of the folded published attempt (with ``started_at``); None otherwise.
    http_status: int | None = None
    #: What the network returned when it published (decision "Receipts"); None until then.
    receipt: Receipt | None = None
    #: When the network last showed the published post (``logic/verify.py``); None: not yet.
    verified_at: datetime | None = None
    #: The open finding of the last read-back: ``missing`` or ``changed``; None: none.
    verification: str | None = None
    #: A thread's published parts, in order (part 1 first; for a failed thread, those published
    #: before the refused part) and the thread's parts in all (0: a single post).
    parts: list[PublishedPart] = Field(default_factory=list)
    parts_total: int = 0
    #: The first comment's own state (None: none yet, or the post has none).
    comment: CommentOutcome | None = None

    @property
    def parts_published(self) -> str | None:
        """``"k/n"`` for a thread (``None`` for a single post)."""
        return f"{len(self.parts)}/{self.parts_total}" if self.parts_total else None

    def to_item(self) -> dict[str, Any]:
        """The ``deliveries.<channel_id>`` map: attributes that are None are left out (an absent
        attribute reads as None), so the post item stays under 1 KB (decision "Post items store no
        NULLs and nothing derived")."""
        item: dict[str, Any] = {
            "status": self.status.value,
            "attempts": self.attempts,
            # 0 is the default: left out like None, every byte counts toward the 1 KB unit
            "destination_waits": self.destination_waits or None,
            "attempts_before_retry": self.attempts_before_retry or None,
            "remote_id": self.remote_id,
            "published_at": _opt_str(self.published_at),
            "last_error": self.last_error,
            "next_attempt_at": _opt_str(self.next_attempt_at),
            "lag_seconds": _dec(self.lag_seconds),
            "rate_slot": self.rate_slot,
            "remote_url": self.remote_url,
            "first_attempt_at": _opt_str(self.first_attempt_at),
            "started_at": _opt_str(self.started_at),
            "http_status": self.http_status,
            "receipt": self.receipt.to_item() if self.receipt and not self.receipt.empty else None,
            "verified_at": _opt_str(self.verified_at),
            "verification": self.verification,
            "parts": [p.to_item() for p in self.parts] or None,
            "parts_total": self.parts_total or None,
            "comment": self.comment.to_item() if self.comment else None,
        }
        return {name: value for name, value in item.items() if value is not None}

    @classmethod
    def from_item(cls, channel_id: str, item: dict[str, Any]) -> Delivery:
        return cls(
            channel_id=channel_id,
            status=DeliveryStatus(item.get("status", "pending")),
            attempts=int(item.get("attempts", 0)),
            remote_id=item.get("remote_id"),
            published_at=_opt_instant(item.get("published_at")),
            last_error=item.get("last_error"),
            next_attempt_at=_opt_instant(item.get("next_attempt_at")),
            lag_seconds=_num(item.get("lag_seconds")),
            rate_slot=item.get("rate_slot"),
            destination_waits=int(item.get("destination_waits", 0)),
            attempts_before_retry=int(item.get("attempts_before_retry") or 0),
            remote_url=item.get("remote_url"),
            first_attempt_at=_opt_instant(item.get("first_attempt_at")),
            started_at=_opt_instant(item.get("started_at")),
            http_status=int(item["http_status"]) if item.get("http_status") is not None else None,
            receipt=Receipt.from_item(item.get("receipt")),
            verified_at=_opt_instant(item.get("verified_at")),
            verification=item.get("verification"),
            parts=[PublishedPart.from_item(p) for p in item.get("parts") or []],
            parts_total=int(item.get("parts_total") or 0),
            comment=CommentOutcome.from_item(item.get("comment")),
        )


class Post(BaseModel):
    """A scheduled post and its per-channel deliveries."""

    model_config = ConfigDict(extra="ignore")

    schedule_id: str
    owner: str
    status: PostStatus
    content: str
    media_ids: list[str] = Field(default_factory=list)
    #: BCP 47 language tag of ``content`` when the creator gave one (Bluesky ``langs``,
    #: Mastodon ``language``).
    language: str | None = None
    publish_at: datetime
    channel_ids: list[str]
    #: A text per channel (``models/variants.py``): ``channel_id -> Variant``, each a channel of
    #: ``channel_ids``; read through ``effective_for``.
    variants: dict[str, Variant] = Field(default_factory=dict)
    #: The Bluesky link card frozen when the post was created or edited (``models/link_card.py``).
    link_card: LinkCard | None = None
    #: A thread's replies after ``content`` (``models/thread.py``); empty: a single post.
    parts: list[Part] = Field(default_factory=list)
    #: A reply by the same account to part 1, ``delay_seconds`` after the post.
    first_comment: FirstComment | None = None
    #: What the last create or edit could not do (a link card not fetched): answered, not stored.
    warnings: list[dict[str, str]] = Field(default_factory=list, exclude=True)
    deliveries: dict[str, Delivery] = Field(default_factory=dict)
    version: int = 1
    created_at: datetime
    updated_at: datetime
    published_at: datetime | None = None
    publish_lag_seconds: float | None = None
    status_reason: str | None = None
    shard: int = 0
    lease_token: str | None = None
    lease_expires_at: datetime | None = None
    expires_at: int | None = None
    #: Occurrences of a recurring schedule: the series, the occurrence's instant
    #: (its id's source) and whether an edit or cancel of this one post detached it.
    series_id: str | None = None
    occurrence_at: datetime | None = None
    detached: bool = False
    #: The posting-queue slot this post holds (its ``publish_at`` when created with
    #: ``next_free_slot``; None once rescheduled elsewhere, or never queued).
    queue_slot: datetime | None = None

    def to_item(self) -> dict[str, Any]:
        """The full DynamoDB item (boto3 resource types); attributes that are None are absent."""
        item: dict[str, Any] = {
            # The id and the owner are stored once, in the keys (``pk``, ``gsi1pk``), never
            # again as attributes: every byte counts toward the 1 KB write unit (decision "A post
            # item stores its id and owner only in its keys").
            "pk": keys.post_pk(self.schedule_id),
            "sk": keys.POST_SK,
            "status": self.status.value,
            "content": self.content,
            "publish_at": format_instant(self.publish_at),
            "channel_ids": list(self.channel_ids),
            "deliveries": {cid: d.to_item() for cid, d in self.deliveries.items()},
            "version": self.version,
            "created_at": format_instant(self.created_at),
            "updated_at": format_instant(self.updated_at),
            "shard": self.shard,
            "gsi1pk": keys.owner_posts_gsi_pk(self.owner),
            "gsi1sk": keys.order_key(self.publish_at, self.schedule_id),
        }
        optional = {
            "media_ids": list(self.media_ids) or None,
            "language": self.language,
            "variants": {cid: v.to_item() for cid, v in self.variants.items()} or None,
            "link_card": self.link_card.to_item() if self.link_card else None,
            "parts": [p.to_item() for p in self.parts] or None,
            "first_comment": self.first_comment.to_item() if self.first_comment else None,
            "published_at": _opt_str(self.published_at),
            "publish_lag_seconds": _dec(self.publish_lag_seconds),
            "status_reason": self.status_reason,
            "queue_slot": _opt_str(self.queue_slot),
        }
        # None is left out, never stored as NULL: an absent attribute reads as None and every
        # byte counts toward the 1 KB write unit (decision "Post items store no NULLs and nothing
        # derived").
        item.update({name: value for name, value in optional.items() if value is not None})
        if self.lease_token is not None:
            item["lease_token"] = self.lease_token
        if self.lease_expires_at is not None:
            item["lease_expires_at"] = format_instant(self.lease_expires_at)
            if self.status == PostStatus.PUBLISHING:
                item["lease_shard"] = keys.lease_shard(self.shard)
        if self.expires_at is not None:
            item["expires_at"] = self.expires_at
        if self.series_id is not None:
            item["series_id"] = self.series_id
            item["occurrence_of"] = self.series_id  # sparse GSI by_series: occurrences only
            item["occurrence_at"] = _opt_str(self.occurrence_at)
            item["detached"] = self.detached
        return item

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> Post:
        deliveries = {
            cid: Delivery.from_item(cid, d) for cid, d in (item.get("deliveries") or {}).items()
        }
        return cls(
            # Items written before keys alone held them (decision "A post item stores its id and
            # owner only in its keys") also carry ``schedule_id`` and ``owner``; the keys agree.
            schedule_id=keys.schedule_id_from_post_pk(str(item["pk"])),
            owner=keys.owner_from_posts_gsi_pk(str(item["gsi1pk"])),
            status=PostStatus(item["status"]),
            content=item["content"],
            media_ids=list(item.get("media_ids") or []),
            language=item.get("language"),
            publish_at=instant_from_storage(item["publish_at"]),
            channel_ids=list(item.get("channel_ids") or []),
            variants={cid: Variant.from_item(v) for cid, v in (item.get("variants") or {}).items()},
            link_card=LinkCard.from_item(item["link_card"]) if item.get("link_card") else None,
            parts=[Part.from_item(p) for p in item.get("parts") or []],
            first_comment=(
                FirstComment.from_item(item["first_comment"]) if item.get("first_comment") else None
            ),
            deliveries=deliveries,
            version=int(item["version"]),
            created_at=instant_from_storage(item["created_at"]),
            updated_at=instant_from_storage(item["updated_at"]),
            published_at=_opt_instant(item.get("published_at")),
            publish_lag_seconds=_num(item.get("publish_lag_seconds")),
            status_reason=item.get("status_reason"),
            shard=int(item.get("shard", 0)),
            lease_token=item.get("lease_token"),
            lease_expires_at=_opt_instant(item.get("lease_expires_at")),
            expires_at=int(item["expires_at"]) if item.get("expires_at") is not None else None,
            series_id=item.get("series_id"),
            occurrence_at=_opt_instant(item.get("occurrence_at")),
            detached=bool(item.get("detached", False)),
            queue_slot=_opt_instant(item.get("queue_slot")),
        )

    def is_expired(self, now: datetime) -> bool:
        """True when retention has passed (TTL deletion is late; readers hide such items)."""
        return self.expires_at is not None and self.expires_at <= now.timestamp()


class Attempt(BaseModel):
    """One try of one delivery, for ``GET /v1/scheduled-posts/{id}/attempts``."""

    model_config = ConfigDict(extra="ignore")

    channel_id: str
    attempt: int
    started_at: datetime
    finished_at: datetime | None = None
    outcome: str
    http_status: int | None = None
    error: str | None = None
    lag_seconds: float | None = None
    remote_id: str | None = None
    remote_url: str | None = None


class PreviousSecret(BaseModel):
    """A replaced signing secret, still valid until ``expires_at`` (the rotation overlap)."""

    model_config = ConfigDict(frozen=True)

    secret: str
    expires_at: datetime


class Channel(BaseModel):
    """A destination of a user. ``signing_secret`` is never shown after creation.

    ``previous_secrets`` are the replaced secrets, newest first, each valid for
    ``SECRET_OVERLAP_SECONDS`` after it was replaced (decision "Every replaced secret keeps its own
    overlap": rotating twice never cuts the first secret short).
    ``previous_signing_secret``/``previous_secret_expires_at`` are the one-entry form older items
    were written with; :meth:`valid_previous_secrets` reads both.
    """

    model_config = ConfigDict(extra="ignore")

    channel_id: str
    owner: str
    platform: str
    name: str
    url: str
    rate_limit_per_minute: int | None = None
    signing_secret: str
    previous_signing_secret: str | None = None
    previous_secret_expires_at: datetime | None = None
    previous_secrets: tuple[PreviousSecret, ...] = ()
    created_at: datetime

    def valid_previous_secrets(self, now: datetime) -> list[PreviousSecret]:
        """The replaced secrets still in their overlap at ``now``, newest first."""
        found = list(self.previous_secrets)
        legacy, until = self.previous_signing_secret, self.previous_secret_expires_at
        if legacy and until is not None and all(p.secret != legacy for p in found):
            found.append(PreviousSecret(secret=legacy, expires_at=until))
        return [p for p in found if now < p.expires_at]

    #: Network channels: ``active`` or ``needs_reauthorization``; the account and
    #: limits the credential check found; the sealed credentials and (Bluesky) sealed session
    #: (``data/credentials.py``). ``url`` is the Mastodon instance or Bluesky service URL.
    status: ChannelStatus = ChannelStatus.ACTIVE
    status_reason: str | None = None
    account: ChannelAccount | None = None
    limits: ChannelLimits | None = None
    credentials: str | None = Field(default=None, repr=False)
    session: str | None = Field(default=None, repr=False)
