//! One-shot Cooperation Override Grants (§20, digest 2.13): `policy.grant_cooperation_override`
//! issues one ([`issue`]); a target Command citing it in `cooperationOverrideGrantId` lifts
//! exactly the §20 limit it names, once ([`consume`], applied by `engine/controls.rs`).
//!
//! Stored as aggregate [`OVERRIDE_KIND`], ID = Grant ID, value
//! `{"grant": {grantId, missionId, groupId, policyName, beneficiary, targetCommandKind,
//! targetActionId, reason, approver, grantedAt, expiresAt}, "consumed"?: {actionId, actor,
//! consumedAt}}`. Issuance is the Group Event `policy.cooperation_override.granted`; the
//! consumption is written in the same transaction as the accepted target Event, whose payload
//! names the Grant (`cooperationOverride {grantId, policyName}`): both are in the Group's
//! authoritative log (§20 "Policy Log"), the consumption linked to the accepted Event.

mod consume;
mod issue;
pub(crate) mod stored;

pub(crate) use consume::Cited;
pub use stored::OVERRIDE_KIND;

use crate::decision::Decision;
use crate::error::EngineError;
use crate::ingress::VerifiedCommand;
use crate::store::Store;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// `policy.grant_cooperation_override`.
pub const GRANT_COOPERATION_OVERRIDE: &str = "policy.grant_cooperation_override";
/// `policy.cooperation_override.granted`.
pub const COOPERATION_OVERRIDE_GRANTED: &str = "policy.cooperation_override.granted";

/// The §20 limits a Grant may lift: the reference's `CooperationPolicyName`.
pub const POLICY_NAMES: [&str; 5] = [
    "message_rate",
    "proposal_rate",
    "delegation_depth",
    "queued_work_items",
    "active_work_items",
];

/// Whether this module decides `kind`.
pub fn handles(kind: &str) -> bool {
    kind == GRANT_COOPERATION_OVERRIDE
}

/// Reads what `policy.grant_cooperation_override` needs and decides.
pub(crate) fn decide(
    store: &dyn Store,
    command: &VerifiedCommand,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    issue::grant(store, command, now)
}
