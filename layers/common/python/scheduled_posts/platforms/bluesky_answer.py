"""What a PDS's answer about our record becomes: the published result with its receipt (decision
"Receipts"), the record's URI only when it names our key (a hostile answer never becomes the id).
"""

from __future__ import annotations

from scheduled_posts.platforms.answers import receipt_from, safe_remote_id
from scheduled_posts.platforms.base import DeliveryResult
from scheduled_posts.platforms.bluesky_client import POST_COLLECTION, post_url


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
