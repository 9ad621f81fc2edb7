//! Delegated work authority (§9.1, digest 2.12): `membership.grant_delegation` and the use of a
//! Grant by `work.authorize` / `work.offer`, on the pure [`missionweaveprotocol_kernel::delegation`] module.
//!
//! - [`issue`]: the current Coordinator issues a Grant to an Agent holding an active
//!   `work_delegate` Membership; the Grant is stored as aggregate [`GRANT_KIND`] and announced
//!   by `membership.delegation.granted`.
//! - [`use_grant`]: a `work.authorize` / `work.offer` citing `delegationGrantId` is decided by
//!   the `work` module as usual, then checked by [`DelegationAuthority`] (grantee, Membership
//!   and its epoch, Coordinator Epoch and issuer, validity, target, subtree scope, capabilities,
//!   depth, cumulative ceilings) and charged to the Grant in the same transaction.
//! - [`links`]: `parentWorkItemId` links (the WorkItem document has no parent member, digest §8
//!   item 2), stored as aggregate [`LINK_KIND`]; the Grant's subtree is walked through them.
//!
//! [`DelegationAuthority`]: missionweaveprotocol_kernel::delegation::DelegationAuthority

mod issue;
pub(crate) mod links;
pub(crate) mod stored;
mod tree;
pub(crate) mod use_grant;

pub use links::LINK_KIND;
pub use stored::GRANT_KIND;

use crate::decision::Decision;
use crate::error::EngineError;
use crate::ingress::VerifiedCommand;
use crate::store::Store;
use missionweaveprotocol_kernel::delegation::{DelegationViolation, DelegationViolationKind};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// `membership.grant_delegation`.
pub const GRANT_DELEGATION: &str = "membership.grant_delegation";
/// `membership.delegation.granted`.
pub const DELEGATION_GRANTED: &str = "membership.delegation.granted";

/// Whether this module decides `kind`.
pub fn handles(kind: &str) -> bool {
    kind == GRANT_DELEGATION
}

/// Reads what `membership.grant_delegation` needs and decides.
pub(crate) fn decide(
    store: &dyn Store,
    command: &VerifiedCommand,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    issue::grant(store, command, now)
}

/// The engine refusal of a Grant violation.
pub(crate) fn refusal(grant_id: &str, violation: DelegationViolation) -> EngineError {
    EngineError::Delegation {
        grant_id: grant_id.to_owned(),
        violation,
    }
}

/// A violation the engine finds itself (before the pure checks run).
pub(crate) fn violation(kind: DelegationViolationKind, message: &str) -> DelegationViolation {
    DelegationViolation {
        kind,
        message: message.to_owned(),
        dimension: None,
    }
}
