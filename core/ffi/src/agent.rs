//! The Agent runtime's sessions and Group-isolated execution contexts (§6.3, §11.3, §12) for
//! the npm package's `AgentRuntime` (Node entry only). The rules are
//! `missionweaveprotocol_agent::runtime::AgentSessions`; this reads the call's JSON argument
//! array and writes the answer, as `bindings/python/src/agent.rs` does for Python. The
//! Scheduler is the caller's own (`SchedulerHandle::core`), passed to `prepare` only: the Group a
//! prepared run may read is taken from that Scheduler's record, never from the caller.
//!
//! A session crosses as `{agentId, sessionId, sessionEpoch}`; a dispatch as
//! `{workId, groupId, generation}`; context values and credentials as JSON objects.

use std::sync::Arc;

use missionweaveprotocol::json::{Value, parse};
use missionweaveprotocol_agent::runtime::{
    AgentError, AgentSessions, ExecutionContext, SessionDescriptor,
};
use missionweaveprotocol_kernel::scheduler::{Dispatch, Scheduler};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::envelope::{Failure, Obj, finish};
use crate::shapes::common::Safe;
use crate::shapes::{Call, Res, run};

fn agent_failure(e: &AgentError) -> Failure {
    Failure::error(e)
}

/// `{agentId, sessionId, sessionEpoch}`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SessionInput {
    agent_id: String,
    session_id: String,
    session_epoch: Safe,
}

impl From<SessionInput> for SessionDescriptor {
    fn from(s: SessionInput) -> Self {
        Self {
            agent_id: s.agent_id,
            session_id: s.session_id,
            session_epoch: s.session_epoch.0,
        }
    }
}

/// `{workId, groupId, generation}`: what a Scheduler `Dispatch` names.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct DispatchInput {
    work_id: String,
    group_id: String,
    generation: u32,
}

fn session_value(d: &SessionDescriptor) -> Value {
    Obj::new()
        .str("agentId", d.agent_id.as_str())
        .str("sessionId", d.session_id.as_str())
        .num("sessionEpoch", d.session_epoch)
        .build()
}

fn opt_num(value: Option<u64>) -> Value {
    value.map_or(Value::Null, |n| {
        Value::Number(missionweaveprotocol::json::Number::from_u64(n))
    })
}

fn context_value(c: ExecutionContext) -> Value {
    Obj::new()
        .str("agentId", c.agent_id)
        .str("sessionId", c.session_id)
        .num("sessionEpoch", c.session_epoch)
        .str("workId", c.work_id)
        .str("groupId", c.group_id)
        .value("contextRevision", opt_num(c.context_revision))
        .value("values", c.values)
        .value("credentialRevision", opt_num(c.credential_revision))
        .value("credentials", c.credentials)
        .build()
}

/// A JSON value argument, read by the core's lossless parser (context values, credentials).
fn json_arg(a: &Call<'_>, index: usize, name: &str) -> Res<Value> {
    let raw: Box<RawValue> = a.arg(index, name)?;
    parse(raw.get().as_bytes()).map_err(|e| Failure::error(&e))
}

/// One Agent's sessions (`AgentSessions`): the active session, its Group-scoped installs and
/// the highest Session Epoch used.
#[derive(Debug, Clone)]
pub struct AgentHandle(AgentSessions);

impl AgentHandle {
    /// `agent_id` must not be blank (`AgentError`, `invalid_argument`).
    pub fn new(agent_id: &str) -> Res<Self> {
        AgentSessions::new(agent_id)
            .map(Self)
            .map_err(|e| agent_failure(&e))
    }

    /// `{agentId, activeSession, lastSessionEpoch}`.
    pub fn state(&self) -> String {
        let s = &self.0;
        finish(Ok(Obj::new()
            .str("agentId", s.agent_id())
            .value(
                "activeSession",
                s.active_session().map_or(Value::Null, session_value),
            )
            .num("lastSessionEpoch", s.last_session_epoch())
            .build()))
    }

    /// `[sessionEpoch, sessionId?]` → the session (the core names it when `sessionId` is
    /// absent).
    pub fn start_session(&mut self, args: &str) -> String {
        run(args, |a| {
            // Any integer is read (0 and negatives are the core's `invalid_argument`).
            let epoch: i64 = a.arg(0, "sessionEpoch")?;
            let epoch = u64::try_from(epoch).unwrap_or(0);
            let session_id: Option<String> = a.arg(1, "sessionId")?;
            self.0
                .start_session(epoch, session_id.as_deref())
                .map(|d| session_value(&d))
                .map_err(|e| agent_failure(&e))
        })
    }

