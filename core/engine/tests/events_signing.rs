//! Events built from verified Commands are normative signed documents: each passes our own
//! six-stage verifier with the Event profile against a Registry holding the authority key
//! (§6.4, §15.2); a wrong key or a changed byte fails.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "ingress_fixture.rs"]
mod fixture;

use std::cell::Cell;

use fixture::*;
use missionweaveprotocol::crypto::{Signer, SignerError, SigningKey};
use missionweaveprotocol::json::{Number, Object, Value, canonical_bytes};
use missionweaveprotocol::{
    DescribeError, Principal, PrincipalType, SignedDocumentCodec, SignedDocumentKind, Stage,
    WireCode,
};
use missionweaveprotocol_engine::events::{
    Cause, CauseType, EventBuildError, EventDraft, EventIdSource, EventIssuer, SequentialEventIds,
    SignedEvent,
};
use missionweaveprotocol_engine::ingress::{
    AllowAllAuthorizerForTests, CommandIngress, VerifiedCommand,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

fn authority() -> Principal {
    Principal::new(PrincipalType::Service, AUTHORITY)
}

fn command(f: &Fixture, extra: &str) -> VerifiedCommand {
    let bytes = sign(&agent_command(NOW_TEXT, extra), &f.agent_key);
    CommandIngress::new(AllowAllAuthorizerForTests)
        .verify(&bytes, &f.registry, NOW)
        .unwrap()
}

fn payload(n: u64) -> Object {
    let mut o = Object::new();
    o.insert("n", Value::Number(Number::from_u64(n)));
    o
}

fn verify(
    f: &Fixture,
    event: &SignedEvent,
) -> Result<missionweaveprotocol::VerifiedSignedDocument, missionweaveprotocol::VerificationError> {
    let verified = event.verify(&f.registry);
    // The method is the plain six-stage verifier, Event profile.
    let direct =
        SignedDocumentCodec::new().verify(SignedDocumentKind::Event, event.bytes(), &f.registry);
    assert_eq!(verified.is_ok(), direct.is_ok());
    verified
}

const KINDS: [&str; 6] = [
    "work.checkpointed",
    "work.started",
    "work.progressed",
    "mission.created",
    "membership.changed",
    "ext.acme.custom.thing_happened",
];

#[test]
fn many_events_pass_the_six_stage_verifier_with_their_fields() {
    let f = fixture();
    let c = command(
        &f,
        r#""workItemId": "urn:missionweaveprotocol:work-item:w1""#,
    );
    let issuer = EventIssuer::new(authority(), f.authority_key.clone());
    let mut ids = SequentialEventIds::new("urn:missionweaveprotocol:event:test-");
    for sequence in 1..=300u64 {
        let now = UnixMillis(NOW.0 + sequence as i64 * 7);
        let kind = KINDS[sequence as usize % KINDS.len()];
        let draft =
            EventDraft::for_command(&c, kind, payload(sequence)).at(GROUP, sequence, sequence / 2);
        let event = issuer.issue(&draft, &mut ids, now).unwrap();
        let verified = verify(&f, &event).unwrap();
        assert_eq!(verified.principal, authority());
        assert_eq!(verified.key_id, f.authority_key.key_id());
        assert_eq!(verified.signing_hash, event.signing_hash());
        let d = event.document();
        let text = |p: &str| d.pointer(p).and_then(Value::as_str).unwrap().to_owned();
        let int = |p: &str| {
            d.pointer(p)
                .and_then(Value::as_number)
                .and_then(|n| n.as_u64())
        };
        assert_eq!(
            text("/eventId"),
            format!("urn:missionweaveprotocol:event:test-{sequence}")
        );
        assert_eq!(event.event_id(), text("/eventId"));
        assert_eq!(text("/kind"), kind);
        assert_eq!(text("/groupId"), GROUP);
        assert_eq!(int("/sequence"), Some(sequence));
        assert_eq!(event.sequence(), Some(sequence));
        assert_eq!(int("/aggregateRevision"), Some(sequence / 2));
        assert_eq!(text("/commandHash"), c.signing_hash());
        assert_eq!(text("/cause/type"), "command");
        assert_eq!(text("/cause/id"), c.action_id());
        assert_eq!(text("/correlationId"), c.correlation_id());
        assert_eq!(text("/workItemId"), "urn:missionweaveprotocol:work-item:w1");
        assert_eq!(text("/actor/id"), AGENT);
        assert_eq!(text("/acceptedBy/id"), AUTHORITY);
        assert_eq!(text("/occurredAt"), now.to_rfc3339().unwrap());
        assert_eq!(text("/signature/createdAt"), now.to_rfc3339().unwrap());
        assert_eq!(int("/payload/n"), Some(sequence));
        assert_eq!(d.get("conversationId"), None);
        assert_eq!(d.get("extensions"), None);
        let at = event.event_ref();
        assert_eq!(at.event_id, event.event_id());
        assert_eq!(at.position, Some((GROUP.to_owned(), sequence)));
        let record = event.to_record().unwrap();
        assert_eq!(record.sequence, sequence);
        assert_eq!(&*record.event_id, event.event_id());
        assert_eq!(&record.body[..], event.bytes());
    }
    assert_eq!(ids.issued(), 300);
}

#[test]
fn a_key_the_registry_does_not_bind_to_accepted_by_fails_verification() {
    let f = fixture();
    let c = command(&f, "");
    let draft = EventDraft::for_command(&c, "work.checkpointed", payload(1)).at(GROUP, 1, 1);
    let mut ids = SequentialEventIds::new("urn:missionweaveprotocol:event:k-");
    // An unregistered key, and a registered key bound to another Principal (the Agent).
    for key in [f.stranger_key.clone(), f.agent_key.clone()] {
        let event = EventIssuer::new(authority(), key)
            .issue(&draft, &mut ids, NOW)
            .unwrap();
        let e = verify(&f, &event).unwrap_err();
        assert_eq!(e.stage, Stage::KeyResolution);
        assert_eq!(e.wire_code(), WireCode::AuthInvalidSignature);
    }
    // The authority key signing as someone else (acceptedBy ≠ its binding) fails too.
    let impostor = EventIssuer::new(
        Principal::new(PrincipalType::Service, SERVICE),
        f.authority_key.clone(),
    );
    let e = verify(&f, &impostor.issue(&draft, &mut ids, NOW).unwrap()).unwrap_err();
    assert_eq!(e.stage, Stage::KeyResolution);
}

#[test]
fn a_changed_byte_in_a_signed_event_fails_at_stage_6() {
    let f = fixture();
    let c = command(&f, "");
    let issuer = EventIssuer::new(authority(), f.authority_key.clone());
    let mut ids = SequentialEventIds::new("urn:missionweaveprotocol:event:t-");
    let event = issuer
        .issue(
            &EventDraft::for_command(&c, "work.checkpointed", payload(5)).at(GROUP, 7, 3),
            &mut ids,
            NOW,
        )
        .unwrap();
    verify(&f, &event).unwrap();
    let text = std::str::from_utf8(event.bytes()).unwrap();
    for (from, to) in [
        ("\"sequence\":7", "\"sequence\":8"),
        ("\"n\":5", "\"n\":6"),
        ("\"aggregateRevision\":3", "\"aggregateRevision\":4"),
    ] {
        assert!(text.contains(from), "{from}");
        let tampered = text.replacen(from, to, 1);
        let e = SignedDocumentCodec::new()
            .verify(SignedDocumentKind::Event, tampered.as_bytes(), &f.registry)
            .unwrap_err();
        assert_eq!(e.stage, Stage::Signature, "{from}");
    }
}

#[test]
fn noncritical_extensions_are_relayed_byte_equivalently_and_critical_ones_are_not() {
    let f = fixture();
    let c = command(
        &f,
        r#""extensions": {
            "urn:example:ext:keep": {"version": "1.2.0", "critical": false,
                "data": {"x": 1.50, "s": "\u00e9", "nested": {"signature": "not-the-envelope"}}},
            "urn:missionweaveprotocol:extension:bounded-offline-execution":
                {"version": "0.1.0", "critical": true, "data": {}}}"#,
    );
    let issuer = EventIssuer::new(authority(), f.authority_key.clone());
    let mut ids = SequentialEventIds::new("urn:missionweaveprotocol:event:x-");
    let event = issuer
        .issue(
            &EventDraft::for_command(&c, "work.checkpointed", payload(1)).at(GROUP, 1, 1),
            &mut ids,
            NOW,
        )
        .unwrap();
    verify(&f, &event).unwrap();
    let relayed = event
        .document()
        .get("extensions")
        .unwrap()
        .as_object()
        .unwrap();
    assert_eq!(relayed.len(), 1);
    let sent = c.extensions().unwrap().get("urn:example:ext:keep").unwrap();
    let kept = relayed.get("urn:example:ext:keep").unwrap();
    assert_eq!(
        canonical_bytes(kept).unwrap(),
        canonical_bytes(sent).unwrap()
    );
    assert!(
        relayed
            .get("urn:missionweaveprotocol:extension:bounded-offline-execution")
            .is_none()
    );
    // Only critical extensions: nothing to relay, no `extensions` member.
    let only_critical = command(
        &f,
        r#""extensions": {"urn:example:ext:c": {"version": "1.0.0", "critical": true, "data": null}}"#,
    );
    let draft = EventDraft::for_command(&only_critical, "work.checkpointed", payload(1));
    assert_eq!(draft.extensions, None);
}

