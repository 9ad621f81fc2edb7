//! Publishing and checking Context Packages (§13.3): the draft's rules, the wire document
//! without `null` members, and the codec's signature.

use std::collections::HashSet;

use missionweaveprotocol::crypto::Signer;
use missionweaveprotocol::json::{Number, Object, Value};
use missionweaveprotocol::signed_documents::SignedDocument;
use missionweaveprotocol::{SignedDocumentCodec, SignedDocumentKind};

use super::error::ContextError;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// One source Event of a package: its ID and its position in the Group log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceEvent {
    /// The Event ID.
    pub event_id: String,
    /// Its Group.
    pub group_id: String,
    /// Its Group sequence.
    pub sequence: u64,
}

/// A decision the package records, with the Events it comes from (reference `ContextDecision`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextDecision {
    /// What was decided.
    pub description: String,
    /// The Events it was decided in (within the package's source range).
    pub source_event_ids: Vec<String>,
}

/// What a generator publishes (reference `ContextPackageService.publish` arguments).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextPackageDraft {
    /// The package's ID.
    pub context_package_id: String,
    /// Its version (≥ 1).
    pub version: u64,
    /// The package it updates (required from version 2 on, absent for version 1).
    pub previous_context_package_id: Option<String>,
    /// The Mission.
    pub mission_id: String,
    /// The one Group the package summarizes.
    pub group_id: String,
    /// The WorkItem scope, if narrower than the Mission.
    pub work_item_id: Option<String>,
    /// The source Events: one contiguous ascending range of the Group's log.
    pub events: Vec<SourceEvent>,
    /// Artifact hashes the package refers to.
    pub artifact_hashes: Vec<String>,
    /// The summary.
    pub summary: String,
    /// Decisions, each citing Events of the range.
    pub decisions: Vec<ContextDecision>,
    /// Constraints.
    pub constraints: Vec<String>,
    /// Unresolved questions.
    pub unresolved_questions: Vec<String>,
    /// The generating Agent (the signer's Principal).
    pub generated_by: String,
    /// When it was generated.
    pub generated_at: UnixMillis,
}

/// Checks the draft's rules and signs its wire document (no `null` members: the reference signs
/// a dump with `null`s, which the normative codec then refuses).
pub fn publish(
    draft: &ContextPackageDraft,
    key: &dyn Signer,
) -> Result<SignedDocument, ContextError> {
    let (from, to) = source_range(draft)?;
    version_chain(
        &draft.context_package_id,
        draft.version,
        draft.previous_context_package_id.as_deref(),
    )?;
    let ids: HashSet<&str> = draft.events.iter().map(|e| e.event_id.as_str()).collect();
    for decision in &draft.decisions {
        cited(&ids, decision.source_event_ids.iter().map(String::as_str))?;
    }
    let generated_at = draft
        .generated_at
        .to_rfc3339_shortest()
        .ok_or_else(|| ContextError::InvalidArgument("generated_at is out of range".into()))?;
    let mut doc = Object::new();
    doc.insert("contextPackageId", Value::string(&draft.context_package_id));
    doc.insert("version", Value::Number(Number::from_u64(draft.version)));
    if let Some(previous) = &draft.previous_context_package_id {
        doc.insert("previousContextPackageId", Value::string(previous));
    }
    doc.insert("missionId", Value::string(&draft.mission_id));
    doc.insert("groupId", Value::string(&draft.group_id));
    if let Some(work) = &draft.work_item_id {
        doc.insert("workItemId", Value::string(work));
    }
    let mut range = Object::new();
    range.insert("fromSequence", Value::Number(Number::from_u64(from)));
    range.insert("toSequence", Value::Number(Number::from_u64(to)));
    range.insert(
        "eventIds",
        strings(draft.events.iter().map(|e| e.event_id.as_str())),
    );
    doc.insert("sourceEventRange", Value::Object(range));
    doc.insert(
        "artifactHashes",
        strings(draft.artifact_hashes.iter().map(String::as_str)),
    );
    doc.insert("summary", Value::string(&draft.summary));
    let decisions = draft
        .decisions
        .iter()
        .map(|d| {
            let mut o = Object::new();
            o.insert("description", Value::string(&d.description));
            o.insert(
                "sourceEventIds",
                strings(d.source_event_ids.iter().map(String::as_str)),
            );
            Value::Object(o)
        })
        .collect();
    doc.insert("decisions", Value::Array(decisions));
    doc.insert(
        "constraints",
        strings(draft.constraints.iter().map(String::as_str)),
    );
    doc.insert(
        "unresolvedQuestions",
        strings(draft.unresolved_questions.iter().map(String::as_str)),
    );
    let mut generator = Object::new();
    generator.insert("type", Value::string("agent"));
    generator.insert("id", Value::string(&draft.generated_by));
    doc.insert("generatedBy", Value::Object(generator));
    doc.insert("generatedAt", Value::string(generated_at));
    // The codec validates the schema (bounds, formats, uniqueness) before it signs.
    SignedDocumentCodec::new()
        .sign(SignedDocumentKind::ContextPackage, &Value::Object(doc), key)
        .map_err(ContextError::Signing)
}

