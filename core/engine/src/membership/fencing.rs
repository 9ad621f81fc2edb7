//! Membership Epoch fencing (§8, §15.1): a Group-scoped Agent or human Command carries its
//! current Membership Epoch; a stale or revoked one is refused with `MEMBERSHIP_STALE`.

use super::aggregate::{Membership, MembershipState, membership_key};
use crate::decision::Decision;
use crate::error::EngineError;
use crate::ingress::VerifiedCommand;
use crate::store::Store;

/// The sender's Membership the Command was fenced against, if any: its revision is checked at
/// commit, so a `membership.change` committed meanwhile makes the Command decide again (and
/// then fail as stale).
#[derive(Debug, Clone, PartialEq)]
pub struct Fence {
    group_id: String,
    member: missionweaveprotocol::Principal,
    revision: u64,
}

impl Fence {
    /// Adds the commit-time check of the fenced Membership to `decision`.
    /// A decision that already writes that Membership (a member changing its own) carries the
    /// same revision check in its write.
    pub fn guard(&self, decision: Decision) -> Decision {
        let key = membership_key(&self.group_id, &self.member);
        if decision.writes.iter().any(|w| w.key == key) {
            decision
        } else {
            decision.check(key, self.revision)
        }
    }
}

/// Checks `command`'s `membershipEpoch` against the sender's Membership in its Group.
///
/// * no `membershipEpoch` (services; creation kinds; §15.1) → not fenced;
/// * a Membership in `ended` state, or whose epoch differs → `MEMBERSHIP_STALE`;
/// * no Membership at all → not fenced yet: Worker Memberships are created just in time by
///   offer acceptance (digest 2.7, JIT step 3), which is not built; refusing them with
///   `MEMBERSHIP_REQUIRED` would refuse every Worker (docs/engine.md, "left").
pub fn fence(store: &dyn Store, command: &VerifiedCommand) -> Result<Option<Fence>, EngineError> {
    let (Some(presented), Some(group_id)) = (command.membership_epoch(), command.group_id()) else {
        return Ok(None);
    };
    let Some(current) = Membership::read_shared(store, group_id, command.actor())? else {
        return Ok(None);
    };
    if current.state() == MembershipState::Ended || current.epoch() != presented {
        return Err(EngineError::MembershipStale {
            group: group_id.to_owned(),
            presented,
            current: current.epoch(),
            ended: current.state() == MembershipState::Ended,
        });
    }
    Ok(Some(Fence {
        group_id: group_id.to_owned(),
        member: command.actor().clone(),
        revision: current.revision(),
    }))
}
