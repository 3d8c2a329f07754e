"""The ``mastodon`` platform: statuses on any Mastodon instance, exactly once per delivery.

Endpoints (https://docs.joinmastodon.org/methods/):

- ``GET /api/v1/accounts/verify_credentials`` and ``GET /api/v2/instance``
  (``configuration.statuses.max_characters``, ``characters_reserved_per_url``,
  ``max_media_attachments`` and ``configuration.media_attachments``): the credential check
  when a channel is created or edited (:meth:`MastodonClient.verify`).
- ``POST /api/v1/statuses`` with ``Authorization: Bearer <token>`` and
  ``Idempotency-Key: <schedule_id>:<channel_id>``: Mastodon answers a repeat of a key with the
  status it created the first time, for about an hour
  (https://docs.joinmastodon.org/methods/statuses/#create).
- A retry answered 401/403 (the token was revoked since an earlier attempt) looks the same
  way before failing with ``reauthorization_required``.
- After that hour, a retry of a delivery whose answer was lost first reads
  ``GET /api/v1/accounts/{id}/statuses`` (with the token; without it when the token may not
  read, which shows the public statuses) and takes a status created since the first attempt
  whose text equals the post's (confirmed with ``GET /api/v1/statuses/{id}/source``, which
  gives the plain text, when the token may read) as the published post, instead of posting
  again.

Outcomes: 200 -> ``published`` (``remote_id`` = status id, ``remote_url`` = its ``url``);
401/403 -> ``failed`` with reason ``reauthorization_required``; 422 -> ``failed`` with the
network's message; 429, or any answer with ``X-RateLimit-Remaining: 0`` -> later deliveries of
the channel wait for ``X-RateLimit-Reset`` (or ``Retry-After``) without using an attempt;
5xx, timeouts and connection errors -> retried with the usual backoff. A text over the
instance's limit fails with reason ``too_long`` before any request. Every request of one
attempt ends within one ``DELIVERY_TIMEOUT_SECONDS`` (decision "One deadline per network
delivery attempt"); an id or URL the instance answers is kept only within the bounds of
``platforms/answers.py``.

Mastodon.py was measured (``bench/cold_start.py``) and not used: decision "Raw HTTP adapters, no
client SDKs".
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, SecretStr

from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.models.network import ChannelLimits
from scheduled_posts.models.variants import NetworkOptions
from scheduled_posts.platforms.answers import safe_remote_id, safe_remote_url
from scheduled_posts.platforms.http import (
    CredentialsRefusedError,
    DestinationRefusedError,
    HttpAnswer,
    OutboundError,
    OutboundHttp,
)
from scheduled_posts.platforms.mastodon_text import comparable, status_text
from scheduled_posts.platforms.media_rules import mastodon_instance_limits
from scheduled_posts.platforms.network_adapter import answer_error, error_message
from scheduled_posts.platforms.text_length import mastodon_limits
from scheduled_posts.platforms.transport import http_word

#: How long after the first attempt the ``Idempotency-Key`` is trusted, in seconds: Mastodon
#: keeps a key for about an hour (3,600 s); 50 minutes leaves room for clock skew.
IDEMPOTENCY_KEY_TRUSTED_SECONDS = 3000
#: How far before the first attempt a matching status may have been created (clock skew), s.
CLOCK_SKEW_SECONDS = 120
#: Statuses read when looking for one whose answer was lost (the API's maximum page).
RECENT_STATUSES_LIMIT = 40
#: Longest ``acct`` kept: a 30-character username, ``@`` and a 253-character domain.
MAX_ACCT_CHARS = 284
NETWORK = "mastodon"
#: The network options a status takes (``POST /api/v1/statuses`` parameters).
STATUS_OPTIONS = ("visibility", "spoiler_text", "sensitive")


class MastodonAccess(BaseModel):
    """What a delivery needs: the instance, the (decrypted) token, the account id found by the
    credential check, and the instance's limits."""

    model_config = ConfigDict(frozen=True)

    instance_url: str
    access_token: SecretStr
    account_id: str
    limits: ChannelLimits = mastodon_limits()


class MastodonAccount(BaseModel):
    """The credential check's result: ``account_id``, ``acct`` (``user`` or ``user@domain``),
    the profile ``url`` and the instance's ``limits``."""

    account_id: str
    acct: str
    url: str | None = None
    limits: ChannelLimits


