//! `membership.grant_delegation` (§9.1, digest 2.12 row 1): only the current Coordinator
//! issues a Grant, to an Agent holding an active `work_delegate` Membership, over a live
//! target WorkItem of its Mission.
//!
//! Payload `{grantId, granteeAgentId, targetWorkItemId, allowedCapabilities (≥ 1 capabilityRef),
//! budget (currency and all six limits), maxDescendantDepth, expiresAt}`; the engine adds what
//! §9.1 binds from authoritative state: `missionId`, `groupId`, `granteeMembershipEpoch` (the
//! grantee's current epoch), `coordinatorEpoch`, `grantedBy`, `grantedAt` (= now). The Grant is
//! checked against `membership.schema.json` `delegationGrants[]` (`SCHEMA_VALIDATION_FAILED`),
//! then by the pure [`DelegationAuthority`](missionweaveprotocol_kernel::delegation::DelegationAuthority) as its
//! grantee would use it now: a Grant unusable at issuance (ended or changed Membership, closed
//! or missing target, `expiresAt` ≤ now) is refused with the same code its use would get.

use missionweaveprotocol::json::{Number, Object, Value};
use missionweaveprotocol::schema::SchemaCatalog;
use missionweaveprotocol::{Principal, PrincipalType};

use super::stored::StoredGrant;
use super::tree::Tree;
use super::{DELEGATION_GRANTED, refusal};
use crate::decision::Decision;
use crate::error::EngineError;
use crate::events::EventDraft;
use crate::ingress::VerifiedCommand;
use crate::input::rfc3339;
use crate::input::{member, text};
use crate::membership::aggregate::{Membership, MembershipState, membership_key};
use crate::mission::aggregate::{GROUP_KIND, MISSION_KIND};
use crate::mission::rules::{existing, require_coordinator, require_state};
use crate::store::{AggregateKey, Store};
use missionweaveprotocol_kernel::delegation::{DelegationContext, MembershipView};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The `work_delegate` role (§9.1: the only role eligible to use a Grant).
pub(crate) const WORK_DELEGATE: &str = "work_delegate";

pub(super) fn grant(
    store: &dyn Store,
    command: &VerifiedCommand,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let read = crate::mission::read::read(store, command)?;
    let (group_revision, mission) = existing(&read)?;
    require_state(command, &mission, |s| !s.is_terminal())?;
    // §9.1 "Only the current Coordinator MAY issue membership.grant_delegation".
    require_coordinator(command, &mission, now)?;
    let payload = command.payload();
    let grant_id = text(payload, "grantId")?;
    let key = StoredGrant::key(grant_id);
    let current = store.aggregate(&key)?.map_or(0, |s| s.revision);
    if let Some(expected) = command.expected_revision()
        && expected != current
    {
        return Err(EngineError::RevisionConflict {
            key,
            expected,
            current,
        });
    }
    if current != 0 {
        return Err(EngineError::InvalidStateTransition {
            aggregate: super::GRANT_KIND,
            id: grant_id.to_owned(),
            state: "granted".to_owned(),
            command: command.kind().to_owned(),
        });
    }
    let grantee_id = text(payload, "granteeAgentId")?;
    let target = text(payload, "targetWorkItemId")?;
    let grantee = Principal::new(PrincipalType::Agent, grantee_id);
    let Some(membership) = Membership::read(store, mission.group_id(), &grantee)? else {
        return Err(EngineError::MembershipRequired {
            group: mission.group_id().to_owned(),
            member: grantee,
        });
    };
    let mut document = Object::new();
    for name in ["grantId", "granteeAgentId", "targetWorkItemId"] {
        document.insert(name, Value::string(text(payload, name)?));
    }
    for name in [
        "allowedCapabilities",
        "budget",
        "maxDescendantDepth",
        "expiresAt",
    ] {
        document.insert(name, member(payload, name)?.clone());
    }
    document.insert("missionId", Value::string(mission.mission_id()));
    document.insert("groupId", Value::string(mission.group_id()));
    document.insert(
        "granteeMembershipEpoch",
        Value::Number(Number::from_u64(membership.epoch())),
    );
    let coordinator = mission.coordinator();
    document.insert(
        "coordinatorEpoch",
        Value::Number(Number::from_u64(coordinator.coordinator_epoch)),
    );
    let mut granted_by = Object::new();
    granted_by.insert("type", Value::string("agent"));
    granted_by.insert("id", Value::string(&coordinator.agent_id));
    document.insert("grantedBy", Value::Object(granted_by));
    document.insert("grantedAt", Value::string(rfc3339(now)));
    let document = Value::Object(document);
    // `membership.schema.json` holds the Grant's schema (`delegationGrants[]`): validated as a
    // Grant of the grantee's Membership, the document the spec persists it in.
    let mut holder = membership.document().clone();
    holder.insert("delegationGrants", Value::Array(vec![document.clone()]));
    SchemaCatalog::embedded()
        .validate("membership", &Value::Object(holder))
        .map_err(|issue| EngineError::SchemaInvalid {
            schema: "membership",
            detail: issue.to_string(),
        })?;
    let mut stored = StoredGrant::new(document.clone())?;
    let mut decision = Decision::default()
        .check(
            AggregateKey::new(GROUP_KIND, mission.group_id()),
            group_revision,
        )
        .check(
            AggregateKey::new(MISSION_KIND, mission.mission_id()),
            mission.revision(),
        )
        .check(
            membership_key(mission.group_id(), &grantee),
            membership.revision(),
        );
    // The Grant must be usable by its grantee now (§9.1 use-time checks at issuance).
    let (tree, checked) = Tree::walk(store, decision, target, &[])?;
    decision = checked;
    let ctx = DelegationContext {
        actor_agent_id: grantee_id,
        membership: Some(MembershipView {
            group_id: membership.group_id(),
            active: membership.state() == MembershipState::Active,
            work_delegate: membership.role() == WORK_DELEGATE,
            epoch: membership.epoch(),
        }),
        mission_id: mission.mission_id(),
        group_id: mission.group_id(),
        coordinator_epoch: coordinator.coordinator_epoch,
        coordinator_agent_id: &coordinator.agent_id,
        // §20's Organization depth limit is a cooperation control (`engine/controls.rs`).
        organization_max_depth: u32::MAX,
        now,
    };
    stored
        .authority
        .check_use(&ctx, &tree)
        .map_err(|v| refusal(grant_id, v))?;
    let decision = decision.put(key, 0, stored.to_blob()?);
    stored.revision = 1;
    let mut event = Object::new();
    event.insert("missionId", Value::string(mission.mission_id()));
    event.insert("grant", document);
    let mut draft = EventDraft::for_command(command, DELEGATION_GRANTED, event);
    draft.work_item_id = Some(target.to_owned());
    Ok(decision.event(draft, mission.group_id(), stored.revision))
}
