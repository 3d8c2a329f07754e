"""Threads, first comments, variants and link cards in the fault worlds (issue 26).

Each post of a world may be composed, deterministically per seed and post
(:func:`compose`, its own draws: the world's other draws stay as they were):

* a **thread** (:data:`THREAD_SHARE`): ``content`` is part 1, ``parts`` 1 to 3 replies whose
  texts end ``" part <n>"`` (``n`` from 2);
* a **first comment** (:data:`COMMENT_SHARE`), text ending ``" comment"``, ``delay_seconds``
  one of :data:`COMMENT_DELAYS` (mostly 0, a few seconds for some);
* **variants** (:data:`VARIANT_SHARE`): one of the post's channels gets its own text (ending
  ``" variant"``) and, on a network, options (Mastodon ``visibility`` and ``spoiler_text``,
  Bluesky ``tags``);
* a **link card** (:data:`CARD_SHARE`, Bluesky posts without media): the Bluesky channel's
  variant links a page of the world's :class:`~tests.support.link_site.LinkSite`, whose title
  changes right after the post is created (the card is frozen at creation: the record must
  carry the first title).

Every text starts ``post <i> of seed <seed>``, so the networks' transport maps each write to its
delivery (``tests/support/networks.py``), and :func:`label_of` tells which step it is:
``1`` .. ``n`` for the parts, :data:`COMMENT` for the comment.

:class:`ThreadFaults` loses the answer of the first write of each later part and of each
comment with probability :data:`THREAD_LOSS_RATE` (decided once per delivery and step, from the
seed and the delivery's key: a seed replays). :func:`check_thread` is the oracle of one
network delivery's parts and comment (see its docstring).
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tests.support.faults import FaultPlan

THREAD_SHARE = 0.15
COMMENT_SHARE = 0.15
VARIANT_SHARE = 0.12
CARD_SHARE = 0.06
#: A first comment's ``delay_seconds``: mostly with the post, some a little later.
COMMENT_DELAYS = (0, 0, 0, 3, 12)
#: Chance that the first write of a later part or a comment loses its answer.
THREAD_LOSS_RATE = 0.35
#: The label of a first comment (:func:`label_of`).
COMMENT = "comment"
_PART = re.compile(r" part (\d+)$")


@dataclass
class Composition:
    """What a post adds to its single text (module docstring)."""

    #: The replies' texts (part 2 first).
    parts: list[str] = field(default_factory=list)
    comment: str | None = None
    delay_seconds: int = 0
    #: ``channel_id -> variant body`` (``content`` and network options).
    variants: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: The card's page path on the link site and its title at creation.
    card_path: str | None = None
    card_title: str | None = None

    def body(self) -> dict[str, Any]:
        """The create body's fields for this composition."""
        body: dict[str, Any] = {}
        if self.parts:
            body["parts"] = [{"content": text} for text in self.parts]
        if self.comment is not None:
            body["first_comment"] = {"content": self.comment, "delay_seconds": self.delay_seconds}
        if self.variants:
            body["variants"] = self.variants
        return body


def label_of(text: str) -> str:
    """``"1"`` for part 1 (or a single post), ``"<n>"`` for part ``n``, :data:`COMMENT`."""
    if text.endswith(" comment"):
        return COMMENT
    found = _PART.search(text)
    return found.group(1) if found else "1"


