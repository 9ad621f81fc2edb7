//! Context Packages (§13.3): publish, verify, install — every rule with a positive and a
//! negative case.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json::Value;
use missionweaveprotocol::registry::{KeyRegistrySnapshot, RegistryBuilder};
use missionweaveprotocol::{DescribeError, ErrorClass, Principal, PrincipalType, WireCode};
use missionweaveprotocol_agent::context::{
    self, ContextDecision, ContextError, ContextPackageDraft, SourceEvent,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

const AGENT: &str = "urn:missionweaveprotocol:agent:planner";
const OTHER: &str = "urn:missionweaveprotocol:agent:other";
const GROUP: &str = "urn:missionweaveprotocol:group:finance";
const MISSION: &str = "urn:missionweaveprotocol:mission:close-books";
const T0: UnixMillis = UnixMillis(1_784_107_800_000);

fn key(agent: &str) -> SigningKey {
    let seed = if agent == AGENT { [3u8; 32] } else { [4u8; 32] };
    SigningKey::from_seed(format!("{agent}:key"), &seed)
}

fn registry() -> Arc<KeyRegistrySnapshot> {
    let mut builder = RegistryBuilder::new("urn:missionweaveprotocol:organization:acme");
    for agent in [AGENT, OTHER] {
        let k = key(agent);
        builder
            .add_key(
                k.key_id(),
                Principal::new(PrincipalType::Agent, agent),
                &k.public_key_bytes(),
                "2026-01-01T00:00:00Z",
            )
            .unwrap();
    }
    Arc::new(builder.build().unwrap().1)
}

fn event(n: u64) -> SourceEvent {
    SourceEvent {
        event_id: format!("urn:missionweaveprotocol:event:e{n}"),
        group_id: GROUP.into(),
        sequence: n,
    }
}

fn draft() -> ContextPackageDraft {
    ContextPackageDraft {
        context_package_id: "urn:missionweaveprotocol:context:close-books-1".into(),
        version: 1,
        previous_context_package_id: None,
        mission_id: MISSION.into(),
        group_id: GROUP.into(),
        work_item_id: None,
        events: (3..=6).map(event).collect(),
        artifact_hashes: vec![format!("sha256:{}", "a".repeat(64))],
        summary: "The ledger is reconciled up to June.".into(),
        decisions: vec![ContextDecision {
            description: "Use the June FX rates.".into(),
            source_event_ids: vec![event(4).event_id],
        }],
        constraints: vec!["No writes to the GL.".into()],
        unresolved_questions: vec![],
        generated_by: AGENT.into(),
        generated_at: T0,
    }
}

fn refused(draft: &ContextPackageDraft) -> ContextError {
    context::publish(draft, &key(AGENT)).unwrap_err()
}

#[test]
fn a_published_package_verifies_without_null_members_and_installs_for_its_group() {
    let signed = context::publish(&draft(), &key(AGENT)).unwrap();
    // Optional members are omitted, not `null` (the reference's gap, §1.4 of its API notes).
    assert!(signed.document.get("workItemId").is_none());
    assert!(signed.document.get("previousContextPackageId").is_none());
    let range = signed.document.get("sourceEventRange").unwrap();
    assert_eq!(
        range
            .get("fromSequence")
            .and_then(Value::as_number)
            .and_then(|n| n.as_u64()),
        Some(3)
    );
    assert_eq!(
        range
            .get("toSequence")
            .and_then(Value::as_number)
            .and_then(|n| n.as_u64()),
        Some(6)
    );
    let verified = context::verify(&signed.bytes, &registry(), Some(AGENT)).unwrap();
    assert_eq!(verified.package_hash, signed.document_hash);
    let (group, revision, values) = context::install_values(&verified, MISSION).unwrap();
    assert_eq!((group.as_str(), revision), (GROUP, 1));
    assert!(values.get("signature").is_none());
    assert_eq!(
        values.get("contextPackageHash").and_then(Value::as_str),
        Some(signed.document_hash.as_str())
    );
}

#[test]
fn an_update_keeps_provenance_to_the_previous_version() {
    let mut update = draft();
    update.context_package_id = "urn:missionweaveprotocol:context:close-books-2".into();
    update.version = 2;
    update.previous_context_package_id = Some(draft().context_package_id);
    update.work_item_id = Some("urn:missionweaveprotocol:work:ledger".into());
    let signed = context::publish(&update, &key(AGENT)).unwrap();
    let verified = context::verify(&signed.bytes, &registry(), None).unwrap();
    assert_eq!(context::install_values(&verified, MISSION).unwrap().1, 2);
    // A later version without its previous one, version 1 with one, or a package naming
    // itself, breaks the chain.
    let mut orphan = update.clone();
    orphan.previous_context_package_id = None;
    let mut first = draft();
    first.previous_context_package_id = Some("urn:missionweaveprotocol:context:x".into());
    let mut itself = update.clone();
    itself.previous_context_package_id = Some(update.context_package_id.clone());
    for bad in [orphan, first, itself] {
        assert!(matches!(refused(&bad), ContextError::VersionChain { .. }));
    }
}

#[test]
fn the_source_events_are_one_contiguous_range_of_one_group() {
    let mut empty = draft();
    empty.events.clear();
    assert_eq!(refused(&empty), ContextError::SourceEventsEmpty);
    let mut foreign = draft();
    foreign.events[1].group_id = "urn:missionweaveprotocol:group:other".into();
    let e = refused(&foreign);
    assert!(matches!(e, ContextError::EventOutsideGroup { .. }));
    assert_eq!(
        (e.class(), e.wire_code()),
        (ErrorClass::Context, WireCode::ProtocolViolation)
    );
    let mut gap = draft();
    gap.events.remove(1);
    assert_eq!(
        refused(&gap),
        ContextError::SourceRangeGap {
            expected: 4,
            found: 5
        }
    );
    let mut twice = draft();
    twice.events[1].event_id = twice.events[0].event_id.clone();
    assert!(matches!(
        refused(&twice),
        ContextError::DuplicateSourceEvent { .. }
    ));
}

#[test]
fn decisions_cite_only_events_of_the_range() {
    let mut outside = draft();
    outside.decisions[0].source_event_ids = vec![event(9).event_id];
    let e = refused(&outside);
    assert_eq!(e.reason(), "decision_outside_range");
    assert_eq!(
        e.fields().get("event_id"),
        Some(&missionweaveprotocol::FieldValue::Text(event(9).event_id))
    );
}

#[test]
fn the_schema_is_checked_before_signing() {
    let mut blank = draft();
    blank.summary = String::new();
    let e = refused(&blank);
    assert!(matches!(e, ContextError::Signing(_)));
    assert_eq!(e.class(), ErrorClass::Signing);
    let mut bad_hash = draft();
    bad_hash.artifact_hashes = vec!["md5:abc".into()];
    assert!(matches!(refused(&bad_hash), ContextError::Signing(_)));
}

#[test]
fn verification_refuses_tampering_another_generator_and_another_mission() {
    let signed = context::publish(&draft(), &key(AGENT)).unwrap();
    let tampered = String::from_utf8(signed.bytes.clone())
        .unwrap()
        .replace("reconciled up to June", "reconciled up to July")
        .into_bytes();
    let e = context::verify(&tampered, &registry(), None).unwrap_err();
    assert!(matches!(e, ContextError::Verification(_)));
    assert_eq!(e.wire_code(), WireCode::AuthInvalidSignature);
    let e = context::verify(&signed.bytes, &registry(), Some(OTHER)).unwrap_err();
    assert!(matches!(e, ContextError::GeneratorMismatch { .. }));
    assert_eq!(e.wire_code(), WireCode::AuthForbidden);
    let verified = context::verify(&signed.bytes, &registry(), Some(AGENT)).unwrap();
    let e =
        context::install_values(&verified, "urn:missionweaveprotocol:mission:other").unwrap_err();
    assert!(matches!(
        e,
        ContextError::ScopeMismatch {
            member: "mission",
            ..
        }
    ));
    // A package signed with another Agent's key than its `generatedBy` names fails stage 4.
    let forged = context::publish(&draft(), &key(OTHER)).unwrap();
    let e = context::verify(&forged.bytes, &registry(), None).unwrap_err();
    assert!(matches!(e, ContextError::Verification(_)), "{e:?}");
}

#[test]
fn a_range_that_does_not_span_its_event_ids_is_refused_on_verification() {
    let signed = context::publish(&draft(), &key(AGENT)).unwrap();
    let mut document = signed.document.clone();
    let Value::Object(o) = &mut document else {
        panic!()
    };
    let mut range = o
        .get("sourceEventRange")
        .unwrap()
        .as_object()
        .unwrap()
        .clone();
    range.insert(
        "toSequence",
        Value::Number(missionweaveprotocol::json::Number::from_u64(9)),
    );
    o.insert("sourceEventRange", Value::Object(range));
    let e = context::check(&document, None).unwrap_err();
    assert!(matches!(
        e,
        ContextError::SourceRangeMismatch { to_sequence: 9, .. }
    ));
    assert!(context::check(&signed.document, Some(AGENT)).is_ok());
}
