"""Idempotent create: ``POST /v1/scheduled-posts`` with an ``Idempotency-Key``.

The create runs inside Powertools ``idempotent_function`` with its own
``DynamoDBPersistenceLayer`` on ``IDEMPOTENCY_TABLE_NAME``, keyed on ``[owner, key]`` (so a key is
scoped to the caller), with payload validation over the parsed body and a 24 h expiry. Only the
successful result (a :class:`PostOut`, stored through Powertools' ``PydanticSerializer``) is
stored: errors are raised, so Powertools deletes the in-progress record and nothing is replayed.
The post id is derived from (owner, key, body) (:func:`logic.posts.idempotent_schedule_id`), so a
lost record never duplicates a post.

Account erasure (decision "Erasure is synchronous and resumable") must find these records: they use
the fixed key prefixes ``create_post`` and ``create_series`` (not the Lambda's name), and every key
is indexed under the caller (``AccountStore.remember_idempotency_key``) before the keyed create
runs.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent_function,
)
from aws_lambda_powertools.utilities.idempotency.serialization.pydantic import PydanticSerializer
from pydantic import BaseModel

from scheduled_posts.clock import Clock, epoch_seconds
from scheduled_posts.data.account import CREATE_KEY_PREFIX, CREATE_SERIES_KEY_PREFIX, AccountStore
from scheduled_posts.logic.drafts import create_post_or_draft
from scheduled_posts.logic.posts import PostDeps, idempotent_schedule_id
from scheduled_posts.logic.series import SeriesDeps, create_series, series_out
from scheduled_posts.models.api import PostCreate, PostOut
from scheduled_posts.models.recurring import SeriesCreate, SeriesOut
from scheduled_posts.observability import tracer

#: How long an ``Idempotency-Key`` is remembered (24 h, ``docs/api.md``).
IDEMPOTENCY_EXPIRY_SECONDS = 24 * 3600


class _HasClock(Protocol):
    @property
    def clock(self) -> Clock: ...


DepsT = TypeVar("DepsT", bound=_HasClock)
BodyT = TypeVar("BodyT", bound=BaseModel)
OutT = TypeVar("OutT", bound=BaseModel)


class IdempotentCreator(Generic[DepsT, BodyT, OutT]):
    """Creates one kind of resource, idempotently when the request carries a key.

    The shared scaffolding of :class:`PostCreator` and :class:`SeriesCreator`: each instance
    has its own ``DynamoDBPersistenceLayer`` and ``IdempotencyConfig`` (one config shared
    between two decorated functions keeps the first one's settings), keyed on
    ``[owner, scope + key]`` under the fixed ``key_prefix``. A subclass names its kind in the
    class attributes and writes the resource in :meth:`_write`.

    Parameters
    ----------
    deps:
        The kind's logic collaborators (a ``clock`` among them).
    idempotency_table_name:
        ``Settings.IDEMPOTENCY_TABLE_NAME``.
    idempotency_client:
        A low-level DynamoDB client for the records (default: Powertools' own). Not a resource's
        ``meta.client``: that takes plain Python values, Powertools sends typed attribute values.
    account:
        Where each key is indexed for account erasure (None: not indexed).
    """

    #: Powertools' record key prefix: fixed (not the Lambda's name), so erasure computes the ids.
    key_prefix: ClassVar[str]
    #: The 201 body's model, stored and replayed through ``PydanticSerializer``.
    output_model: ClassVar[type[BaseModel]]
    #: A recurring-schedule create: its key is scoped ``"series:"`` and indexed as a series key
    #: (:meth:`AccountStore.remember_idempotency_key`).
    series: ClassVar[bool] = False

    def __init__(
        self,
        deps: DepsT,
        *,
        idempotency_table_name: str,
        idempotency_client: Any | None = None,
        account: AccountStore | None = None,
    ) -> None:
        self.deps: DepsT = deps
        self.account = account
        #: Call ``register_lambda_context(context)`` on it on every invocation.
        self.idempotency_config = IdempotencyConfig(
            event_key_jmespath="[owner, key]",
            payload_validation_jmespath="body",
            raise_on_no_idempotency_key=True,
            expires_after_seconds=IDEMPOTENCY_EXPIRY_SECONDS,
        )
        self._create_once = idempotent_function(
            self._create_keyed,
            data_keyword_argument="request",
            persistence_store=DynamoDBPersistenceLayer(
                table_name=idempotency_table_name, boto3_client=idempotency_client
            ),
            config=self.idempotency_config,
            output_serializer=PydanticSerializer(self.output_model),
            key_prefix=self.key_prefix,
        )

    def _write(self, body: BodyT, *, owner: str, created_id: str | None) -> OutT:
        """Create the resource under ``created_id`` (None: a fresh id) and return its body."""
        raise NotImplementedError

    def _create_keyed(self, *, request: dict[str, Any], body: BodyT) -> OutT:
        created_id = idempotent_schedule_id(request["owner"], request["key"], request["body"])
        return self._write(body, owner=request["owner"], created_id=created_id)

    @tracer.capture_method
    def create(self, body: BodyT, *, owner: str, idempotency_key: str | None) -> OutT:
        """Create the resource and return its 201 body.

        With ``idempotency_key``, a repeat with the same parsed body returns the first body and
        creates nothing.

        Raises
        ------
        IdempotencyValidationError
            The key was used before with a different body (422).
        IdempotencyAlreadyInProgressError
            The first request with this key is still running (409).
        LimitExceededError, ValidationFailedError, ...
            As the subclass's :meth:`_write`.
        """
        if idempotency_key is None:
            return self._write(body, owner=owner, created_id=None)
        scope = "series:" if self.series else ""
        request = {
            "owner": owner,
            "key": scope + idempotency_key,
            "body": body.model_dump(mode="json"),
        }
        if self.account is not None:
            # Indexed first, so that erasure can always find the record (decision "Erasure is
            # synchronous and resumable").
            expires = self.deps.clock.now() + timedelta(seconds=IDEMPOTENCY_EXPIRY_SECONDS + 3600)
            self.account.remember_idempotency_key(
                owner, idempotency_key, expires_at=epoch_seconds(expires), series=self.series
            )
        result: OutT = self._create_once(request=request, body=body)
        return result


class PostCreator(IdempotentCreator[PostDeps, PostCreate, PostOut]):
    """Creates posts and drafts (:func:`scheduled_posts.logic.drafts.create_post_or_draft`),
    idempotently when the
    request carries a key; the post id is derived from (owner, key, body)."""

    key_prefix = CREATE_KEY_PREFIX
    output_model = PostOut

    def _write(self, body: PostCreate, *, owner: str, created_id: str | None) -> PostOut:
        post = create_post_or_draft(body, owner=owner, deps=self.deps, schedule_id=created_id)
        return PostOut.of(post)


class SeriesCreator(IdempotentCreator[SeriesDeps, SeriesCreate, SeriesOut]):
    """Creates recurring schedules (
    :func:`scheduled_posts.logic.series.create_series`), idempotently when the request carries
    a key; the series id is derived from (owner, key, body)."""

    key_prefix = CREATE_SERIES_KEY_PREFIX
    output_model = SeriesOut
    series = True

    def _write(self, body: SeriesCreate, *, owner: str, created_id: str | None) -> SeriesOut:
        series = create_series(body, owner=owner, deps=self.deps, series_id=created_id)
        return series_out(series, now=self.deps.clock.now())
