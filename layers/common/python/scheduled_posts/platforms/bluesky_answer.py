"""What a PDS's answer about our record becomes: the published result with its receipt (decision
"Receipts"), the record's URI only when it names our key (a hostile answer never becomes the id).
"""

from __future__ import annotations

from typing import Any

from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.platforms.answers import receipt_from, safe_remote_id
from scheduled_posts.platforms.base import DeliveryRequest, DeliveryResult, PartRef
from scheduled_posts.platforms.bluesky_client import (
    POST_COLLECTION,
    created_at,
    post_url,
    xrpc_error,
)
from scheduled_posts.platforms.bluesky_media import embedded_cids
from scheduled_posts.platforms.http import HttpAnswer
from scheduled_posts.platforms.network_adapter import answer_error


def record_uri(value: object, did: str, rkey: str) -> str:
    """The ``at://`` URI of our record: the PDS's when it names our key, else built from the
    session's DID and the key (a hostile or broken answer never becomes the id)."""
    uri = safe_remote_id(value)
    if uri and uri.startswith("at://") and uri.endswith(f"/{POST_COLLECTION}/{rkey}"):
        return uri
    return f"at://{did}/{POST_COLLECTION}/{rkey}"


def published_result(
    did: str, rkey: str, answer: dict[str, object], cids: tuple[str, ...] = ()
) -> DeliveryResult:
    """The published result of a putRecord or getRecord ``answer`` (its ``uri``, ``cid`` and,
    from putRecord, ``commit.rev``: the receipt)."""
    commit = answer.get("commit")
    return DeliveryResult(
        outcome="published",
        http_status=200,
        remote_id=record_uri(answer.get("uri"), did, rkey),
        remote_url=post_url(did, rkey),
        media_remote_ids=cids,
        receipt=receipt_from(
            cid=answer.get("cid"), rev=commit.get("rev") if isinstance(commit, dict) else None
        ),
    )


def ours(
    answer: HttpAnswer, request: DeliveryRequest, did: str, rkey: str
) -> DeliveryResult | None:
    """The published result when ``answer`` (a getRecord of ``did``'s ``rkey``) holds our
    post; None when the key is free or holds another record."""
    if answer.status == 400 and xrpc_error(answer) == "RecordNotFound":
        return None
    if answer.status != 200:
        raise RetryableDeliveryError(
            answer_error(answer, "bluesky answered getRecord"), http_status=answer.status
        )
    data = answer.json_object()
    value = data.get("value") if isinstance(data.get("value"), dict) else {}
    assert isinstance(value, dict)
    if value.get("text") != request.content or value.get("createdAt") != created_at(
        request.publish_at
    ):
        return None
    return published_result(did, rkey, data, embedded_cids(value))


def reply_ref(root: PartRef | None, parent: PartRef | None) -> dict[str, Any] | None:
    """A reply's ``reply`` field (lexicon ``app.bsky.feed.post#replyRef``: ``root`` and
    ``parent``, each a ``com.atproto.repo.strongRef`` of ``uri`` and ``cid``); None for part 1."""
    if root is None or parent is None:
        return None
    return {
        "root": {"uri": root.remote_id, "cid": root.cid},
        "parent": {"uri": parent.remote_id, "cid": parent.cid},
    }
