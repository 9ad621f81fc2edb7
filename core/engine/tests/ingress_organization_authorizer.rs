//! `OrganizationAuthorizer`, the default `CommandAuthorizer`: each rule positive and negative,
//! through `CommandIngress` (a refusal is `AUTH_FORBIDDEN` with the rule's reason slug).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_fixture.rs"]
mod engine_fixture;

use engine_fixture::*;
use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol::{DescribeError, SignedDocumentCodec, SignedDocumentKind, WireCode};
use missionweaveprotocol_engine::ingress::{
    CommandIngress, IngressError, OrganizationAuthorizer, VerifiedCommand,
};

/// The Organization: `SERVICE` is its identity authority (bootstrap) and its control plane
/// (policy); `AUTHORITY` (a registered service key too) is neither.
fn authorizer() -> OrganizationAuthorizer {
    OrganizationAuthorizer::new([SERVICE], [SERVICE])
}

fn through(f: &Fixture, signer: &str, unsigned: &Value) -> Result<VerifiedCommand, IngressError> {
    let key = if signer == AUTHORITY {
        &f.authority_key
    } else {
        &f.keys.iter().find(|(p, _)| p.id == signer).unwrap().1
    };
    let bytes = SignedDocumentCodec::new()
        .sign(SignedDocumentKind::Command, unsigned, key)
        .unwrap()
        .bytes;
    CommandIngress::new(authorizer()).verify(&bytes, &f.registry, NOW)
}

fn forbidden(result: Result<VerifiedCommand, IngressError>, reason: &str) {
    let e = result.unwrap_err();
    assert_eq!(e.wire_code(), WireCode::AuthForbidden);
    assert_eq!(e.reason(), reason);
}

/// `unsigned` with its actor replaced by the service `id`.
fn as_service(mut unsigned: Value, id: &str) -> Value {
    if let Value::Object(o) = &mut unsigned {
        o.insert(
            "actor",
            json::parse(format!(r#"{{"type": "service", "id": "{id}"}}"#).as_bytes()).unwrap(),
        );
    }
    unsigned
}

#[test]
fn bootstrap_kinds_need_a_bootstrap_service() {
    let f = fixture();
    let open = |f: &Fixture| {
        f.unsigned_service(
            "ext.missionweaveprotocol.identity.session_open",
            &f.action(),
            &format!(r#"{{"agentId": "{OTHER_AGENT}"}}"#),
        )
    };
    assert!(through(&f, SERVICE, &open(&f)).is_ok());
    forbidden(
        through(&f, AUTHORITY, &as_service(open(&f), AUTHORITY)),
        "not_bootstrap_service",
    );
    let register = f.unsigned_service(
        "ext.missionweaveprotocol.registry.agent_card_register",
        &f.action(),
        "{}",
    );
    assert!(through(&f, SERVICE, &register).is_ok());
    forbidden(
        through(&f, AUTHORITY, &as_service(register, AUTHORITY)),
        "not_bootstrap_service",
    );
}

#[test]
fn policy_services_sign_only_policy_kinds() {
    let f = fixture();
    let service = |kind: &str, payload: &str| f.unsigned(kind, SERVICE, &f.action(), "", payload);
    for (kind, payload) in [
        ("mission.cancel", r#"{"reason": "policy"}"#),
        ("mission.terminate", r#"{"reason": "policy"}"#),
        (
            "mission.assign_coordinator",
            r#"{"agentId": "urn:missionweaveprotocol:agent:reviewer", "agentCardVersion": 1, "leaseId": "urn:missionweaveprotocol:lease:c2"}"#,
        ),
        (
            "work.cancel",
            r#"{"workItemId": "urn:missionweaveprotocol:work:w", "reason": "policy"}"#,
        ),
    ] {
        assert!(
            through(&f, SERVICE, &service(kind, payload)).is_ok(),
            "{kind}"
        );
    }
    // A service the Organization does not know.
    let unknown = as_service(service("mission.cancel", r#"{"reason": "x"}"#), AUTHORITY);
    forbidden(through(&f, AUTHORITY, &unknown), "unknown_service");
    // A known service on a kind no Organization policy signs.
    forbidden(
        through(
            &f,
            SERVICE,
            &service("work.propose", r#"{"proposalId": "p"}"#),
        ),
        "service_kind_not_allowed",
    );
}

#[test]
fn human_kinds_need_a_human() {
    let f = fixture();
    let payload = r#"{"approvalId": "urn:missionweaveprotocol:approval:x", "workItemId": "urn:missionweaveprotocol:work:w"}"#;
    let by = |actor: &str| f.unsigned("approval.grant_execution", actor, &f.action(), "", payload);
    assert!(through(&f, OWNER, &by(OWNER)).is_ok());
    forbidden(through(&f, OTHER_AGENT, &by(OTHER_AGENT)), "human_only");
    // Mission creation: the schema itself requires a human (digest A.1); the human passes.
    assert!(
        through(
            &f,
            OWNER,
            &f.unsigned(
                "mission.create",
                OWNER,
                &f.action(),
                "",
                &f.create_payload(MISSION, "")
            )
        )
        .is_ok()
    );
}

#[test]
fn worker_kinds_need_an_agent() {
    let f = fixture();
    let payload = r#"{"workItemId": "urn:missionweaveprotocol:work:w", "ownershipEpoch": 1, "leaseId": "urn:missionweaveprotocol:lease:l"}"#;
    for kind in [
        "work.start",
        "work.checkpoint",
        "work.submit",
        "artifact.publish",
    ] {
        let by = |actor: &str| f.unsigned(kind, actor, &f.action(), "", payload);
        assert!(through(&f, OTHER_AGENT, &by(OTHER_AGENT)).is_ok(), "{kind}");
        forbidden(through(&f, OWNER, &by(OWNER)), "agent_only");
    }
}

#[test]
fn other_kinds_pass_to_the_engine() {
    // Roles that need state (MissionOwner, current Coordinator, owner) are the engine's.
    let f = fixture();
    let cancel = f.unsigned(
        "mission.cancel",
        OTHER_HUMAN,
        &f.action(),
        "",
        r#"{"reason": "x"}"#,
    );
    assert!(through(&f, OTHER_HUMAN, &cancel).is_ok());
    let authority = OrganizationAuthorizer::new(["urn:a"], Vec::<String>::new());
    assert!(authority.is_bootstrap_service("urn:a"));
    assert!(!authority.is_policy_service("urn:a"));
}