def compose(
    seed: int,
    index: int,
    channels: dict[str, str],
    *,
    has_media: bool,
    link: str | None,
) -> Composition:
    """Post ``index``'s composition; ``channels`` are its ``channel_id -> platform``;
    ``link`` the URL of its card page (``None``: no card site in this world)."""
    rng = random.Random(f"compose-{seed}-{index}")
    base = f"post {index} of seed {seed}"
    comp = Composition()
    if rng.random() < THREAD_SHARE:
        comp.parts = [f"{base} part {n}" for n in range(2, 2 + rng.randint(1, 3))]
    if rng.random() < COMMENT_SHARE:
        comp.comment = f"{base} comment"
        comp.delay_seconds = rng.choice(COMMENT_DELAYS)
    bluesky = next((c for c, p in channels.items() if p == "bluesky"), None)
    card = rng.random() < CARD_SHARE
    if card and bluesky is not None and link is not None and not has_media:
        comp.card_path = f"/card-{seed}-{index}"
        comp.card_title = f"card {index} of seed {seed}"
        comp.variants[bluesky] = {"content": f"{base} see {link}{comp.card_path}"}
    elif rng.random() < VARIANT_SHARE:
        cid = rng.choice(sorted(channels))
        variant: dict[str, Any] = {"content": f"{base} variant"}
        if channels[cid] == "mastodon":
            variant |= {"visibility": "unlisted", "spoiler_text": "cw"}
        elif channels[cid] == "bluesky":
            variant["tags"] = [f"seed{seed}"]
        comp.variants[cid] = variant
    return comp


class ThreadFaults:
    """Lost answers at the thread steps (module docstring)."""

    def __init__(self, plan: FaultPlan) -> None:
        self.plan = plan

    def lose(self, network: str, key: str, label: str) -> str | None:
        """The fault of this write (``part_answer_lost``, ``comment_answer_lost``) or None."""
        plan = self.plan
        if label == "1" or not plan.enabled or plan.rates.answer <= 0:
            return None
        if plan.occurrence("thread-step", key, label) > 0:
            return None
        if plan.draw("thread-step", key, label) >= THREAD_LOSS_RATE:
            return None
        return "comment_answer_lost" if label == COMMENT else "part_answer_lost"


def check_thread(
    key: str,
    network: str,
    delivery: dict[str, Any],
    by_label: dict[str, list[dict[str, Any]]],
    *,
    comment_due: datetime | None,
    writes: dict[str, datetime],
    lost: set[str],
    hostile: bool,
    totals: Counter[str],
) -> list[str]:
    """One network delivery's later parts and first comment against the network.

    ``by_label`` are the delivery's items on the network by :func:`label_of` (part 1 checked by
    the caller); ``comment_due`` is ``publish_at + delay_seconds`` (None: no comment);
    ``writes`` the first write of each label that reached the network, ``lost`` the labels
    whose answer was lost (``hostile``: an answer's id was replaced, so a listed id may be
    dropped). Published: part ``n`` once, replying to part ``n - 1`` (Bluesky:
    ``reply.root`` part 1, ``reply.parent`` part ``n - 1``, uri and cid), its id the delivery's
    ``published_parts``; the comment once as a reply to part 1, not before ``comment_due``,
    shown ``published`` with its id, or ``failed`` and then on the network only after a lost
    answer. Failed: the parts listed as published once each, nothing more unless an answer
    was lost.
    """
    problems: list[str] = []
    total = 1 + len(delivery.get("parts") or [])
    listed = {p["index"]: p for p in delivery.get("published_parts") or []}
    published = delivery["status"] == "published"
    firsts = by_label.get("1") or []
    chain: list[dict[str, Any] | None] = [firsts[0] if firsts else None]
    for n in range(2, total + 1):
        items = by_label.pop(str(n), [])
        totals[f"network_{network}_thread_parts"] += len(items)
        owed = published or (n - 1) in listed
        if len(items) > (1 if owed or str(n) in lost else 0) or (owed and not items):
            totals["duplicates"] += max(0, len(items) - 1)
            problems.append(f"{key}: part {n} of {total} {len(items)} times on {network}")
        item = items[0] if items else None
        chain.append(item)
        if item is None or not owed:
            continue
        ids = {item["id"], None} if hostile else {item["id"]}
        if (n - 1) not in listed or listed[n - 1]["remote_id"] not in ids:
            problems.append(f"{key}: part {n} is {item['id']}, the delivery lists {listed}")
        problems += _replies(key, f"part {n}", item, root=chain[0], parent=chain[n - 2])
    comments = by_label.pop(COMMENT, [])
    totals[f"network_{network}_comments"] += len(comments)
    if comment_due is None:
        if comments:
            problems.append(f"{key}: a comment nobody wrote on {network}")
        return problems + _leftover(key, by_label)
    shown = delivery.get("first_comment") or {}
    if not published:
        if comments and COMMENT not in lost:
            problems.append(f"{key}: delivery {delivery['status']}, its comment on {network}")
        return problems + _leftover(key, by_label)
    status = shown.get("status")
    totals[f"network_comment_{status}"] += 1
    if status == "published":
        if len(comments) != 1:
            totals["duplicates"] += max(0, len(comments) - 1)
            return [*problems, f"{key}: comment {len(comments)} times on {network}"]
        item = comments[0]
        if shown.get("remote_id") not in ({item["id"], None} if hostile else {item["id"]}):
            problems.append(f"{key}: comment is {item['id']}, shown {shown.get('remote_id')}")
        problems += _replies(key, "the comment", item, root=chain[0], parent=chain[0])
        made = item.get("at") or writes.get(COMMENT)
        if made is None or made < comment_due:
            totals["early"] += 1
            problems.append(f"{key}: comment on {network} at {made}, due {comment_due}")
    elif status == "failed":
        if len(comments) > (1 if COMMENT in lost else 0):
            problems.append(f"{key}: comment failed, {len(comments)} on {network}")
    else:
        problems.append(f"{key}: published, its comment {shown or 'missing'}")
    return problems + _leftover(key, by_label)


