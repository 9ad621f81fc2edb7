//! The Membership aggregate (§8, digest 2.7, `membership.schema.json`): one per (Group,
//! Principal), its pure decisions for `membership.change` and `membership.end`, the initial
//! Memberships of `mission.create`, and Membership Epoch fencing (§8, §15.1).
//!
//! See [`decide`](self) rows in `decide.rs` and `docs/engine.md` § Memberships.

pub(crate) mod aggregate;
mod decide;
mod fencing;
pub(crate) mod initial;
mod read;

pub use aggregate::{
    FIRST_MEMBERSHIP_EPOCH, MEMBERSHIP_KIND, Membership, MembershipState, membership_id,
    membership_key,
};
pub use fencing::{Fence, fence};
pub use initial::INITIAL_SCOPE;
pub use read::{MembershipRead, read};

use crate::decision::Decision;
use crate::error::EngineError;
use crate::ingress::VerifiedCommand;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The Command kinds this module decides.
pub const KINDS: [&str; 2] = ["membership.change", "membership.end"];

/// Whether [`decide`] handles `kind`.
pub fn handles(kind: &str) -> bool {
    KINDS.contains(&kind)
}

/// The decision for a `membership.*` Command: pure, deterministic in its inputs.
pub fn decide(
    read: &MembershipRead,
    command: &VerifiedCommand,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    match command.kind() {
        "membership.change" => decide::change(read, command, now),
        "membership.end" => decide::end(read, command, now),
        other => Err(EngineError::invalid(
            "unsupported_kind",
            format!("{other} is not a Membership Command"),
        )),
    }
}
