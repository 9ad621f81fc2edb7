//! Ingress: six-stage verification (Command profile), then freshness, then authorization
//! (§6.4, §15.1), each with its wire code (`spec-digest.md` §3.13).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "ingress_fixture.rs"]
mod fixture;

use fixture::*;
use missionweaveprotocol::json::Value;
use missionweaveprotocol::signed_documents::WIRE_MESSAGE;
use missionweaveprotocol::{DescribeError, ErrorClass, PrincipalType, Stage, WireCode};
use missionweaveprotocol_engine::ingress::{
    AllowAllAuthorizerForTests, AuthorizationRefusal, CommandAuthorizer, CommandIngress,
    IngressError, VerifiedCommand,
};

fn ingress() -> CommandIngress<AllowAllAuthorizerForTests> {
    CommandIngress::new(AllowAllAuthorizerForTests)
}

#[test]
fn a_signed_fresh_command_passes_with_every_envelope_field() {
    let f = fixture();
    let unsigned = agent_command(
        NOW_TEXT,
        r#""coordinatorEpoch": 2, "expectedRevision": 41,
        "conversationId": "urn:missionweaveprotocol:conversation:c1",
        "workItemId": "urn:missionweaveprotocol:work-item:w1",
        "causedByEventId": "urn:missionweaveprotocol:event:e9",
        "cooperationOverrideGrantId": "urn:missionweaveprotocol:grant:g1",
        "extensions": {"urn:example:ext:x": {"version": "1.0.0", "critical": false, "data": {"n": 1.50}}}"#,
    );
    // Received bytes need not be canonical: send the signed document indented, number text as
    // written (`1.50`); the signature covers its JCS form.
    let signed = missionweaveprotocol::SignedDocumentCodec::new()
        .sign(
            missionweaveprotocol::SignedDocumentKind::Command,
            &unsigned,
            &f.agent_key,
        )
        .unwrap();
    let mut bytes = Vec::new();
    missionweaveprotocol::json::write_indented(&signed.document, 2, &mut bytes);
    assert_ne!(bytes, signed.bytes);
    let c = ingress().verify(&bytes, &f.registry, NOW).unwrap();
    assert_eq!(c.kind(), "work.checkpoint");
    assert_eq!(c.actor().kind, PrincipalType::Agent);
    assert_eq!(c.actor().id, AGENT);
    assert_eq!(
        c.action_id(),
        "urn:uuid:0b6d1c1e-6f0a-4b7e-9a53-2f1f0c9e7d11"
    );
    assert_eq!(
        c.correlation_id(),
        "urn:uuid:5e0c2a4b-1d3f-4e6a-8b7c-9d0e1f2a3b4c"
    );
    assert_eq!(c.group_id(), Some(GROUP));
    assert_eq!(
        c.conversation_id(),
        Some("urn:missionweaveprotocol:conversation:c1")
    );
    assert_eq!(
        c.work_item_id(),
        Some("urn:missionweaveprotocol:work-item:w1")
    );
    assert_eq!(
        c.caused_by_event_id(),
        Some("urn:missionweaveprotocol:event:e9")
    );
    assert_eq!(
        c.cooperation_override_grant_id(),
        Some("urn:missionweaveprotocol:grant:g1")
    );
    assert_eq!(c.issued_at().as_str(), NOW_TEXT);
    assert_eq!(c.expected_revision(), Some(41));
    assert_eq!(
        (
            c.session_epoch(),
            c.membership_epoch(),
            c.coordinator_epoch()
        ),
        (Some(3), Some(1), Some(2))
    );
    assert_eq!(
        c.payload()
            .get("step")
            .and_then(Value::as_number)
            .and_then(|n| n.as_u64()),
        Some(1)
    );
    // Extension data is kept as received: the number's text is not normalized.
    let data = c
        .extensions()
        .unwrap()
        .pointer("/urn:example:ext:x/data/n")
        .unwrap();
    assert_eq!(data.as_number().unwrap().as_text(), "1.50");
    assert_eq!(c.key_id(), f.agent_key.key_id());
    assert_eq!(c.organization_id(), ORG);
    // The exact received bytes, not a re-serialization.
    assert_eq!(c.bytes(), &bytes[..]);
    assert_eq!(c.signing_hash(), signed.signing_hash);
}

#[test]
fn optional_envelope_fields_are_absent_when_not_signed() {
    let f = fixture();
    let unsigned = missionweaveprotocol::json::parse(
        format!(
            r#"{{"protocolVersion": "0.1", "actionId": "urn:uuid:a1",
            "actor": {{"type": "service", "id": "{SERVICE}"}},
            "kind": "ext.missionweaveprotocol.identity.session_open",
            "correlationId": "urn:uuid:c1", "issuedAt": "{NOW_TEXT}", "payload": {{}}}}"#
        )
        .as_bytes(),
    )
    .unwrap();
    let c = ingress()
        .verify(&sign(&unsigned, &f.service_key), &f.registry, NOW)
        .unwrap();
    assert_eq!(c.actor().kind, PrincipalType::Service);
    assert_eq!(c.group_id(), None);
    assert_eq!(c.expected_revision(), None);
    assert_eq!(
        (
            c.session_epoch(),
            c.membership_epoch(),
            c.coordinator_epoch()
        ),
        (None, None, None)
    );
    assert_eq!(c.extensions(), None);
    assert_eq!(c.conversation_id(), None);
    assert!(c.payload().as_object().unwrap().is_empty());
}

