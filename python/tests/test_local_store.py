"""``local_store.SQLiteAgentStore``: every reference method, its refusal, and what survives a
reopen (the rules are the Rust core's ``SqliteAgentStore``)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from missionweaveprotocol.errors import MissionWeaveError
from missionweaveprotocol.local_store import LocalStoreError, SQLiteAgentStore
from missionweaveprotocol.scheduler import Scheduler, WorkOffer

A = "urn:missionweaveprotocol:agent:worker"
NOW = datetime(2026, 7, 15, 9, 30, tzinfo=timezone.utc)


def test_cursors_dedup_and_outbox_survive_restart(tmp_path: Path) -> None:
    path = tmp_path / "agent.sqlite"
    store = SQLiteAgentStore(path)
    store.acknowledge(A, "g", 4)
    store.acknowledge(A, "g", 2)
    assert store.cursor(A, "g") == 4
    assert store.remember_event(A, "e1", group_id="g", sequence=1) is True
    assert store.remember_event(A, "e1", group_id="g", sequence=1) is False
    store.enqueue_action(A, "a1", {"kind": "message.post", "n": 1})
    store.enqueue_action(A, "a2", {"kind": "message.post", "n": 2})
    store.close()
    with pytest.raises(LocalStoreError):
        store.cursor(A, "g")
    store = SQLiteAgentStore(path)
    assert store.cursor(A, "g") == 4
    assert store.has_event(A, "e1") and not store.has_event(A, "e2")
    assert store.event_position(A, "e1") == ("g", 1)
    assert store.pending_actions(A) == [{"kind": "message.post", "n": 1}, {"kind": "message.post", "n": 2}]
    store.mark_action_sent(A, "a1")
    assert store.pending_actions(A) == [{"kind": "message.post", "n": 2}]


def test_an_event_cannot_move_and_a_position_holds_one_event() -> None:
    store = SQLiteAgentStore(":memory:")
    store.remember_event(A, "e1", group_id="g", sequence=1)
    with pytest.raises(LocalStoreError) as moved:
        store.remember_event(A, "e1", group_id="g", sequence=2)
    assert moved.value.code == "PROTOCOL_VIOLATION"
    assert moved.value.reason == "event_position_collision"
    assert isinstance(moved.value, ValueError) and isinstance(moved.value, MissionWeaveError)
    with pytest.raises(LocalStoreError):
        store.remember_event(A, "e2", group_id="g", sequence=1)
    with pytest.raises(LocalStoreError):
        store.remember_event(A, "e3", group_id="g")


def test_action_collision_is_refused_and_same_content_is_idempotent() -> None:
    store = SQLiteAgentStore(":memory:")
    store.enqueue_action(A, "a1", {"n": 1})
    store.enqueue_action(A, "a1", {"n": 1})
    assert len(store.pending_actions(A)) == 1
    with pytest.raises(LocalStoreError) as collision:
        store.enqueue_action(A, "a1", {"n": 2})
    assert collision.value.code == "ACTION_ID_COLLISION"
    store.mark_action_sent(A, "a1")
    store.enqueue_action(A, "a1", {"n": 1})
    assert store.pending_actions(A) == []
    with pytest.raises(LocalStoreError):
        store.mark_action_sent(A, "never-buffered")


def test_group_context_refuses_an_older_revision() -> None:
    store = SQLiteAgentStore(":memory:")
    assert store.group_context(A, "g") is None
    store.save_group_context(A, "g", 2, {"goal": "close books"})
    with pytest.raises(LocalStoreError) as stale:
        store.save_group_context(A, "g", 1, {"goal": "old"})
    assert stale.value.reason == "stale_revision"
    store.save_group_context(A, "g", 3, {"goal": "new"})
    assert store.group_context(A, "g") == (3, {"goal": "new"})


def test_checkpoint_content_is_immutable_idempotent_and_scoped(tmp_path: Path) -> None:
    path = tmp_path / "agent.sqlite"
    store = SQLiteAgentStore(path)
    store.save_checkpoint(A, "g", "w", "c1", {"step": 1})
    store.save_checkpoint(A, "g", "w", "c1", {"step": 1})
    with pytest.raises(LocalStoreError) as changed:
        store.save_checkpoint(A, "g", "w", "c1", {"step": 2})
    assert changed.value.reason == "checkpoint_collision"
    store = SQLiteAgentStore(path)
    assert store.load_checkpoint(A, "g", "w", "c1") == {"step": 1}
    assert store.load_checkpoint(A, "h", "w", "c1") is None
    assert store.load_checkpoint(A, "g", "x", "c1") is None
    assert store.delete_checkpoint(A, "g", "w", "c1") is True
    assert store.delete_checkpoint(A, "g", "w", "c1") is False


@pytest.mark.parametrize("scope", [("", "g", "w", "c"), (A, "", "w", "c"), (A, "g", "", "c"), (A, "g", "w", "")])
def test_checkpoint_scope_ids_must_not_be_empty(scope: tuple) -> None:
    store = SQLiteAgentStore(":memory:")
    with pytest.raises(LocalStoreError) as empty:
        store.save_checkpoint(*scope, {"x": 1})
    assert empty.value.reason == "invalid_argument"


def test_scheduler_snapshot_is_rebuildable_after_restart(tmp_path: Path) -> None:
    path = tmp_path / "agent.sqlite"
    store = SQLiteAgentStore(path)
    assert store.load_scheduler(A) is None
    scheduler = Scheduler(clock=lambda: NOW)
    assert scheduler.admit(WorkOffer("urn:w:1", "urn:g:a")).accepted
    assert scheduler.admit(WorkOffer("urn:w:2", "urn:g:b")).accepted
    store.save_scheduler(A, scheduler.snapshot())
    store = SQLiteAgentStore(path)
    snapshot = store.load_scheduler(A)
    assert snapshot is not None and snapshot == scheduler.snapshot()
    rebuilt = Scheduler.rebuild(snapshot, clock=lambda: NOW)
    assert len(rebuilt) == 2
