//! [`AgentRuntime`]: one Agent, one Scheduler, at most one active session.

use std::collections::BTreeMap;

use missionweaveprotocol::json::{Object, Value};

use super::context::{ExecutionContext, SessionDescriptor};
use super::error::AgentError;
use missionweaveprotocol_kernel::resources::MAX_SAFE_INTEGER;
use missionweaveprotocol_kernel::scheduler::{Dispatch, Scheduler, WorkState};

/// One installed Group-scoped value set (context or credentials) and its revision.
#[derive(Clone, Debug)]
struct Scoped {
    revision: u64,
    values: Object,
}

/// The active session's state: its descriptor and its Group-scoped installs. Nothing here
/// outlives the session (a replacement session starts empty, §11.3).
#[derive(Clone, Debug)]
struct Active {
    descriptor: SessionDescriptor,
    contexts: BTreeMap<String, Scoped>,
    credentials: BTreeMap<String, Scoped>,
}

/// The session half of an Agent runtime, without the Scheduler: the active session, its
/// Group-scoped installs and the highest Session Epoch used. [`AgentRuntime`] pairs it with
/// the Scheduler it owns; a host that keeps its Scheduler elsewhere (a binding) pairs it with a
/// borrowed one through [`prepare`](Self::prepare).
#[derive(Clone, Debug)]
pub struct AgentSessions {
    agent_id: String,
    active: Option<Active>,
    /// The highest Session Epoch ever started (0: none).
    last_epoch: u64,
}

impl AgentSessions {
    /// No session yet, for `agent_id`.
    pub fn new(agent_id: &str) -> Result<Self, AgentError> {
        if agent_id.trim().is_empty() {
            return Err(AgentError::InvalidArgument("agent_id"));
        }
        Ok(Self {
            agent_id: agent_id.to_owned(),
            active: None,
            last_epoch: 0,
        })
    }

    /// The Agent.
    pub fn agent_id(&self) -> &str {
        &self.agent_id
    }

    /// The active session, if any.
    pub fn active_session(&self) -> Option<&SessionDescriptor> {
        self.active.as_ref().map(|a| &a.descriptor)
    }

    /// The highest Session Epoch started so far (0: none).
    pub fn last_session_epoch(&self) -> u64 {
        self.last_epoch
    }

    /// Starts session `session_epoch` (§6.3): only when none is active, and only with an epoch
    /// above every earlier one. `session_id` defaults to `"<agent_id>#session-<epoch>"`.
    pub fn start_session(
        &mut self,
        session_epoch: u64,
        session_id: Option<&str>,
    ) -> Result<SessionDescriptor, AgentError> {
        if session_epoch == 0 || session_epoch > MAX_SAFE_INTEGER {
            return Err(AgentError::InvalidArgument("session_epoch"));
        }
        if let Some(active) = &self.active {
            return Err(AgentError::ActiveSession {
                active_epoch: active.descriptor.session_epoch,
            });
        }
        if session_epoch <= self.last_epoch {
            return Err(AgentError::StaleSessionEpoch {
                offered: session_epoch,
                last: self.last_epoch,
            });
        }
        let session_id = match session_id {
            Some(id) if id.trim().is_empty() => {
                return Err(AgentError::InvalidArgument("session_id"));
            }
            Some(id) => id.to_owned(),
            None => format!("{}#session-{session_epoch}", self.agent_id),
        };
        let descriptor = SessionDescriptor {
            agent_id: self.agent_id.clone(),
            session_id,
            session_epoch,
        };
        self.last_epoch = session_epoch;
        self.active = Some(Active {
            descriptor: descriptor.clone(),
            contexts: BTreeMap::new(),
            credentials: BTreeMap::new(),
        });
        Ok(descriptor)
    }

    /// Closes `session`: `true` if it was the active one, `false` if it was already closed
    /// (closing is idempotent). Its contexts and credentials are dropped.
    pub fn close_session(&mut self, session: &SessionDescriptor) -> bool {
        if self
            .active
            .as_ref()
            .is_some_and(|a| a.descriptor == *session)
        {
            self.active = None;
            true
        } else {
            false
        }
    }

    fn active(&self, session: &SessionDescriptor) -> Result<&Active, AgentError> {
        match &self.active {
            Some(active) if active.descriptor == *session => Ok(active),
            _ => Err(AgentError::ClosedSession {
                session_id: session.session_id.clone(),
            }),
        }
    }

    fn active_mut(&mut self, session: &SessionDescriptor) -> Result<&mut Active, AgentError> {
        match &mut self.active {
            Some(active) if active.descriptor == *session => Ok(active),
            _ => Err(AgentError::ClosedSession {
                session_id: session.session_id.clone(),
            }),
        }
    }

    /// Installs Group `group_id`'s context values at `revision` for `session`.
    pub fn install_group_context(
        &mut self,
        session: &SessionDescriptor,
        group_id: &str,
        values: &Value,
        revision: u64,
    ) -> Result<(), AgentError> {
        let active = self.active_mut(session)?;
        install(&mut active.contexts, group_id, values, revision, "values")
    }

    /// Installs Group `group_id`'s credentials at `revision` for `session` (§12: a credential
    /// is scoped to its Group and never offered to another Group's work).
    pub fn install_group_credentials(
        &mut self,
        session: &SessionDescriptor,
        group_id: &str,
        credentials: &Value,
        revision: u64,
    ) -> Result<(), AgentError> {
        let active = self.active_mut(session)?;
        install(
            &mut active.credentials,
            group_id,
            credentials,
            revision,
            "credentials",
        )
    }