fn assert_wire_view(e: &IngressError, code: WireCode) {
    assert_eq!(e.wire_code(), code);
    assert_eq!(e.to_string(), format!("{code}: {WIRE_MESSAGE}"));
    assert!(!e.retryable());
}

#[test]
fn a_tampered_command_fails_at_stage_6_with_the_verifier_wire_view() {
    let f = fixture();
    let bytes = sign(&agent_command(NOW_TEXT, ""), &f.agent_key);
    let tampered = String::from_utf8(bytes)
        .unwrap()
        .replace("\"step\":1", "\"step\":2");
    let e = ingress()
        .verify(tampered.as_bytes(), &f.registry, NOW)
        .unwrap_err();
    assert_wire_view(&e, WireCode::AuthInvalidSignature);
    assert_eq!(e.stage(), Some(Stage::Signature));
    assert_eq!(e.class(), ErrorClass::Verification);
    assert!(matches!(e, IngressError::Verification(_)));
}

#[test]
fn an_unknown_key_fails_at_stage_4_and_looks_like_a_bad_signature() {
    let f = fixture();
    // The stranger key is not in the Registry at all.
    let e = ingress()
        .verify(
            &sign(&agent_command(NOW_TEXT, ""), &f.stranger_key),
            &f.registry,
            NOW,
        )
        .unwrap_err();
    assert_wire_view(&e, WireCode::AuthInvalidSignature);
    assert_eq!(e.stage(), Some(Stage::KeyResolution));
}

#[test]
fn a_key_bound_to_another_principal_is_rejected() {
    let f = fixture();
    // The human's key signs a Command whose actor is the Agent: expected-signer rule (§6.4).
    let e = ingress()
        .verify(
            &sign(&agent_command(NOW_TEXT, ""), &f.human_key),
            &f.registry,
            NOW,
        )
        .unwrap_err();
    assert_wire_view(&e, WireCode::AuthInvalidSignature);
    assert_eq!(e.stage(), Some(Stage::KeyResolution));
}

#[test]
fn another_document_kind_fails_the_command_profile_at_stage_2() {
    let f = fixture();
    // A correctly signed Event is not a Command.
    let event = missionweaveprotocol::json::parse(
        format!(
            r#"{{"protocolVersion": "0.1", "eventId": "urn:uuid:e1", "groupId": "{GROUP}",
            "sequence": 1, "aggregateRevision": 1, "kind": "work.checkpointed",
            "actor": {{"type": "agent", "id": "{AGENT}"}},
            "cause": {{"type": "command", "id": "urn:uuid:a1"}}, "correlationId": "urn:uuid:c1",
            "occurredAt": "{NOW_TEXT}", "payload": {{}},
            "acceptedBy": {{"type": "service", "id": "{AUTHORITY}"}}}}"#
        )
        .as_bytes(),
    )
    .unwrap();
    let bytes = missionweaveprotocol::SignedDocumentCodec::new()
        .sign(
            missionweaveprotocol::SignedDocumentKind::Event,
            &event,
            &f.authority_key,
        )
        .unwrap()
        .bytes;
    let e = ingress().verify(&bytes, &f.registry, NOW).unwrap_err();
    assert_wire_view(&e, WireCode::SchemaValidationFailed);
    assert_eq!(e.stage(), Some(Stage::Schema));
}

#[test]
fn malformed_json_is_a_protocol_violation() {
    let f = fixture();
    let e = ingress()
        .verify(b"{\"a\":1,\"a\":2}", &f.registry, NOW)
        .unwrap_err();
    assert_wire_view(&e, WireCode::ProtocolViolation);
    assert_eq!(e.stage(), Some(Stage::Parse));
}