class MastodonClient:
    """The Mastodon REST calls, over :class:`OutboundHttp`."""

    def __init__(self, http: OutboundHttp) -> None:
        self.http = http

    @staticmethod
    def _url(instance_url: str, path: str) -> str:
        return instance_url.rstrip("/") + path

    @staticmethod
    def _auth(token: SecretStr) -> dict[str, str]:
        return {"Authorization": f"Bearer {token.get_secret_value()}"}

    def verify(self, instance_url: str, access_token: SecretStr) -> MastodonAccount:
        """Check a token: ``verify_credentials`` then ``/api/v2/instance``.

        Raises
        ------
        CredentialsRefusedError
            On 401/403/422 (the instance's ``error`` quoted), or when the URL policy refuses
            ``instance_url``.
        OutboundError
            When the instance cannot be reached, answers 5xx or 429, or answers nonsense.
        """
        try:
            answer = self.http.request(
                "GET",
                self._url(instance_url, "/api/v1/accounts/verify_credentials"),
                headers=self._auth(access_token),
            )
        except DestinationRefusedError as exc:
            raise CredentialsRefusedError(f"instance_url refused: {exc}") from exc
        if answer.status in (401, 403, 422):
            raise CredentialsRefusedError(
                f"Mastodon refused the access token: {error_message(answer)}",
                kind=http_word(answer.status),
            )
        account = answer.json_object()
        account_id = safe_remote_id(account.get("id"))
        if answer.status != 200 or account_id is None:
            raise OutboundError(
                f"Mastodon answered {answer.status} to verify_credentials",
                maybe_sent=False,
                kind=http_word(answer.status),
            )
        instance = self.http.request("GET", self._url(instance_url, "/api/v2/instance"))
        configuration: dict[str, Any] = {}
        if instance.status == 200:
            found = instance.json_object().get("configuration")
            configuration = found if isinstance(found, dict) else {}
        elif instance.status >= 500 or instance.status == 429:
            raise OutboundError(
                f"Mastodon answered {instance.status} to /api/v2/instance",
                maybe_sent=False,
                kind=http_word(instance.status),
            )
        return MastodonAccount(
            account_id=account_id,
            acct=str(account.get("acct") or account.get("username") or "")[:MAX_ACCT_CHARS],
            url=safe_remote_url(account.get("url"), allowed_origins=self.http.allowed_origins),
            limits=mastodon_instance_limits(configuration),
        )

    def post_status(
        self,
        access: MastodonAccess,
        text: str,
        *,
        idempotency_key: str,
        language: str | None,
        media_ids: Sequence[str] = (),
        options: NetworkOptions | None = None,
        in_reply_to_id: str | None = None,
    ) -> HttpAnswer:
        """``POST /api/v1/statuses`` (raises :class:`OutboundError` without an answer);
        ``media_ids`` are the network's ids of the uploads, in order (sent as the JSON list
        ``media_ids``; none: the body is as before); ``options`` adds the ``visibility``,
        ``spoiler_text`` and ``sensitive`` it sets (none: the account's defaults);
        ``in_reply_to_id`` makes it a reply (a thread's part, a first comment)."""
        body: dict[str, Any] = {"status": text}
        if in_reply_to_id:
            body["in_reply_to_id"] = in_reply_to_id
        if language:
            body["language"] = language
        if media_ids:
            body["media_ids"] = list(media_ids)
        given = options.given() if options is not None else {}
        body.update({k: given[k] for k in STATUS_OPTIONS if k in given})
        return self.http.request(
            "POST",
            self._url(access.instance_url, "/api/v1/statuses"),
            json_body=body,
            headers={**self._auth(access.access_token), "Idempotency-Key": idempotency_key},
        )

    def find_status(
        self,
        access: MastodonAccess,
        text: str,
        *,
        since: datetime,
        in_reply_to_id: str | None = None,
    ) -> dict[str, Any] | None:
        """A status of the account created at or after ``since`` whose text is ``text`` (and
        that replies to ``in_reply_to_id``, when given: a thread's part).

        Raises
        ------
        OutboundError
            Without an answer.
        RetryableDeliveryError
            When the listing is not a 200 (the search must succeed before posting again).
        """
        url = self._url(access.instance_url, f"/api/v1/accounts/{access.account_id}/statuses")
        query = {"limit": str(RECENT_STATUSES_LIMIT), "exclude_reblogs": "true"}
        answer = self.http.request("GET", url, query=query, headers=self._auth(access.access_token))
        if answer.status in (401, 403):
            # A token with only write:statuses may not read: the listing is public without one.
            answer = self.http.request("GET", url, query=query)
        if answer.status != 200 or not isinstance(answer.json(), list):
            raise retryable_answer(answer, "reading recent statuses")
        wanted = comparable(text)
        for status in answer.json():
            if not isinstance(status, dict) or not _created_since(status, since):
                continue
            if in_reply_to_id and str(status.get("in_reply_to_id")) != in_reply_to_id:
                continue
            status_id = safe_remote_id(status.get("id"))
            if status_id is None or status_text(str(status.get("content") or "")) != wanted:
                continue
            source = self.http.request(
                "GET",
                self._url(access.instance_url, f"/api/v1/statuses/{quote(status_id)}/source"),
                headers=self._auth(access.access_token),
            )
            if source.status == 200 and source.json_object().get("text") not in (None, text):
                continue  # same visible text, different source: not ours
            return status
        return None


def _created_since(status: dict[str, Any], since: datetime) -> bool:
    try:
        created = datetime.fromisoformat(str(status.get("created_at")).replace("Z", "+00:00"))
    except ValueError:
        return False
    return created.tzinfo is not None and created >= since


def retryable_answer(answer: HttpAnswer, doing: str) -> RetryableDeliveryError:
    return RetryableDeliveryError(
        answer_error(answer, f"mastodon answered {doing}"), http_status=answer.status
    )
