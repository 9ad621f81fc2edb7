//! The signed human control interface (`reference-python.md` §1.6): the MissionOwner's
//! Mission-level operations as **unsigned normative wire Commands** (`command.schema.json`),
//! built from the operation's arguments and the projections the caller queried. Bindings sign
//! the result with the human's key and perform it on the Core; every rule of the interface is
//! here, once.
//!
//! | operation | Command kind | projections read |
//! | --- | --- | --- |
//! | `create` | `mission.create` | the Coordinator's Agent Card (optional) |
//! | `direct` | `message.post` | Mission, Group, the human's Membership |
//! | `request_changes` | `mission.request_changes` | Mission, Membership, Group Events |
//! | `approve` | `mission.approve` | Mission, Membership, Group Events |
//! | `approve_execution` | `approval.grant_execution` | Mission, Membership |
//! | `cancel` | `mission.cancel` | Mission, Membership |
//! | `replace_coordinator` | `mission.assign_coordinator` | Mission, Membership, Agent Card (optional) |
//!
//! Gaps of the reference this fixes (§7 there): Commands are normative documents signed with
//! the §6.4 codec, not `sign_canonical` over a dump with `null` members (gap 2); the Mission
//! Commands carry `expectedRevision` and the engine honours it (gap 17); message content is
//! not trimmed nor cut at 512 characters (gap 18); the Approval binds the submitted revision
//! and Artifact set read from the Group's `mission.submitted_for_approval` Event.

mod approval;
mod error;
mod operations;
mod view;

pub use approval::{Submission, approval_document, latest_submission, verify_signature};
pub use error::ControlError;
pub use operations::build;
pub use view::view;

/// The seven operations, by their reference names.
pub const OPERATIONS: [&str; 7] = [
    "create",
    "direct",
    "request_changes",
    "approve",
    "approve_execution",
    "cancel",
    "replace_coordinator",
];

/// The key ID a new human key gets when none is given: `<human_id>:signing-key` (the
/// reference's `HumanIdentity.generate`). The Registry binds it; nothing else reads its form.
pub fn default_key_id(human_id: &str) -> String {
    format!("{human_id}:signing-key")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_default_key_id_is_the_references() {
        assert_eq!(
            super::default_key_id("urn:missionweaveprotocol:human:alice"),
            "urn:missionweaveprotocol:human:alice:signing-key"
        );
    }
}
