//! `CoreConfig` (`config.rs`): every set-up rule of a Core, a positive and a negative case each.
//! The same refusals are checked from Python, Node and WebAssembly through the shared error
//! corpus (`tests/errors/failing-calls.json`, op `core_config`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_fixture.rs"]
mod fixture;

use std::sync::Arc;

use fixture::*;
use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::schema_formats::encode_base64url;
use missionweaveprotocol::{DescribeError, ErrorClass, PrincipalType, WireCode};
use missionweaveprotocol_engine::config::{
    ConfigError, CooperationLimitsConfig, CoreConfig, Limit, OfflineLimitsConfig,
    cooperation_limits_json,
};
use missionweaveprotocol_engine::service::Core;
use missionweaveprotocol_engine::store::{InMemoryStore, Store};
use missionweaveprotocol_kernel::cooperation::CooperationLimits;
use missionweaveprotocol_kernel::random::{RandomSource, RandomUnavailable};

/// Counts every call: proves whether randomness was drawn.
#[derive(Debug, Default)]
struct Counting(Arc<std::sync::atomic::AtomicU64>);

impl RandomSource for Counting {
    fn fill(&mut self, out: &mut [u8]) -> Result<(), RandomUnavailable> {
        let n = self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        for (i, b) in out.iter_mut().enumerate() {
            *b = (n as u8).wrapping_add(i as u8).wrapping_mul(31);
        }
        Ok(())
    }
}