#[test]
fn organization_scoped_events_carry_no_group_position() {
    let f = fixture();
    let issuer = EventIssuer::new(authority(), f.authority_key.clone());
    let mut ids = SequentialEventIds::new("urn:missionweaveprotocol:event:o-");
    let draft = EventDraft {
        kind: "ext.missionweaveprotocol.identity.session_opened".into(),
        actor: Principal::new(PrincipalType::Service, SERVICE),
        cause: Cause {
            kind: CauseType::Command,
            id: "urn:uuid:a1".into(),
        },
        correlation_id: "urn:uuid:c1".into(),
        position: None,
        conversation_id: None,
        work_item_id: None,
        payload: Object::new(),
        command_hash: None,
        extensions: None,
    };
    let event = issuer.issue(&draft, &mut ids, NOW).unwrap();
    verify(&f, &event).unwrap();
    assert_eq!(event.sequence(), None);
    assert!(event.to_record().is_none());
    assert_eq!(event.event_ref().position, None);
    assert_eq!(event.document().get("groupId"), None);
    // The schema forbids a Group position on them: signing refuses.
    let e = issuer
        .issue(&draft.clone().at(GROUP, 1, 1), &mut ids, NOW)
        .unwrap_err();
    assert!(matches!(e, EventBuildError::Signing(_)));
    assert_eq!(e.stage(), Some(Stage::Schema));
    assert_eq!(e.wire_code(), WireCode::InternalError);
    // And a Group Event needs one.
    let mut group_kind = draft;
    group_kind.kind = "work.progressed".into();
    let e = issuer.issue(&group_kind, &mut ids, NOW).unwrap_err();
    assert_eq!(e.stage(), Some(Stage::Schema));
}