/// The semantic rules of a package document the codec verified (schema and signature): the
/// range spans exactly its Event IDs, decisions cite only those, the version chain holds, and,
/// when given, the generator is `expected_generator`.
pub fn check(document: &Value, expected_generator: Option<&str>) -> Result<(), ContextError> {
    let text = |pointer: &str| {
        document
            .pointer(pointer)
            .and_then(Value::as_str)
            .ok_or_else(|| ContextError::InvalidArgument(format!("{pointer} is missing")))
    };
    let number = |pointer: &str| {
        document
            .pointer(pointer)
            .and_then(Value::as_number)
            .and_then(Number::as_u64)
            .ok_or_else(|| ContextError::InvalidArgument(format!("{pointer} is missing")))
    };
    let from = number("/sourceEventRange/fromSequence")?;
    let to = number("/sourceEventRange/toSequence")?;
    let ids: Vec<&str> = document
        .pointer("/sourceEventRange/eventIds")
        .and_then(Value::as_array)
        .unwrap_or_default()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    if to < from || to - from + 1 != ids.len() as u64 {
        return Err(ContextError::SourceRangeMismatch {
            from_sequence: from,
            to_sequence: to,
            event_ids: ids.len() as u64,
        });
    }
    let id_set: HashSet<&str> = ids.iter().copied().collect();
    for decision in document
        .get("decisions")
        .and_then(Value::as_array)
        .unwrap_or_default()
    {
        let cites = decision
            .get("sourceEventIds")
            .and_then(Value::as_array)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str);
        cited(&id_set, cites)?;
    }
    version_chain(
        text("/contextPackageId")?,
        number("/version")?,
        document
            .get("previousContextPackageId")
            .and_then(Value::as_str),
    )?;
    if let Some(expected) = expected_generator {
        let found = text("/generatedBy/id")?;
        if found != expected {
            return Err(ContextError::GeneratorMismatch {
                expected: expected.to_owned(),
                found: found.to_owned(),
            });
        }
    }
    Ok(())
}

/// `(fromSequence, toSequence)` of the draft's Events: one Group, contiguous, unique.
fn source_range(draft: &ContextPackageDraft) -> Result<(u64, u64), ContextError> {
    let first = draft
        .events
        .first()
        .ok_or(ContextError::SourceEventsEmpty)?;
    let mut seen = HashSet::new();
    let mut expected = first.sequence;
    for event in &draft.events {
        if event.group_id != draft.group_id {
            return Err(ContextError::EventOutsideGroup {
                event_id: event.event_id.clone(),
                group_id: event.group_id.clone(),
            });
        }
        if !seen.insert(event.event_id.as_str()) {
            return Err(ContextError::DuplicateSourceEvent {
                event_id: event.event_id.clone(),
            });
        }
        if event.sequence != expected {
            return Err(ContextError::SourceRangeGap {
                expected,
                found: event.sequence,
            });
        }
        expected = expected.saturating_add(1);
    }
    Ok((first.sequence, expected - 1))
}

fn version_chain(id: &str, version: u64, previous: Option<&str>) -> Result<(), ContextError> {
    let ok = match previous {
        None => version == 1,
        Some(previous) => version > 1 && previous != id,
    };
    ok.then_some(())
        .ok_or(ContextError::VersionChain { version })
}

fn cited<'a>(
    range: &HashSet<&str>,
    mut cites: impl Iterator<Item = &'a str>,
) -> Result<(), ContextError> {
    match cites.find(|id| !range.contains(id)) {
        Some(id) => Err(ContextError::DecisionOutsideRange {
            event_id: id.to_owned(),
        }),
        None => Ok(()),
    }
}

fn strings<'a>(items: impl Iterator<Item = &'a str>) -> Value {
    Value::Array(items.map(Value::string).collect())
}
