//! Membership tokens (§8, §6.3) and capability grants (§12): every rule positive and negative;
//! forged, tampered, expired, replayed, cross-Group and cross-kind tokens refused with their
//! §19 codes; arbitrary token strings never panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol::schema_formats::{decode_base64url, encode_base64url};
use missionweaveprotocol::{DescribeError, ErrorClass, Principal, PrincipalType, WireCode};
use missionweaveprotocol_agent::policy::{
    AuthorizationService, CapabilityBinding, CapabilityScope, MAX_TOKEN_CHARS, MembershipBinding,
    MembershipTokenService, MembershipView, PolicyError,
};
use missionweaveprotocol_kernel::lease::{Lease, LeaseBinding, LeaseWindow};
use missionweaveprotocol_kernel::resources::{Dimension, Resources};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use proptest::prelude::*;

const SECRET: &[u8; 32] = b"0123456789abcdef0123456789abcdef";
const OTHER_SECRET: &[u8; 32] = b"fedcba9876543210fedcba9876543210";
const AGENT: &str = "urn:missionweaveprotocol:agent:worker";
const GROUP: &str = "urn:missionweaveprotocol:group:finance";
const ITEM: &str = "urn:missionweaveprotocol:work:ledger";
const LEASE_ID: &str = "urn:missionweaveprotocol:lease:exec-1";
const T0: UnixMillis = UnixMillis(1_784_107_800_000);
const MINUTE: u64 = 60_000;

fn roles(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn membership_service() -> MembershipTokenService {
    MembershipTokenService::new(SECRET).unwrap()
}

fn binding(roles: &[String]) -> MembershipBinding<'_> {
    MembershipBinding {
        principal_id: AGENT,
        group_id: GROUP,
        roles,
        membership_epoch: 2,
        session_epoch: 3,
    }
}

fn refused(result: Result<impl core::fmt::Debug, PolicyError>, code: WireCode, reason: &str) {
    let error = result.expect_err("expected a refusal");
    assert_eq!(error.code(), code, "{error}");
    assert_eq!(error.reason(), reason, "{error}");
    assert_eq!(DescribeError::class(&error), ErrorClass::Policy);
}

// ---- membership tokens ---------------------------------------------------------------------

#[test]
fn membership_token_round_trips_with_sorted_unique_roles() {
    let service = membership_service();
    let r = roles(&["worker", "reviewer"]);
    let issued = service
        .issue(&binding(&r), 5 * MINUTE, "tok-1", T0)
        .unwrap();
    assert_eq!(issued.claims.roles, roles(&["reviewer", "worker"]));
    assert_eq!(issued.claims.expires_at, T0.saturating_add_ms(5 * MINUTE));
    let claims = service
        .verify(&issued.token, &binding(&r), T0.saturating_add_ms(MINUTE))
        .unwrap();
    assert_eq!(claims, issued.claims);
    // The token is two canonical base64url parts; the secret and token stay out of Debug.
    let (claims_part, mac) = issued.token.split_once('.').unwrap();
    assert_eq!(decode_base64url(mac).unwrap().len(), 32);
    assert!(decode_base64url(claims_part).is_some());
    assert!(!format!("{issued:?}").contains(&issued.token));
    assert!(!format!("{service:?}").contains("0123456789abcdef"));
}

