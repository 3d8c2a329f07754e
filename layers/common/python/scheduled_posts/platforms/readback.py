"""Reading a published delivery back from its network (decision "Verification on the network").

Both reads are public, so they need no credentials (a revoked token does not stop them, and no
secret is opened for them):

- Bluesky: ``com.atproto.repo.getRecord`` of the record's ``at://`` URI
  (https://docs.bsky.app/docs/api/com-atproto-repo-get-record): 200 with the receipt's ``cid``
  -> ``present``; 200 with another CID -> ``changed`` (a different record at that key); 400
  ``RecordNotFound`` -> ``missing``.
- Mastodon: ``GET /api/v1/statuses/:id`` (https://docs.joinmastodon.org/methods/statuses/#get):
  200 -> ``present``; 404 -> ``missing`` (deleted, or never there).
- Webhooks: nothing to read back (a receiver has no read API): never read.

Anything else (5xx, 429, a timeout, a broken answer) is ``unknown``: no finding, the next run
reads again. Readback never raises for a network's answer.
"""

from __future__ import annotations

import re
from typing import Literal

from scheduled_posts.platforms.bluesky_client import POST_COLLECTION, xrpc_error
from scheduled_posts.platforms.http import OutboundError, OutboundHttp

_STATUS_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")
Seen = Literal["present", "missing", "changed", "unknown"]


def read_bluesky(http: OutboundHttp, service_url: str, uri: str, cid: str | None) -> Seen:
    """What the PDS at ``service_url`` holds at ``uri`` (``at://<did>/<collection>/<rkey>``)
    compared with ``cid`` (``None``: any record is ``present``)."""
    parts = uri.removeprefix("at://").split("/")
    if len(parts) != 3 or parts[1] != POST_COLLECTION:
        return "unknown"
    did, _, rkey = parts
    try:
        answer = http.request(
            "GET",
            f"{service_url.rstrip('/')}/xrpc/com.atproto.repo.getRecord",
            query={"repo": did, "collection": POST_COLLECTION, "rkey": rkey},
        )
    except OutboundError:
        return "unknown"
    if answer.status == 400 and xrpc_error(answer) == "RecordNotFound":
        return "missing"
    if answer.status != 200:
        return "unknown"
    found = answer.json_object().get("cid")
    if cid is None or found == cid:
        return "present"
    return "changed" if isinstance(found, str) else "unknown"


def read_mastodon(http: OutboundHttp, instance_url: str, status_id: str) -> Seen:
    """Whether the instance at ``instance_url`` still shows status ``status_id``."""
    if not _STATUS_ID.fullmatch(status_id):
        return "unknown"
    try:
        answer = http.request("GET", f"{instance_url.rstrip('/')}/api/v1/statuses/{status_id}")
    except OutboundError:
        return "unknown"
    if answer.status == 404:
        return "missing"
    if answer.status == 200 and str(answer.json_object().get("id")) == status_id:
        return "present"
    return "unknown"
