//! The stored WorkItem aggregate as canonical JSON (store kind [`super::AGGREGATE_KIND`]).
//!
//! `{"workItem": <work-item.schema.json document>, "ownershipLease"?, "executionLease"?
//! (lease.schema.json documents), "offeredSelectionBasis"?, "blocker"?, "submissionEvidence",
//! "reviewEvidence", "failure"?, "cancelReason"?}`. Reading back checks the `workItem` member
//! against its schema, the contract against §10.1, and every lease against its own schema and
//! rules, so a document the aggregate could not have produced is refused.

use missionweaveprotocol::json::{Number, Object, Value, canonical_bytes, parse_state};
use missionweaveprotocol::schema::SchemaCatalog;
use missionweaveprotocol::schema_formats::Timestamp;

use super::contract::WorkContract;
use super::error::WorkError;
use super::evidence::{EvidenceRef, EvidenceResult};
use super::state::{
    Actor, ActorType, Offer, OfferStatus, Owner, Submission, WorkItem, WorkItemState,
};
use super::transitions::{actor, integer, object, strings, timestamp};
use missionweaveprotocol_kernel::lease::Lease;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The store aggregate kind of a WorkItem (`store::AggregateKey::kind`).
pub const AGGREGATE_KIND: &str = "work_item";

fn lease_value(lease: &Lease) -> Result<Value, WorkError> {
    let text = lease.to_json_string()?;
    parse_state(text.as_bytes()).map_err(|_| WorkError::Document("lease"))
}

fn evidence_value(evidence: &EvidenceRef) -> Value {
    object([
        ("evidenceId", Value::string(evidence.evidence_id.as_str())),
        ("workItemId", Value::string(evidence.work_item_id.as_str())),
        ("type", Value::string(evidence.evidence_type.as_str())),
        ("criterionIds", strings(&evidence.criterion_ids)),
        ("result", Value::string(evidence.result.as_str())),
    ])
}

impl WorkItem {
    /// The `work-item.schema.json` document of this WorkItem.
    pub fn to_schema_document(&self) -> Result<Value, WorkError> {
        let mut doc = Object::new();
        let text = |s: &str| Value::string(s);
        doc.insert("workItemId", text(&self.work_item_id));
        doc.insert("missionId", text(&self.mission_id));
        doc.insert("groupId", text(&self.group_id));
        doc.insert("conversationId", text(&self.conversation_id));
        doc.insert("revision", integer(self.revision));
        doc.insert("state", text(self.state.as_str()));
        doc.insert("exclusive", Value::Bool(self.exclusive));
        doc.insert("contract", self.contract.document().clone());
        if !self.offers.is_empty() {
            let offers = self
                .offers
                .iter()
                .map(|o| {
                    Ok(object([
                        ("offerId", text(&o.offer_id)),
                        ("agentId", text(&o.agent_id)),
                        ("agentCardVersion", integer(o.agent_card_version)),
                        ("expiresAt", timestamp(o.expires_at)?),
                        ("status", text(o.status.as_str())),
                    ]))
                })
                .collect::<Result<Vec<_>, WorkError>>()?;
            doc.insert("offers", Value::Array(offers));
        }
        if let Some(owner) = &self.owner {
            doc.insert(
                "owner",
                object([
                    ("agentId", text(&owner.agent_id)),
                    ("agentCardVersion", integer(owner.agent_card_version)),
                    (
                        "capabilityPins",
                        Value::Array(owner.capability_pins.clone()),
                    ),
                    ("ownershipEpoch", integer(owner.ownership_epoch)),
                    ("ownershipLeaseId", text(&owner.ownership_lease_id)),
                    ("acceptedAt", timestamp(owner.accepted_at)?),
                ]),
            );
        }
        if let Some(basis) = &self.selection_basis {
            doc.insert("selectionBasis", basis.clone());
        }
        if let Some(progress) = &self.progress {
            doc.insert("progress", progress.clone());
        }
        if let Some(submission) = &self.submission {
            let ids: Vec<String> = submission
                .evidence
                .iter()
                .map(|e| e.evidence_id.clone())
                .collect();
            doc.insert(
                "submission",
                object([
                    ("artifactHashes", strings(&submission.artifact_hashes)),
                    ("evidenceIds", strings(&ids)),
                    ("submittedAt", timestamp(submission.submitted_at)?),
                ]),
            );
        }
        doc.insert("createdBy", actor(&self.created_by));
        doc.insert("authorizedBy", actor(&self.authorized_by));
        doc.insert("createdAt", timestamp(self.created_at)?);
        doc.insert("updatedAt", timestamp(self.updated_at)?);
        Ok(Value::Object(doc))
    }

