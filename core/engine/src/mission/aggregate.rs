//! The Mission aggregate as stored: the `mission.schema.json` document plus the authority's
//! Coordinator-lease and submission bookkeeping, as canonical JSON bytes under kind `mission`.
//!
//! Stored form: `{"document": <Mission>, "coordinatorLease": {"issuedAtMs", "expiresAtMs",
//! "renewalCount"}, "submission"?: {"missionRevision", "artifactHashes"}}`. The document's
//! `revision` always equals the store revision of the aggregate, so `expectedRevision` (§15.3)
//! compares against the revision clients see in the Mission.
//!
//! The members no transition changes and that can be large — `objective`, `definitionOfDone`,
//! `extensions` ([`DEFINITION_MEMBERS`]) — are kept apart, written once at creation under kind
//! [`MISSION_DEFINITION_KIND`]: a Command's cost must not grow with the immutable parts of its
//! aggregate (a 40,000-criteria Mission would otherwise be re-read and rewritten by every
//! Coordinator renewal). Queries join them back (`mission::read::full_document`).

use missionweaveprotocol::Principal;
use missionweaveprotocol::json::{self, Number, Object, Value, View};

use crate::error::EngineError;
use crate::mission::state::MissionState;
use crate::store::{Aggregate, AggregateKey, Blob};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The store kind of Mission aggregates (ID: the Mission ID).
pub const MISSION_KIND: &str = "mission";
/// The store kind of a Mission's immutable definition (ID: the Mission ID; value: the
/// [`DEFINITION_MEMBERS`] of its document), written once when the Mission is created.
pub const MISSION_DEFINITION_KIND: &str = "mission_definition";
/// The document members no transition changes and that may be large.
pub const DEFINITION_MEMBERS: [&str; 3] = ["objective", "definitionOfDone", "extensions"];

/// Takes the [`DEFINITION_MEMBERS`] out of a full Mission document: what is stored under
/// [`MISSION_DEFINITION_KIND`].
pub(crate) fn split_definition(document: &mut Object) -> Object {
    let mut definition = Object::new();
    for name in DEFINITION_MEMBERS {
        if let Some(value) = document.remove(name) {
            definition.insert(name, value);
        }
    }
    definition
}

/// The store kind of Group aggregates (ID: the Group ID; value: the `group.schema.json`
/// document, whose `missionId` links the Group to its one Mission, §4.1).
pub const GROUP_KIND: &str = "group";

/// The current Coordinator (`mission.schema.json` `coordinator`, §7.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coordinator {
    pub agent_id: String,
    pub agent_card_version: u64,
    /// The one current Coordinator Epoch (§7.2).
    pub coordinator_epoch: u64,
    pub lease_id: String,
}

impl Coordinator {
    fn to_value(&self) -> Value {
        let mut o = Object::new();
        o.insert("agentId", Value::string(&self.agent_id));
        o.insert("agentCardVersion", num(self.agent_card_version));
        o.insert("coordinatorEpoch", num(self.coordinator_epoch));
        o.insert("leaseId", Value::string(&self.lease_id));
        Value::Object(o)
    }
}

/// The current Coordinator lease's timing (digest 2.4: `renewalCount`, expiry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoordinatorLease {
    pub issued_at: UnixMillis,
    pub expires_at: UnixMillis,
    pub renewal_count: u64,
}

/// The submission awaiting the MissionOwner's answer: the exact Mission revision and Artifact
/// set an Approval must bind (§4.10, §7.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submission {
    pub mission_revision: u64,
    pub artifact_hashes: Vec<String>,
}

/// A Mission as the engine reads and writes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Mission {
    document: Object,
    mission_id: String,
    group_id: String,
    revision: u64,
    state: MissionState,
    owner: Principal,
    coordinator: Coordinator,
    /// The Coordinator lease's timing.
    pub lease: CoordinatorLease,
    /// The pending or last submission.
    pub submission: Option<Submission>,
}

fn num(n: u64) -> Value {
    Value::Number(Number::from_u64(n))
}

