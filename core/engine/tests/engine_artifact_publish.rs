//! `artifact.publish` (§13.1): the signed manifest is verified with the six-stage verifier
//! (Artifact profile) against the fixture's Registry, its producer is the Command's actor, it
//! belongs to the Command's Group, Mission and one of the Mission's WorkItems, its content
//! stays outside the log, and an Artifact ID is published once. Every Event is verified (Event
//! profile) and checked against `event.schema.json` by the fixture; refusals append nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_work_fixture.rs"]
mod engine_work_fixture;

use engine_work_fixture::*;
use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol::{DescribeError, SignedDocumentCodec, SignedDocumentKind, WireCode};
use missionweaveprotocol_engine::artifact::ARTIFACT_KIND;
use missionweaveprotocol_engine::error::EngineError;
use missionweaveprotocol_engine::ingress::VerifiedCommand;
use missionweaveprotocol_engine::store::{AggregateKey, Store};

const ARTIFACT: &str = "urn:missionweaveprotocol:artifact:report-1";

/// An unsigned manifest by `producer` about `W1` in `mission`/`group` with `uri`.
fn manifest(producer: &str, mission: &str, group: &str, uri: &str) -> Value {
    json::parse(
        format!(
            r#"{{"artifactId":"{ARTIFACT}","contentHash":"{HASH_A}","uri":"{uri}",
            "sizeBytes":1234,"mediaType":"application/json",
            "schemaUri":"https://example.org/report.json",
            "producer":{{"agentId":"{producer}","agentCardVersion":1,
              "capabilities":[{{"id":"text.summarise","version":"1.2.0"}}]}},
            "missionId":"{mission}","groupId":"{group}","workItemId":"{W1}",
            "sourceArtifactHashes":["{HASH_B}"],
            "toolVersions":[{{"name":"ledger-tool","version":"2.0"}}],
            "modelVersions":[{{"provider":"acme","model":"m","version":"1"}}],
            "classification":"internal","createdAt":"{NOW_TEXT}"}}"#
        )
        .as_bytes(),
    )
    .unwrap()
}

fn good() -> Value {
    manifest(
        WORKER,
        MISSION,
        GROUP,
        "https://store.example.org/objects/report-1",
    )
}

/// `manifest` signed (Artifact profile) with `signer`'s Registry key.
fn signed(f: &Fixture, signer: &str, manifest: &Value) -> Value {
    let (_, key) = f.keys.iter().find(|(p, _)| p.id == signer).unwrap();
    SignedDocumentCodec::new()
        .sign(SignedDocumentKind::Artifact, manifest, key)
        .unwrap()
        .document
}

/// Replaces (or adds) a member of a signed manifest after signing.
fn with(mut document: Value, name: &str, value: Value) -> Value {
    match &mut document {
        Value::Object(o) => {
            o.insert(name, value);
        }
        _ => panic!("a manifest is an object"),
    }
    document
}

/// `artifact.publish` citing `W1`'s current Ownership Epoch and Execution Lease.
fn publish(f: &Fixture, actor: &str, manifest: &Value, extra: &str) -> VerifiedCommand {
    publish_claiming(
        f,
        actor,
        manifest,
        extra,
        1,
        &LEASE_ID.with(|l| l.borrow().clone()),
    )
}

