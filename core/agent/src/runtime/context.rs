//! What a session and one prepared run see.

use missionweaveprotocol::json::Value;

/// One Agent Session (reference `SessionDescriptor`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionDescriptor {
    /// The Agent.
    pub agent_id: String,
    /// The session's ID.
    pub session_id: String,
    /// Its Session Epoch (§6.3).
    pub session_epoch: u64,
}

/// What one dispatched run may read (reference `ExecutionContext`): its own Group's context
/// and credentials, nothing of any other Group.
#[derive(Clone, Debug, PartialEq)]
pub struct ExecutionContext {
    /// The Agent.
    pub agent_id: String,
    /// The session that prepared it.
    pub session_id: String,
    /// That session's epoch.
    pub session_epoch: u64,
    /// The WorkItem.
    pub work_id: String,
    /// The WorkItem's Group (from the Scheduler's record).
    pub group_id: String,
    /// The installed context revision of that Group, if any.
    pub context_revision: Option<u64>,
    /// That Group's context values (a JSON object; empty if none installed).
    pub values: Value,
    /// The installed credential revision of that Group, if any.
    pub credential_revision: Option<u64>,
    /// That Group's credentials (a JSON object; empty if none installed).
    pub credentials: Value,
}