#[test]
fn a_timer_caused_event_has_no_command_hash_and_verifies() {
    let f = fixture();
    let issuer = EventIssuer::new(authority(), f.authority_key.clone());
    let mut ids = SequentialEventIds::new("urn:missionweaveprotocol:event:timer-");
    let draft = EventDraft {
        kind: "work.failed".into(),
        actor: authority(),
        cause: Cause {
            kind: CauseType::Timer,
            id: "urn:missionweaveprotocol:lease:l1".into(),
        },
        correlation_id: "urn:uuid:c1".into(),
        position: None,
        conversation_id: Some("urn:missionweaveprotocol:conversation:c".into()),
        work_item_id: Some("urn:missionweaveprotocol:work-item:w".into()),
        payload: Object::new(),
        command_hash: None,
        extensions: None,
    }
    .at(GROUP, 12, 4);
    let event = issuer.issue(&draft, &mut ids, NOW).unwrap();
    verify(&f, &event).unwrap();
    let d = event.document();
    assert_eq!(
        d.pointer("/cause/type").and_then(Value::as_str),
        Some("timer")
    );
    assert_eq!(d.get("commandHash"), None);
    assert_eq!(
        d.get("conversationId").and_then(Value::as_str),
        Some("urn:missionweaveprotocol:conversation:c")
    );
}

