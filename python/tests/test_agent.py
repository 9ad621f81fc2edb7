"""agent.py: one session at a time, strictly increasing Session Epochs, Group-scoped context
and credentials by revision, and execution contexts holding only the dispatched work's Group."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timezone

import pytest

from missionweaveprotocol.agent import (
    ActiveSessionError,
    AgentRuntime,
    AgentRuntimeSession,
    ClosedSessionError,
    ExecutionContext,
    SessionDescriptor,
    StaleContextError,
    StaleSessionEpochError,
)
from missionweaveprotocol.scheduler import (
    Scheduler,
    SchedulerPolicy,
    WorkOffer,
    WorkTransition,
)

NOW = datetime(2026, 7, 15, 9, 30, tzinfo=timezone.utc)
AGENT = "urn:missionweaveprotocol:agent:worker"
FINANCE = "urn:missionweaveprotocol:group:finance"
LEGAL = "urn:missionweaveprotocol:group:legal"


def make_runtime() -> tuple[AgentRuntime, dict[str, object]]:
    scheduler = Scheduler(SchedulerPolicy(capacity_slots=2), clock=lambda: NOW)
    for work, group in (("urn:w:f", FINANCE), ("urn:w:l", LEGAL)):
        assert scheduler.admit(WorkOffer(work_id=work, group_id=group)).accepted
    dispatches = {str(d.group_id): d for d in scheduler.schedule()}
    return AgentRuntime(AGENT, scheduler), dispatches


def install_both(session: AgentRuntimeSession) -> None:
    session.install_group_context(FINANCE, {"ledger": "2026-07"}, revision=1)
    session.install_group_credentials(FINANCE, {"erp": "finance-token"}, revision=1)
    session.install_group_context(LEGAL, {"case": "c-9"}, revision=1)
    session.install_group_credentials(LEGAL, {"dms": "legal-token"}, revision=1)


def test_reference_kinds() -> None:
    for cls in (ActiveSessionError, StaleSessionEpochError, ClosedSessionError, StaleContextError):
        assert issubclass(cls, RuntimeError)
    for cls in (SessionDescriptor, ExecutionContext):
        assert dataclasses.is_dataclass(cls)
        assert cls.__dataclass_params__.frozen  # type: ignore[attr-defined]


def test_one_session_with_strictly_increasing_epochs() -> None:
    runtime, _ = make_runtime()
    assert runtime.active_session is None
    session = runtime.start_session(1)
    assert runtime.active_session == session.descriptor == SessionDescriptor(AGENT, f"{AGENT}#session-1", 1)
    with pytest.raises(ActiveSessionError) as active:
        runtime.start_session(2)
    assert active.value.code == "INVALID_STATE_TRANSITION"
    # The shared error model builds it from the core's description.
    assert (active.value.kind, active.value.active_epoch) == ("active_session", 1)
    assert active.value.fields["active_epoch"] == 1 and not active.value.retryable
    session.close()
    session.close()  # idempotent
    assert runtime.active_session is None
    with pytest.raises(StaleSessionEpochError) as stale:
        runtime.start_session(1)
    assert stale.value.code == "AUTH_STALE_SESSION"
    assert (stale.value.reason, stale.value.offered, stale.value.last) == ("stale_session_epoch", 1, 1)
    with pytest.raises(ValueError) as zero:
        runtime.start_session(0)
    assert not isinstance(zero.value, RuntimeError)
    with pytest.raises(TypeError):
        runtime.start_session(True)
    named = runtime.start_session(7, session_id="urn:session:seven")
    assert named.descriptor.session_id == "urn:session:seven"


def test_context_manager_closes_and_closed_sessions_do_nothing() -> None:
    runtime, dispatches = make_runtime()
    with runtime.start_session(1) as session:
        install_both(session)
        assert session.scheduler is runtime.scheduler
    assert runtime.active_session is None
    for call in (
        lambda: session.prepare(dispatches[FINANCE]),
        lambda: session.install_group_context(FINANCE, {}, revision=2),
        lambda: session.install_group_credentials(FINANCE, {}, revision=2),
    ):
        with pytest.raises(ClosedSessionError) as closed:
            call()
        assert closed.value.code == "AUTH_REQUIRED"
    # A new session starts empty.
    fresh = runtime.start_session(2)
    context = fresh.prepare(dispatches[FINANCE])
    assert (context.context_revision, context.credential_revision) == (None, None)
    assert dict(context.values) == {} and dict(context.credentials) == {}


def test_revisions_must_increase_per_group_and_kind() -> None:
    runtime, _ = make_runtime()
    session = runtime.start_session(1)
    session.install_group_context(FINANCE, {"v": 3}, revision=3)
    for older in (3, 2):
        with pytest.raises(StaleContextError) as stale:
            session.install_group_context(FINANCE, {"v": 0}, revision=older)
        assert stale.value.code == "REVISION_CONFLICT"
    session.install_group_context(FINANCE, {"v": 4}, revision=4)
    session.install_group_context(LEGAL, {}, revision=1)
    session.install_group_credentials(FINANCE, {}, revision=1)
    with pytest.raises(StaleContextError):
        session.install_group_credentials(FINANCE, {}, revision=1)


def test_each_run_sees_only_its_own_group() -> None:
    runtime, dispatches = make_runtime()
    session = runtime.start_session(1)
    install_both(session)
    finance = session.prepare(dispatches[FINANCE])
    legal = session.prepare(dispatches[LEGAL])
    assert (finance.group_id, dict(finance.values), dict(finance.credentials)) == (
        FINANCE, {"ledger": "2026-07"}, {"erp": "finance-token"})
    assert (legal.group_id, dict(legal.values), dict(legal.credentials)) == (
        LEGAL, {"case": "c-9"}, {"dms": "legal-token"})
    assert "legal-token" not in repr(finance) and "finance-token" not in repr(legal)
    # Deep-frozen copies.
    with pytest.raises(TypeError):
        finance.values["ledger"] = "x"  # type: ignore[index]


def test_a_relabelled_stale_or_finished_dispatch_is_refused() -> None:
    runtime, dispatches = make_runtime()
    session = runtime.start_session(1)
    install_both(session)
    finance = dispatches[FINANCE]

    class Forged:
        work_id = finance.work_id
        group_id = LEGAL
        generation = finance.generation

    class Stale:
        work_id = finance.work_id
        group_id = FINANCE
        generation = finance.generation + 1

    for forged in (Forged(), Stale()):
        with pytest.raises(ValueError, match="not a running dispatch"):
            session.prepare(forged)
    runtime.scheduler.apply(WorkTransition(work_id=str(finance.work_id), kind="completed", run_id=f"{finance.work_id}:{finance.generation}"))
    with pytest.raises(ValueError, match="not a running dispatch"):
        session.prepare(finance)
