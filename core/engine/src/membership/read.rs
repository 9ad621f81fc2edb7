//! What a Membership decision reads: the Group, its Mission, and the target Membership (the
//! payload's `member` in the Command's Group). Every read is named in the decision's write set.

use missionweaveprotocol::Principal;

use super::aggregate::Membership;
use super::decide::payload_member;
use crate::error::EngineError;
use crate::ingress::VerifiedCommand;
use crate::mission::{self, aggregate::Mission};
use crate::store::Store;

/// Everything a Membership decision may look at.
#[derive(Debug, Clone, PartialEq)]
pub struct MembershipRead {
    /// The Command's Group ID.
    pub group_id: String,
    /// The Group's revision (0: absent).
    pub group_revision: u64,
    /// The Group's Mission, if the Group exists.
    pub mission: Option<Mission>,
    /// The payload's `member`.
    pub member: Principal,
    /// Its current Membership in the Group, if any.
    pub target: Option<Membership>,
}

/// Reads what `command` (a `membership.*` kind) needs.
pub fn read(store: &dyn Store, command: &VerifiedCommand) -> Result<MembershipRead, EngineError> {
    let m = mission::read(store, command)?;
    let member = payload_member(command)?;
    let target = Membership::read(store, &m.group_id, &member)?;
    Ok(MembershipRead {
        group_revision: m.group.as_ref().map_or(0, |g| g.revision),
        group_id: m.group_id,
        mission: m.mission,
        member,
        target,
    })
}