#[test]
fn membership_token_issue_rules() {
    let service = membership_service();
    let r = roles(&["worker"]);
    refused(
        service.issue(&binding(&[]), MINUTE, "t", T0),
        WireCode::InvalidCommand,
        "invalid_argument",
    );
    refused(
        service.issue(&binding(&roles(&["worker", "worker"])), MINUTE, "t", T0),
        WireCode::InvalidCommand,
        "invalid_argument",
    );
    let zero_epoch = MembershipBinding {
        membership_epoch: 0,
        ..binding(&r)
    };
    refused(
        service.issue(&zero_epoch, MINUTE, "t", T0),
        WireCode::InvalidCommand,
        "invalid_argument",
    );
    let zero_session = MembershipBinding {
        session_epoch: 0,
        ..binding(&r)
    };
    refused(
        service.issue(&zero_session, MINUTE, "t", T0),
        WireCode::InvalidCommand,
        "invalid_argument",
    );
    // Short-lived: 15 minutes at most, never zero.
    assert!(service.issue(&binding(&r), 15 * MINUTE, "t", T0).is_ok());
    refused(
        service.issue(&binding(&r), 15 * MINUTE + 1, "t", T0),
        WireCode::InvalidCommand,
        "invalid_argument",
    );
    refused(
        service.issue(&binding(&r), 0, "t", T0),
        WireCode::InvalidCommand,
        "invalid_argument",
    );
    assert!(MembershipTokenService::new(&[7; 31]).is_err());
    assert!(membership_service().with_maximum_ttl(16 * MINUTE).is_err());
    let short = membership_service().with_maximum_ttl(MINUTE).unwrap();
    assert!(short.issue(&binding(&r), MINUTE + 1, "t", T0).is_err());
}

#[test]
fn membership_token_is_fenced_by_principal_group_session_membership_and_roles() {
    let service = membership_service();
    let r = roles(&["worker"]);
    let token = service.issue(&binding(&r), MINUTE, "t", T0).unwrap().token;
    let now = T0.saturating_add_ms(1);
    let other_principal = MembershipBinding {
        principal_id: "urn:missionweaveprotocol:agent:other",
        ..binding(&r)
    };
    refused(
        service.verify(&token, &other_principal, now),
        WireCode::AuthForbidden,
        "token_principal_mismatch",
    );
    // Cross-Group replay: a token of one Group never authorizes another.
    let other_group = MembershipBinding {
        group_id: "urn:missionweaveprotocol:group:other",
        ..binding(&r)
    };
    refused(
        service.verify(&token, &other_group, now),
        WireCode::MembershipRequired,
        "token_group_mismatch",
    );
    // Replay after a new session: the old Session Epoch is fenced.
    let new_session = MembershipBinding {
        session_epoch: 4,
        ..binding(&r)
    };
    refused(
        service.verify(&token, &new_session, now),
        WireCode::AuthStaleSession,
        "token_session_stale",
    );
    // Replay after a Membership change: the old Membership Epoch is fenced.
    let new_membership = MembershipBinding {
        membership_epoch: 3,
        ..binding(&r)
    };
    refused(
        service.verify(&token, &new_membership, now),
        WireCode::MembershipStale,
        "token_membership_stale",
    );
    let more_roles = roles(&["reviewer", "worker"]);
    refused(
        service.verify(&token, &binding(&more_roles), now),
        WireCode::MembershipStale,
        "token_roles_stale",
    );
    // Positive control: the unchanged expectation still verifies.
    assert!(service.verify(&token, &binding(&r), now).is_ok());
}

#[test]
fn membership_token_expires_and_is_not_valid_before_issue() {
    let service = membership_service();
    let r = roles(&["worker"]);
    let token = service.issue(&binding(&r), MINUTE, "t", T0).unwrap().token;
    assert!(
        service
            .verify(&token, &binding(&r), T0.saturating_add_ms(MINUTE - 1))
            .is_ok()
    );
    refused(
        service.verify(&token, &binding(&r), T0.saturating_add_ms(MINUTE)),
        WireCode::AuthInvalidSignature,
        "token_expired",
    );
    refused(
        service.verify(&token, &binding(&r), UnixMillis(T0.0 - 1)),
        WireCode::AuthInvalidSignature,
        "token_not_yet_valid",
    );
}

