"""DynamoDB reads of posts (``docs/data-model.md``): a post, an owner's page, a post's attempt
rows and the owner's pending count. :class:`PostReader` is the base of
``data.posts.PostRepository``, which adds the changes (create, edit, cancel, reschedule and the
counter's writes); nothing here writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from boto3.dynamodb.conditions import Attr, Key

from scheduled_posts import keys
from scheduled_posts.clock import epoch_seconds, instant_from_storage
from scheduled_posts.data import counters
from scheduled_posts.data.aws import dynamodb_resource
from scheduled_posts.data.post_store import read_post
from scheduled_posts.models.post import Attempt, Post, PostStatus

_ATTEMPT_PREFIX = "ATTEMPT#"


@dataclass(frozen=True)
class OwnerPage:
    """One Query page of an owner's posts: ``last_key`` is the ``gsi1sk`` to resume after."""

    posts: list[Post]
    last_key: str | None


class PostReader:
    """The reads of posts and their attempt rows.

    ``dynamodb`` is a boto3 DynamoDB resource (default: the process's, created lazily); its
    ``meta.client`` runs transactions with plain Python values. ``misfire_grace_seconds`` sets
    the due entries' TTL (``publish_at + MISFIRE_GRACE_SECONDS + 1 day``).
    """

    def __init__(
        self,
        *,
        posts_table_name: str,
        due_table_name: str,
        misfire_grace_seconds: int = 86_400,
        dynamodb: Any | None = None,
    ) -> None:
        self._posts_name = posts_table_name
        self._due_name = due_table_name
        self._dynamodb = dynamodb
        # Entries stay until publish_at + MISFIRE_GRACE_SECONDS + 1 day (docs/data-model.md).
        self._entry_lifetime_seconds = misfire_grace_seconds + 86_400

    @property
    def _resource(self) -> Any:
        return self._dynamodb or dynamodb_resource()

    @property
    def posts_table(self) -> Any:
        """The boto3 ``Table`` of ``PostsTable`` (for :func:`data.counters.release_pending`)."""
        return self._resource.Table(self._posts_name)

    def get(self, schedule_id: str) -> Post | None:
        """The post (any owner), strongly consistent, or ``None``."""
        return read_post(self.posts_table, schedule_id)

    def owners_of(self, schedule_ids: list[str]) -> dict[str, str]:
        """``{schedule_id: owner}`` of the posts among ``schedule_ids`` that exist (strongly
        consistent ``BatchGetItem``, at most 100 keys a request, the owner projected only).

        Raises
        ------
        RuntimeError
            DynamoDB left keys unprocessed after 10 requests (throttled): the caller's step is
            retried rather than a post taken for missing.
        """
        found: dict[str, str] = {}
        wanted = list(dict.fromkeys(schedule_ids))
        for start in range(0, len(wanted), 100):
            request: dict[str, Any] = {
                self._posts_name: {
                    "Keys": [
                        {"pk": keys.post_pk(sid), "sk": keys.POST_SK}
                        for sid in wanted[start : start + 100]
                    ],
                    "ConsistentRead": True,
                    # the id and the owner live in the keys only (decision "A post item
                    # stores its id and owner only in its keys")
                    "ProjectionExpression": "pk, gsi1pk",
                }
            }
            for _ in range(10):
                answer = self._resource.batch_get_item(RequestItems=request)
                for item in answer["Responses"].get(self._posts_name, []):
                    sid = keys.schedule_id_from_post_pk(str(item["pk"]))
                    found[sid] = keys.owner_from_posts_gsi_pk(str(item["gsi1pk"]))
                request = answer.get("UnprocessedKeys") or {}
                if not request:
                    break
            if request:
                raise RuntimeError("DynamoDB left post keys unprocessed after 10 requests")
        return found

    def query_owner(
        self,
        owner: str,
        *,
        lower: str | None,
        upper: str | None,
        after: str | None,
        status: PostStatus | None,
        now: datetime,
        limit: int,
        channel_id: str | None = None,
        series_id: str | None = None,
    ) -> OwnerPage:
        """One page of ``owner``'s posts from GSI ``by_owner`` in ``(publish_at, schedule_id)``.

        ``lower``/``upper`` bound ``gsi1sk`` inclusively; ``after`` is the ``gsi1sk`` of the
        last item already returned (exclusive). Expired posts and, when ``status`` is given,
        posts in another status and, when ``channel_id`` is given, posts that do not name that
        channel are filtered out, so a page may hold fewer than ``limit`` posts.
        Reads at most ``limit`` index items (Query ``Limit``). With ``series_id``, reads GSI
        ``by_series`` instead (the series' occurrences, same order; another owner's are
        filtered out).
        """
        partition = (
            ("occurrence_of", series_id)
            if series_id
            else ("gsi1pk", keys.owner_posts_gsi_pk(owner))
        )
        condition = Key(partition[0]).eq(partition[1])
        if lower is not None and upper is not None:
            condition &= Key("gsi1sk").between(lower, upper)
        elif lower is not None:
            condition &= Key("gsi1sk").gte(lower)
        elif upper is not None:
            condition &= Key("gsi1sk").lte(upper)
        visible = _visible(owner, now, status, channel_id, series_id)
        kwargs: dict[str, Any] = {
            "IndexName": "by_series" if series_id else "by_owner",
            "KeyConditionExpression": condition,
            "FilterExpression": visible,
            "Limit": limit,
        }
        if after is not None:
            schedule_id = after.split("#", 1)[1]
            kwargs["ExclusiveStartKey"] = {
                partition[0]: partition[1],
                "gsi1sk": after,
                "pk": keys.post_pk(schedule_id),
                "sk": keys.POST_SK,
            }
        page = self.posts_table.query(**kwargs)
        last = page.get("LastEvaluatedKey")
        return OwnerPage(
            posts=[Post.from_item(item) for item in page.get("Items", [])],
            last_key=last["gsi1sk"] if last else None,
        )

    def list_attempts(self, schedule_id: str, *, now: datetime) -> list[Attempt]:
        """Every unexpired attempt row of a post, in start order (one paginated Query)."""
        kwargs: dict[str, Any] = {
            "KeyConditionExpression": Key("pk").eq(keys.post_pk(schedule_id))
            & Key("sk").begins_with(_ATTEMPT_PREFIX),
            "ConsistentRead": True,
        }
        attempts: list[Attempt] = []
        while True:
            page = self.posts_table.query(**kwargs)
            for item in page.get("Items", []):
                expires = item.get("expires_at")
                if expires is not None and int(expires) <= now.timestamp():
                    continue
                attempts.append(attempt_from_item(item))
            if "LastEvaluatedKey" not in page:
                return attempts
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def pending_count(self, owner: str) -> int:
        """The owner's ``scheduled`` posts as counted (:func:`data.counters.pending_count`)."""
        return counters.pending_count(self.posts_table, owner)

    def _committed(self, post: Post) -> Post | None:
        """The stored post with ``post``'s id and owner (a create that did commit), or None."""
        stored = self.get(post.schedule_id)
        return stored if stored is not None and stored.owner == post.owner else None