/// Refuses every Command of one kind, letting the rest through.
struct RefuseKind(&'static str);

impl CommandAuthorizer for RefuseKind {
    fn authorize(&self, command: &VerifiedCommand) -> Result<(), AuthorizationRefusal> {
        if command.kind() == self.0 {
            Err(AuthorizationRefusal::new(
                "not_work_owner",
                format!("{} may not {}", command.actor().id, command.kind()),
            ))
        } else {
            Ok(())
        }
    }
}

#[test]
fn an_authorizer_refusal_is_auth_forbidden_and_an_approval_passes() {
    let f = fixture();
    let bytes = sign(&agent_command(NOW_TEXT, ""), &f.agent_key);
    let refusing = CommandIngress::new(RefuseKind("work.checkpoint"));
    let e = refusing.verify(&bytes, &f.registry, NOW).unwrap_err();
    assert_eq!(e.wire_code(), WireCode::AuthForbidden);
    assert_eq!(DescribeError::reason(&e), "not_work_owner");
    assert_eq!(e.class(), ErrorClass::Verification);
    assert_eq!(e.stage(), None);
    assert!(e.detail().contains("may not work.checkpoint"));
    assert!(!e.retryable());
    assert!(!e.to_string().starts_with("AUTH_FORBIDDEN"));
    // Another kind is refused; this one passes.
    let permissive = CommandIngress::new(RefuseKind("work.start"));
    assert!(permissive.verify(&bytes, &f.registry, NOW).is_ok());
    // A per-call authorizer overrides the ingress's own.
    let e = permissive
        .verify_with(&bytes, &f.registry, &RefuseKind("work.checkpoint"), NOW)
        .unwrap_err();
    assert_eq!(e.wire_code(), WireCode::AuthForbidden);
}

/// Counts calls, to show the order: no authorization before verification and freshness.
struct Counting(std::cell::Cell<u32>);

impl CommandAuthorizer for Counting {
    fn authorize(&self, _: &VerifiedCommand) -> Result<(), AuthorizationRefusal> {
        self.0.set(self.0.get() + 1);
        Ok(())
    }
}

#[test]
fn the_authorizer_is_not_asked_about_unverified_or_stale_commands() {
    let f = fixture();
    let ingress = CommandIngress::new(Counting(std::cell::Cell::new(0)));
    let bytes = sign(&agent_command(NOW_TEXT, ""), &f.agent_key);
    let tampered = String::from_utf8(bytes.clone())
        .unwrap()
        .replace("\"step\":1", "\"step\":2");
    assert!(
        ingress
            .verify(tampered.as_bytes(), &f.registry, NOW)
            .is_err()
    );
    let stale = sign(&agent_command("2026-07-15T09:00:00Z", ""), &f.agent_key);
    assert!(ingress.verify(&stale, &f.registry, NOW).is_err());
    assert_eq!(ingress.authorizer().0.get(), 0);
    assert!(ingress.verify(&bytes, &f.registry, NOW).is_ok());
    assert_eq!(ingress.authorizer().0.get(), 1);
}

#[test]
fn human_commands_carry_a_membership_epoch_and_no_session_epoch() {
    let f = fixture();
    let unsigned = missionweaveprotocol::json::parse(
        format!(
            r#"{{"protocolVersion": "0.1", "actionId": "urn:uuid:h1",
            "actor": {{"type": "human", "id": "{HUMAN}"}}, "membershipEpoch": 4,
            "groupId": "{GROUP}", "kind": "mission.approve", "expectedRevision": 0,
            "correlationId": "urn:uuid:c1", "issuedAt": "{NOW_TEXT}", "payload": {{}}}}"#
        )
        .as_bytes(),
    )
    .unwrap();
    let c = ingress()
        .verify(&sign(&unsigned, &f.human_key), &f.registry, NOW)
        .unwrap();
    assert_eq!(c.actor().kind, PrincipalType::Human);
    assert_eq!(c.kind(), "mission.approve");
    assert_eq!((c.session_epoch(), c.membership_epoch()), (None, Some(4)));
    assert_eq!(c.expected_revision(), Some(0));
    // Signed by the Agent's key instead: the expected signer is the human (§6.4).
    let e = ingress()
        .verify(&sign(&unsigned, &f.agent_key), &f.registry, NOW)
        .unwrap_err();
    assert_eq!(e.stage(), Some(Stage::KeyResolution));
}

#[test]
fn critical_extensions_are_listed_for_the_engine_and_the_receipt_key_is_the_actors() {
    let f = fixture();
    let unsigned = agent_command(
        NOW_TEXT,
        r#""extensions": {
            "urn:example:ext:b": {"version": "1.0.0", "critical": true, "data": {}},
            "urn:example:ext:n": {"version": "1.0.0", "critical": false, "data": {}},
            "urn:example:ext:a": {"version": "2.0.0", "critical": true, "data": [1]}}"#,
    );
    let c = ingress()
        .verify(&sign(&unsigned, &f.agent_key), &f.registry, NOW)
        .unwrap();
    let mut critical = c.critical_extension_ids();
    critical.sort_unstable();
    assert_eq!(critical, ["urn:example:ext:a", "urn:example:ext:b"]);
    let plain = ingress()
        .verify(
            &sign(&agent_command(NOW_TEXT, ""), &f.agent_key),
            &f.registry,
            NOW,
        )
        .unwrap();
    assert!(plain.critical_extension_ids().is_empty());
    let key = plain.receipt_key();
    assert_eq!(
        (
            key.actor_type.as_str(),
            key.actor_id.as_str(),
            key.action_id.as_str()
        ),
        ("agent", AGENT, plain.action_id())
    );
}