    /// The stored aggregate document.
    pub fn to_value(&self) -> Result<Value, WorkError> {
        let mut doc = Object::new();
        doc.insert("workItem", self.to_schema_document()?);
        if let Some(lease) = &self.ownership_lease {
            doc.insert("ownershipLease", lease_value(lease)?);
        }
        if let Some(lease) = &self.execution_lease {
            doc.insert("executionLease", lease_value(lease)?);
        }
        if let Some(basis) = &self.offered_selection_basis {
            doc.insert("offeredSelectionBasis", basis.clone());
        }
        if let Some(blocker) = &self.blocker {
            doc.insert("blocker", Value::string(blocker.as_str()));
        }
        let submitted = self
            .submission
            .as_ref()
            .map_or(&[][..], |s| &s.evidence[..]);
        doc.insert(
            "submissionEvidence",
            Value::Array(submitted.iter().map(evidence_value).collect()),
        );
        doc.insert(
            "reviewEvidence",
            Value::Array(self.review_evidence.iter().map(evidence_value).collect()),
        );
        if let Some((reason, ids)) = &self.failure {
            doc.insert(
                "failure",
                object([
                    ("reason", Value::string(reason.as_str())),
                    ("evidenceIds", strings(ids)),
                ]),
            );
        }
        if let Some(reason) = &self.cancel_reason {
            doc.insert("cancelReason", Value::string(reason.as_str()));
        }
        Ok(Value::Object(doc))
    }

    /// RFC 8785 canonical bytes of [`to_value`](Self::to_value).
    pub fn to_canonical_bytes(&self) -> Result<Vec<u8>, WorkError> {
        canonical_bytes(&self.to_value()?).map_err(|_| WorkError::Document("workItem"))
    }