#[test]
fn forged_and_tampered_membership_tokens_are_refused() {
    let service = membership_service();
    let r = roles(&["worker"]);
    let token = service.issue(&binding(&r), MINUTE, "t", T0).unwrap().token;
    let now = T0.saturating_add_ms(1);
    // Another secret: forged.
    let forger = MembershipTokenService::new(OTHER_SECRET).unwrap();
    let forged = forger.issue(&binding(&r), MINUTE, "t", T0).unwrap().token;
    refused(
        service.verify(&forged, &binding(&r), now),
        WireCode::AuthInvalidSignature,
        "token_forged",
    );
    // Claims rewritten (a higher epoch) under the original MAC: forged.
    let (claims, mac) = token.split_once('.').unwrap();
    let mut value = json::parse(&decode_base64url(claims).unwrap()).unwrap();
    if let Value::Object(o) = &mut value {
        o.insert("membershipEpoch", Value::Number(json::Number::from_u64(9)));
    }
    let rewritten = format!(
        "{}.{mac}",
        encode_base64url(&json::canonical_bytes(&value).unwrap())
    );
    refused(
        service.verify(&rewritten, &binding(&r), now),
        WireCode::AuthInvalidSignature,
        "token_forged",
    );
    // One MAC bit flipped: forged. A truncated MAC: forged (wrong length).
    let mut mac_bytes = decode_base64url(mac).unwrap();
    mac_bytes[0] ^= 1;
    let flipped = format!("{claims}.{}", encode_base64url(&mac_bytes));
    refused(
        service.verify(&flipped, &binding(&r), now),
        WireCode::AuthInvalidSignature,
        "token_forged",
    );
    let truncated = format!("{claims}.{}", encode_base64url(&mac_bytes[..16]));
    refused(
        service.verify(&truncated, &binding(&r), now),
        WireCode::AuthInvalidSignature,
        "token_forged",
    );
    // Malformed shapes.
    for bad in ["", "abc", "a.b.c", "!!.??", &format!("{claims}.")] {
        refused(
            service.verify(bad, &binding(&r), now),
            WireCode::AuthInvalidSignature,
            "token_malformed",
        );
    }
    let long = "a".repeat(MAX_TOKEN_CHARS + 1);
    refused(
        service.verify(&long, &binding(&r), now),
        WireCode::AuthInvalidSignature,
        "token_malformed",
    );
}

#[test]
fn membership_documents_bind_tokens_and_must_be_active_agent_memberships() {
    let service = membership_service();
    let document = |state: &str, kind: &str| {
        json::parse(
            format!(
                r#"{{"membershipId":"m","missionId":"x","groupId":"{GROUP}","member":{{"type":"{kind}","id":"{AGENT}"}},"role":"worker","state":"{state}","membershipEpoch":2,"scopes":[],"visibilityStartSequence":0,"grantedAt":"2026-07-15T09:30:00Z"}}"#
            )
            .as_bytes(),
        )
        .unwrap()
    };
    let active = MembershipView::from_document(&document("active", "agent")).unwrap();
    assert_eq!(active.member, Principal::new(PrincipalType::Agent, AGENT));
    let issued = service
        .issue_for_membership(&active, 3, MINUTE, "t", T0)
        .unwrap();
    assert_eq!(issued.claims.roles, roles(&["worker"]));
    assert!(
        service
            .verify_membership(&issued.token, &active, 3, T0.saturating_add_ms(1))
            .is_ok()
    );
    let ended = MembershipView::from_document(&document("ended", "agent")).unwrap();
    refused(
        service.issue_for_membership(&ended, 3, MINUTE, "t", T0),
        WireCode::MembershipRequired,
        "membership_not_active",
    );
    refused(
        service.verify_membership(&issued.token, &ended, 3, T0.saturating_add_ms(1)),
        WireCode::MembershipRequired,
        "membership_not_active",
    );
    let human = MembershipView::from_document(&document("active", "human")).unwrap();
    refused(
        service.issue_for_membership(&human, 3, MINUTE, "t", T0),
        WireCode::InvalidCommand,
        "invalid_argument",
    );
    assert!(MembershipView::from_document(&json::parse(b"{}").unwrap()).is_err());
}