    /// The execution context of `dispatch` under `session`: only the context and credentials
    /// of the Group `scheduler` admitted the WorkItem under. The dispatch must be the
    /// Scheduler's current run of that item (running, same generation, same Group).
    pub fn prepare(
        &self,
        session: &SessionDescriptor,
        scheduler: &Scheduler,
        dispatch: &Dispatch,
    ) -> Result<ExecutionContext, AgentError> {
        let active = self.active(session)?;
        let work_id: &str = &dispatch.work_id;
        let not_dispatched = || AgentError::NotDispatched {
            work_id: work_id.to_owned(),
        };
        // The Group comes from the Scheduler's record, never from the caller (isolation).
        let (group_id, generation) = scheduler.run_of(work_id).ok_or_else(not_dispatched)?;
        let running = matches!(
            scheduler.state(work_id),
            Some(WorkState::Running | WorkState::Preempting)
        );
        if !running || generation != dispatch.generation || group_id != &*dispatch.group_id {
            return Err(not_dispatched());
        }
        let context = active.contexts.get(group_id);
        let credentials = active.credentials.get(group_id);
        Ok(ExecutionContext {
            agent_id: self.agent_id.clone(),
            session_id: active.descriptor.session_id.clone(),
            session_epoch: active.descriptor.session_epoch,
            work_id: work_id.to_owned(),
            group_id: group_id.to_owned(),
            context_revision: context.map(|c| c.revision),
            values: Value::Object(context.map(|c| c.values.clone()).unwrap_or_default()),
            credential_revision: credentials.map(|c| c.revision),
            credentials: Value::Object(credentials.map(|c| c.values.clone()).unwrap_or_default()),
        })
    }
}

/// One Agent runtime (reference `AgentRuntime` + `AgentRuntimeSession`): the Scheduler, the
/// active session and its Group-isolated contexts. Session operations take the session's
/// [`SessionDescriptor`] and fail with [`AgentError::ClosedSession`] unless it names the
/// active session, so a handle kept past `close_session` or a replacement can do nothing.
#[derive(Clone, Debug)]
pub struct AgentRuntime {
    sessions: AgentSessions,
    scheduler: Scheduler,
}

impl AgentRuntime {
    /// A runtime for `agent_id` around `scheduler`.
    pub fn new(agent_id: &str, scheduler: Scheduler) -> Result<Self, AgentError> {
        Ok(Self {
            sessions: AgentSessions::new(agent_id)?,
            scheduler,
        })
    }

    /// The Agent.
    pub fn agent_id(&self) -> &str {
        self.sessions.agent_id()
    }

    /// The Scheduler.
    pub fn scheduler(&self) -> &Scheduler {
        &self.scheduler
    }

    /// The Scheduler, to admit, schedule and apply transitions.
    pub fn scheduler_mut(&mut self) -> &mut Scheduler {
        &mut self.scheduler
    }

    /// The session state.
    pub fn sessions(&self) -> &AgentSessions {
        &self.sessions
    }

    /// The active session, if any.
    pub fn active_session(&self) -> Option<&SessionDescriptor> {
        self.sessions.active_session()
    }

    /// The highest Session Epoch started so far (0: none).
    pub fn last_session_epoch(&self) -> u64 {
        self.sessions.last_session_epoch()
    }

    /// See [`AgentSessions::start_session`].
    pub fn start_session(
        &mut self,
        session_epoch: u64,
        session_id: Option<&str>,
    ) -> Result<SessionDescriptor, AgentError> {
        self.sessions.start_session(session_epoch, session_id)
    }

    /// See [`AgentSessions::close_session`].
    pub fn close_session(&mut self, session: &SessionDescriptor) -> bool {
        self.sessions.close_session(session)
    }

    /// See [`AgentSessions::install_group_context`].
    pub fn install_group_context(
        &mut self,
        session: &SessionDescriptor,
        group_id: &str,
        values: &Value,
        revision: u64,
    ) -> Result<(), AgentError> {
        self.sessions
            .install_group_context(session, group_id, values, revision)
    }

    /// See [`AgentSessions::install_group_credentials`].
    pub fn install_group_credentials(
        &mut self,
        session: &SessionDescriptor,
        group_id: &str,
        credentials: &Value,
        revision: u64,
    ) -> Result<(), AgentError> {
        self.sessions
            .install_group_credentials(session, group_id, credentials, revision)
    }

    /// The execution context of `dispatch` under `session`, against this runtime's Scheduler
    /// (see [`AgentSessions::prepare`]).
    pub fn prepare(
        &self,
        session: &SessionDescriptor,
        dispatch: &Dispatch,
    ) -> Result<ExecutionContext, AgentError> {
        self.sessions.prepare(session, &self.scheduler, dispatch)
    }
}

fn install(
    slots: &mut BTreeMap<String, Scoped>,
    group_id: &str,
    values: &Value,
    revision: u64,
    what: &'static str,
) -> Result<(), AgentError> {
    if group_id.trim().is_empty() {
        return Err(AgentError::InvalidArgument("group_id"));
    }
    if revision > MAX_SAFE_INTEGER {
        return Err(AgentError::InvalidArgument("revision"));
    }
    let Some(object) = values.as_object() else {
        return Err(AgentError::InvalidArgument(what));
    };
    if let Some(current) = slots.get(group_id)
        && revision <= current.revision
    {
        return Err(AgentError::StaleContext {
            group_id: group_id.to_owned(),
            offered: revision,
            current: current.revision,
        });
    }
    slots.insert(
        group_id.to_owned(),
        Scoped {
            revision,
            values: object.clone(),
        },
    );
    Ok(())
}
