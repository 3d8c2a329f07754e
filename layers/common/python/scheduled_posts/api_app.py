"""The API Lambda's collaborators, built once per process (lazily: importing does no I/O).

The API's routers (``scheduled_posts/api/``) take them through Powertools ``Depends`` on
:func:`get_dependencies` (``scheduled_posts.api.params``) on every request; tests
install their own with :func:`set_dependencies` (moto tables, a SimClock, a fake DNS resolver,
a recording promoter).

Idempotent create lives in ``logic/create.py`` (:class:`PostCreator`, :class:`SeriesCreator`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from scheduled_posts.clock import Clock, SystemClock
from scheduled_posts.data.account import AccountStore
from scheduled_posts.data.calendar_feeds import CalendarFeedStore
from scheduled_posts.data.card_thumbs import put_thumb
from scheduled_posts.data.channels import ChannelRepository
from scheduled_posts.data.credentials import CredentialCipher
from scheduled_posts.data.event_feed import EventFeed
from scheduled_posts.data.import_queue import ImportQueue
from scheduled_posts.data.imports import ImportStore, S3ImportFiles
from scheduled_posts.data.media import MediaRepository
from scheduled_posts.data.media_objects import S3MediaObjects
from scheduled_posts.data.notification_endpoints import NotificationEndpointRepository
from scheduled_posts.data.posting_queue import PostingQueueStore
from scheduled_posts.data.posts import PostRepository
from scheduled_posts.data.series import SeriesRepository
from scheduled_posts.data.verifications import VerificationStore
from scheduled_posts.logic.create import PostCreator, SeriesCreator
from scheduled_posts.logic.cursor import CursorCodec, codec_for
from scheduled_posts.logic.link_cards import LinkCardDeps
from scheduled_posts.logic.media import MediaDeps
from scheduled_posts.logic.network_accounts import ChannelSecrets, CredentialChecker
from scheduled_posts.logic.posting_queue import QueueDeps
from scheduled_posts.logic.posts import PostDeps, Promoter
from scheduled_posts.logic.series import SeriesDeps
from scheduled_posts.logic.verify import VerifyDeps
from scheduled_posts.models.messages import DispatchMessage, DueEntry
from scheduled_posts.observability import logger
from scheduled_posts.platforms.http import MethodTransport, OutboundHttp
from scheduled_posts.platforms.link_preview import LinkPreviewer
from scheduled_posts.platforms.url_policy import Resolver, system_resolver
from scheduled_posts.settings import Settings, get_settings


class _LazyPromoter:
    """The fire path's promoter (``logic.promotion.make_promoter``), imported on first use."""

    def __init__(self, settings: Settings, clock: Clock) -> None:
        self._settings = settings
        self._clock = clock
        self._promoter: Promoter | None = None

    def __call__(self, entry: DueEntry) -> None:
        if self._promoter is None:
            from scheduled_posts.logic.promotion import make_promoter

            self._promoter = make_promoter(self._settings, self._clock)
        self._promoter(entry)