fn options(extra: &str) -> String {
    format!(r#"{{"authority":{{"type":"service","id":"{AUTHORITY}"}}{extra}}}"#)
}

fn build(f: &Fixture, config: CoreConfig) -> Result<Core<InMemoryStore>, ConfigError> {
    config.build(
        InMemoryStore::new(),
        Arc::clone(&f.registry),
        f.authority_key.clone(),
        Box::new(Counting::default()),
    )
}

fn refused(f: &Fixture, extra: &str) -> ConfigError {
    let config = CoreConfig::from_json(&options(extra)).unwrap();
    match build(f, config) {
        Ok(_) => panic!("{extra} was accepted"),
        Err(e) => e,
    }
}

fn session_open(f: &Fixture) -> Vec<u8> {
    let open = f.unsigned_service(
        "ext.missionweaveprotocol.identity.session_open",
        &f.action(),
        &format!(r#"{{"agentId": "{COORDINATOR}"}}"#),
    );
    let (_, key) = f.keys.iter().find(|(p, _)| p.id == SERVICE).unwrap();
    missionweaveprotocol::SignedDocumentCodec::new()
        .sign(
            missionweaveprotocol::SignedDocumentKind::Command,
            &open,
            key,
        )
        .unwrap()
        .bytes
}

#[test]
fn a_bound_authority_key_builds_and_signs_verifiable_events() {
    let f = fixture();
    let config =
        CoreConfig::from_json(&options(&format!(r#","bootstrapServices":["{SERVICE}"]"#))).unwrap();
    let core = build(&f, config).unwrap();
    let performed = core.perform_bytes(&session_open(&f), NOW).unwrap();
    f.checked(&performed);
}

#[test]
fn an_authority_key_bound_to_another_principal_or_not_bound_is_refused() {
    let f = fixture();
    // The key of another principal (the control-plane service's), named as the authority's.
    let config = CoreConfig::from_json(&options("")).unwrap();
    let (_, other) = f.keys.iter().find(|(p, _)| p.id == SERVICE).unwrap();
    let e = config
        .clone()
        .build(
            InMemoryStore::new(),
            Arc::clone(&f.registry),
            other.clone(),
            Box::new(Counting::default()),
        )
        .err()
        .unwrap();
    assert_eq!(e.reason(), "authority_key_not_bound");
    assert_eq!(e.class(), ErrorClass::Argument);
    assert_eq!(e.wire_code(), WireCode::ProtocolViolation);
    // A key the Registry does not hold at all.
    let stranger = SigningKey::from_seed("urn:missionweaveprotocol:key:stranger", &[99; 32]);
    let e = config
        .build(
            InMemoryStore::new(),
            Arc::clone(&f.registry),
            stranger,
            Box::new(Counting::default()),
        )
        .err()
        .unwrap();
    assert_eq!(e.reason(), "authority_key_not_bound");
    // The right key under another authority Principal.
    let e = refused_as(&f, r#"{"authority":{"type":"service","id":"urn:x:other"}}"#);
    assert_eq!(e.reason(), "authority_key_not_bound");
}

fn refused_as(f: &Fixture, json: &str) -> ConfigError {
    build(f, CoreConfig::from_json(json).unwrap())
        .err()
        .unwrap()
}

#[test]
fn the_snapshot_authority_must_be_the_group_authority_and_complete() {
    let f = fixture();
    let key_id = f.authority_key.key_id().to_owned();
    let public = encode_base64url(&f.authority_key.public_key_bytes());
    // Both, naming the Group Authority's key: accepted.
    let ok =
        format!(r#","snapshotAuthorityKeyId":"{key_id}","snapshotAuthorityPublicKey":"{public}""#);
    build(&f, CoreConfig::from_json(&options(&ok)).unwrap()).unwrap();
    // Only one of the pair.
    let half = format!(r#","snapshotAuthorityKeyId":"{key_id}""#);
    assert_eq!(refused(&f, &half).reason(), "snapshot_authority_incomplete");
    let half = format!(r#","snapshotAuthorityPublicKey":"{public}""#);
    assert_eq!(refused(&f, &half).reason(), "snapshot_authority_incomplete");
    // Another key ID, or another public key.
    let other_id = format!(
        r#","snapshotAuthorityKeyId":"urn:k:other","snapshotAuthorityPublicKey":"{public}""#
    );
    let e = refused(&f, &other_id);
    assert_eq!(e.reason(), "snapshot_authority_not_group_authority");
    let other_key = encode_base64url(&[7u8; 32]);
    let other_key = format!(
        r#","snapshotAuthorityKeyId":"{key_id}","snapshotAuthorityPublicKey":"{other_key}""#
    );
    let e = refused(&f, &other_key);
    assert_eq!(e.reason(), "snapshot_authority_not_group_authority");
}

#[test]
fn event_ids_are_sequential_with_a_prefix_and_random_without() {
    let f = fixture();
    let bootstrap = format!(r#","bootstrapServices":["{SERVICE}"]"#);
    let with_prefix = options(&format!(
        r#"{bootstrap},"eventIdPrefix":"urn:missionweaveprotocol:event:c-""#
    ));
    let drawn = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let core = CoreConfig::from_json(&with_prefix)
        .unwrap()
        .build(
            InMemoryStore::new(),
            Arc::clone(&f.registry),
            f.authority_key.clone(),
            Box::new(Counting(Arc::clone(&drawn))),
        )
        .unwrap();
    let performed = core.perform_bytes(&session_open(&f), NOW).unwrap();
    assert_eq!(
        &*performed.events[0].event_id,
        "urn:missionweaveprotocol:event:c-1"
    );
    assert_eq!(drawn.load(std::sync::atomic::Ordering::Relaxed), 0);
    // No prefix: urn:uuid v4 from the host's source.
    let core = CoreConfig::from_json(&options(&bootstrap))
        .unwrap()
        .build(
            InMemoryStore::new(),
            Arc::clone(&f.registry),
            f.authority_key.clone(),
            Box::new(Counting(Arc::clone(&drawn))),
        )
        .unwrap();
    let performed = core.perform_bytes(&session_open(&f), NOW).unwrap();
    let id = &performed.events[0].event_id;
    assert!(id.starts_with("urn:uuid:") && id.len() == 45, "{id}");
    assert_eq!(drawn.load(std::sync::atomic::Ordering::Relaxed), 1);
}

#[test]
fn cooperation_limits_merge_member_by_member() {
    // Absent members keep the reference's defaults; null is no limit; a number is a limit.
    let config: CooperationLimitsConfig =
        serde_json::from_str(r#"{"maximumQueuedWorkItems":7,"maximumActiveWorkItems":null}"#)
            .unwrap();
    let limits = config.resolve().unwrap();
    let d = CooperationLimits::default();
    assert_eq!(limits.maximum_queued_work_items, Some(7));
    assert_eq!(limits.maximum_active_work_items, None);
    assert_eq!(
        limits.maximum_proposal_rate_per_minute,
        d.maximum_proposal_rate_per_minute
    );
    assert_eq!(limits.maximum_delegation_depth, d.maximum_delegation_depth);
    // An empty object is the defaults; the JSON form reads back unchanged.
    assert_eq!(CooperationLimitsConfig::default().resolve().unwrap(), d);
    let json =
        missionweaveprotocol::json::canonical_bytes(&cooperation_limits_json(&limits)).unwrap();
    let back: CooperationLimitsConfig =
        serde_json::from_slice(&json).expect("the JSON form reads back");
    assert_eq!(back.resolve().unwrap(), limits);
    assert_eq!(back.maximum_active_work_items, Limit::Unlimited);
    // Refusals: zero tracked keys, an unknown member, a negative or fractional limit.
    let f = fixture();
    let e = refused(&f, r#","cooperationLimits":{"maximumTrackedKeys":0}"#);
    assert_eq!(e.reason(), "maximum_tracked_keys_zero");
    for bad in [
        r#","cooperationLimits":{"maximumQueuedWorkItem":3}"#,
        r#","cooperationLimits":{"maximumQueuedWorkItems":-1}"#,
        r#","cooperationLimits":{"maximumQueuedWorkItems":1.5}"#,
    ] {
        let e = CoreConfig::from_json(&options(bad)).unwrap_err();
        assert_eq!(e.reason(), "invalid-argument", "{bad}");
        assert!(
            matches!(e.fields().get("argument"), Some(missionweaveprotocol::FieldValue::Text(a)) if a.starts_with("options.cooperationLimits")),
            "{bad}: {:?}",
            e.fields()
        );
    }
}

#[test]
fn the_configured_limits_reach_the_engine() {
    let f = fixture();
    let core = build(
        &f,
        CoreConfig::from_json(&options(
            r#","cooperationLimits":{"maximumQueuedWorkItems":null,"maximumDelegationDepth":5}"#,
        ))
        .unwrap(),
    )
    .unwrap();
    let limits = core.engine().cooperation_limits();
    assert_eq!(limits.maximum_queued_work_items, None);
    assert_eq!(limits.maximum_delegation_depth, Some(5));
    assert_eq!(limits.maximum_active_work_items, Some(4));
}

#[test]
fn offline_bounds_are_checked_and_default_when_absent() {
    let f = fixture();
    let ok = r#","offlineLimits":{"maxDisconnectGraceMs":60000,"maxActions":8,"maxUsage":{"toolCalls":3}}"#;
    build(&f, CoreConfig::from_json(&options(ok)).unwrap()).unwrap();
    let parsed: OfflineLimitsConfig = serde_json::from_str(
        r#"{"maxDisconnectGraceMs":60000,"maxActions":8,"maxUsage":{"toolCalls":3}}"#,
    )
    .unwrap();
    let limits = parsed.resolve().unwrap();
    assert_eq!(limits.max_actions, 8);
    let no_grace = r#","offlineLimits":{"maxDisconnectGraceMs":0,"maxActions":8}"#;
    let e = refused(&f, no_grace);
    assert_eq!(e.wire_code(), WireCode::InvalidCommand);
    assert_ne!(
        e.class(),
        ErrorClass::Argument,
        "the offline module's own error"
    );
    let no_actions = r#","offlineLimits":{"maxDisconnectGraceMs":1000,"maxActions":0}"#;
    assert_eq!(refused(&f, no_actions).reason(), e.reason());
    let huge = r#","offlineLimits":{"maxDisconnectGraceMs":1000,"maxActions":1,"maxUsage":{"toolCalls":9007199254740992}}"#;
    assert_eq!(refused(&f, huge).reason(), "usage_out_of_range");
}

#[test]
fn freshness_attempts_and_services_default_and_are_checked() {
    let f = fixture();
    let config = CoreConfig::from_json(&options(r#","maxFutureSkewMs":5,"maxAgeMs":6"#)).unwrap();
    let core = build(&f, config).unwrap();
    assert_eq!(core.freshness().max_future_skew_ms, 5);
    assert_eq!(core.freshness().max_age_ms, 6);
    let core = build(&f, CoreConfig::from_json(&options("")).unwrap()).unwrap();
    assert_eq!(core.freshness().max_age_ms, 300_000);
    assert_eq!(
        refused(&f, r#","maxAttempts":0"#).reason(),
        "max_attempts_zero"
    );
    build(
        &f,
        CoreConfig::from_json(&options(r#","maxAttempts":1"#)).unwrap(),
    )
    .unwrap();
    // Bootstrap services default to the authority: the control-plane service may not open a
    // session unless configured.
    let core = build(&f, CoreConfig::from_json(&options("")).unwrap()).unwrap();
    let e = core.perform_bytes(&session_open(&f), NOW).unwrap_err();
    assert_eq!(e.wire_code, WireCode::AuthForbidden);
}

#[test]
fn malformed_options_are_refused_with_the_member() {
    for (bad, what) in [
        ("{}", "authority"),
        (
            r#"{"authority":{"type":"service","id":"a"},"colour":"red"}"#,
            "colour",
        ),
        (r#"{"authority":{"type":"robot","id":"a"}}"#, "robot"),
        (
            r#"{"authority":{"type":"service","id":"a"},"authority":{"type":"service","id":"b"}}"#,
            "duplicate",
        ),
        ("[", "options"),
    ] {
        let e = match CoreConfig::from_json(bad) {
            Err(e) => e,
            Ok(config) => {
                let f = fixture();
                build(&f, config).err().unwrap()
            }
        };
        assert_eq!(e.class(), ErrorClass::Argument, "{bad}");
        assert!(
            e.to_string().contains(what),
            "{bad}: {e} does not name {what}"
        );
    }
    // The builder gives the same defaults as an empty JSON object.
    let f = fixture();
    let principal = authority();
    assert_eq!(principal.kind, PrincipalType::Service);
    assert_eq!(
        CoreConfig::new(&principal),
        CoreConfig::from_json(&options("")).unwrap()
    );
    build(&f, CoreConfig::new(&principal)).unwrap();
}

/// Signs `unsigned` with `actor`'s Registry key: wire bytes for `Core::perform_bytes`.
fn signed_by(f: &Fixture, actor: &str, unsigned: &missionweaveprotocol::json::Value) -> Vec<u8> {
    let (_, key) = f.keys.iter().find(|(p, _)| p.id == actor).unwrap();
    missionweaveprotocol::SignedDocumentCodec::new()
        .sign(
            missionweaveprotocol::SignedDocumentKind::Command,
            unsigned,
            key,
        )
        .unwrap()
        .bytes
}

/// Human-only kinds at ingress, through a `CoreConfig`-built Core and its real
/// `OrganizationAuthorizer` (the engine tests use an allow-all authorizer): an Agent's
/// `approval.grant_execution` (digest A.3 "signed human decision") is refused by ingress alone
/// (`Core::verify`) `AUTH_FORBIDDEN` `human_only`, and through `perform_bytes` nothing is
/// stored; the human's Commands pass ingress and apply.
#[test]
fn a_configured_core_refuses_human_only_kinds_from_agents_at_ingress() {
    let f = fixture();
    let core = build(
        &f,
        CoreConfig::from_json(&options(&format!(
            r#","bootstrapServices":["{SERVICE}"],"policyServices":["{SERVICE}"]"#
        )))
        .unwrap(),
    )
    .unwrap();
    let approval = |actor: &str| {
        signed_by(
            &f,
            actor,
            &f.unsigned(
                "approval.grant_execution",
                actor,
                &f.action(),
                "",
                r#"{"approvalId": "urn:missionweaveprotocol:approval:x",
                "workItemId": "urn:missionweaveprotocol:work:w", "ownershipEpoch": 1,
                "operations": ["production.deploy"]}"#,
            ),
        )
    };
    for agent in [COORDINATOR, OTHER_AGENT] {
        let e = core.verify(&approval(agent), NOW).unwrap_err();
        assert_eq!(e.wire_code(), WireCode::AuthForbidden, "{agent}: {e:?}");
        assert_eq!(e.reason(), "human_only", "{agent}");
        let e = match core.perform_bytes(&approval(agent), NOW) {
            Ok(_) => panic!("{agent}'s approval was applied"),
            Err(e) => e,
        };
        assert_eq!(e.reason(), "human_only");
        assert_eq!(core.store().head(GROUP).unwrap().last_sequence(), 0);
    }
    core.verify(&approval(OWNER), NOW).unwrap();
    let create = |actor: &str| {
        signed_by(
            &f,
            actor,
            &f.unsigned(
                "mission.create",
                actor,
                &f.action(),
                "",
                &f.create_payload(MISSION, ""),
            ),
        )
    };
    // (An Agent's `mission.create` cannot even be signed: `command.schema.json` requires a
    // human actor, so the signer refuses it.)
    assert!(core.engine().mission(MISSION).unwrap().is_none());
    f.checked(&core.perform_bytes(&create(OWNER), NOW).unwrap());
    assert!(core.engine().mission(MISSION).unwrap().is_some());
}