#[test]
fn the_same_inputs_give_byte_identical_events() {
    let f = fixture();
    let c = command(&f, "");
    let draft = EventDraft::for_command(&c, "work.checkpointed", payload(3)).at(GROUP, 3, 2);
    let a = EventIssuer::new(authority(), f.authority_key.clone());
    let b = EventIssuer::new(authority(), f.authority_key.clone());
    let mut ids_a = SequentialEventIds::new("urn:missionweaveprotocol:event:d-");
    let mut ids_b = SequentialEventIds::new("urn:missionweaveprotocol:event:d-");
    for _ in 0..5 {
        assert_eq!(
            a.issue(&draft, &mut ids_a, NOW).unwrap().bytes(),
            b.issue(&draft, &mut ids_b, NOW).unwrap().bytes()
        );
    }
}

/// An invalid ID from the injected source: signing refuses, nothing is produced.
struct BadIds;

impl EventIdSource for BadIds {
    fn next_event_id(&mut self) -> String {
        "not a uri".into()
    }
}

#[test]
fn an_invalid_event_id_or_time_is_an_internal_error_not_an_event() {
    let f = fixture();
    let c = command(&f, "");
    let issuer = EventIssuer::new(authority(), f.authority_key.clone());
    let draft = EventDraft::for_command(&c, "work.checkpointed", payload(1)).at(GROUP, 1, 1);
    let e = issuer.issue(&draft, &mut BadIds, NOW).unwrap_err();
    assert_eq!(e.stage(), Some(Stage::Schema));
    assert_eq!(e.wire_code(), WireCode::InternalError);
    assert_eq!(DescribeError::reason(&e), "event_unsignable");
    let mut ids = SequentialEventIds::new("urn:missionweaveprotocol:event:y-");
    let e = issuer
        .issue(&draft, &mut ids, UnixMillis(i64::MAX))
        .unwrap_err();
    assert!(matches!(e, EventBuildError::UnrenderableTime(_)));
    assert_eq!(e.wire_code(), WireCode::InternalError);
    assert!(!e.to_string().is_empty());
    // A sequence of 0 is not a Group sequence (`positiveInteger`).
    let zero = EventDraft::for_command(&c, "work.checkpointed", payload(1)).at(GROUP, 0, 0);
    assert_eq!(
        issuer.issue(&zero, &mut ids, NOW).unwrap_err().stage(),
        Some(Stage::Schema)
    );
}

/// A stand-in for an HSM: signs through a callback, counting calls, or refuses.
struct Hsm {
    key: SigningKey,
    calls: Cell<u32>,
    refuse: bool,
}

impl Signer for Hsm {
    fn key_id(&self) -> &str {
        self.key.key_id()
    }
    fn public_key_bytes(&self) -> [u8; 32] {
        self.key.public_key_bytes()
    }
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, SignerError> {
        self.calls.set(self.calls.get() + 1);
        if self.refuse {
            return Err(SignerError::new("device locked"));
        }
        Ok(self.key.sign(message).to_vec())
    }
}

#[test]
fn an_external_signer_plugs_in_and_its_failure_is_reported() {
    let f = fixture();
    let c = command(&f, "");
    let draft = EventDraft::for_command(&c, "work.checkpointed", payload(1)).at(GROUP, 1, 1);
    let mut ids = SequentialEventIds::new("urn:missionweaveprotocol:event:h-");
    let hsm = EventIssuer::new(
        authority(),
        Hsm {
            key: f.authority_key.clone(),
            calls: Cell::new(0),
            refuse: false,
        },
    );
    let event = hsm.issue(&draft, &mut ids, NOW).unwrap();
    verify(&f, &event).unwrap();
    assert_eq!(hsm.signer().calls.get(), 1);
    let locked = EventIssuer::new(
        authority(),
        Hsm {
            key: f.authority_key.clone(),
            calls: Cell::new(0),
            refuse: true,
        },
    );
    let e = locked.issue(&draft, &mut ids, NOW).unwrap_err();
    assert_eq!(e.stage(), Some(Stage::Signature));
    assert!(e.to_string().contains("device locked"));
}
