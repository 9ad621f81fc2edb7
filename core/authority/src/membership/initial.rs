//! The Memberships `mission.create` opens in the same transaction (§8): the human MissionOwner
//! (`mission_owner`) and the first Coordinator (`coordinator`), both `active`, epoch 1, with
//! complete visibility (`visibilityStartSequence` 0, §8 [core][wire]).

use missionweaveprotocol::json::{Object, Value};
use missionweaveprotocol::{Principal, PrincipalType};

use super::aggregate::{FIRST_MEMBERSHIP_EPOCH, Membership, MembershipState, membership_id, num};
use crate::engine::{Decision, EngineError};
use crate::mission::rules::rfc3339;
use crate::unix_millis::UnixMillis;

/// The scope every initial Membership holds (the spec names no scope vocabulary; `scopes`
/// needs at least one entry).
pub const INITIAL_SCOPE: &str = "group";

/// Adds the owner's and the Coordinator's new Memberships to `decision`.
pub(crate) fn with_initial(
    decision: Decision,
    mission_id: &str,
    group_id: &str,
    owner: &Principal,
    coordinator_agent: &str,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let coordinator = Principal::new(PrincipalType::Agent, coordinator_agent);
    let mut decision = decision;
    for (member, role) in [(owner, "mission_owner"), (&coordinator, "coordinator")] {
        let m = initial(mission_id, group_id, member, role, now)?;
        decision = decision.put(
            super::aggregate::membership_key(group_id, member),
            0,
            m.to_blob()?,
        );
    }
    Ok(decision)
}

fn initial(
    mission_id: &str,
    group_id: &str,
    member: &Principal,
    role: &str,
    now: UnixMillis,
) -> Result<Membership, EngineError> {
    let at = rfc3339(now);
    let mut doc = Object::new();
    doc.insert(
        "membershipId",
        Value::string(membership_id(group_id, member)),
    );
    doc.insert("missionId", Value::string(mission_id));
    doc.insert("groupId", Value::string(group_id));
    doc.insert("member", member.to_value());
    doc.insert("role", Value::string(role));
    doc.insert("state", Value::string(MembershipState::Active.as_str()));
    doc.insert("membershipEpoch", num(FIRST_MEMBERSHIP_EPOCH));
    doc.insert("scopes", Value::Array(vec![Value::string(INITIAL_SCOPE)]));
    doc.insert("visibilityStartSequence", num(0));
    doc.insert("grantedAt", Value::string(&at));
    doc.insert("activatedAt", Value::string(&at));
    Membership::from_document(doc, 1)
}