def _replies(
    key: str,
    what: str,
    item: dict[str, Any],
    *,
    root: dict[str, Any] | None,
    parent: dict[str, Any] | None,
) -> list[str]:
    """``item`` replies to ``parent`` in the thread of ``root`` (items on the network: ``ref``
    their identity, Bluesky ``{uri, cid}`` or a Mastodon id; ``reply`` Bluesky's ``{root,
    parent}`` strongRefs or Mastodon's ``{parent: in_reply_to_id}``). A root without a ``cid``
    (a record the network replaced) is matched by its ``uri``."""
    if root is None or parent is None:
        return [f"{key}: {what} on the network, an earlier part missing"]
    reply = item.get("reply") or {}
    bluesky = isinstance(root["ref"], dict)
    wanted = {"parent": parent["ref"]}
    if bluesky:
        wanted = {"root": root["ref"], **wanted}
    for name, want in wanted.items():
        got = reply.get(name)
        if bluesky and isinstance(got, dict) and "cid" not in want:
            got = {"uri": got.get("uri")}
        if got != want:
            return [f"{key}: {what} replies ({name}) to {got}, not {want}"]
    return []


def _leftover(key: str, by_label: dict[str, list[dict[str, Any]]]) -> list[str]:
    extra = sorted(label for label, items in by_label.items() if label != "1" and items)
    return [f"{key}: parts {extra} on the network beyond the thread"] if extra else []


def check_planned(
    key: str, comp: Composition | None, channel_id: str, delivery: dict[str, Any], content: str
) -> list[str]:
    """The channel's effective text as planned: its variant's ``content`` (else ``content``,
    the post's), and the post's replies."""
    variant = comp.variants.get(channel_id) if comp is not None else None
    want = variant["content"] if variant is not None else content
    problems = []
    if delivery.get("content") != want:
        problems.append(f"{key}: shows content {delivery.get('content')!r}, not {want!r}")
    parts = [p["content"] for p in delivery.get("parts") or []]
    if parts != (comp.parts if comp is not None else []):
        problems.append(f"{key}: shows parts {parts}")
    return problems


def comment_due(state: dict[str, Any], delay: int) -> datetime:
    """When a first comment is due: the post's final ``publish_at`` plus its delay."""
    from scheduled_posts.clock import parse_instant

    return parse_instant(state["publish_at"]) + timedelta(seconds=delay)
