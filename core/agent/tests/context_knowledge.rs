//! Knowledge publications and Group Snapshots of the `context` module (§13.3, §7.4): each rule
//! with a positive and a negative case.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json::{Object, Value, parse};
use missionweaveprotocol::{DescribeError, ErrorClass, Principal, PrincipalType, WireCode};
use missionweaveprotocol_agent::context::{
    self, ContextError, ContextPackageDraft, KnowledgeDraft, SnapshotRequest, SourceEvent,
    VerifiedContextPackage, knowledge, single_key_resolver, snapshot,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

const AGENT: &str = "urn:missionweaveprotocol:agent:planner";
const AUTHORITY: &str = "urn:missionweaveprotocol:service:group-authority";
const GROUP: &str = "urn:missionweaveprotocol:group:finance";
const MISSION: &str = "urn:missionweaveprotocol:mission:close-books";
const T0: UnixMillis = UnixMillis(1_784_107_800_000);

fn key(seed: u8) -> SigningKey {
    SigningKey::from_seed(format!("urn:missionweaveprotocol:key:{seed}"), &[seed; 32])
}

fn agent() -> Principal {
    Principal::new(PrincipalType::Agent, AGENT)
}

fn authority() -> Principal {
    Principal::new(PrincipalType::Service, AUTHORITY)
}

fn event(group: &str, n: u64) -> SourceEvent {
    SourceEvent {
        event_id: format!("urn:missionweaveprotocol:event:e{n}"),
        group_id: group.into(),
        sequence: n,
    }
}

fn package() -> VerifiedContextPackage {
    let draft = ContextPackageDraft {
        context_package_id: "urn:missionweaveprotocol:context:close-books-1".into(),
        version: 1,
        previous_context_package_id: None,
        mission_id: MISSION.into(),
        group_id: GROUP.into(),
        work_item_id: None,
        events: (1..=3).map(|n| event(GROUP, n)).collect(),
        artifact_hashes: vec![],
        summary: "The ledger is reconciled.".into(),
        decisions: vec![],
        constraints: vec![],
        unresolved_questions: vec![],
        generated_by: AGENT.into(),
        generated_at: T0,
    };
    let signed = context::publish(&draft, &key(3)).unwrap();
    let resolver =
        single_key_resolver(agent(), key(3).key_id(), &key(3).public_key_bytes()).unwrap();
    context::verify(&signed.bytes, &resolver, Some(AGENT)).unwrap()
}

fn knowledge_draft() -> KnowledgeDraft {
    KnowledgeDraft {
        publication_id: "urn:missionweaveprotocol:knowledge:fx-rates".into(),
        target_scope: "urn:missionweaveprotocol:organization:acme".into(),
        artifact_hash: format!("sha256:{}", "c".repeat(64)),
        classification: "internal".into(),
        summary: "How the June FX rates were chosen.".into(),
        published_by: agent(),
        published_at: T0,
    }
}

fn set(document: &Value, name: &str, value: Value) -> Value {
    let mut o: Object = document.as_object().unwrap().clone();
    o.insert(name, value);
    Value::Object(o)
}

#[test]
fn a_publication_carries_the_package_provenance_and_verifies() {
    let source = package();
    let published = knowledge::publish(&source, &knowledge_draft(), &key(3)).unwrap();
    assert_eq!(
        published.get("provenanceEventIds"),
        source.document.pointer("/sourceEventRange/eventIds")
    );
    assert_eq!(
        published
            .get("sourceContextPackageHash")
            .and_then(Value::as_str),
        Some(source.package_hash.as_str())
    );
    // No `null` member anywhere (the reference signs a dump with `null`s).
    assert!(
        !String::from_utf8(missionweaveprotocol::json::canonical_bytes(&published).unwrap())
            .unwrap()
            .contains("null")
    );
    knowledge::verify(&published, &key(3).public_key_bytes(), Some(&source)).unwrap();
    knowledge::verify(&published, &key(3).public_key_bytes(), None).unwrap();
}

#[test]
fn a_publication_is_refused_when_altered_or_verified_with_another_key() {
    let source = package();
    let published = knowledge::publish(&source, &knowledge_draft(), &key(3)).unwrap();
    let altered = set(&published, "classification", Value::string("public"));
    let e = knowledge::verify(&altered, &key(3).public_key_bytes(), None).unwrap_err();
    assert_eq!(e, ContextError::BadSignature);
    assert_eq!(
        (e.class(), e.wire_code(), e.reason()),
        (
            ErrorClass::Context,
            WireCode::AuthInvalidSignature,
            "bad_signature"
        )
    );
    let e = knowledge::verify(&published, &key(4).public_key_bytes(), None).unwrap_err();
    assert_eq!(e, ContextError::BadSignature);
    // Provenance rewritten to other Events (and re-signed) no longer matches the package.
    let mut other = knowledge_draft();
    other.publication_id = "urn:missionweaveprotocol:knowledge:other".into();
    let foreign = knowledge::publish(&package_of_other_range(), &other, &key(3)).unwrap();
    let e = knowledge::verify(&foreign, &key(3).public_key_bytes(), Some(&source)).unwrap_err();
    assert_eq!(e, ContextError::ProvenanceMismatch);
}

fn package_of_other_range() -> VerifiedContextPackage {
    let mut p = package();
    let Value::Object(o) = &mut p.document else {
        panic!()
    };
    let mut range = o
        .get("sourceEventRange")
        .unwrap()
        .as_object()
        .unwrap()
        .clone();
    range.insert(
        "eventIds",
        Value::Array(vec![Value::string("urn:missionweaveprotocol:event:e9")]),
    );
    o.insert("sourceEventRange", Value::Object(range));
    p
}

#[test]
fn a_publication_needs_a_known_classification_and_a_sha256_artifact() {
    let source = package();
    let mut secret = knowledge_draft();
    secret.classification = "top-secret".into();
    let e = knowledge::publish(&source, &secret, &key(3)).unwrap_err();
    assert!(matches!(e, ContextError::InvalidArgument(ref t) if t.contains("classification")));
    let mut md5 = knowledge_draft();
    md5.artifact_hash = "md5:0".into();
    assert!(knowledge::publish(&source, &md5, &key(3)).is_err());
    for value in context::CLASSIFICATIONS {
        let mut ok = knowledge_draft();
        ok.classification = value.into();
        assert!(knowledge::publish(&source, &ok, &key(3)).is_ok(), "{value}");
    }
}

fn snapshot_request(events: Vec<SourceEvent>) -> SnapshotRequest {
    SnapshotRequest {
        snapshot_id: "urn:missionweaveprotocol:snapshot:final".into(),
        group_id: GROUP.into(),
        events,
        state: parse(br#"{"mission":"approved","workItems":2}"#).unwrap(),
        policy_log: vec![
            parse(
                br#"{"entryId":"urn:missionweaveprotocol:policy-entry:p1","decision":"archive","actor":{"type":"service","id":"urn:missionweaveprotocol:service:group-authority"},"occurredAt":"2026-07-15T09:30:00Z","details":{}}"#,
            )
            .unwrap(),
        ],
        created_at: T0,
    }
}

#[test]
fn a_snapshot_covers_events_one_to_n_and_verifies_under_the_authority() {
    let request = snapshot_request((1..=4).map(|n| event(GROUP, n)).collect());
    let signed = snapshot::archive(&request, &authority(), &key(30)).unwrap();
    assert_eq!(
        signed
            .document
            .get("throughSequence")
            .and_then(Value::as_number)
            .and_then(|n| n.as_u64()),
        Some(4)
    );
    let resolver =
        single_key_resolver(authority(), key(30).key_id(), &key(30).public_key_bytes()).unwrap();
    let verified = snapshot::verify(&signed.bytes, &resolver, Some(&authority())).unwrap();
    assert_eq!(verified.artifact_hash, signed.document_hash);
    // Another creator than the expected authority is refused.
    let other = Principal::new(PrincipalType::Service, "urn:missionweaveprotocol:service:x");
    let e = snapshot::verify(&signed.bytes, &resolver, Some(&other)).unwrap_err();
    assert!(matches!(e, ContextError::GeneratorMismatch { .. }));
}

#[test]
fn a_snapshot_with_a_gap_another_group_or_no_policy_log_is_refused() {
    let gap = snapshot_request(vec![event(GROUP, 1), event(GROUP, 3)]);
    let e = snapshot::archive(&gap, &authority(), &key(30)).unwrap_err();
    assert!(matches!(e, ContextError::SnapshotCoverage { .. }));
    assert_eq!(e.reason(), "snapshot_coverage");
    let late = snapshot_request(vec![event(GROUP, 2)]);
    assert!(snapshot::archive(&late, &authority(), &key(30)).is_err());
    let foreign = snapshot_request(vec![event("urn:missionweaveprotocol:group:other", 1)]);
    assert!(matches!(
        snapshot::archive(&foreign, &authority(), &key(30)).unwrap_err(),
        ContextError::EventOutsideGroup { .. }
    ));
    assert!(matches!(
        snapshot::archive(&snapshot_request(vec![]), &authority(), &key(30)).unwrap_err(),
        ContextError::SnapshotCoverage { .. }
    ));
    let mut no_log = snapshot_request(vec![event(GROUP, 1)]);
    no_log.policy_log.clear();
    assert!(matches!(
        snapshot::archive(&no_log, &authority(), &key(30)).unwrap_err(),
        ContextError::Signing(_)
    ));
}

#[test]
fn a_weak_public_key_makes_no_resolver() {
    let e =
        single_key_resolver(agent(), "urn:missionweaveprotocol:key:zero", &[0u8; 32]).unwrap_err();
    assert!(matches!(e, ContextError::InvalidArgument(_)));
}
