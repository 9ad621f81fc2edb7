//! Rows `none --mission.create--> active` and `none --mission.create_follow_up--> active`
//! (§7.1, digest 2.1), with the Group they allocate (§4.1, digest 2.8) and the first
//! Coordinator lease (digest 2.4: "`mission.create` with a Coordinator lease").
//!
//! Payload (docs/engine.md): `missionId`, `objective`, `definitionOfDone`, `budget`,
//! `deadline`, `approvalPolicy`, `coordinator {agentId, agentCardVersion, leaseId}`,
//! `mainConversationId`; optional `groupId` (must equal the envelope's), `pinnedProfiles`,
//! `coordinatorLeaseSeconds`; a follow-up also `followUpToMissionId`.
//!
//! The same transaction opens the MissionOwner's and the Coordinator's Memberships
//! ([`crate::membership`], §8).

use missionweaveprotocol::json::{Object, Value, canonical_bytes};
use missionweaveprotocol::schema::SchemaCatalog;

use super::aggregate::{
    CoordinatorLease, GROUP_KIND, MISSION_DEFINITION_KIND, MISSION_KIND, Mission, split_definition,
};
use super::read::MissionRead;
use super::rules::{event_payload, lease_seconds, require_owner, require_state};
use crate::budget::account::BudgetAccount;
use crate::decision::Decision;
use crate::error::EngineError;
use crate::events::EventDraft;
use crate::ingress::VerifiedCommand;
use crate::input::{member, opt_text, text, u64_member};
use crate::input::{num, rfc3339};
use crate::mission::state::MissionState;
use crate::store::{AggregateKey, Blob};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The first Coordinator Epoch of a Mission (`positiveInteger`).
const FIRST_COORDINATOR_EPOCH: u64 = 1;

/// `mission.create` (`follow_up: false`, Event `mission.created`) and
/// `mission.create_follow_up` (`follow_up: true`, Event `mission.follow_up.created`).
pub(crate) fn decide(
    read: &MissionRead,
    command: &VerifiedCommand,
    now: UnixMillis,
    follow_up: bool,
) -> Result<Decision, EngineError> {
    let p = command.payload();
    let mission_id = text(p, "missionId")?;
    if let Some(group) = opt_text(p, "groupId")?
        && group != read.group_id
    {
        return Err(EngineError::invalid(
            "group_mismatch",
            format!(
                "payload groupId {group} differs from the envelope's {}",
                read.group_id
            ),
        ));
    }
    if p.get("parent").is_some() {
        // A child Mission is `mission.create_child` (part 2), never a root creation. The engine
        // refuses `parent` before this as an undefined member (`input::members`, §21).
        return Err(EngineError::invalid(
            "parent_not_allowed",
            "a root or follow-up Mission has no parent; use mission.create_child",
        ));
    }
    // §15.3: the aggregate being created is at revision 0 (absent) unless the ID is taken.
    if let Some(expected) = command.expected_revision() {
        let current = read.same_id.as_ref().map_or(0, Mission::revision);
        if expected != current {
            return Err(EngineError::RevisionConflict {
                key: AggregateKey::new(MISSION_KIND, mission_id),
                expected,
                current,
            });
        }
    }
    // The `none` column: neither the Mission nor the Group may exist (IDs stay stable, §7.1).
    if let Some(existing) = &read.same_id {
        return Err(EngineError::InvalidStateTransition {
            aggregate: MISSION_KIND,
            id: existing.mission_id().to_owned(),
            state: existing.state().as_str().to_owned(),
            command: command.kind().to_owned(),
        });
    }
    if read.group.is_some() {
        return Err(EngineError::InvalidStateTransition {
            aggregate: GROUP_KIND,
            id: read.group_id.clone(),
            state: "active".to_owned(),
            command: command.kind().to_owned(),
        });
    }
    // A follow-up links to an approved Mission of the same human MissionOwner (§7.1).
    let followed = if follow_up {
        let id = text(p, "followUpToMissionId")?;
        let followed = read.followed.as_ref().ok_or_else(|| {
            EngineError::invalid("unknown_mission", format!("Mission {id} does not exist"))
        })?;
        require_state(command, followed, |s| s == MissionState::Approved)?;
        require_owner(command, followed)?;
        Some(followed)
    } else {
        None
    };

    let link = followed.map(|f| ("followUpToMissionId", Value::string(f.mission_id())));
    let NewMission {
        mission,
        document: doc_value,
        group,
        definition,
        lease,
    } = new_mission(command, mission_id, &read.group_id, link, now)?;

    let mut payload = event_payload(&mission);
    payload.insert("mission", doc_value);
    let group_blob = missionweaveprotocol::json::canonical_bytes(&group)
        .map_err(|e| EngineError::invalid("not_canonical", e.to_string()))?;
    payload.insert("group", group);
    payload.insert(
        "coordinatorLeaseExpiresAt",
        Value::string(rfc3339(lease.expires_at)),
    );
    let kind = if follow_up {
        "mission.follow_up.created"
    } else {
        "mission.created"
    };
    let mut decision = Decision::default()
        .put(
            AggregateKey::new(MISSION_KIND, mission_id),
            0,
            mission.to_blob()?,
        )
        .put(
            AggregateKey::new(MISSION_DEFINITION_KIND, mission_id),
            0,
            definition,
        )
        .put(
            AggregateKey::new(GROUP_KIND, &read.group_id),
            0,
            group_blob.into(),
        );
    // §12: the Mission's budget account opens with it; WorkItems reserve against it.
    let account = BudgetAccount::mission(mission_id, member(p, "budget")?)?;
    decision = decision.put(account.key(), 0, account.to_blob());
    // §8: the MissionOwner's and the first Coordinator's Memberships open with the Group, in
    // the same transaction.
    decision = crate::membership::initial::with_initial(
        decision,
        mission_id,
        &read.group_id,
        command.actor(),
        &mission.coordinator().agent_id,
        now,
    )?;
    if let Some(followed) = followed {
        // The follow-up depends on the followed Mission staying approved and owned.
        decision = decision.check(
            AggregateKey::new(MISSION_KIND, followed.mission_id()),
            followed.revision(),
        );
    }
    Ok(decision.event(
        EventDraft::for_command(command, kind, payload),
        &read.group_id,
        mission.revision(),
    ))
}