fn publish_claiming(
    f: &Fixture,
    actor: &str,
    manifest: &Value,
    extra: &str,
    epoch: u64,
    lease: &str,
) -> VerifiedCommand {
    let text = String::from_utf8(json::canonical_bytes(manifest).unwrap()).unwrap();
    f.command(
        "artifact.publish",
        actor,
        extra,
        &format!(r#"{{"manifest":{text},"ownershipEpoch":{epoch},"leaseId":"{lease}"}}"#),
    )
}

thread_local! {
    /// `W1`'s current Execution Lease ID, set by `setup`.
    static LEASE_ID: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// An active Mission whose WorkItem `W1` is `active`, owned by `WORKER` (epoch 1).
fn setup(f: &Fixture) -> TestEngine {
    let engine = f.active();
    f.active_item(&engine, W1);
    let (epoch, lease) = execution(&engine, W1);
    assert_eq!(epoch, 1);
    LEASE_ID.with(|l| *l.borrow_mut() = lease);
    engine
}

fn perform(f: &Fixture, engine: &TestEngine, command: &VerifiedCommand) -> Vec<Value> {
    let performed = engine
        .perform_with_resolver(command, NOW, &f.registry)
        .unwrap_or_else(|e| panic!("refused: {e} ({})", e.wire_code()));
    assert!(!performed.duplicate);
    f.checked(&performed)
}

fn refused(
    f: &Fixture,
    engine: &TestEngine,
    command: &VerifiedCommand,
    code: WireCode,
) -> EngineError {
    let before = last_sequence(engine);
    let error = engine
        .perform_with_resolver(command, NOW, &f.registry)
        .expect_err("refused");
    assert_eq!(error.wire_code(), code, "{error}");
    assert_eq!(last_sequence(engine), before, "a refusal appends nothing");
    let stored = engine
        .store()
        .aggregate(&AggregateKey::new(ARTIFACT_KIND, ARTIFACT))
        .unwrap();
    assert!(stored.is_none(), "a refusal stores no Artifact");
    error
}

#[test]
fn a_valid_manifest_is_stored_and_announced() {
    let f = fixture();
    let engine = setup(&f);
    let manifest = signed(&f, WORKER, &good());
    let before = last_sequence(&engine);
    let events = perform(&f, &engine, &publish(&f, WORKER, &manifest, ""));
    assert_eq!(events.len(), 1);
    let event = &events[0];
    assert_eq!(text(event, "/kind"), "artifact.published");
    assert_eq!(text(event, "/actor/id"), WORKER);
    assert_eq!(last_sequence(&engine), before + 1);
    assert_eq!(
        event
            .pointer("/aggregateRevision")
            .and_then(Value::as_number)
            .and_then(|n| n.as_u64()),
        Some(1)
    );
    assert_eq!(text(event, "/payload/missionId"), MISSION);
    assert_eq!(text(event, "/workItemId"), W1);
    // The Event carries the manifest byte for byte, signature included, and no content.
    let canonical = |v: &Value| json::canonical_bytes(v).unwrap();
    assert_eq!(
        canonical(payload_of(event).get("artifact").unwrap()),
        canonical(&manifest)
    );
    SignedDocumentCodec::new()
        .verify_value(
            SignedDocumentKind::Artifact,
            payload_of(event).get("artifact").unwrap().clone(),
            &f.registry,
        )
        .unwrap();
    let stored = engine
        .store()
        .aggregate(&AggregateKey::new(ARTIFACT_KIND, ARTIFACT))
        .unwrap()
        .unwrap();
    assert_eq!(stored.revision, 1);
    assert_eq!(&*stored.value, &canonical(&manifest)[..]);
}

#[test]
fn the_same_signed_command_again_is_a_duplicate() {
    let f = fixture();
    let engine = setup(&f);
    let command = publish(&f, WORKER, &signed(&f, WORKER, &good()), "");
    let first = engine
        .perform_with_resolver(&command, NOW, &f.registry)
        .unwrap();
    let again = engine
        .perform_with_resolver(&command, NOW, &f.registry)
        .unwrap();
    assert!(again.duplicate);
    assert_eq!(again.events[0].body, first.events[0].body);
}

#[test]
fn publishing_an_artifact_id_again_is_refused() {
    let f = fixture();
    let engine = setup(&f);
    let manifest = signed(&f, WORKER, &good());
    perform(&f, &engine, &publish(&f, WORKER, &manifest, ""));
    let before = last_sequence(&engine);
    for document in [
        manifest.clone(),
        signed(
            &f,
            WORKER,
            &with(good(), "sizeBytes", json::parse(b"99").unwrap()),
        ),
    ] {
        let error = engine
            .perform_with_resolver(&publish(&f, WORKER, &document, ""), NOW, &f.registry)
            .unwrap_err();
        assert_eq!(error.wire_code(), WireCode::InvalidStateTransition);
    }
    assert_eq!(last_sequence(&engine), before);
}

#[test]
fn a_tampered_manifest_fails_its_signature() {
    let f = fixture();
    let engine = setup(&f);
    let tampered = with(
        signed(&f, WORKER, &good()),
        "sizeBytes",
        json::parse(b"1235").unwrap(),
    );
    let error = refused(
        &f,
        &engine,
        &publish(&f, WORKER, &tampered, ""),
        WireCode::AuthInvalidSignature,
    );
    assert_eq!(error.reason(), "manifest_rejected");
}

#[test]
fn a_manifest_signed_by_another_agent_is_refused() {
    let f = fixture();
    let engine = setup(&f);
    // Producer WORKER, signed with the Coordinator's key: the Artifact profile's signer rule.
    let forged = signed_loose(&f, COORDINATOR, &good());
    let error = refused(
        &f,
        &engine,
        &publish(&f, WORKER, &forged, ""),
        WireCode::AuthInvalidSignature,
    );
    assert!(matches!(error, EngineError::Manifest(_)), "{error:?}");
}

/// Signs with `signer` even when it is not the producer (the strict signer may refuse that,
/// so the signature is made over a manifest naming the signer and the producer changed back
/// afterwards: the signature no longer covers the document, exactly a forgery).
fn signed_loose(f: &Fixture, signer: &str, manifest: &Value) -> Value {
    let (_, key) = f.keys.iter().find(|(p, _)| p.id == signer).unwrap();
    match SignedDocumentCodec::new().sign(SignedDocumentKind::Artifact, manifest, key) {
        Ok(s) => s.document,
        Err(_) => {
            let own = manifest_with_producer(manifest, signer);
            let document = signed(f, signer, &own);
            with(
                document,
                "producer",
                manifest.get("producer").unwrap().clone(),
            )
        }
    }
}

fn manifest_with_producer(manifest: &Value, producer: &str) -> Value {
    let mut p = manifest.get("producer").unwrap().clone();
    if let Value::Object(o) = &mut p {
        o.insert("agentId", Value::string(producer));
    }
    with(manifest.clone(), "producer", p)
}

#[test]
fn the_producer_must_be_the_actor() {
    let f = fixture();
    let engine = setup(&f);
    // A genuine manifest of the Coordinator, published by the Worker.
    let theirs = signed(
        &f,
        COORDINATOR,
        &manifest(COORDINATOR, MISSION, GROUP, "https://s.example.org/r"),
    );
    let error = refused(
        &f,
        &engine,
        &publish(&f, WORKER, &theirs, ""),
        WireCode::AuthForbidden,
    );
    assert_eq!(error.reason(), "producer_not_actor");
}

#[test]
fn inline_content_is_refused() {
    let f = fixture();
    let engine = setup(&f);
    // An extra `inlineContent` member (vector `artifact-with-inline-content`): not in artifact.schema.json (stage 2).
    let inline = with(
        signed(&f, WORKER, &good()),
        "content",
        Value::string("aGVsbG8="),
    );
    refused(
        &f,
        &engine,
        &publish(&f, WORKER, &inline, ""),
        WireCode::SchemaValidationFailed,
    );
    // A data: URI puts the bytes in the log (§13.1).
    let data = signed(
        &f,
        WORKER,
        &manifest(WORKER, MISSION, GROUP, "data:text/plain;base64,aGVsbG8="),
    );
    let error = refused(
        &f,
        &engine,
        &publish(&f, WORKER, &data, ""),
        WireCode::InvalidCommand,
    );
    assert_eq!(error.reason(), "inline_content");
}

#[test]
fn a_malformed_content_hash_is_refused() {
    let f = fixture();
    let engine = setup(&f);
    let bad = with(
        signed(&f, WORKER, &good()),
        "contentHash",
        Value::string("md5:abc"),
    );
    refused(
        &f,
        &engine,
        &publish(&f, WORKER, &bad, ""),
        WireCode::SchemaValidationFailed,
    );
}

#[test]
fn another_mission_group_or_work_item_is_refused() {
    let f = fixture();
    let engine = setup(&f);
    let other_mission = signed(
        &f,
        WORKER,
        &manifest(
            WORKER,
            "urn:missionweaveprotocol:mission:other",
            GROUP,
            "https://s.example.org/r",
        ),
    );
    let e = refused(
        &f,
        &engine,
        &publish(&f, WORKER, &other_mission, ""),
        WireCode::InvalidCommand,
    );
    assert_eq!(e.reason(), "artifact_wrong_mission");
    let other_group = signed(
        &f,
        WORKER,
        &manifest(
            WORKER,
            MISSION,
            "urn:missionweaveprotocol:group:other",
            "https://s.example.org/r",
        ),
    );
    let e = refused(
        &f,
        &engine,
        &publish(&f, WORKER, &other_group, ""),
        WireCode::InvalidCommand,
    );
    assert_eq!(e.reason(), "artifact_wrong_group");
    let other_item = signed(&f, WORKER, &with(good(), "workItemId", Value::string(W2)));
    let e = refused(
        &f,
        &engine,
        &publish(&f, WORKER, &other_item, ""),
        WireCode::InvalidCommand,
    );
    assert_eq!(e.reason(), "artifact_wrong_work_item");
}

#[test]
fn expected_revision_must_be_the_artifacts() {
    let f = fixture();
    let engine = setup(&f);
    let manifest = signed(&f, WORKER, &good());
    refused(
        &f,
        &engine,
        &publish(&f, WORKER, &manifest, r#""expectedRevision":1"#),
        WireCode::RevisionConflict,
    );
    perform(
        &f,
        &engine,
        &publish(&f, WORKER, &manifest, r#""expectedRevision":0"#),
    );
}

#[test]
fn perform_without_a_resolver_is_refused() {
    let f = fixture();
    let engine = setup(&f);
    let command = publish(&f, WORKER, &signed(&f, WORKER, &good()), "");
    let error = f.refused(&engine, &command, NOW, WireCode::InvalidCommand);
    assert_eq!(error.reason(), "resolver_required");
    let missing = f.command("artifact.publish", WORKER, "", "{}");
    let error = refused(&f, &engine, &missing, WireCode::InvalidCommand);
    assert_eq!(error.reason(), "missing_manifest");
}

#[test]
fn the_current_lease_and_ownership_epoch_are_required() {
    let f = fixture();
    let engine = setup(&f);
    let manifest = signed(&f, WORKER, &good());
    let lease = LEASE_ID.with(|l| l.borrow().clone());
    // §11.3: an older Lease ID is rejected even with the current Ownership Epoch.
    refused(
        &f,
        &engine,
        &publish_claiming(
            &f,
            WORKER,
            &manifest,
            "",
            1,
            "urn:missionweaveprotocol:lease:old",
        ),
        WireCode::WorkLeaseExpired,
    );
    // An older and a newer Ownership Epoch than the current 1.
    for stale in [0, 2] {
        refused(
            &f,
            &engine,
            &publish_claiming(&f, WORKER, &manifest, "", stale, &lease),
            WireCode::WorkStaleOwnership,
        );
    }
    let missing = f.command(
        "artifact.publish",
        WORKER,
        "",
        &format!(
            r#"{{"manifest":{}}}"#,
            String::from_utf8(json::canonical_bytes(&manifest).unwrap()).unwrap()
        ),
    );
    let e = refused(&f, &engine, &missing, WireCode::InvalidCommand);
    assert_eq!(e.reason(), "missing_lease_claim");
    perform(
        &f,
        &engine,
        &publish_claiming(&f, WORKER, &manifest, "", 1, &lease),
    );
}

#[test]
fn an_envelope_naming_another_work_item_is_refused() {
    let f = fixture();
    let engine = setup(&f);
    let manifest = signed(&f, WORKER, &good());
    let command = publish(&f, WORKER, &manifest, &format!(r#""workItemId":"{W2}""#));
    let e = refused(&f, &engine, &command, WireCode::InvalidCommand);
    assert_eq!(e.reason(), "artifact_wrong_work_item");
    let command = publish(&f, WORKER, &manifest, &format!(r#""workItemId":"{W1}""#));
    perform(&f, &engine, &command);
}

#[test]
fn racing_publishes_of_one_artifact_apply_once() {
    let f = fixture();
    let engine = setup(&f);
    // Distinct Commands (own Action IDs), one manifest per thread, all for the same artifactId.
    let commands: Vec<VerifiedCommand> = (0..6u64)
        .map(|i| {
            let size = json::parse(format!("{}", 100 + i).as_bytes()).unwrap();
            publish(
                &f,
                WORKER,
                &signed(&f, WORKER, &with(good(), "sizeBytes", size)),
                "",
            )
        })
        .collect();
    let outcomes: Vec<Result<usize, WireCode>> = std::thread::scope(|scope| {
        let handles: Vec<_> = commands
            .iter()
            .map(|c| {
                let (engine, f) = (&engine, &f);
                scope.spawn(move || {
                    // Each thread lends its own verified manifest to its own perform.
                    engine
                        .perform_with_resolver(c, NOW, &f.registry)
                        .map(|p| f.checked(&p).len())
                        .map_err(|e| e.wire_code())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(
        outcomes.iter().filter(|o| o.is_ok()).count(),
        1,
        "{outcomes:?}"
    );
    assert!(
        outcomes
            .iter()
            .filter_map(|o| o.as_ref().err())
            .all(|c| *c == WireCode::InvalidStateTransition),
        "{outcomes:?}"
    );
    let page = engine.replay(GROUP, 0, 10_000).unwrap();
    let published = page
        .events
        .iter()
        .map(|r| f.check_event(r))
        .filter(|e| text(e, "/kind") == "artifact.published")
        .count();
    assert_eq!(published, 1);
}