// ---- capability grants ---------------------------------------------------------------------

fn lease(expires_in: u64) -> Lease {
    Lease::execution(
        LeaseBinding {
            lease_id: LEASE_ID.into(),
            mission_id: "urn:missionweaveprotocol:mission:m".into(),
            group_id: GROUP.into(),
            holder_agent_id: AGENT.into(),
            session_epoch: 3,
        },
        ITEM,
        1,
        LeaseWindow {
            issued_at: T0,
            starts_at: T0,
            expires_at: T0.saturating_add_ms(expires_in),
        },
    )
    .unwrap()
}

fn cap_binding() -> CapabilityBinding<'static> {
    CapabilityBinding {
        worker_id: AGENT,
        session_epoch: 3,
        work_item_id: ITEM,
        ownership_epoch: 1,
    }
}

fn ops(items: &[&str]) -> Vec<String> {
    roles(items)
}

fn scope<'a>(operations: &'a [String]) -> CapabilityScope<'a> {
    CapabilityScope {
        tools: &[],
        resources: &[],
        operations,
        budget: Resources::ZERO.with(Dimension::ToolCalls, 5),
    }
}

fn authorization() -> AuthorizationService {
    AuthorizationService::new(SECRET).unwrap()
}

#[test]
fn capability_grant_round_trips_and_never_outlives_its_lease() {
    let service = authorization();
    let o = ops(&["ledger.read"]);
    let l = lease(5 * MINUTE);
    let issued = service
        .issue(
            &cap_binding(),
            &l,
            &scope(&o),
            false,
            None,
            10 * MINUTE,
            "g1",
            T0,
        )
        .unwrap();
    // Capped by the lease (§12 "an expiration no later than the Execution Lease").
    assert_eq!(issued.claims.expires_at, l.window().expires_at);
    assert_eq!(issued.claims.execution_lease_id, LEASE_ID);
    assert_eq!(issued.claims.budget.get(Dimension::ToolCalls), 5);
    let now = T0.saturating_add_ms(MINUTE);
    let grant = service
        .verify(&issued.token, &cap_binding(), &l, Some("ledger.read"), now)
        .unwrap();
    assert_eq!(grant, issued.claims);
    // A shorter TTL is kept.
    let short = service
        .issue(
            &cap_binding(),
            &l,
            &scope(&o),
            false,
            None,
            MINUTE,
            "g2",
            T0,
        )
        .unwrap();
    assert_eq!(short.claims.expires_at, T0.saturating_add_ms(MINUTE));
    assert!(!format!("{issued:?}").contains(&issued.token));
}

#[test]
fn capability_grant_survives_lease_renewal_but_not_revocation_or_expiry() {
    let service = authorization();
    let o = ops(&["ledger.read"]);
    let mut l = lease(2 * MINUTE);
    let token = service
        .issue(
            &cap_binding(),
            &l,
            &scope(&o),
            false,
            None,
            2 * MINUTE,
            "g",
            T0,
        )
        .unwrap()
        .token;
    l.renew(
        T0.saturating_add_ms(MINUTE),
        T0.saturating_add_ms(10 * MINUTE),
    )
    .unwrap();
    let now = T0.saturating_add_ms(MINUTE + 1);
    assert!(
        service
            .verify(&token, &cap_binding(), &l, None, now)
            .is_ok()
    );
    // The token itself still expires with the lease expiry it was issued under.
    refused(
        service.verify(
            &token,
            &cap_binding(),
            &l,
            None,
            T0.saturating_add_ms(2 * MINUTE),
        ),
        WireCode::AuthInvalidSignature,
        "token_expired",
    );
    let mut revoked = l.clone();
    revoked.revoke(now, "session replaced").unwrap();
    refused(
        service.verify(&token, &cap_binding(), &revoked, None, now),
        WireCode::WorkLeaseExpired,
        "lease_not_live",
    );
}

