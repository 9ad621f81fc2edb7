"""One Agent runtime, one active Agent Session, Group-isolated execution contexts (§6.3, §11.3,
§12; the reference's ``agent.py``).

:class:`AgentRuntime` owns the Worker's :class:`~missionweaveprotocol.scheduler.Scheduler` and
at most one active :class:`AgentRuntimeSession`. Session Epochs strictly increase
(:class:`StaleSessionEpochError`); a second session while one is active is
:class:`ActiveSessionError`; a closed session can do nothing (:class:`ClosedSessionError`).
Each Group's context values and credentials are installed by revision (an older or equal
revision is :class:`StaleContextError`), and :meth:`AgentRuntimeSession.prepare` returns an
:class:`ExecutionContext` holding only the context and credentials of the Group the Scheduler
admitted the dispatched WorkItem under — the Group is read from the Scheduler's own record, so a
:class:`~missionweaveprotocol.scheduler.Dispatch` relabelled with another Group is refused
(``ValueError``, kind ``not_dispatched``). The rules run in the Rust core; every exception
carries ``code`` (the §19 wire code) and ``kind``.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType, TracebackType
from typing import Any, Mapping, Optional, Type

from . import _native

# The exception classes are the shared error model's (`errors.py`, named by the core's
# `ErrorClass`), re-exported here under the reference's module.
from .errors import (
    ActiveSessionError,
    ClosedSessionError,
    StaleContextError,
    StaleSessionEpochError,
)
from .scheduler import Scheduler


def _freeze(value: Any) -> Any:
    """Deep read-only copy of a JSON value (mappings become ``MappingProxyType``, lists
    tuples)."""
    if isinstance(value, Mapping):
        return MappingProxyType({key: _freeze(item) for key, item in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(item) for item in value)
    return value


@dataclass(frozen=True)
class SessionDescriptor:
    """One Agent Session."""

    agent_id: str
    session_id: str
    session_epoch: int


@dataclass(frozen=True)
class ExecutionContext:
    """What one dispatched run may read: its own Group's context and credentials (deep-frozen
    copies), nothing of any other Group."""

    agent_id: str
    session_id: str
    session_epoch: int
    work_id: str
    group_id: str
    context_revision: Optional[int]
    values: Mapping[str, Any]
    credential_revision: Optional[int]
    credentials: Mapping[str, Any]


class AgentRuntimeSession:
    """The active session of an :class:`AgentRuntime` (a context manager that closes it)."""

    __slots__ = ("_owner", "_descriptor")

    def __init__(self, owner: "AgentRuntime", descriptor: SessionDescriptor) -> None:
        self._owner = owner
        self._descriptor = descriptor

    def _args(self) -> tuple[str, str, int]:
        d = self._descriptor
        return (d.agent_id, d.session_id, d.session_epoch)

    @property
    def descriptor(self) -> SessionDescriptor:
        return self._descriptor

    @property
    def scheduler(self) -> Scheduler:
        return self._owner.scheduler

    def install_group_context(self, group_id: str, values: Mapping[str, Any], *, revision: int) -> None:
        """Installs Group ``group_id``'s context values at ``revision``."""
        self._owner._sessions.install(*self._args(), group_id, dict(values), revision=revision)

    def install_group_credentials(
        self, group_id: str, credentials: Mapping[str, Any], *, revision: int
    ) -> None:
        """Installs Group ``group_id``'s credentials at ``revision`` (§12: never offered to
        another Group's work)."""
        self._owner._sessions.install(
            *self._args(), group_id, dict(credentials), revision=revision, credentials=True
        )

    def prepare(self, dispatch: Any) -> ExecutionContext:
        """The :class:`ExecutionContext` of ``dispatch`` (a Scheduler ``Dispatch``): only the
        Group the Scheduler admitted that WorkItem under."""
        generation = getattr(dispatch, "generation", None)
        if generation is None:
            run_id = str(getattr(dispatch, "run_id", ""))
            generation = int(run_id.rsplit(":", 1)[-1]) if ":" in run_id else -1
        raw = self._owner._sessions.prepare(
            *self._args(),
            self._owner.scheduler._core,
            str(dispatch.work_id),
            str(dispatch.group_id),
            generation,
        )
        return ExecutionContext(
            agent_id=raw["agent_id"],
            session_id=raw["session_id"],
            session_epoch=raw["session_epoch"],
            work_id=raw["work_id"],
            group_id=raw["group_id"],
            context_revision=raw["context_revision"],
            values=_freeze(raw["values"]),
            credential_revision=raw["credential_revision"],
            credentials=_freeze(raw["credentials"]),
        )

    def close(self) -> None:
        """Closes the session (idempotent); its contexts and credentials are dropped."""
        self._owner._sessions.close_session(*self._args())

    def __enter__(self) -> "AgentRuntimeSession":
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"AgentRuntimeSession({self._descriptor!r})"


class AgentRuntime:
    """One Agent's runtime: its Scheduler and at most one active session."""

    __slots__ = ("_agent_id", "_scheduler", "_sessions")

    def __init__(self, agent_id: str, scheduler: Scheduler) -> None:
        if not isinstance(scheduler, Scheduler):
            raise TypeError("scheduler must be a missionweaveprotocol.scheduler.Scheduler")
        self._sessions = _native.NativeAgentSessions(agent_id)
        self._agent_id = agent_id
        self._scheduler = scheduler

    @property
    def agent_id(self) -> str:
        return self._agent_id

    @property
    def scheduler(self) -> Scheduler:
        return self._scheduler

    @property
    def active_session(self) -> Optional[SessionDescriptor]:
        active = self._sessions.active_session
        return None if active is None else SessionDescriptor(*active)

    def start_session(self, session_epoch: int, *, session_id: Optional[str] = None) -> AgentRuntimeSession:
        """Starts session ``session_epoch`` (strictly above every earlier epoch; only when no
        session is active). ``session_id`` defaults to ``"<agent_id>#session-<epoch>"``."""
        descriptor = SessionDescriptor(*self._sessions.start_session(session_epoch, session_id))
        return AgentRuntimeSession(self, descriptor)

    def __repr__(self) -> str:
        return f"AgentRuntime(agent_id={self._agent_id!r}, active_session={self.active_session!r})"


__all__ = [
    "ActiveSessionError",
    "AgentRuntime",
    "AgentRuntimeSession",
    "ClosedSessionError",
    "ExecutionContext",
    "SessionDescriptor",
    "StaleContextError",
    "StaleSessionEpochError",
]
