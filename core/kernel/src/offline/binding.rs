//! [`OfflineProgressBinding`]: the data of the critical offline extension (§11.5).

use missionweaveprotocol::json::{Object, Value};
use missionweaveprotocol::schema_formats::Timestamp;

use super::error::OfflineError;
use super::{OFFLINE_EXECUTION_EXTENSION, OFFLINE_EXECUTION_EXTENSION_VERSION};
use crate::resources::{Dimension, MAX_SAFE_INTEGER, Resources};
use crate::snapshot_json::{Reader, num_u, resources_from_value, resources_to_value};
use crate::unix_millis::UnixMillis;

/// What one buffered Command records about the offline window it was produced in (§11.5):
/// Agent, Group and WorkItem; the original Session Epoch, Ownership Epoch and historical
/// Execution Lease ID; disconnect time, buffer time, grace deadline and historical lease
/// expiry; the six-dimensional usage delta. Wire form: camelCase members, instants as §2
/// timestamps (reference `OfflineProgressBinding`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OfflineProgressBinding {
    /// The Agent.
    pub agent_id: String,
    /// The Group.
    pub group_id: String,
    /// The WorkItem.
    pub work_item_id: String,
    /// The Session Epoch the work ran under before the disconnect.
    pub session_epoch: u64,
    /// The Ownership Epoch.
    pub ownership_epoch: u64,
    /// The historical Execution Lease.
    pub execution_lease_id: String,
    /// When the Group service became unreachable.
    pub disconnected_at: UnixMillis,
    /// When this Command was buffered.
    pub buffered_at: UnixMillis,
    /// The end of the offline window.
    pub grace_deadline: UnixMillis,
    /// The historical lease's expiry as the Worker knew it.
    pub execution_lease_expires_at: UnixMillis,
    /// The usage this Command's offline computation consumed.
    pub resource_usage_delta: Resources,
}

const MEMBERS: [&str; 11] = [
    "agentId",
    "groupId",
    "workItemId",
    "sessionEpoch",
    "ownershipEpoch",
    "executionLeaseId",
    "disconnectedAt",
    "bufferedAt",
    "graceDeadline",
    "executionLeaseExpiresAt",
    "resourceUsageDelta",
];

fn instant(at: UnixMillis) -> Result<Value, OfflineError> {
    at.to_rfc3339()
        .map(Value::string)
        .ok_or(OfflineError::InvalidArgument("instant"))
}

fn parse_instant(value: &Value, name: &str) -> Result<UnixMillis, OfflineError> {
    let text = value
        .as_str()
        .ok_or_else(|| OfflineError::binding(format!("{name} must be a timestamp string")))?;
    let ts = Timestamp::parse(text)
        .map_err(|e| OfflineError::binding(format!("{name} is not a timestamp: {e}")))?;
    Ok(UnixMillis(ts.instant().unix_millis()))
}

impl OfflineProgressBinding {
    /// Checks the binding on its own: non-empty IDs, positive epochs, the ordered window
    /// `disconnectedAt ≤ bufferedAt ≤ graceDeadline ≤ executionLeaseExpiresAt`, and no
    /// external actions in the delta (§11.5).
    pub fn validate(&self) -> Result<(), OfflineError> {
        for (name, id) in [
            ("agentId", &self.agent_id),
            ("groupId", &self.group_id),
            ("workItemId", &self.work_item_id),
            ("executionLeaseId", &self.execution_lease_id),
        ] {
            if id.trim().is_empty() {
                return Err(OfflineError::binding(format!("{name} is empty")));
            }
        }
        for (name, epoch) in [
            ("sessionEpoch", self.session_epoch),
            ("ownershipEpoch", self.ownership_epoch),
        ] {
            if epoch == 0 || epoch > MAX_SAFE_INTEGER {
                return Err(OfflineError::binding(format!(
                    "{name} must be a positive safe integer"
                )));
            }
        }
        if !(self.disconnected_at <= self.buffered_at
            && self.buffered_at <= self.grace_deadline
            && self.grace_deadline <= self.execution_lease_expires_at)
        {
            return Err(OfflineError::binding(
                "the window is not ordered: disconnectedAt ≤ bufferedAt ≤ graceDeadline ≤ executionLeaseExpiresAt",
            ));
        }
        if self
            .resource_usage_delta
            .get(Dimension::ExternalSideEffects)
            != 0
        {
            return Err(OfflineError::ExternalEffect {
                detail: "externalActions".to_owned(),
            });
        }
        Ok(())
    }