def _visible(
    owner: str,
    now: datetime,
    status: PostStatus | None,
    channel_id: str | None,
    series_id: str | None,
) -> Any:
    """The filter of :meth:`PostReader.query_owner`: unexpired, and of ``status`` (no draft
    without one), naming
    ``channel_id`` and ``owner``'s (on ``by_series``) when given."""
    visible = Attr("expires_at").not_exists() | Attr("expires_at").gt(epoch_seconds(now))
    if status is not None:
        visible &= Attr("status").eq(status.value)
    else:  # drafts are listed only when asked for (decision "Drafts")
        visible &= Attr("status").ne(PostStatus.DRAFT.value)
    if channel_id is not None:
        visible &= Attr("channel_ids").contains(channel_id)
    if series_id is not None:
        visible &= Attr("gsi1pk").eq(keys.owner_posts_gsi_pk(owner))
    return visible


def attempt_from_item(item: dict[str, Any]) -> Attempt:
    """An :class:`Attempt` from its DynamoDB item."""
    finished = item.get("finished_at")
    http_status = item.get("http_status")
    return Attempt(
        channel_id=item["channel_id"],
        attempt=int(item["attempt"]),
        started_at=instant_from_storage(item["started_at"]),
        finished_at=instant_from_storage(finished) if finished else None,
        outcome=item["outcome"],
        http_status=int(http_status) if http_status is not None else None,
        error=item.get("error"),
        lag_seconds=float(item["lag_seconds"]) if item.get("lag_seconds") is not None else None,
        remote_id=item.get("remote_id"),
        remote_url=item.get("remote_url"),
    )