#[test]
fn capability_grant_is_fenced_by_worker_session_work_item_ownership_lease_and_operation() {
    let service = authorization();
    let o = ops(&["ledger.read"]);
    let l = lease(5 * MINUTE);
    let token = service
        .issue(&cap_binding(), &l, &scope(&o), false, None, MINUTE, "g", T0)
        .unwrap()
        .token;
    let now = T0.saturating_add_ms(1);
    let b = cap_binding();
    refused(
        service.verify(
            &token,
            &CapabilityBinding {
                worker_id: "urn:x:agent:y",
                ..b
            },
            &l,
            None,
            now,
        ),
        WireCode::AuthForbidden,
        "token_worker_mismatch",
    );
    refused(
        service.verify(
            &token,
            &CapabilityBinding {
                session_epoch: 4,
                ..b
            },
            &l,
            None,
            now,
        ),
        WireCode::AuthStaleSession,
        "token_session_stale",
    );
    refused(
        service.verify(
            &token,
            &CapabilityBinding {
                work_item_id: "urn:x:work:z",
                ..b
            },
            &l,
            None,
            now,
        ),
        WireCode::AuthForbidden,
        "token_work_item_mismatch",
    );
    refused(
        service.verify(
            &token,
            &CapabilityBinding {
                ownership_epoch: 2,
                ..b
            },
            &l,
            None,
            now,
        ),
        WireCode::WorkStaleOwnership,
        "token_ownership_stale",
    );
    // A new Execution Lease (new ID) kills the old grant.
    let mut newer = lease(5 * MINUTE);
    newer = Lease::execution(
        LeaseBinding {
            lease_id: "urn:missionweaveprotocol:lease:exec-2".into(),
            ..newer.binding().clone()
        },
        ITEM,
        1,
        newer.window(),
    )
    .unwrap();
    refused(
        service.verify(&token, &b, &newer, None, now),
        WireCode::WorkLeaseExpired,
        "token_lease_mismatch",
    );
    refused(
        service.verify(&token, &b, &l, Some("ledger.write"), now),
        WireCode::AuthForbidden,
        "operation_not_granted",
    );
    assert!(
        service
            .verify(&token, &b, &l, Some("ledger.read"), now)
            .is_ok()
    );
}

#[test]
fn capability_issue_checks_the_lease_binding() {
    let service = authorization();
    let o = ops(&[]);
    let l = lease(5 * MINUTE);
    let b = cap_binding();
    let issue = |binding: &CapabilityBinding<'_>, lease: &Lease, now| {
        service.issue(binding, lease, &scope(&o), false, None, MINUTE, "g", now)
    };
    refused(
        issue(
            &CapabilityBinding {
                worker_id: "urn:x:agent:y",
                ..b
            },
            &l,
            T0,
        ),
        WireCode::AuthForbidden,
        "lease_holder_mismatch",
    );
    refused(
        issue(
            &CapabilityBinding {
                session_epoch: 2,
                ..b
            },
            &l,
            T0,
        ),
        WireCode::AuthStaleSession,
        "lease_session_stale",
    );
    refused(
        issue(
            &CapabilityBinding {
                work_item_id: "urn:x:work:z",
                ..b
            },
            &l,
            T0,
        ),
        WireCode::AuthForbidden,
        "lease_work_item_mismatch",
    );
    refused(
        issue(
            &CapabilityBinding {
                ownership_epoch: 2,
                ..b
            },
            &l,
            T0,
        ),
        WireCode::WorkStaleOwnership,
        "lease_ownership_stale",
    );
    refused(
        issue(&b, &l, T0.saturating_add_ms(5 * MINUTE)),
        WireCode::WorkLeaseExpired,
        "lease_not_live",
    );
    let mut released = l.clone();
    released
        .release(T0.saturating_add_ms(1), "checkpointed")
        .unwrap();
    refused(
        issue(&b, &released, T0.saturating_add_ms(2)),
        WireCode::WorkLeaseExpired,
        "lease_not_live",
    );
    assert!(issue(&b, &l, T0).is_ok());
    refused(
        service.issue(&b, &l, &scope(&o), false, None, 15 * MINUTE + 1, "g", T0),
        WireCode::InvalidCommand,
        "invalid_argument",
    );
    let dup = ops(&["a.b", "a.b"]);
    refused(
        service.issue(&b, &l, &scope(&dup), false, None, MINUTE, "g", T0),
        WireCode::InvalidCommand,
        "invalid_argument",
    );
}

