"""A draft's arrows as pure functions (decision "Drafts"): edit and schedule guarded on
``status = draft AND version`` (the states they refuse: ``test_transitions.py``); a draft's
writes report only its scheduling in the post's history (no moto, no I/O)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from scheduled_posts.lifecycle import drafts
from scheduled_posts.lifecycle.arrows import ARROWS, Guard, TransitionRefused
from scheduled_posts.lifecycle.events import derive_events
from scheduled_posts.lifecycle.states import PostStatus
from scheduled_posts.models.post import Post

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def post(status: PostStatus, **kw: object) -> Post:
    fields: dict[str, object] = {
        "schedule_id": "s1",
        "owner": "alice",
        "status": status,
        "content": "hi",
        "publish_at": NOW,
        "channel_ids": ["c1"],
        "version": 3,
        "created_at": NOW,
        "updated_at": NOW,
    }
    return Post.model_validate({**fields, **kw})


def test_draft_arrows_are_in_the_table() -> None:
    assert ARROWS["create_draft"].targets == {"draft"}
    assert ARROWS["schedule_draft"].sources == {"draft"}
    assert ARROWS["schedule_draft"].targets == {"scheduled"}
    assert ARROWS["delete_draft"].targets == frozenset()


def test_edit_draft_is_guarded_on_draft_and_version() -> None:
    old = post(PostStatus.DRAFT)
    change = drafts.edit_draft(old, old.model_copy(update={"content": "new", "version": 4}))
    assert change.guard == Guard(PostStatus.DRAFT, version=3)
    assert change.sets[("content",)] == "new"
    assert change.target == PostStatus.DRAFT


def test_schedule_draft_makes_it_scheduled_at_its_publish_at() -> None:
    old = post(PostStatus.DRAFT)
    later = NOW + timedelta(days=2)
    new = old.model_copy(update={"status": PostStatus.SCHEDULED, "publish_at": later, "version": 4})
    change = drafts.schedule_draft(old, new)
    assert change.guard == Guard(PostStatus.DRAFT, version=3)
    assert change.sets[("status",)] == "scheduled"
    assert change.sets[("publish_at",)] == "2026-12-03T12:00:00.000Z"


def test_schedule_draft_refuses_a_target_other_than_scheduled() -> None:
    old = post(PostStatus.DRAFT)
    with pytest.raises(TransitionRefused):
        drafts.schedule_draft(old, old.model_copy(update={"status": PostStatus.PUBLISHING}))


def test_a_drafts_creation_and_edit_report_nothing_its_scheduling_post_scheduled() -> None:
    draft = post(PostStatus.DRAFT, version=1).to_item()
    edited = post(PostStatus.DRAFT, version=2, content="new").to_item()
    scheduled = post(PostStatus.SCHEDULED, version=3).to_item()
    assert derive_events(None, draft) == []
    assert derive_events(draft, edited) == []
    assert [e.type for e in derive_events(edited, scheduled)] == ["post.scheduled"]
