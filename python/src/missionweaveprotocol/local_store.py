"""Agent-local SQLite store (reference ``local_store.py``; §11.1, §11.5, §16).

:class:`SQLiteAgentStore` keeps what one Agent must not lose across a crash: per-Group cursors
and the Events processed (inbox), buffered Commands (outbox), its Scheduler snapshot, Group
contexts and checkpoint contents. It is never authoritative for Mission or Group truth. The
store is the Rust core's ``SqliteAgentStore`` (WAL, ``synchronous=FULL``): every write commits
immediately, and :class:`~missionweaveprotocol.replay.AgentReplay` commits a batch of Events
with its cursor and Scheduler snapshot in one transaction.

Differences from the reference, on purpose: ``enqueue_action`` accepts the same content again
(idempotent) and refuses other content under the same Action ID; ``mark_action_sent`` of an
action that was never buffered raises :class:`LocalStoreError` instead of doing nothing; a
Group context at the stored revision is accepted only with the same values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

from . import _native
from ._native import SchedulerSnapshot
# The shared error model's class (the core's `ErrorClass::LocalStore`), re-exported here.
from .errors import LocalStoreError

__all__ = ["LocalStoreError", "SQLiteAgentStore"]


def _closed() -> LocalStoreError:
    return LocalStoreError(
        "the store is closed", code="INTERNAL_ERROR", reason="closed", retryable=False
    )


class SQLiteAgentStore:
    """The Agent-local store in the SQLite file at ``path`` (``":memory:"`` for a private
    in-memory store)."""

    def __init__(self, path: Union[str, Path]) -> None:
        self._path = path if str(path) == ":memory:" else Path(path)
        self._handle: Optional[_native.AgentStore] = _native.AgentStore(str(path))

    @property
    def _native(self) -> _native.AgentStore:
        if self._handle is None:
            raise _closed()
        return self._handle

    @property
    def path(self) -> Union[str, Path]:
        return self._path

    def close(self) -> None:
        """Releases the database (it closes once no replay holds it)."""
        self._handle = None

    def acknowledge(self, agent_id: str, group_id: str, sequence: int) -> None:
        """Moves the cursor forward to ``sequence`` (monotonic: an older one changes nothing)."""
        self._native.acknowledge(agent_id, group_id, sequence)

    def cursor(self, agent_id: str, group_id: str) -> int:
        return self._native.cursor(agent_id, group_id)

    def remember_event(
        self,
        agent_id: str,
        event_id: str,
        *,
        group_id: Optional[str] = None,
        sequence: Optional[int] = None,
    ) -> bool:
        """``False`` if the Event was known already. An Event known at another position, or a
        position held by another Event, raises :class:`LocalStoreError`."""
        return self._native.remember_event(agent_id, event_id, group_id, sequence)

    def has_event(self, agent_id: str, event_id: str) -> bool:
        return self._native.has_event(agent_id, event_id)

    def event_position(self, agent_id: str, event_id: str) -> Optional[Tuple[str, int]]:
        return self._native.event_position(agent_id, event_id)

    def enqueue_action(self, agent_id: str, action_id: str, payload: Dict[str, Any]) -> None:
        """Buffers ``payload``; the same content again is accepted, other content under the
        same Action ID raises :class:`LocalStoreError` (``action_collision``)."""
        self._native.enqueue_action(agent_id, action_id, payload)

    def pending_actions(self, agent_id: str) -> List[Dict[str, Any]]:
        """Payloads not yet marked sent, in enqueue order."""
        return self._native.pending_actions(agent_id)

    def mark_action_sent(self, agent_id: str, action_id: str) -> None:
        self._native.mark_action_sent(agent_id, action_id)

    def save_group_context(
        self, agent_id: str, group_id: str, revision: int, values: Dict[str, Any]
    ) -> None:
        """An older revision raises :class:`LocalStoreError` (``stale_revision``)."""
        self._native.save_group_context(agent_id, group_id, revision, values)

    def group_context(self, agent_id: str, group_id: str) -> Optional[Tuple[int, Dict[str, Any]]]:
        return self._native.group_context(agent_id, group_id)

    def save_checkpoint(
        self,
        agent_id: str,
        group_id: str,
        work_id: str,
        checkpoint_id: str,
        content: Dict[str, Any],
    ) -> None:
        """Immutable: the same content again is accepted, other content raises
        :class:`LocalStoreError` (``checkpoint_collision``)."""
        self._native.save_checkpoint(agent_id, group_id, work_id, checkpoint_id, content)

    def load_checkpoint(
        self, agent_id: str, group_id: str, work_id: str, checkpoint_id: str
    ) -> Optional[Dict[str, Any]]:
        return self._native.load_checkpoint(agent_id, group_id, work_id, checkpoint_id)

    def delete_checkpoint(
        self, agent_id: str, group_id: str, work_id: str, checkpoint_id: str
    ) -> bool:
        return self._native.delete_checkpoint(agent_id, group_id, work_id, checkpoint_id)

    def save_scheduler(self, agent_id: str, snapshot: SchedulerSnapshot) -> None:
        self._native.save_scheduler(agent_id, snapshot)

    def load_scheduler(self, agent_id: str) -> Optional[SchedulerSnapshot]:
        return self._native.load_scheduler(agent_id)