class _LazyDispatcher:
    """Sends one dispatch message (``data.queue.DispatchQueue``, built on first use)."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._queue: Any | None = None

    def __call__(self, message: DispatchMessage, delay_seconds: int) -> None:
        if self._queue is None:
            from scheduled_posts.data.queue import DispatchQueue

            self._queue = DispatchQueue.from_settings(self._settings)
        self._queue.send(message, delay_seconds)


@dataclass
class ApiDependencies:
    """Everything the routes need. ``promoter=None`` uses the fire path's promoter;
    ``dynamodb`` is an optional boto3 DynamoDB resource (default: the process's)."""

    settings: Settings
    clock: Clock = field(default_factory=SystemClock)
    resolver: Resolver = system_resolver
    promoter: Promoter | None = None
    dynamodb: Any | None = None
    #: A low-level DynamoDB client for the create idempotency records (default: Powertools' own).
    #: Not ``dynamodb.meta.client``: a resource's client takes plain Python values, Powertools
    #: sends typed attribute values.
    idempotency_client: Any | None = None
    #: The transport of the networks' credential checks (default: the production one).
    outbound_transport: MethodTransport | None = None
    #: A boto3 KMS client for sealing credentials (default: the process's).
    kms: Any | None = None
    #: A boto3 S3 client for the media bucket (default: the process's).
    s3: Any | None = None

    @cached_property
    def credential_checker(self) -> CredentialChecker:
        return CredentialChecker(
            self.settings, transport=self.outbound_transport, resolver=self.resolver
        )

    @cached_property
    def channel_secrets(self) -> ChannelSecrets:
        return ChannelSecrets(CredentialCipher(self.settings.CREDENTIALS_KEY_ID, kms=self.kms))

    @cached_property
    def posts(self) -> PostRepository:
        return PostRepository(
            posts_table_name=self.settings.POSTS_TABLE_NAME,
            due_table_name=self.settings.DUE_INDEX_TABLE_NAME,
            misfire_grace_seconds=self.settings.MISFIRE_GRACE_SECONDS,
            dynamodb=self.dynamodb,
        )

    @cached_property
    def channels(self) -> ChannelRepository:
        return ChannelRepository(
            posts_table_name=self.settings.POSTS_TABLE_NAME, dynamodb=self.dynamodb
        )

    @cached_property
    def notification_endpoints(self) -> NotificationEndpointRepository:
        """Notification endpoints."""
        return NotificationEndpointRepository(
            posts_table_name=self.settings.POSTS_TABLE_NAME, dynamodb=self.dynamodb
        )

    @cached_property
    def account(self) -> AccountStore:
        return AccountStore(
            posts_table_name=self.settings.POSTS_TABLE_NAME,
            due_table_name=self.settings.DUE_INDEX_TABLE_NAME,
            idempotency_table_name=self.settings.IDEMPOTENCY_TABLE_NAME,
            dynamodb=self.dynamodb,
            media_bucket_name=self.settings.MEDIA_BUCKET_NAME,
        )

    @cached_property
    def verify_deps(self) -> VerifyDeps:
        """The read-back's collaborators (``POST .../verify``)."""
        return VerifyDeps(
            posts=self.post_deps,
            channels=self.channels,
            store=VerificationStore(
                posts_table_name=self.settings.POSTS_TABLE_NAME, dynamodb=self.dynamodb
            ),
            clock=self.clock,
            http=OutboundHttp.from_settings(
                self.settings, transport=self.outbound_transport, resolver=self.resolver
            ),
        )

    @cached_property
    def post_deps(self) -> PostDeps:
        promoter = self.promoter or _LazyPromoter(self.settings, self.clock)
        return PostDeps(
            posts=self.posts,
            channels=self.channels,
            settings=self.settings,
            clock=self.clock,
            promoter=promoter,
            dispatcher=_LazyDispatcher(self.settings),
            media=self.media_deps.media,
            queue=self.queue_deps,
            uploads=self.media_deps,
            link_cards=self.link_card_deps,
        )

    @cached_property
    def link_card_deps(self) -> LinkCardDeps:
        """Bluesky link cards: pages fetched under the outbound URL policy, thumbs stored in the
        media bucket as uploads."""
        objects = S3MediaObjects(self.settings.MEDIA_BUCKET_NAME, client=self.s3)
        return LinkCardDeps(
            previewer=LinkPreviewer(self.settings, resolver=self.resolver),
            uploads=self.media_deps,
            put_object=lambda key, data, kind: put_thumb(objects, key, data, kind),
        )

    @cached_property
    def imports(self) -> ImportStore:
        """Bulk imports and their rows' results."""
        return ImportStore(self.settings.POSTS_TABLE_NAME, dynamodb=self.dynamodb)

    @cached_property
    def import_files(self) -> S3ImportFiles:
        """Committed imports' files in the media bucket under ``imports/``."""
        return S3ImportFiles(self.settings.MEDIA_BUCKET_NAME, client=self.s3)

    @cached_property
    def import_queue(self) -> ImportQueue:
        """The import queue (``IMPORT_QUEUE_URL``)."""
        return ImportQueue(self.settings.IMPORT_QUEUE_URL)

    @cached_property
    def calendar_feeds(self) -> CalendarFeedStore:
        """The calendar feeds' tokens (their hashes) and owners."""
        return CalendarFeedStore(self.settings.POSTS_TABLE_NAME, dynamodb=self.dynamodb)

    @cached_property
    def queue_deps(self) -> QueueDeps:
        """Posting schedules and their reserved slots."""
        return QueueDeps(
            store=PostingQueueStore(self.settings.POSTS_TABLE_NAME, dynamodb=self.dynamodb),
            channels=self.channels,
            posts=self.posts,
            settings=self.settings,
            clock=self.clock,
        )

    @cached_property
    def media_deps(self) -> MediaDeps:
        """Media uploads: their items, the bucket (``MEDIA_BUCKET_NAME``) and the owner's posts."""
        return MediaDeps(
            media=MediaRepository(
                posts_table_name=self.settings.POSTS_TABLE_NAME, dynamodb=self.dynamodb
            ),
            objects=S3MediaObjects(self.settings.MEDIA_BUCKET_NAME, client=self.s3),
            posts=self.posts,
            settings=self.settings,
            clock=self.clock,
        )

    @cached_property
    def event_feed(self) -> EventFeed:
        """The event feed (``GET /v1/events``, ``GET /v1/scheduled-posts/{id}/events``)."""
        table = self.dynamodb.Table(self.settings.POSTS_TABLE_NAME) if self.dynamodb else None
        return EventFeed(self.settings.POSTS_TABLE_NAME, table=table, clock=self.clock)

    def cursor_codec(self) -> CursorCodec:
        """The pagination cursor codec (Secrets Manager reads are cached by Powertools)."""
        return codec_for(self.settings)

    @cached_property
    def creator(self) -> PostCreator:
        """Creates posts (idempotently with a key); register the Lambda context on its
        ``idempotency_config`` on every invocation."""
        return PostCreator(
            self.post_deps,
            idempotency_table_name=self.settings.IDEMPOTENCY_TABLE_NAME,
            idempotency_client=self.idempotency_client,
            account=self.account,
        )

    @cached_property
    def series(self) -> SeriesRepository:
        return SeriesRepository(
            posts_table_name=self.settings.POSTS_TABLE_NAME,
            due_table_name=self.settings.DUE_INDEX_TABLE_NAME,
            posts=self.posts,
            dynamodb=self.dynamodb,
        )

    @cached_property
    def series_deps(self) -> SeriesDeps:
        return SeriesDeps(
            series=self.series,
            posts=self.posts,
            channels=self.channels,
            settings=self.settings,
            clock=self.clock,
            promoter=self.post_deps.promoter,
            media=self.media_deps.media,
            uploads=self.media_deps,
        )

    @cached_property
    def series_creator(self) -> SeriesCreator:
        """Creates recurring schedules (idempotently with a key); register the Lambda context
        on its ``idempotency_config`` on every invocation."""
        return SeriesCreator(
            self.series_deps,
            idempotency_table_name=self.settings.IDEMPOTENCY_TABLE_NAME,
            idempotency_client=self.idempotency_client,
            account=self.account,
        )


_current: ApiDependencies | None = None


def get_dependencies() -> ApiDependencies:
    """The process's dependencies: built on first use from ``get_settings()``."""
    global _current  # noqa: PLW0603 - one lazily built container per process
    if _current is None:
        _current = ApiDependencies(settings=get_settings())
        logger.debug("api dependencies built")
    return _current


def set_dependencies(dependencies: ApiDependencies | None) -> None:
    """Install ``dependencies`` (tests), or ``None`` to rebuild the defaults on next use."""
    global _current  # noqa: PLW0603
    _current = dependencies