    /// `[session]` → whether it was the active one.
    pub fn close_session(&mut self, args: &str) -> String {
        run(args, |a| {
            let session = SessionDescriptor::from(a.arg::<SessionInput>(0, "session")?);
            Ok(Value::Bool(self.0.close_session(&session)))
        })
    }

    /// `[session, groupId, values, revision]`: the Group's context values.
    pub fn install_context(&mut self, args: &str) -> String {
        run(args, |a| {
            let (session, group_id, values, revision) = install_args(a)?;
            self.0
                .install_group_context(&session, &group_id, &values, revision)
                .map(|()| Value::Null)
                .map_err(|e| agent_failure(&e))
        })
    }

    /// `[session, groupId, values, revision]`: the Group's credentials (§12).
    pub fn install_credentials(&mut self, args: &str) -> String {
        run(args, |a| {
            let (session, group_id, values, revision) = install_args(a)?;
            self.0
                .install_group_credentials(&session, &group_id, &values, revision)
                .map(|()| Value::Null)
                .map_err(|e| agent_failure(&e))
        })
    }

    /// `[session, dispatch]`: the execution context of the dispatch against `scheduler` (the
    /// Group is the Scheduler's record of the WorkItem), `{agentId, sessionId, sessionEpoch,
    /// workId, groupId, contextRevision, values, credentialRevision, credentials}`.
    pub fn prepare(&self, args: &str, scheduler: &Scheduler) -> String {
        run(args, |a| {
            let session = SessionDescriptor::from(a.arg::<SessionInput>(0, "session")?);
            let d: DispatchInput = a.arg(1, "dispatch")?;
            let dispatch = Dispatch {
                work_id: Arc::from(d.work_id.as_str()),
                group_id: Arc::from(d.group_id.as_str()),
                generation: d.generation,
                slots: 1,
                resume_from: None,
            };
            self.0
                .prepare(&session, scheduler, &dispatch)
                .map(context_value)
                .map_err(|e| agent_failure(&e))
        })
    }
}

