//! `policy.grant_cooperation_override` (§20, digest 2.13 row 1): the MissionOwner or an
//! authorized Organization policy actor (a `service`; which services are authorized is the
//! ingress authorizer's `SERVICE_KINDS` rule) issues a one-shot Grant binding the Mission,
//! Group, policy name, beneficiary, target Command kind and Action ID, reason, approver, grant
//! time and expiry.
//!
//! Payload `{grantId, policyName, beneficiary {type, id}, targetCommandKind, targetActionId,
//! reason, expiresAt}`. Refusals: `AUTH_FORBIDDEN` (`not_owner_or_policy`), `INVALID_COMMAND`
//! (`unknown_policy`, `expired_on_issue`, missing or invalid members), `INVALID_STATE_TRANSITION`
//! (the Grant ID exists), `REVISION_CONFLICT` (`expectedRevision` ≠ the Grant's revision).

use missionweaveprotocol::json::{Object, Value};
use missionweaveprotocol::schema_formats::Timestamp;
use missionweaveprotocol::{Principal, PrincipalType};

use super::stored::StoredOverride;
use super::{COOPERATION_OVERRIDE_GRANTED, POLICY_NAMES};
use crate::cooperation_override::stored::OVERRIDE_KIND;
use crate::decision::Decision;
use crate::error::EngineError;
use crate::events::EventDraft;
use crate::ingress::VerifiedCommand;
use crate::input::rfc3339;
use crate::input::{member, text};
use crate::mission::aggregate::{GROUP_KIND, MISSION_KIND};
use crate::mission::rules::{existing, require_state};
use crate::store::{AggregateKey, Store};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

pub(super) fn grant(
    store: &dyn Store,
    command: &VerifiedCommand,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let read = crate::mission::read::read(store, command)?;
    let (group_revision, mission) = existing(&read)?;
    require_state(command, &mission, |s| !s.is_terminal())?;
    let actor = command.actor();
    if actor.kind != PrincipalType::Service && actor != mission.owner() {
        return Err(EngineError::forbidden(
            "not_owner_or_policy",
            "a Cooperation Override Grant is issued by the MissionOwner or Organization policy (§20)",
        ));
    }
    let payload = command.payload();
    let grant_id = text(payload, "grantId")?;
    let key = StoredOverride::key(grant_id);
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
            aggregate: OVERRIDE_KIND,
            id: grant_id.to_owned(),
            state: "issued".to_owned(),
            command: command.kind().to_owned(),
        });
    }
    let policy = text(payload, "policyName")?;
    if !POLICY_NAMES.contains(&policy) {
        return Err(EngineError::invalid(
            "unknown_policy",
            format!("policyName {policy} names no §20 cooperation limit"),
        ));
    }
    let beneficiary = Principal::from_value(member(payload, "beneficiary")?).ok_or_else(|| {
        EngineError::invalid("invalid_member", "beneficiary is a {type, id} Principal")
    })?;
    let expires_text = text(payload, "expiresAt")?;
    let expires_at = Timestamp::parse(expires_text)
        .map_err(|e| EngineError::invalid("invalid_member", format!("expiresAt: {e}")))?;
    if expires_at.instant().unix_millis() <= now.0 {
        return Err(EngineError::invalid(
            "expired_on_issue",
            "expiresAt must lie after the grant time",
        ));
    }
    let mut grant = Object::new();
    grant.insert("grantId", Value::string(grant_id));
    grant.insert("missionId", Value::string(mission.mission_id()));
    grant.insert("groupId", Value::string(mission.group_id()));
    grant.insert("policyName", Value::string(policy));
    grant.insert("beneficiary", beneficiary.to_value());
    for name in ["targetCommandKind", "targetActionId", "reason"] {
        grant.insert(name, Value::string(text(payload, name)?));
    }
    grant.insert("approver", actor.to_value());
    grant.insert("grantedAt", Value::string(rfc3339(now)));
    grant.insert("expiresAt", Value::string(expires_text));
    let stored = StoredOverride {
        revision: 1,
        grant: Value::Object(grant.clone()),
        consumed: None,
    };
    let mut event = Object::new();
    event.insert("missionId", Value::string(mission.mission_id()));
    event.insert("grant", Value::Object(grant));
    Ok(Decision::default()
        .check(
            AggregateKey::new(GROUP_KIND, mission.group_id()),
            group_revision,
        )
        .check(
            AggregateKey::new(MISSION_KIND, mission.mission_id()),
            mission.revision(),
        )
        .put(key, 0, stored.to_blob()?)
        .event(
            EventDraft::for_command(command, COOPERATION_OVERRIDE_GRANTED, event),
            mission.group_id(),
            stored.revision,
        ))
}