    /// Reads a stored aggregate document back.
    pub fn from_value(document: &Value) -> Result<Self, WorkError> {
        let item = document
            .get("workItem")
            .ok_or(WorkError::Document("workItem"))?;
        SchemaCatalog::embedded()
            .validate("work-item", item)
            .map_err(|_| WorkError::Document("workItem"))?;
        let text = |v: &Value, name: &'static str| -> Result<String, WorkError> {
            v.get(name)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or(WorkError::Document(name))
        };
        let count = |v: &Value, name: &'static str| -> Result<u64, WorkError> {
            v.get(name)
                .and_then(Value::as_number)
                .and_then(Number::as_u64)
                .ok_or(WorkError::Document(name))
        };
        let time = |v: &Value, name: &'static str| -> Result<UnixMillis, WorkError> {
            let raw = text(v, name)?;
            let stamp = Timestamp::parse(&raw).map_err(|_| WorkError::Document(name))?;
            if stamp.instant().fraction_digits().len() > 3 {
                return Err(WorkError::Document(name));
            }
            Ok(UnixMillis(stamp.instant().unix_millis()))
        };
        let read_actor = |v: &Value, name: &'static str| -> Result<Actor, WorkError> {
            let a = v.get(name).ok_or(WorkError::Document(name))?;
            Ok(Actor {
                actor_type: ActorType::parse(&text(a, "type")?).ok_or(WorkError::Document(name))?,
                id: text(a, "id")?,
            })
        };
        let list = |v: &Value, name: &'static str| -> Vec<Value> {
            v.get(name)
                .and_then(Value::as_array)
                .map(<[Value]>::to_vec)
                .unwrap_or_default()
        };
        let text_list = |v: &Value, name: &'static str| -> Vec<String> {
            list(v, name)
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        };
        let read_evidence = |name: &'static str| -> Result<Vec<EvidenceRef>, WorkError> {
            list(document, name)
                .iter()
                .map(|e| {
                    Ok(EvidenceRef {
                        evidence_id: text(e, "evidenceId")?,
                        work_item_id: text(e, "workItemId")?,
                        evidence_type: text(e, "type")?,
                        criterion_ids: text_list(e, "criterionIds"),
                        result: EvidenceResult::parse(&text(e, "result")?)
                            .ok_or(WorkError::Document("result"))?,
                    })
                })
                .collect()
        };
        let read_lease = |name: &'static str| -> Result<Option<Lease>, WorkError> {
            document
                .get(name)
                .map(|l| Lease::from_value(l).map_err(|_| WorkError::Document(name)))
                .transpose()
        };
        let offers = list(item, "offers")
            .iter()
            .map(|o| {
                Ok(Offer {
                    offer_id: text(o, "offerId")?,
                    agent_id: text(o, "agentId")?,
                    agent_card_version: count(o, "agentCardVersion")?,
                    expires_at: time(o, "expiresAt")?,
                    status: OfferStatus::parse(&text(o, "status")?)
                        .ok_or(WorkError::Document("status"))?,
                })
            })
            .collect::<Result<Vec<_>, WorkError>>()?;
        let owner = item
            .get("owner")
            .map(|o| {
                Ok::<_, WorkError>(Owner {
                    agent_id: text(o, "agentId")?,
                    agent_card_version: count(o, "agentCardVersion")?,
                    capability_pins: list(o, "capabilityPins"),
                    ownership_epoch: count(o, "ownershipEpoch")?,
                    ownership_lease_id: text(o, "ownershipLeaseId")?,
                    accepted_at: time(o, "acceptedAt")?,
                })
            })
            .transpose()?;
        let submission = item
            .get("submission")
            .map(|s| {
                let evidence = read_evidence("submissionEvidence")?;
                let ids: Vec<String> = evidence.iter().map(|e| e.evidence_id.clone()).collect();
                if ids != text_list(s, "evidenceIds") {
                    return Err(WorkError::Document("submissionEvidence"));
                }
                Ok::<_, WorkError>(Submission {
                    artifact_hashes: text_list(s, "artifactHashes"),
                    evidence,
                    submitted_at: time(s, "submittedAt")?,
                })
            })
            .transpose()?;
        let failure = document
            .get("failure")
            .map(|f| Ok::<_, WorkError>((text(f, "reason")?, text_list(f, "evidenceIds"))))
            .transpose()?;
        let contract = WorkContract::from_value(
            item.get("contract")
                .cloned()
                .ok_or(WorkError::Document("contract"))?,
        )?;
        Ok(WorkItem {
            work_item_id: text(item, "workItemId")?,
            mission_id: text(item, "missionId")?,
            group_id: text(item, "groupId")?,
            conversation_id: text(item, "conversationId")?,
            revision: count(item, "revision")?,
            state: WorkItemState::parse(&text(item, "state")?)
                .ok_or(WorkError::Document("state"))?,
            exclusive: item
                .get("exclusive")
                .and_then(Value::as_bool)
                .ok_or(WorkError::Document("exclusive"))?,
            contract,
            offers,
            owner,
            selection_basis: item.get("selectionBasis").cloned(),
            offered_selection_basis: document.get("offeredSelectionBasis").cloned(),
            ownership_lease: read_lease("ownershipLease")?,
            execution_lease: read_lease("executionLease")?,
            progress: item.get("progress").cloned(),
            blocker: document
                .get("blocker")
                .and_then(Value::as_str)
                .map(str::to_owned),
            submission,
            review_evidence: read_evidence("reviewEvidence")?,
            failure,
            cancel_reason: document
                .get("cancelReason")
                .and_then(Value::as_str)
                .map(str::to_owned),
            created_by: read_actor(item, "createdBy")?,
            authorized_by: read_actor(item, "authorizedBy")
                .or_else(|_| read_actor(item, "createdBy"))?,
            created_at: time(item, "createdAt")?,
            updated_at: time(item, "updatedAt")?,
        })
    }

    /// Reads stored bytes (strict JSON) back.
    pub fn from_json(bytes: &[u8]) -> Result<Self, WorkError> {
        let value = parse_state(bytes).map_err(|_| WorkError::Document("json"))?;
        Self::from_value(&value)
    }
}
