//! The Agent runtime (§6.3, §11.3, §12; reference `agent.py`): one active session with
//! strictly increasing Session Epochs, Group-scoped context and credentials installed by
//! revision, and execution contexts that hold only the dispatched work's own Group.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use missionweaveprotocol::WireCode;
use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol_agent::runtime::{AgentError, AgentRuntime, SessionDescriptor};
use missionweaveprotocol_kernel::scheduler::{
    Dispatch, ScheduleAction, Scheduler, SchedulerPolicy, Transition, WorkOffer,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

const AGENT: &str = "urn:missionweaveprotocol:agent:worker";
const FINANCE: &str = "urn:missionweaveprotocol:group:finance";
const LEGAL: &str = "urn:missionweaveprotocol:group:legal";
const NOW: UnixMillis = UnixMillis(1_784_107_800_000);

fn runtime() -> AgentRuntime {
    let policy = SchedulerPolicy {
        capacity_slots: 2,
        ..SchedulerPolicy::default()
    };
    AgentRuntime::new(AGENT, Scheduler::new(policy).unwrap()).unwrap()
}

fn obj(text: &str) -> Value {
    json::parse(text.as_bytes()).unwrap()
}

/// Admits one item per Group and dispatches both.
fn dispatched(runtime: &mut AgentRuntime) -> Vec<Dispatch> {
    for (work, group) in [("urn:w:finance-1", FINANCE), ("urn:w:legal-1", LEGAL)] {
        let decision = runtime
            .scheduler_mut()
            .admit(&WorkOffer::new(work, group), NOW);
        assert!(decision.accepted);
    }
    runtime
        .scheduler_mut()
        .schedule(NOW)
        .into_iter()
        .filter_map(|a| match a {
            ScheduleAction::Dispatch(d) => Some(d),
            ScheduleAction::Preempt(_) => None,
        })
        .collect()
}

fn install_both(runtime: &mut AgentRuntime, session: &SessionDescriptor) {
    runtime
        .install_group_context(session, FINANCE, &obj(r#"{"ledger":"2026-07"}"#), 1)
        .unwrap();
    runtime
        .install_group_credentials(session, FINANCE, &obj(r#"{"erp":"finance-token"}"#), 1)
        .unwrap();
    runtime
        .install_group_context(session, LEGAL, &obj(r#"{"case":"c-9"}"#), 1)
        .unwrap();
    runtime
        .install_group_credentials(session, LEGAL, &obj(r#"{"dms":"legal-token"}"#), 1)
        .unwrap();
}

#[test]
fn one_session_at_a_time_with_strictly_increasing_epochs() {
    let mut rt = runtime();
    assert!(rt.active_session().is_none());
    let first = rt.start_session(1, None).unwrap();
    assert_eq!(first.session_epoch, 1);
    assert_eq!(first.agent_id, AGENT);
    assert_eq!(rt.active_session(), Some(&first));
    let error = rt.start_session(2, None).unwrap_err();
    assert_eq!(error, AgentError::ActiveSession { active_epoch: 1 });
    assert_eq!(error.code(), WireCode::InvalidStateTransition);
    assert!(rt.close_session(&first));
    assert!(!rt.close_session(&first), "closing is idempotent");
    for stale in [1, 0] {
        let error = rt.start_session(stale, None).unwrap_err();
        assert!(
            matches!(
                error,
                AgentError::StaleSessionEpoch { .. } | AgentError::InvalidArgument(_)
            ),
            "{error}"
        );
    }
    assert_eq!(
        rt.start_session(1, None).unwrap_err().code(),
        WireCode::AuthStaleSession
    );
    let second = rt.start_session(5, Some("urn:session:five")).unwrap();
    assert_eq!(second.session_id, "urn:session:five");
    assert_eq!(rt.last_session_epoch(), 5);
    assert!(rt.start_session(6, Some(" ")).is_err());
}

#[test]
fn a_closed_or_replaced_session_can_do_nothing() {
    let mut rt = runtime();
    let dispatches = dispatched(&mut rt);
    let old = rt.start_session(1, None).unwrap();
    install_both(&mut rt, &old);
    rt.close_session(&old);
    let closed = |e: AgentError| {
        assert!(matches!(e, AgentError::ClosedSession { .. }));
        assert_eq!(e.code(), WireCode::AuthRequired);
    };
    closed(rt.prepare(&old, &dispatches[0]).unwrap_err());
    closed(
        rt.install_group_context(&old, FINANCE, &obj("{}"), 2)
            .unwrap_err(),
    );
    closed(
        rt.install_group_credentials(&old, FINANCE, &obj("{}"), 2)
            .unwrap_err(),
    );
    // A new session starts empty: nothing of the old one leaks into it.
    let new = rt.start_session(2, None).unwrap();
    let context = rt.prepare(&new, &dispatches[0]).unwrap();
    assert_eq!(context.context_revision, None);
    assert_eq!(context.credential_revision, None);
    assert!(context.values.as_object().unwrap().is_empty());
    assert!(context.credentials.as_object().unwrap().is_empty());
    closed(rt.prepare(&old, &dispatches[0]).unwrap_err());
}

#[test]
fn contexts_and_credentials_install_by_increasing_revision() {
    let mut rt = runtime();
    let session = rt.start_session(1, None).unwrap();
    rt.install_group_context(&session, FINANCE, &obj(r#"{"v":1}"#), 3)
        .unwrap();
    for older in [3, 2] {
        let error = rt
            .install_group_context(&session, FINANCE, &obj(r#"{"v":0}"#), older)
            .unwrap_err();
        assert_eq!(
            error,
            AgentError::StaleContext {
                group_id: FINANCE.to_owned(),
                offered: older,
                current: 3
            }
        );
        assert_eq!(error.code(), WireCode::RevisionConflict);
    }
    rt.install_group_context(&session, FINANCE, &obj(r#"{"v":4}"#), 4)
        .unwrap();
    // Revisions are per Group and per kind: legal and credentials are independent.
    rt.install_group_context(&session, LEGAL, &obj("{}"), 1)
        .unwrap();
    rt.install_group_credentials(&session, FINANCE, &obj("{}"), 1)
        .unwrap();
    assert!(
        rt.install_group_credentials(&session, FINANCE, &obj("{}"), 1)
            .is_err()
    );
    // Values must be objects; the Group ID non-empty.
    assert_eq!(
        rt.install_group_context(&session, LEGAL, &obj("[1]"), 9)
            .unwrap_err(),
        AgentError::InvalidArgument("values")
    );
    assert!(
        rt.install_group_context(&session, "", &obj("{}"), 9)
            .is_err()
    );
}

#[test]
fn each_run_sees_only_its_own_groups_context_and_credentials() {
    let mut rt = runtime();
    let dispatches = dispatched(&mut rt);
    assert_eq!(dispatches.len(), 2);
    let session = rt.start_session(1, None).unwrap();
    install_both(&mut rt, &session);
    for dispatch in &dispatches {
        let context = rt.prepare(&session, dispatch).unwrap();
        assert_eq!(context.group_id, &*dispatch.group_id);
        assert_eq!(context.work_id, &*dispatch.work_id);
        assert_eq!(context.session_epoch, 1);
        assert_eq!(
            (context.context_revision, context.credential_revision),
            (Some(1), Some(1))
        );
        let text = String::from_utf8(
            json::canonical_bytes(&Value::Array(vec![
                context.values.clone(),
                context.credentials.clone(),
            ]))
            .unwrap(),
        )
        .unwrap();
        if &*dispatch.group_id == FINANCE {
            assert_eq!(text, r#"[{"ledger":"2026-07"},{"erp":"finance-token"}]"#);
        } else {
            assert_eq!(text, r#"[{"case":"c-9"},{"dms":"legal-token"}]"#);
        }
        let other = if &*dispatch.group_id == FINANCE {
            "legal-token"
        } else {
            "finance-token"
        };
        assert!(!text.contains(other), "no other Group's credential");
    }
}

#[test]
fn a_forged_or_stale_dispatch_cannot_reach_another_groups_context() {
    let mut rt = runtime();
    let dispatches = dispatched(&mut rt);
    let session = rt.start_session(1, None).unwrap();
    install_both(&mut rt, &session);
    let finance = dispatches
        .iter()
        .find(|d| &*d.group_id == FINANCE)
        .unwrap()
        .clone();
    let not_dispatched = |e: AgentError| {
        assert!(matches!(e, AgentError::NotDispatched { .. }), "{e}");
        assert_eq!(e.code(), WireCode::InvalidStateTransition);
    };
    // The finance work relabelled as legal work.
    let relabelled = Dispatch {
        group_id: Arc::from(LEGAL),
        ..finance.clone()
    };
    not_dispatched(rt.prepare(&session, &relabelled).unwrap_err());
    // A run of another generation.
    let stale = Dispatch {
        generation: finance.generation + 1,
        ..finance.clone()
    };
    not_dispatched(rt.prepare(&session, &stale).unwrap_err());
    // Work the Scheduler never admitted, in either Group.
    for group in [FINANCE, LEGAL] {
        let unknown = Dispatch {
            work_id: Arc::from("urn:w:unknown"),
            group_id: Arc::from(group),
            ..finance.clone()
        };
        not_dispatched(rt.prepare(&session, &unknown).unwrap_err());
    }
    // Completed work is no longer running.
    rt.scheduler_mut()
        .apply(
            &finance.work_id,
            Transition::Completed {
                generation: finance.generation,
            },
            NOW,
        )
        .unwrap();
    not_dispatched(rt.prepare(&session, &finance).unwrap_err());
}

#[test]
fn the_agent_id_must_not_be_empty() {
    let scheduler = Scheduler::new(SchedulerPolicy::default()).unwrap();
    assert_eq!(
        AgentRuntime::new(" ", scheduler).unwrap_err(),
        AgentError::InvalidArgument("agent_id")
    );
}
