//! The Agent side of §11.3–11.4: one Agent runtime, one active Agent Session at a time, and
//! Group-isolated execution contexts (reference `agent.py`).
//!
//! [`AgentRuntime`] owns the Worker's [`Scheduler`](missionweaveprotocol_kernel::scheduler::Scheduler) and at most
//! one active session. Session Epochs strictly increase (§6.3, §4 invariant 4: a fenced session
//! never comes back). Within a session each Group's context values and credentials are installed
//! by revision (an older or equal revision is [`AgentError::StaleContext`]), and
//! [`AgentRuntime::prepare`] hands a dispatched run an [`ExecutionContext`] holding **only** the
//! context and credentials of the Group the Scheduler admitted that WorkItem under (§4 Mission
//! isolation, §12 "least privilege": a credential never crosses a Group boundary). The Group is
//! taken from the Scheduler's own record, never from the caller's `Dispatch`, so a forged
//! `Dispatch` naming another Group is refused.

mod context;
mod error;
mod sessions;

pub use context::{ExecutionContext, SessionDescriptor};
pub use error::AgentError;
pub use sessions::{AgentRuntime, AgentSessions};
