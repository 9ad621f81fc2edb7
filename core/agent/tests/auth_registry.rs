//! `AgentKeyRegistry` (§6.3, digest §2.18): default key IDs, registration, validity at an
//! instant, constant-time material match, earliest revocation.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "auth_fixture.rs"]
mod fixture;

use fixture::*;
use missionweaveprotocol::WireCode;
use missionweaveprotocol_agent::auth::{
    AgentKeyRegistry, AuthError, KeyValidity, default_agent_key_id,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

#[test]
fn default_key_id_takes_the_last_path_or_colon_segment() {
    assert_eq!(
        default_agent_key_id("agent://acme/reviewer").unwrap(),
        "urn:missionweaveprotocol:key:reviewer"
    );
    assert_eq!(
        default_agent_key_id("urn:missionweaveprotocol:agent:planner").unwrap(),
        "urn:missionweaveprotocol:key:planner"
    );
    assert_eq!(
        default_agent_key_id("solo").unwrap(),
        "urn:missionweaveprotocol:key:solo"
    );
}

#[test]
fn default_key_id_refuses_an_empty_segment() {
    for bad in ["", "agent://acme/", "urn:x:", "a: "] {
        let error = default_agent_key_id(bad).unwrap_err();
        assert_eq!(error.reason(), "invalid_argument", "{bad:?}");
        assert_eq!(error.code(), WireCode::ProtocolViolation);
    }
}

#[test]
fn register_with_the_default_key_id_and_resolve_it() {
    let mut registry = AgentKeyRegistry::new();
    let key = key(9, "unused");
    registry
        .register(
            "agent://acme/coder",
            &key.public_key_bytes(),
            None,
            KeyValidity::default(),
        )
        .unwrap();
    let resolved = registry.resolve("agent://acme/coder", None, T0).unwrap();
    assert_eq!(resolved.key_id, "urn:missionweaveprotocol:key:coder");
    assert_eq!(resolved.public_key.as_bytes(), &key.public_key_bytes());
}

#[test]
fn a_weak_or_malformed_public_key_is_refused() {
    let mut registry = AgentKeyRegistry::new();
    let identity = {
        let mut bytes = [0u8; 32];
        bytes[0] = 1;
        bytes
    };
    for bad in [&identity[..], &[0u8; 31][..], &[0xFF; 32][..]] {
        let error = registry
            .register(ALICE, bad, None, KeyValidity::default())
            .unwrap_err();
        assert_eq!(error, AuthError::InvalidPublicKey);
        assert_eq!(error.code(), WireCode::ProtocolViolation);
    }
    assert!(registry.is_empty());
}

#[test]
fn a_key_id_is_never_reused_for_other_material_or_another_agent() {
    let mut registry = registry();
    let other = key(7, ALICE_KEY);
    let error = registry
        .register(
            ALICE,
            &other.public_key_bytes(),
            Some(ALICE_KEY),
            KeyValidity::default(),
        )
        .unwrap_err();
    assert_eq!(error, AuthError::KeyIdReused);
    let error = registry
        .register(
            BOB,
            &alice_key().public_key_bytes(),
            Some(ALICE_KEY),
            KeyValidity::default(),
        )
        .unwrap_err();
    assert_eq!(error, AuthError::KeyIdReused);
    // The same binding again is idempotent.
    registry
        .register(
            ALICE,
            &alice_key().public_key_bytes(),
            Some(ALICE_KEY),
            KeyValidity::default(),
        )
        .unwrap();
    assert_eq!(registry.len(), 2);
}

#[test]
fn valid_from_is_set_once() {
    let mut registry = registry();
    let error = registry
        .register(
            ALICE,
            &alice_key().public_key_bytes(),
            Some(ALICE_KEY),
            KeyValidity {
                valid_from: Some(T0),
                ..KeyValidity::default()
            },
        )
        .unwrap_err();
    assert_eq!(error, AuthError::KeyIdReused);
}

#[test]
fn an_inverted_window_is_refused() {
    let mut registry = AgentKeyRegistry::new();
    let error = registry
        .register(
            ALICE,
            &alice_key().public_key_bytes(),
            None,
            KeyValidity {
                valid_from: Some(at(10)),
                valid_until: Some(at(10)),
                revoked_at: None,
            },
        )
        .unwrap_err();
    assert_eq!(error.reason(), "invalid_argument");
}

#[test]
fn resolve_honours_the_validity_window() {
    let mut registry = AgentKeyRegistry::new();
    registry
        .register(
            ALICE,
            &alice_key().public_key_bytes(),
            None,
            KeyValidity {
                valid_from: Some(at(0)),
                valid_until: Some(at(1000)),
                revoked_at: None,
            },
        )
        .unwrap();
    assert!(registry.resolve(ALICE, None, at(0)).is_ok());
    assert!(registry.resolve(ALICE, None, at(999)).is_ok());
    let early = registry.resolve(ALICE, None, at(-1)).unwrap_err();
    assert_eq!(early, AuthError::KeyNotYetValid);
    assert_eq!(early.code(), WireCode::AuthInvalidSignature);
    let late = registry.resolve(ALICE, None, at(1000)).unwrap_err();
    assert_eq!(late, AuthError::KeyExpired);
    assert_eq!(late.code(), WireCode::AuthInvalidSignature);
}

#[test]
fn resolve_refuses_unknown_and_cross_agent_keys() {
    let registry = registry();
    assert_eq!(
        registry
            .resolve(ALICE, Some("urn:missionweaveprotocol:key:nobody"), T0)
            .unwrap_err(),
        AuthError::UnknownKey
    );
    // Bob's key ID exists, but not for Alice.
    let error = registry.resolve(ALICE, Some(BOB_KEY), T0).unwrap_err();
    assert_eq!(error, AuthError::UnknownKey);
    assert_eq!(error.code(), WireCode::AuthInvalidSignature);
    assert_eq!(
        registry
            .resolve("urn:missionweaveprotocol:agent:carol", None, T0)
            .unwrap_err(),
        AuthError::UnknownKey
    );
}

#[test]
fn matches_registered_public_key_compares_the_material() {
    let registry = registry();
    assert!(registry.matches_registered_public_key(
        ALICE,
        ALICE_KEY,
        &alice_key().public_key_bytes()
    ));
    assert!(!registry.matches_registered_public_key(
        ALICE,
        ALICE_KEY,
        &bob_key().public_key_bytes()
    ));
    assert!(!registry.matches_registered_public_key(
        BOB,
        ALICE_KEY,
        &alice_key().public_key_bytes()
    ));
    assert!(!registry.matches_registered_public_key(
        ALICE,
        ALICE_KEY,
        &alice_key().public_key_bytes()[..31]
    ));
}

#[test]
fn revocation_keeps_the_earliest_instant() {
    let mut registry = registry();
    registry.revoke(ALICE, ALICE_KEY, at(500)).unwrap();
    registry.revoke(ALICE, ALICE_KEY, at(900)).unwrap();
    assert!(registry.resolve(ALICE, None, at(499)).is_ok());
    let error = registry.resolve(ALICE, None, at(500)).unwrap_err();
    assert_eq!(error, AuthError::KeyRevoked);
    assert_eq!(error.code(), WireCode::AuthInvalidSignature);
    registry.revoke(ALICE, ALICE_KEY, at(100)).unwrap();
    assert_eq!(
        registry.get(ALICE, None).unwrap().validity.revoked_at,
        Some(at(100))
    );
    // Re-registering with a later revocation or none cannot clear it either.
    registry
        .register(
            ALICE,
            &alice_key().public_key_bytes(),
            Some(ALICE_KEY),
            KeyValidity {
                revoked_at: Some(at(5000)),
                ..KeyValidity::default()
            },
        )
        .unwrap();
    assert_eq!(
        registry.get(ALICE, None).unwrap().validity.revoked_at,
        Some(at(100))
    );
}

#[test]
fn revoke_refuses_an_unknown_or_foreign_key() {
    let mut registry = registry();
    assert_eq!(
        registry.revoke(ALICE, BOB_KEY, T0).unwrap_err(),
        AuthError::UnknownKey
    );
    assert!(registry.resolve(BOB, None, UnixMillis(T0.0 + 1)).is_ok());
}

#[test]
fn valid_until_narrows_to_the_earliest() {
    let mut registry = registry();
    for until in [at(2000), at(1000), at(3000)] {
        registry
            .register(
                ALICE,
                &alice_key().public_key_bytes(),
                Some(ALICE_KEY),
                KeyValidity {
                    valid_until: Some(until),
                    ..KeyValidity::default()
                },
            )
            .unwrap();
    }
    assert_eq!(
        registry.resolve(ALICE, None, at(1000)).unwrap_err(),
        AuthError::KeyExpired
    );
}
