//! The Memberships `mission.create` opens in the same transaction (§8): the human MissionOwner
//! (`mission_owner`) and the first Coordinator (`coordinator`), both `active`, epoch 1, with
//! complete visibility (`visibilityStartSequence` 0, §8 [core][wire]).

use missionweaveprotocol::json::{Object, Value, View};
use missionweaveprotocol::schema::SchemaCatalog;
use missionweaveprotocol::schema_formats::is_protocol_id;
use missionweaveprotocol::{Principal, PrincipalType};

use super::aggregate::{FIRST_MEMBERSHIP_EPOCH, Membership, MembershipState, membership_id, num};
use crate::decision::Decision;
use crate::error::EngineError;
use crate::input::rfc3339;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

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
    // `membership.schema.json` holds for this document by construction, but for its one derived
    // member: `mission.create` schema-checked the Mission (`missionId`, `coordinator.agentId`,
    // `createdAt` = the same `rfc3339(now)`) and the Group (`groupId`) before calling here, and
    // the owner is the verified Command's actor (`command.schema.json`, stage 1); role, state,
    // epoch, scopes and visibility are constants the schema allows. So only `membershipId`
    // (`<groupId>#membership:<type>:<id>`, which may outgrow 512 characters or repeat `#`) is
    // checked here against `common.schema.json#/$defs/id`; debug and test builds still run the
    // whole schema (below), and `tests/engine_membership_rows.rs` refuses a too-long ID.
    let id = membership_id(group_id, member);
    if !is_protocol_id(&id) {
        return Err(EngineError::SchemaInvalid {
            schema: "membership",
            detail: format!("/membershipId: {id:?} is not a common.schema.json id"),
        });
    }
    let mut doc = Object::new();
    doc.insert("membershipId", Value::string(id));
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
    debug_assert!(
        SchemaCatalog::embedded()
            .validate_view("membership", View::Object(doc.view()))
            .is_ok(),
        "an initial Membership conforms to membership.schema.json"
    );
    Ok(Membership::from_valid_document(doc, 1))
}