impl Mission {
    /// A new Mission from its schema document (`revision` 1, `state` active, already
    /// schema-valid) and its first Coordinator lease.
    pub(crate) fn create(document: Object, lease: CoordinatorLease) -> Result<Self, String> {
        Self::from_document(document, lease, None)
    }

    fn from_document(
        document: Object,
        lease: CoordinatorLease,
        submission: Option<Submission>,
    ) -> Result<Self, String> {
        let text = |name: &str| {
            document
                .get(name)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| format!("document member {name} is missing"))
        };
        let c = document
            .get("coordinator")
            .ok_or("document member coordinator is missing")?;
        let c_text = |name: &str| {
            c.get(name)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| format!("coordinator.{name} is missing"))
        };
        let c_int = |name: &str| {
            c.get(name)
                .and_then(Value::as_number)
                .and_then(Number::as_u64)
                .ok_or_else(|| format!("coordinator.{name} is missing"))
        };
        let coordinator = Coordinator {
            agent_id: c_text("agentId")?,
            agent_card_version: c_int("agentCardVersion")?,
            coordinator_epoch: c_int("coordinatorEpoch")?,
            lease_id: c_text("leaseId")?,
        };
        let state = MissionState::parse(&text("state")?).ok_or("unknown state")?;
        let revision = document
            .get("revision")
            .and_then(Value::as_number)
            .and_then(Number::as_u64)
            .ok_or("document member revision is missing")?;
        let owner = document
            .get("missionOwner")
            .and_then(Principal::from_value)
            .ok_or("document member missionOwner is missing")?;
        Ok(Self {
            mission_id: text("missionId")?,
            group_id: text("groupId")?,
            revision,
            state,
            owner,
            coordinator,
            lease,
            submission,
            document,
        })
    }

    /// Reads a stored Mission; its document revision must match the store revision.
    pub fn from_stored(key: &AggregateKey, stored: &Aggregate) -> Result<Self, EngineError> {
        let corrupt = |detail: String| EngineError::Corrupt {
            key: key.clone(),
            detail,
        };
        let value = json::parse_state(&stored.value).map_err(|e| corrupt(e.to_string()))?;
        // The document is taken out of the parsed value, not copied.
        let Value::Object(mut value) = value else {
            return Err(corrupt("no document".into()));
        };
        let document = match value.remove("document") {
            Some(Value::Object(document)) => document,
            _ => return Err(corrupt("no document".into())),
        };
        let lease = value
            .get("coordinatorLease")
            .ok_or_else(|| corrupt("no coordinatorLease".into()))?;
        let lease_int = |name: &str| {
            lease
                .get(name)
                .and_then(Value::as_number)
                .and_then(Number::as_i64)
                .ok_or_else(|| corrupt(format!("coordinatorLease.{name} is missing")))
        };
        let lease = CoordinatorLease {
            issued_at: UnixMillis(lease_int("issuedAtMs")?),
            expires_at: UnixMillis(lease_int("expiresAtMs")?),
            renewal_count: u64::try_from(lease_int("renewalCount")?)
                .map_err(|_| corrupt("negative renewalCount".into()))?,
        };
        let submission = match value.get("submission") {
            None => None,
            Some(s) => Some(Submission {
                mission_revision: s
                    .get("missionRevision")
                    .and_then(Value::as_number)
                    .and_then(Number::as_u64)
                    .ok_or_else(|| corrupt("submission.missionRevision is missing".into()))?,
                artifact_hashes: s
                    .get("artifactHashes")
                    .and_then(Value::as_array)
                    .ok_or_else(|| corrupt("submission.artifactHashes is missing".into()))?
                    .iter()
                    .filter_map(|h| h.as_str().map(str::to_owned))
                    .collect(),
            }),
        };
        let mission = Self::from_document(document, lease, submission).map_err(corrupt)?;
        if mission.revision != stored.revision {
            return Err(corrupt(format!(
                "document revision {} differs from stored revision {}",
                mission.revision, stored.revision
            )));
        }
        Ok(mission)
    }

    /// The canonical JSON bytes to store.
    pub fn to_blob(&self) -> Result<Blob, EngineError> {
        let mut lease = Object::new();
        lease.insert(
            "issuedAtMs",
            Value::Number(Number::from_i64(self.lease.issued_at.0)),
        );
        lease.insert(
            "expiresAtMs",
            Value::Number(Number::from_i64(self.lease.expires_at.0)),
        );
        lease.insert("renewalCount", num(self.lease.renewal_count));
        let submission = self.submission.as_ref().map(|s| {
            let mut so = Object::new();
            so.insert("missionRevision", num(s.mission_revision));
            so.insert(
                "artifactHashes",
                Value::Array(s.artifact_hashes.iter().map(Value::string).collect()),
            );
            Value::Object(so)
        });
        // Every member is a string, a safe integer, or copied from a verified Command (which
        // passed the I-JSON checks of stage 5), so the canonical form exists. The JCS of
        // `{"coordinatorLease", "document", "submission"?}` is written member by member in that
        // (sorted) order, the document through a view: no copy of it.
        let corrupt = |e: json::CanonicalError| EngineError::Corrupt {
            key: AggregateKey::new(MISSION_KIND, &self.mission_id),
            detail: e.to_string(),
        };
        let lease = Value::Object(lease);
        let mut bytes = Vec::with_capacity(1024);
        bytes.extend_from_slice(b"{\"coordinatorLease\":");
        json::write_canonical(&lease, &mut bytes).map_err(corrupt)?;
        bytes.extend_from_slice(b",\"document\":");
        json::write_view(View::Object(self.document.view()), &mut bytes).map_err(corrupt)?;
        if let Some(submission) = &submission {
            bytes.extend_from_slice(b",\"submission\":");
            json::write_canonical(submission, &mut bytes).map_err(corrupt)?;
        }
        bytes.push(b'}');
        #[cfg(debug_assertions)]
        {
            let mut o = Object::new();
            o.insert("document", Value::Object(self.document.clone()));
            o.insert("coordinatorLease", lease);
            if let Some(submission) = submission {
                o.insert("submission", submission);
            }
            debug_assert_eq!(
                json::canonical_bytes(&Value::Object(o)).ok().as_deref(),
                Some(bytes.as_slice()),
                "the member-by-member form is the JCS of the stored Mission"
            );
        }
        Ok(Blob::from(bytes))
    }

    /// The stored part of the `mission.schema.json` document: everything but the
    /// [`DEFINITION_MEMBERS`] of a Mission created since they are kept apart (queries join them
    /// back: `mission::read::full_document`).
    pub fn document(&self) -> Value {
        Value::Object(self.document.clone())
    }

    pub fn mission_id(&self) -> &str {
        &self.mission_id
    }

    pub fn group_id(&self) -> &str {
        &self.group_id
    }

    /// The revision (= the store revision, §15.3).
    pub fn revision(&self) -> u64 {
        self.revision
    }

    pub fn state(&self) -> MissionState {
        self.state
    }

    /// The MissionOwner (human for a root Mission, §7.1).
    pub fn owner(&self) -> &Principal {
        &self.owner
    }

    pub fn coordinator(&self) -> &Coordinator {
        &self.coordinator
    }

    /// The next revision with `state` (the write every transition makes).
    pub(crate) fn transition(&mut self, state: MissionState) {
        self.state = state;
        self.document.insert("state", Value::string(state.as_str()));
        self.bump();
    }

    /// The next revision with another Coordinator (§7.2).
    pub(crate) fn set_coordinator(&mut self, coordinator: Coordinator) {
        self.document.insert("coordinator", coordinator.to_value());
        self.coordinator = coordinator;
    }

    /// Advances the revision by one.
    pub(crate) fn bump(&mut self) {
        self.revision += 1;
        self.document.insert("revision", num(self.revision));
    }
}

impl Coordinator {
    /// The value written as `coordinator`.
    pub fn value(&self) -> Value {
        self.to_value()
    }
}