#[test]
fn direct_issue_refuses_high_risk_and_arbitrary_approval_ids() {
    let service = authorization();
    let l = lease(5 * MINUTE);
    let b = cap_binding();
    let low = ops(&["ledger.read"]);
    refused(
        service.issue(&b, &l, &scope(&low), true, None, MINUTE, "g", T0),
        WireCode::ApprovalRequired,
        "direct_high_risk_refused",
    );
    refused(
        service.issue(
            &b,
            &l,
            &scope(&low),
            false,
            Some("approval:any"),
            MINUTE,
            "g",
            T0,
        ),
        WireCode::ApprovalRequired,
        "direct_high_risk_refused",
    );
    for op in [
        "production.deploy",
        "payment.send",
        "external.send_email",
        "destructive.drop",
    ] {
        let high = ops(&[op]);
        refused(
            service.issue(&b, &l, &scope(&high), false, None, MINUTE, "g", T0),
            WireCode::ApprovalRequired,
            "high_risk_operation",
        );
    }
}

#[test]
fn tokens_do_not_cross_kinds_or_secrets() {
    let memberships = membership_service();
    let grants = authorization();
    let r = roles(&["worker"]);
    let membership_token = memberships
        .issue(&binding(&r), MINUTE, "t", T0)
        .unwrap()
        .token;
    let o = ops(&[]);
    let l = lease(5 * MINUTE);
    let grant_token = grants
        .issue(&cap_binding(), &l, &scope(&o), false, None, MINUTE, "g", T0)
        .unwrap()
        .token;
    let now = T0.saturating_add_ms(1);
    // Same secret, other kind: the MAC domain differs.
    refused(
        grants.verify(&membership_token, &cap_binding(), &l, None, now),
        WireCode::AuthInvalidSignature,
        "token_forged",
    );
    refused(
        memberships.verify(&grant_token, &binding(&r), now),
        WireCode::AuthInvalidSignature,
        "token_forged",
    );
    let other = AuthorizationService::new(OTHER_SECRET).unwrap();
    refused(
        other.verify(&grant_token, &cap_binding(), &l, None, now),
        WireCode::AuthInvalidSignature,
        "token_forged",
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Any string up to twice the length cap is refused with a typed error, never a panic.
    #[test]
    fn arbitrary_token_strings_never_panic(token in ".{0,64}|[A-Za-z0-9_.-]{0,400}") {
        let memberships = membership_service();
        let r = roles(&["worker"]);
        let result = memberships.verify(&token, &binding(&r), T0);
        prop_assert!(result.is_err());
        let grants = authorization();
        let l = lease(MINUTE);
        let result = grants.verify(&token, &cap_binding(), &l, None, T0);
        prop_assert!(result.is_err());
    }

    #[test]
    fn arbitrary_bytes_after_a_valid_prefix_never_panic(
        suffix in proptest::collection::vec(any::<u8>(), 0..64),
        cut in 0usize..200,
    ) {
        let memberships = membership_service();
        let r = roles(&["worker"]);
        let token = memberships.issue(&binding(&r), MINUTE, "t", T0).unwrap().token;
        let mut mangled: String = token.chars().take(cut).collect();
        mangled.push_str(&String::from_utf8_lossy(&suffix));
        let result = memberships.verify(&mangled, &binding(&r), T0.saturating_add_ms(1));
        if mangled != token {
            prop_assert!(result.is_err());
        }
    }

    #[test]
    fn oversized_tokens_are_refused_before_decoding(extra in 1usize..4096) {
        let memberships = membership_service();
        let r = roles(&["worker"]);
        let token = "A".repeat(MAX_TOKEN_CHARS + extra);
        let error = memberships.verify(&token, &binding(&r), T0).unwrap_err();
        prop_assert_eq!(error.reason(), "token_malformed");
    }
}

/// Refusals read as sentences (no `Debug` dumps, no code prefix) and never carry the token or
/// the secret (§12 "tokens and secrets MUST NOT appear …").
#[test]
fn refusal_messages_are_readable_and_leak_nothing() {
    let service = membership_service();
    let r = roles(&["worker"]);
    let token = service.issue(&binding(&r), MINUTE, "t", T0).unwrap().token;
    let secret_text = String::from_utf8_lossy(SECRET).into_owned();
    let mut errors = vec![
        service
            .verify(
                &token,
                &MembershipBinding {
                    group_id: "urn:x:group:y",
                    ..binding(&r)
                },
                T0,
            )
            .unwrap_err(),
        service
            .verify(&token, &binding(&r), T0.saturating_add_ms(MINUTE))
            .unwrap_err(),
        service.verify("x.y", &binding(&r), T0).unwrap_err(),
        service.issue(&binding(&[]), MINUTE, "t", T0).unwrap_err(),
    ];
    let o = ops(&["ledger.read"]);
    let l = lease(MINUTE);
    let grants = authorization();
    let grant = grants
        .issue(&cap_binding(), &l, &scope(&o), false, None, MINUTE, "g", T0)
        .unwrap()
        .token;
    errors.push(
        grants
            .verify(&grant, &cap_binding(), &l, Some("ledger.write"), T0)
            .unwrap_err(),
    );
    for e in &errors {
        let message = e.to_string();
        assert!(!message.is_empty());
        for bad in [
            "{ ",
            " }",
            "Some(",
            "None",
            token.as_str(),
            grant.as_str(),
            &secret_text,
        ] {
            assert!(!message.contains(bad), "{message:?} contains {bad:?}");
        }
        assert!(!message.starts_with(e.code().as_str()));
        assert!(!format!("{e:?}").contains(&secret_text));
    }
}

#[test]
fn membership_tokens_are_for_agents_only() {
    assert!(missionweaveprotocol_agent::policy::check_token_principal("agent").is_ok());
    for other in ["human", "service", ""] {
        let error = missionweaveprotocol_agent::policy::check_token_principal(other).unwrap_err();
        assert_eq!(error.wire_code(), WireCode::InvalidCommand, "{other}");
        assert_eq!(DescribeError::reason(&error), "invalid_argument");
        assert_eq!(
            error.to_string(),
            "membership tokens are issued to Agents only"
        );
    }
}

#[test]
fn the_ttl_bounds_and_session_defaults() {
    use missionweaveprotocol_agent::auth::SessionConfig;
    use missionweaveprotocol_agent::policy::{MAXIMUM_GRANT_TTL_MS, MAXIMUM_TTL_MS};
    assert_eq!(MAXIMUM_TTL_MS, 15 * MINUTE);
    assert_eq!(MAXIMUM_GRANT_TTL_MS, 15 * MINUTE);
    assert_eq!(SessionConfig::default().session_ttl_ms, 15 * MINUTE);
    assert_eq!(SessionConfig::default().challenge_ttl_ms, 30_000);
    // The bound is the largest accepted maximum; one more millisecond is refused.
    assert!(
        membership_service()
            .with_maximum_ttl(MAXIMUM_TTL_MS)
            .is_ok()
    );
    assert!(
        membership_service()
            .with_maximum_ttl(MAXIMUM_TTL_MS + 1)
            .is_err()
    );
    assert!(membership_service().with_maximum_ttl(0).is_err());
}
