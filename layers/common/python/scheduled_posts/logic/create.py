"""Idempotent create (issue 2): ``POST /v1/scheduled-posts`` with an ``Idempotency-Key``.

The create runs inside Powertools ``idempotent_function`` with its own
``DynamoDBPersistenceLayer`` on ``IDEMPOTENCY_TABLE_NAME``, keyed on ``[owner, key]`` (so a key is
scoped to the caller), with payload validation over the parsed body and a 24 h expiry. Only the
successful result (a :class:`PostOut`, stored through Powertools' ``PydanticSerializer``) is
stored: errors are raised, so Powertools deletes the in-progress record and nothing is replayed.
The post id is derived from (owner, key, body) (:func:`logic.posts.idempotent_schedule_id`), so a
lost record never duplicates a post.

Account erasure (issue 17) must find these records: they use the fixed key prefixes
``create_post`` and ``create_series`` (not the Lambda's name), and every key is indexed under
the caller (``AccountStore.remember_idempotency_key``) before the keyed create runs.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent_function,
)
from aws_lambda_powertools.utilities.idempotency.serialization.pydantic import PydanticSerializer

from scheduled_posts.clock import epoch_seconds
from scheduled_posts.data.account import CREATE_KEY_PREFIX, CREATE_SERIES_KEY_PREFIX, AccountStore
from scheduled_posts.logic.posts import PostDeps, create_post, idempotent_schedule_id
from scheduled_posts.logic.series import SeriesDeps, create_series, series_out
from scheduled_posts.models.api import PostCreate, PostOut
from scheduled_posts.models.recurring import SeriesCreate, SeriesOut
from scheduled_posts.observability import tracer

#: How long an ``Idempotency-Key`` is remembered (issue 2: 24 h).
IDEMPOTENCY_EXPIRY_SECONDS = 24 * 3600


class PostCreator:
    """Creates posts, idempotently when the request carries a key.

    Parameters
    ----------
    deps:
        The post logic's collaborators.
    idempotency_table_name:
        ``Settings.IDEMPOTENCY_TABLE_NAME``.
    idempotency_client:
        A low-level DynamoDB client for the records (default: Powertools' own). Not a resource's
        ``meta.client``: that takes plain Python values, Powertools sends typed attribute values.
    account:
        Where each key is indexed for account erasure (None: not indexed).
    """

    def __init__(
        self,
        deps: PostDeps,
        *,
        idempotency_table_name: str,
        idempotency_client: Any | None = None,
        account: AccountStore | None = None,
    ) -> None:
        self.deps = deps
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
            output_serializer=PydanticSerializer(PostOut),
            # A fixed prefix (not the Lambda's name): erasure computes the record ids.
            key_prefix=CREATE_KEY_PREFIX,
        )

    def _create_keyed(self, *, request: dict[str, Any], body: PostCreate) -> PostOut:
        schedule_id = idempotent_schedule_id(request["owner"], request["key"], request["body"])
        post = create_post(body, owner=request["owner"], deps=self.deps, schedule_id=schedule_id)
        return PostOut.of(post)

    @tracer.capture_method
    def create(self, body: PostCreate, *, owner: str, idempotency_key: str | None) -> PostOut:
        """Create a post and return its 201 body.

        With ``idempotency_key``, a repeat with the same parsed body returns the first body and
        creates nothing.

        Raises
        ------
        IdempotencyValidationError
            The key was used before with a different body (422).
        IdempotencyAlreadyInProgressError
            The first request with this key is still running (409).
        LimitExceededError, ValidationFailedError, ...
            As :func:`scheduled_posts.logic.posts.create_post`.
        """
        if idempotency_key is None:
            return PostOut.of(create_post(body, owner=owner, deps=self.deps))
        request = {"owner": owner, "key": idempotency_key, "body": body.model_dump(mode="json")}
        if self.account is not None:
            # Indexed first, so that erasure can always find the record (issue 17 item 15).
            expires = self.deps.clock.now() + timedelta(seconds=IDEMPOTENCY_EXPIRY_SECONDS + 3600)
            self.account.remember_idempotency_key(
                owner, idempotency_key, expires_at=epoch_seconds(expires)
            )
        result: PostOut = self._create_once(request=request, body=body)
        return result


class SeriesCreator:
    """Creates recurring schedules (issue 13), idempotently when the request carries a key:
    the same pattern as :class:`PostCreator`, with its own persistence layer and config (one
    shared between two decorated functions keeps the first one's settings), and a series id
    derived from (owner, key, body)."""

    def __init__(
        self,
        deps: SeriesDeps,
        *,
        idempotency_table_name: str,
        idempotency_client: Any | None = None,
        account: AccountStore | None = None,
    ) -> None:
        self.deps = deps
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
            output_serializer=PydanticSerializer(SeriesOut),
            # A fixed prefix (not the Lambda's name): erasure computes the record ids.
            key_prefix=CREATE_SERIES_KEY_PREFIX,
        )

    def _create_keyed(self, *, request: dict[str, Any], body: SeriesCreate) -> SeriesOut:
        series_id = idempotent_schedule_id(request["owner"], request["key"], request["body"])
        series = create_series(body, owner=request["owner"], deps=self.deps, series_id=series_id)
        return series_out(series, now=self.deps.clock.now())

    @tracer.capture_method
    def create(self, body: SeriesCreate, *, owner: str, idempotency_key: str | None) -> SeriesOut:
        """Create a recurring schedule and return its 201 body.

        Raises
        ------
        IdempotencyValidationError, IdempotencyAlreadyInProgressError
            As :meth:`PostCreator.create` (422, 409).
        ValidationFailedError
            As :func:`scheduled_posts.logic.series.create_series`.
        """
        if idempotency_key is None:
            series = create_series(body, owner=owner, deps=self.deps)
            return series_out(series, now=self.deps.clock.now())
        request = {
            "owner": owner,
            "key": "series:" + idempotency_key,
            "body": body.model_dump(mode="json"),
        }
        if self.account is not None:
            # Indexed first, so that erasure can always find the record (issue 17 item 15).
            expires = self.deps.clock.now() + timedelta(seconds=IDEMPOTENCY_EXPIRY_SECONDS + 3600)
            self.account.remember_idempotency_key(
                owner, idempotency_key, expires_at=epoch_seconds(expires), series=True
            )
        result: SeriesOut = self._create_once(request=request, body=body)
        return result
