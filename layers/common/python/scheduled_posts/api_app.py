"""The API Lambda's collaborators, built once per process (lazily: importing does no I/O).

``functions/api/handler.py`` asks :func:`get_dependencies` for them on every request; tests
install their own with :func:`set_dependencies` (moto tables, a SimClock, a fake DNS resolver,
a recording promoter).

Idempotent create (issue 2): when the request has an ``Idempotency-Key`` header, the create
logic runs inside Powertools ``idempotent_function`` with its own ``DynamoDBPersistenceLayer``
on ``IDEMPOTENCY_TABLE_NAME``, keyed on ``[owner, key]`` (so a key is scoped to the caller),
with payload validation over the parsed body and a 24 h expiry. Only the successful 201 body is
stored: errors are raised, so Powertools deletes the in-progress record and nothing is replayed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent_function,
)

from scheduled_posts.clock import Clock, SystemClock
from scheduled_posts.data.channels import ChannelRepository
from scheduled_posts.data.posts import PostRepository
from scheduled_posts.logic.cursor import CursorCodec, codec_for
from scheduled_posts.logic.posts import PostDeps, Promoter, create_post, idempotent_schedule_id
from scheduled_posts.models.api import PostCreate, PostOut
from scheduled_posts.models.messages import DueEntry
from scheduled_posts.observability import logger
from scheduled_posts.platforms.url_policy import Resolver, system_resolver
from scheduled_posts.settings import Settings, get_settings

#: How long an ``Idempotency-Key`` is remembered (issue 2: 24 h).
IDEMPOTENCY_EXPIRY_SECONDS = 24 * 3600


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
    def post_deps(self) -> PostDeps:
        promoter = self.promoter or _LazyPromoter(self.settings, self.clock)
        return PostDeps(
            posts=self.posts,
            channels=self.channels,
            settings=self.settings,
            clock=self.clock,
            promoter=promoter,
        )

    def cursor_codec(self) -> CursorCodec:
        """The pagination cursor codec (Secrets Manager reads are cached by Powertools)."""
        return codec_for(self.settings)

    @cached_property
    def idempotency_config(self) -> IdempotencyConfig:
        """Call ``register_lambda_context(context)`` on it on every invocation."""
        return IdempotencyConfig(
            event_key_jmespath="[owner, key]",
            payload_validation_jmespath="body",
            raise_on_no_idempotency_key=True,
            expires_after_seconds=IDEMPOTENCY_EXPIRY_SECONDS,
        )

    @cached_property
    def _create_once(self) -> Callable[..., dict[str, Any]]:
        persistence = DynamoDBPersistenceLayer(
            table_name=self.settings.IDEMPOTENCY_TABLE_NAME,
            boto3_client=self.idempotency_client,
        )
        deps = self.post_deps

        def create_post_once(*, request: dict[str, Any], body: PostCreate) -> dict[str, Any]:
            schedule_id = idempotent_schedule_id(request["owner"], request["key"], request["body"])
            post = create_post(body, owner=request["owner"], deps=deps, schedule_id=schedule_id)
            return PostOut.of(post).model_dump(mode="json")

        return idempotent_function(
            data_keyword_argument="request",
            persistence_store=persistence,
            config=self.idempotency_config,
        )(create_post_once)

    def create_post_body(
        self, body: PostCreate, *, owner: str, idempotency_key: str | None
    ) -> dict[str, Any]:
        """Create a post and return its 201 body (``PostOut`` as JSON).

        With ``idempotency_key``, a repeat with the same parsed body returns the first body and
        creates nothing.

        Raises
        ------
        IdempotencyValidationError
            The key was used before with a different body (422).
        IdempotencyAlreadyInProgressError
            The first request with this key is still running (409).
        """
        if idempotency_key is None:
            post = create_post(body, owner=owner, deps=self.post_deps)
            return PostOut.of(post).model_dump(mode="json")
        request = {
            "owner": owner,
            "key": idempotency_key,
            "body": body.model_dump(mode="json"),
        }
        return self._create_once(request=request, body=body)


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
