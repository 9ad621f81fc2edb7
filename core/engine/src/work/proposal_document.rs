//! The stored Work Proposal (store kind [`super::PROPOSAL_AGGREGATE_KIND`]). No schema exists
//! for it (digest 2.3), so the members mirror the reference's `WorkProposal` in camelCase.

use missionweaveprotocol::json::{Number, Object, Value, canonical_bytes, parse_state};
use missionweaveprotocol::schema_formats::Timestamp;

use super::contract::WorkContract;
use super::error::WorkError;
use super::proposal::{ProposalStatus, WorkProposal};
use super::state::{Actor, ActorType};
use super::transitions::{actor, integer, timestamp};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The store aggregate kind of a Work Proposal.
pub const PROPOSAL_AGGREGATE_KIND: &str = "work_proposal";

impl WorkProposal {
    /// The stored document.
    pub fn to_value(&self) -> Result<Value, WorkError> {
        let mut doc = Object::new();
        doc.insert("proposalId", Value::string(self.proposal_id.as_str()));
        doc.insert("missionId", Value::string(self.mission_id.as_str()));
        doc.insert("groupId", Value::string(self.group_id.as_str()));
        doc.insert("proposedBy", actor(&self.proposed_by));
        doc.insert("contract", self.contract.document().clone());
        doc.insert("status", Value::string(self.status.as_str()));
        if let Some(id) = &self.authorized_work_item_id {
            doc.insert("authorizedWorkItemId", Value::string(id.as_str()));
        }
        doc.insert("revision", integer(self.revision));
        doc.insert("createdAt", timestamp(self.created_at)?);
        doc.insert("updatedAt", timestamp(self.updated_at)?);
        Ok(Value::Object(doc))
    }

    /// RFC 8785 canonical bytes of [`to_value`](Self::to_value).
    pub fn to_canonical_bytes(&self) -> Result<Vec<u8>, WorkError> {
        canonical_bytes(&self.to_value()?).map_err(|_| WorkError::Document("workProposal"))
    }

    /// Reads a stored document back (the contract is re-validated, §10.1).
    pub fn from_value(doc: &Value) -> Result<Self, WorkError> {
        let text = |v: &Value, name: &'static str| -> Result<String, WorkError> {
            v.get(name)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or(WorkError::Document(name))
        };
        let time = |name: &'static str| -> Result<UnixMillis, WorkError> {
            let stamp =
                Timestamp::parse(&text(doc, name)?).map_err(|_| WorkError::Document(name))?;
            if stamp.instant().fraction_digits().len() > 3 {
                return Err(WorkError::Document(name));
            }
            Ok(UnixMillis(stamp.instant().unix_millis()))
        };
        let by = doc
            .get("proposedBy")
            .ok_or(WorkError::Document("proposedBy"))?;
        Ok(Self {
            proposal_id: text(doc, "proposalId")?,
            mission_id: text(doc, "missionId")?,
            group_id: text(doc, "groupId")?,
            proposed_by: Actor {
                actor_type: ActorType::parse(&text(by, "type")?)
                    .ok_or(WorkError::Document("proposedBy"))?,
                id: text(by, "id")?,
            },
            contract: WorkContract::from_value(
                doc.get("contract")
                    .cloned()
                    .ok_or(WorkError::Document("contract"))?,
            )?,
            status: ProposalStatus::parse(&text(doc, "status")?)
                .ok_or(WorkError::Document("status"))?,
            authorized_work_item_id: doc
                .get("authorizedWorkItemId")
                .and_then(Value::as_str)
                .map(str::to_owned),
            revision: doc
                .get("revision")
                .and_then(Value::as_number)
                .and_then(Number::as_u64)
                .ok_or(WorkError::Document("revision"))?,
            created_at: time("createdAt")?,
            updated_at: time("updatedAt")?,
        })
    }

    /// Reads stored bytes (strict JSON) back.
    pub fn from_json(bytes: &[u8]) -> Result<Self, WorkError> {
        Self::from_value(&parse_state(bytes).map_err(|_| WorkError::Document("json"))?)
    }
}
