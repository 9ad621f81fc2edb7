//! Execution Approvals (§12, §10.2 row 6, CONTEXT "Execution Approval"): a time-bounded signed
//! human decision permitting specified operations, resources and budget for one WorkItem
//! Ownership Epoch, before work starts and before a capability token is issued.
//!
//! | module | what |
//! | --- | --- |
//! | [`record`] | the stored approval (kind [`EXECUTION_APPROVAL_KIND`], ID = Approval ID) and its per-WorkItem index |
//! | `grant` | the decision of `approval.grant_execution` → `approval.execution.granted` |
//! | `gate` | the `work.start` gate (§10.2 row 7 "plus execution approval when required") |
//!
//! The signed Command is the signed human decision: ingress verified its signature (§6.4), and
//! the Event carries its `commandHash` (§16), so the approval is bound to those exact bytes. A
//! forged approval never reaches the engine (`AUTH_INVALID_SIGNATURE` at ingress); one signed by
//! an Agent or a service, or by a human who is not the accountable MissionOwner, is refused
//! `AUTH_FORBIDDEN`.

pub(crate) mod gate;
pub(crate) mod grant;
pub mod record;

pub use record::{EXECUTION_APPROVAL_KIND, ExecutionApproval, WORK_ITEM_APPROVAL_KIND};

/// The Command kind.
pub const GRANT_EXECUTION: &str = "approval.grant_execution";
/// The Event kind it emits.
pub const EXECUTION_GRANTED: &str = "approval.execution.granted";

/// Whether the engine decides `kind` here.
pub fn handles(kind: &str) -> bool {
    kind == GRANT_EXECUTION
}