    /// The wire form (the extension's `data`).
    pub fn to_value(&self) -> Result<Value, OfflineError> {
        let mut o = Object::new();
        o.insert("agentId", Value::string(&self.agent_id));
        o.insert("groupId", Value::string(&self.group_id));
        o.insert("workItemId", Value::string(&self.work_item_id));
        o.insert("sessionEpoch", num_u(self.session_epoch));
        o.insert("ownershipEpoch", num_u(self.ownership_epoch));
        o.insert("executionLeaseId", Value::string(&self.execution_lease_id));
        o.insert("disconnectedAt", instant(self.disconnected_at)?);
        o.insert("bufferedAt", instant(self.buffered_at)?);
        o.insert("graceDeadline", instant(self.grace_deadline)?);
        o.insert(
            "executionLeaseExpiresAt",
            instant(self.execution_lease_expires_at)?,
        );
        o.insert(
            "resourceUsageDelta",
            resources_to_value(&self.resource_usage_delta),
        );
        Ok(Value::Object(o))
    }

    /// Reads and [validates](Self::validate) the wire form strictly (all eleven members, no
    /// others).
    pub fn from_value(value: &Value) -> Result<Self, OfflineError> {
        let object = value
            .as_object()
            .ok_or_else(|| OfflineError::binding("the binding must be an object"))?;
        for (name, _) in object.iter() {
            if !MEMBERS.iter().any(|m| Some(*m) == name.as_str()) {
                return Err(OfflineError::binding(format!("unknown member {name:?}")));
            }
        }
        let fmt = |e: crate::snapshot_json::SnapshotFormatError| {
            OfflineError::binding(format!("{}: {}", e.path, e.message))
        };
        let mut r = Reader::new(value, "").map_err(fmt)?;
        let binding = Self {
            agent_id: r.string("agentId").map_err(fmt)?,
            group_id: r.string("groupId").map_err(fmt)?,
            work_item_id: r.string("workItemId").map_err(fmt)?,
            session_epoch: r.uint("sessionEpoch", MAX_SAFE_INTEGER).map_err(fmt)?,
            ownership_epoch: r.uint("ownershipEpoch", MAX_SAFE_INTEGER).map_err(fmt)?,
            execution_lease_id: r.string("executionLeaseId").map_err(fmt)?,
            disconnected_at: parse_instant(
                r.req("disconnectedAt").map_err(fmt)?,
                "disconnectedAt",
            )?,
            buffered_at: parse_instant(r.req("bufferedAt").map_err(fmt)?, "bufferedAt")?,
            grace_deadline: parse_instant(r.req("graceDeadline").map_err(fmt)?, "graceDeadline")?,
            execution_lease_expires_at: parse_instant(
                r.req("executionLeaseExpiresAt").map_err(fmt)?,
                "executionLeaseExpiresAt",
            )?,
            resource_usage_delta: resources_from_value(
                r.req("resourceUsageDelta").map_err(fmt)?,
                "/resourceUsageDelta",
            )
            .map_err(fmt)?,
        };
        r.finish().map_err(fmt)?;
        binding.validate()?;
        Ok(binding)
    }
}

/// The offline binding a wire Command carries: `Ok(None)` without the extension; an error if
/// the extension is present but not `critical: true`, of another version, or its data is not
/// a valid [`OfflineProgressBinding`].
pub fn offline_binding_of(command: &Value) -> Result<Option<OfflineProgressBinding>, OfflineError> {
    let Some(envelope) = command
        .get("extensions")
        .and_then(|e| e.get(OFFLINE_EXECUTION_EXTENSION))
    else {
        return Ok(None);
    };
    if envelope.get("critical").and_then(Value::as_bool) != Some(true) {
        return Err(OfflineError::binding(
            "the extension must be critical (§11.5)",
        ));
    }
    if envelope.get("version").and_then(Value::as_str) != Some(OFFLINE_EXECUTION_EXTENSION_VERSION)
    {
        return Err(OfflineError::binding(format!(
            "the extension version must be {OFFLINE_EXECUTION_EXTENSION_VERSION}"
        )));
    }
    let data = envelope
        .get("data")
        .ok_or_else(|| OfflineError::binding("the extension has no data"))?;
    OfflineProgressBinding::from_value(data).map(Some)
}