/// A new Mission in state `active` (§7.1 `none → active`) with its Group and first Coordinator
/// lease, as `mission.create`, `mission.create_follow_up` and `mission.create_child` build
/// them from the Command's payload: the schema-checked Mission and Group documents.
pub(super) struct NewMission {
    /// The aggregate.
    pub mission: Mission,
    /// Its `mission.schema.json` document.
    pub document: Value,
    /// The Group's `group.schema.json` document.
    pub group: Value,
    /// The immutable definition members, stored once under `MISSION_DEFINITION_KIND`.
    pub definition: Blob,
    /// The first Coordinator lease.
    pub lease: CoordinatorLease,
}

/// Builds [`NewMission`] for `mission_id` in `group_id` from `command`'s payload (`objective`,
/// `definitionOfDone`, `budget`, `deadline`, `approvalPolicy`, `coordinator`,
/// `mainConversationId`, optional `pinnedProfiles` and `coordinatorLeaseSeconds`), the sender
/// as MissionOwner; `link` is the one member tying it to another Mission
/// (`followUpToMissionId` or `parent`).
pub(super) fn new_mission(
    command: &VerifiedCommand,
    mission_id: &str,
    group_id: &str,
    link: Option<(&'static str, Value)>,
    now: UnixMillis,
) -> Result<NewMission, EngineError> {
    let p = command.payload();
    let created_at = rfc3339(now);
    let c = member(p, "coordinator")?;
    let coordinator_lease = lease_seconds(p, "coordinatorLeaseSeconds")?;
    let mut coordinator = Object::new();
    coordinator.insert("agentId", Value::string(text(c, "agentId")?));
    coordinator.insert("agentCardVersion", num(u64_member(c, "agentCardVersion")?));
    coordinator.insert("coordinatorEpoch", num(FIRST_COORDINATOR_EPOCH));
    coordinator.insert("leaseId", Value::string(text(c, "leaseId")?));

    let mut doc = Object::new();
    doc.insert("missionId", Value::string(mission_id));
    doc.insert("groupId", Value::string(group_id));
    doc.insert("revision", num(1));
    for name in ["objective", "definitionOfDone"] {
        doc.insert(name, member(p, name)?.clone());
    }
    doc.insert("missionOwner", command.actor().to_value());
    doc.insert("coordinator", Value::Object(coordinator));
    doc.insert("state", Value::string(MissionState::Active.as_str()));
    for name in ["budget", "deadline", "approvalPolicy"] {
        doc.insert(name, member(p, name)?.clone());
    }
    if let Some((name, value)) = link {
        doc.insert(name, value);
    }
    if let Some(profiles) = p.get("pinnedProfiles") {
        doc.insert("pinnedProfiles", profiles.clone());
    }
    doc.insert("createdAt", Value::string(&created_at));
    let document = Value::Object(doc.clone());
    schema_check("mission", &document)?;

    let mut group = Object::new();
    group.insert("groupId", Value::string(group_id));
    group.insert("missionId", Value::string(mission_id));
    group.insert("state", Value::string("active"));
    group.insert(
        "mainConversationId",
        Value::string(text(p, "mainConversationId")?),
    );
    group.insert("createdAt", Value::string(&created_at));
    let group = Value::Object(group);
    schema_check("group", &group)?;

    let lease = CoordinatorLease {
        issued_at: now,
        expires_at: now.saturating_add_ms(coordinator_lease.saturating_mul(1000)),
        renewal_count: 0,
    };
    let corrupt = |detail: String| EngineError::Corrupt {
        key: AggregateKey::new(MISSION_KIND, mission_id),
        detail,
    };
    let definition = split_definition(&mut doc);
    // Members of a verified Command, which passed the I-JSON checks of stage 5.
    let definition = canonical_bytes(&Value::Object(definition))
        .map_err(|e| corrupt(e.to_string()))?
        .into();
    let mission = Mission::create(doc, lease).map_err(corrupt)?;
    Ok(NewMission {
        mission,
        document,
        group,
        definition,
        lease,
    })
}

/// The Mission document is built from a verified Command's payload: it must conform to
/// `mission.schema.json` (a root Mission needs a human owner and `finalHumanApproval: true`).
pub(super) fn schema_check(schema: &'static str, document: &Value) -> Result<(), EngineError> {
    SchemaCatalog::embedded()
        .validate(schema, document)
        .map_err(|issue| EngineError::SchemaInvalid {
            schema,
            detail: issue.to_string(),
        })
}