/// `[session, groupId, values, revision]` of an install.
fn install_args(a: &Call<'_>) -> Res<(SessionDescriptor, String, Value, u64)> {
    let session = SessionDescriptor::from(a.arg::<SessionInput>(0, "session")?);
    let group_id: String = a.arg(1, "groupId")?;
    let values = json_arg(a, 2, "values")?;
    let revision: Safe = a.arg(3, "revision")?;
    Ok((session, group_id, values, revision.0))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use missionweaveprotocol::json::Value;
    use missionweaveprotocol_kernel::scheduler::Scheduler;

    use super::AgentHandle;
    use crate::scheduling::SchedulerHandle;

    /// The `ok` member of an envelope (panics on an error envelope).
    fn ok(envelope: String) -> Value {
        let parsed = missionweaveprotocol::json::parse(envelope.as_bytes()).unwrap();
        parsed.get("ok").cloned().expect(&envelope)
    }

    const AGENT: &str = "urn:missionweaveprotocol:agent:worker";
    const FINANCE: &str = "urn:missionweaveprotocol:group:finance";
    const LEGAL: &str = "urn:missionweaveprotocol:group:legal";

    fn class_of(envelope: String) -> String {
        let parsed = missionweaveprotocol::json::parse(envelope.as_bytes()).unwrap();
        let error = parsed.get("error").expect("an error envelope");
        format!(
            "{}/{}",
            error
                .get("class")
                .and_then(Value::as_str)
                .unwrap_or_default(),
            error
                .get("code")
                .and_then(Value::as_str)
                .unwrap_or_default()
        )
    }

    fn scheduler_with_two_groups() -> (Scheduler, Vec<(String, String, u64)>) {
        let mut handle = SchedulerHandle::new(r#"[{"capacitySlots":2}]"#).unwrap();
        for (work, group) in [("urn:w:f", FINANCE), ("urn:w:l", LEGAL)] {
            ok(handle.admit(&format!(r#"[{{"workId":"{work}","groupId":"{group}"}},0]"#)));
        }
        let actions = handle.schedule(0.0);
        let parsed = missionweaveprotocol::json::parse(actions.as_bytes()).unwrap();
        let dispatches = parsed
            .get("ok")
            .and_then(Value::as_array)
            .unwrap()
            .iter()
            .map(|d| {
                (
                    d.get("workId").and_then(Value::as_str).unwrap().to_owned(),
                    d.get("groupId").and_then(Value::as_str).unwrap().to_owned(),
                    d.get("generation")
                        .and_then(Value::as_number)
                        .and_then(|n| n.as_u64())
                        .unwrap(),
                )
            })
            .collect();
        (handle.core().clone(), dispatches)
    }

    fn session_json(epoch: u64) -> String {
        format!(
            r#"{{"agentId":"{AGENT}","sessionId":"{AGENT}#session-{epoch}","sessionEpoch":{epoch}}}"#
        )
    }

    #[test]
    fn one_session_at_a_time_with_increasing_epochs() {
        let mut agent = AgentHandle::new(AGENT).unwrap();
        let started = ok(agent.start_session("[1]"));
        assert_eq!(
            started
                .get("sessionEpoch")
                .and_then(Value::as_number)
                .and_then(|n| n.as_u64()),
            Some(1)
        );
        assert_eq!(
            class_of(agent.start_session("[2]")),
            "ActiveSessionError/INVALID_STATE_TRANSITION"
        );
        let close = format!("[{}]", session_json(1));
        assert_eq!(ok(agent.close_session(&close)), Value::Bool(true));
        assert_eq!(ok(agent.close_session(&close)), Value::Bool(false));
        assert_eq!(
            class_of(agent.start_session("[1]")),
            "StaleSessionEpochError/AUTH_STALE_SESSION"
        );
        assert_eq!(
            class_of(agent.start_session("[0]")),
            "AgentError/INVALID_COMMAND"
        );
        assert_eq!(
            class_of(crate::envelope::finish(
                AgentHandle::new(" ").map(|_| Value::Null)
            )),
            "AgentError/INVALID_COMMAND"
        );
        assert!(class_of(agent.start_session("[]")).starts_with("ArgumentError/"));
    }

    #[test]
    fn prepare_reads_only_the_dispatched_group_from_the_scheduler() {
        let (scheduler, dispatches) = scheduler_with_two_groups();
        let mut agent = AgentHandle::new(AGENT).unwrap();
        ok(agent.start_session("[1]"));
        let s = session_json(1);
        for (group, secret) in [(FINANCE, "f-token"), (LEGAL, "l-token")] {
            ok(agent.install_credentials(&format!(r#"[{s},"{group}",{{"token":"{secret}"}},1]"#)));
        }
        assert_eq!(
            class_of(agent.install_credentials(&format!(r#"[{s},"{FINANCE}",{{}},1]"#))),
            "StaleContextError/REVISION_CONFLICT"
        );
        for (work, group, generation) in &dispatches {
            let args = format!(
                r#"[{s},{{"workId":"{work}","groupId":"{group}","generation":{generation}}}]"#
            );
            let context = ok(agent.prepare(&args, &scheduler));
            assert_eq!(
                context.get("groupId").and_then(Value::as_str),
                Some(group.as_str())
            );
            let other = if group == FINANCE {
                "l-token"
            } else {
                "f-token"
            };
            let text =
                String::from_utf8(missionweaveprotocol::json::canonical_bytes(&context).unwrap())
                    .unwrap();
            assert!(!text.contains(other), "{text}");
            // The same WorkItem relabelled with the other Group is refused.
            let other_group = if group == FINANCE { LEGAL } else { FINANCE };
            let forged = format!(
                r#"[{s},{{"workId":"{work}","groupId":"{other_group}","generation":{generation}}}]"#
            );
            assert_eq!(
                class_of(agent.prepare(&forged, &scheduler)),
                "AgentError/INVALID_STATE_TRANSITION"
            );
        }
        let closed = format!("[{}]", session_json(1));
        ok(agent.close_session(&closed));
        let (work, group, generation) = &dispatches[0];
        let args =
            format!(r#"[{s},{{"workId":"{work}","groupId":"{group}","generation":{generation}}}]"#);
        assert_eq!(
            class_of(agent.prepare(&args, &scheduler)),
            "ClosedSessionError/AUTH_REQUIRED"
        );
    }
}
