//! `SessionAuthority` (§6.3): one-use challenges, strict signatures, Session Epochs, tokens.
//! Every refusal is checked with its §19 wire code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "auth_fixture.rs"]
mod fixture;

use fixture::*;
use missionweaveprotocol::WireCode;
use missionweaveprotocol::schema_formats::{decode_base64url, encode_base64url};
use missionweaveprotocol_agent::auth::{
    AuthError, MAX_SESSION_EPOCH, SessionAuthority, SessionConfig,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

#[test]
fn a_signed_challenge_opens_a_session_with_epoch_one() {
    let registry = registry();
    let mut authority = authority();
    let challenge = challenge_for(&mut authority, &registry, ALICE, T0);
    assert_eq!(challenge.key_id, ALICE_KEY);
    assert_eq!(challenge.protocol_version, "0.1");
    assert_eq!(challenge.nonce(), challenge.server_nonce);
    assert_eq!(challenge.expires_at, at(30_000));
    let grant = authority
        .open_session(
            &registry,
            &challenge.challenge_id,
            &sign(&alice_key(), &challenge),
            at(10),
        )
        .unwrap();
    assert_eq!(grant.agent_id, ALICE);
    assert_eq!(grant.key_id, ALICE_KEY);
    assert_eq!(grant.session_epoch, 1);
    assert_eq!(grant.issued_at, at(10));
    assert_eq!(grant.expires_at, at(10 + 15 * 60_000));
    assert!((16..=8192).contains(&grant.token.len()));
    assert_eq!(authority.current_epoch(ALICE), 1);
    assert_eq!(
        authority
            .verify_session(&registry, &grant.token, at(20))
            .unwrap(),
        grant
    );
}

#[test]
fn the_signing_bytes_are_the_canonical_seven_fields() {
    let registry = registry();
    let mut authority = authority();
    let challenge = authority
        .issue_challenge(&registry, ALICE, None, Some("AAAA"), "0.1", T0)
        .unwrap();
    let text = String::from_utf8(challenge.signing_bytes().unwrap()).unwrap();
    let expected = format!(
        "{{\"agentId\":\"{ALICE}\",\"challengeId\":\"{}\",\"clientNonce\":\"AAAA\",\
         \"expiresAt\":\"{}\",\"keyId\":\"{ALICE_KEY}\",\"protocolVersion\":\"0.1\",\
         \"serverNonce\":\"{}\"}}",
        challenge.challenge_id,
        // The reference's rendering (Python isoformat), not the wire's `Z` profile.
        at(30_000).to_rfc3339().unwrap().replace(".000Z", "+00:00"),
        challenge.server_nonce
    );
    assert_eq!(text, expected);
    assert!(text.contains("+00:00\""), "{text}");
    let mut later = challenge.clone();
    later.expires_at = UnixMillis(later.expires_at.0 + 6);
    let text = String::from_utf8(later.signing_bytes().unwrap()).unwrap();
    assert!(text.contains(".006000+00:00\""), "{text}");
    assert_eq!(decode_base64url(&challenge.challenge_id).unwrap().len(), 32);
    assert_eq!(decode_base64url(&challenge.server_nonce).unwrap().len(), 32);
}

#[test]
fn issuing_refuses_bad_versions_nonces_and_unusable_keys() {
    let mut registry = registry();
    let mut authority = authority();
    let error = authority
        .issue_challenge(&registry, ALICE, None, None, "0.2", T0)
        .unwrap_err();
    assert_eq!(error.code(), WireCode::UnsupportedVersion);
    let error = authority
        .issue_challenge(&registry, ALICE, None, Some("not base64!"), "0.1", T0)
        .unwrap_err();
    assert_eq!(error.reason(), "invalid_argument");
    let error = authority
        .issue_challenge(
            &registry,
            "urn:missionweaveprotocol:agent:carol",
            None,
            None,
            "0.1",
            T0,
        )
        .unwrap_err();
    assert_eq!(error, AuthError::UnknownKey);
    registry.revoke(ALICE, ALICE_KEY, T0).unwrap();
    let error = authority
        .issue_challenge(&registry, ALICE, None, None, "0.1", T0)
        .unwrap_err();
    assert_eq!(error, AuthError::KeyRevoked);
    assert_eq!(authority.pending_challenges(), 0);
}

#[test]
fn a_challenge_is_used_once_even_after_a_failure() {
    let registry = registry();
    let mut authority = authority();
    // Replay after success.
    let challenge = challenge_for(&mut authority, &registry, ALICE, T0);
    let signature = sign(&alice_key(), &challenge);
    authority
        .open_session(&registry, &challenge.challenge_id, &signature, T0)
        .unwrap();
    let replay = authority
        .open_session(&registry, &challenge.challenge_id, &signature, T0)
        .unwrap_err();
    assert_eq!(replay, AuthError::UnknownChallenge);
    assert_eq!(replay.code(), WireCode::AuthInvalidSignature);
    assert_eq!(authority.current_epoch(ALICE), 1, "no second session");
    // A failed answer spends the challenge too: the right signature afterwards is refused.
    let challenge = challenge_for(&mut authority, &registry, ALICE, T0);
    let wrong = sign(&bob_key(), &challenge);
    assert_eq!(
        authority
            .open_session(&registry, &challenge.challenge_id, &wrong, T0)
            .unwrap_err(),
        AuthError::InvalidSignature
    );
    assert_eq!(
        authority
            .open_session(
                &registry,
                &challenge.challenge_id,
                &sign(&alice_key(), &challenge),
                T0
            )
            .unwrap_err(),
        AuthError::UnknownChallenge
    );
    assert_eq!(authority.pending_challenges(), 0);
}

#[test]
fn an_unknown_challenge_id_is_refused() {
    let registry = registry();
    let mut authority = authority();
    let error = authority
        .open_session(&registry, "AAAA", &encode_base64url(&[0; 64]), T0)
        .unwrap_err();
    assert_eq!(error, AuthError::UnknownChallenge);
}

#[test]
fn an_expired_challenge_is_refused() {
    let registry = registry();
    let mut authority = authority();
    let challenge = challenge_for(&mut authority, &registry, ALICE, T0);
    let error = authority
        .open_session(
            &registry,
            &challenge.challenge_id,
            &sign(&alice_key(), &challenge),
            at(30_000),
        )
        .unwrap_err();
    assert_eq!(error, AuthError::ChallengeExpired);
    assert_eq!(error.code(), WireCode::AuthInvalidSignature);
    // Just inside the window it works.
    let challenge = challenge_for(&mut authority, &registry, ALICE, T0);
    assert!(
        authority
            .open_session(
                &registry,
                &challenge.challenge_id,
                &sign(&alice_key(), &challenge),
                at(29_999),
            )
            .is_ok()
    );
}

#[test]
fn wrong_key_and_cross_agent_signatures_are_refused() {
    let registry = registry();
    let mut authority = authority();
    // Bob signs Alice's challenge with his own (registered, valid) key.
    let challenge = challenge_for(&mut authority, &registry, ALICE, T0);
    let error = authority
        .open_session(
            &registry,
            &challenge.challenge_id,
            &sign(&bob_key(), &challenge),
            T0,
        )
        .unwrap_err();
    assert_eq!(error, AuthError::InvalidSignature);
    assert_eq!(error.code(), WireCode::AuthInvalidSignature);
    // Alice's signature over Bob's challenge transcript does not answer Alice's challenge.
    let alices = challenge_for(&mut authority, &registry, ALICE, T0);
    let bobs = challenge_for(&mut authority, &registry, BOB, T0);
    let error = authority
        .open_session(
            &registry,
            &alices.challenge_id,
            &sign(&alice_key(), &bobs),
            T0,
        )
        .unwrap_err();
    assert_eq!(error, AuthError::InvalidSignature);
    // Bob cannot open a session for Alice with his signature over his own challenge either.
    let error = authority
        .open_session(
            &registry,
            &bobs.challenge_id,
            &sign(&alice_key(), &bobs),
            T0,
        )
        .unwrap_err();
    assert_eq!(error, AuthError::InvalidSignature);
    assert_eq!(authority.current_epoch(ALICE), 0);
    assert_eq!(authority.current_epoch(BOB), 0);
}

#[test]
fn malformed_and_non_canonical_signatures_are_refused_strictly() {
    let registry = registry();
    let mut authority = authority();
    let good = |authority: &mut SessionAuthority| {
        let challenge = challenge_for(authority, &registry, ALICE, T0);
        let bytes = alice_key().sign(&challenge.signing_bytes().unwrap());
        (challenge, bytes)
    };
    // S + L (same signature modulo L): a permissive verifier might accept it.
    const L: [u8; 32] = [
        0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde,
        0x14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
    ];
    let (challenge, mut bytes) = good(&mut authority);
    let mut carry = 0u16;
    for i in 0..32 {
        let sum = u16::from(bytes[32 + i]) + u16::from(L[i]) + carry;
        bytes[32 + i] = sum as u8;
        carry = sum >> 8;
    }
    assert_eq!(
        authority
            .open_session(
                &registry,
                &challenge.challenge_id,
                &encode_base64url(&bytes),
                T0
            )
            .unwrap_err(),
        AuthError::InvalidSignature
    );
    let cases: Vec<Box<dyn Fn([u8; 64]) -> String>> = vec![
        Box::new(|b| encode_base64url(&b[..63])),
        Box::new(|b| format!("{}=", encode_base64url(&b))),
        Box::new(|b| {
            let mut b = b;
            b[0] ^= 1;
            encode_base64url(&b)
        }),
        Box::new(|_| String::new()),
    ];
    for case in cases {
        let (challenge, bytes) = good(&mut authority);
        assert_eq!(
            authority
                .open_session(&registry, &challenge.challenge_id, &case(bytes), T0)
                .unwrap_err(),
            AuthError::InvalidSignature
        );
    }
}

#[test]
fn a_key_revoked_before_the_response_cannot_open_a_session() {
    let mut registry = registry();
    let mut authority = authority();
    let challenge = challenge_for(&mut authority, &registry, ALICE, T0);
    registry.revoke(ALICE, ALICE_KEY, at(5)).unwrap();
    let error = authority
        .open_session(
            &registry,
            &challenge.challenge_id,
            &sign(&alice_key(), &challenge),
            at(5),
        )
        .unwrap_err();
    assert_eq!(error, AuthError::KeyRevoked);
    assert_eq!(error.code(), WireCode::AuthInvalidSignature);
}

#[test]
fn epochs_strictly_increase_per_agent_and_fence_older_tokens() {
    let registry = registry();
    let mut authority = authority();
    let first = open(&mut authority, &registry, ALICE, &alice_key(), T0).unwrap();
    let bob = open(&mut authority, &registry, BOB, &bob_key(), T0).unwrap();
    let second = open(&mut authority, &registry, ALICE, &alice_key(), at(1)).unwrap();
    let third = open(&mut authority, &registry, ALICE, &alice_key(), at(2)).unwrap();
    assert_eq!(
        [
            first.session_epoch,
            second.session_epoch,
            third.session_epoch
        ],
        [1, 2, 3]
    );
    assert_eq!(bob.session_epoch, 1, "epochs are per Agent");
    for stale in [&first, &second] {
        let error = authority
            .verify_session(&registry, &stale.token, at(3))
            .unwrap_err();
        assert_eq!(error, AuthError::StaleSession);
        assert_eq!(error.code(), WireCode::AuthStaleSession);
    }
    assert!(
        authority
            .verify_session(&registry, &third.token, at(3))
            .is_ok()
    );
    assert!(
        authority
            .verify_session(&registry, &bob.token, at(3))
            .is_ok()
    );
}

#[test]
fn synchronize_epoch_adopts_a_higher_epoch_and_never_lowers() {
    let registry = registry();
    let mut authority = authority();
    let grant = open(&mut authority, &registry, ALICE, &alice_key(), T0).unwrap();
    authority.synchronize_epoch(ALICE, 1).unwrap();
    assert!(
        authority
            .verify_session(&registry, &grant.token, T0)
            .is_ok()
    );
    authority.synchronize_epoch(ALICE, 7).unwrap();
    assert_eq!(authority.current_epoch(ALICE), 7);
    assert_eq!(
        authority
            .verify_session(&registry, &grant.token, T0)
            .unwrap_err(),
        AuthError::StaleSession
    );
    authority.synchronize_epoch(ALICE, 3).unwrap();
    assert_eq!(authority.current_epoch(ALICE), 7, "never lowered");
    let next = open(&mut authority, &registry, ALICE, &alice_key(), at(1)).unwrap();
    assert_eq!(next.session_epoch, 8);
    for bad in [0, MAX_SESSION_EPOCH + 1] {
        assert_eq!(
            authority
                .synchronize_epoch(ALICE, bad)
                .unwrap_err()
                .reason(),
            "invalid_argument"
        );
    }
    assert_eq!(
        authority.synchronize_epoch("", 1).unwrap_err().reason(),
        "invalid_argument"
    );
}

#[test]
fn the_epoch_stays_a_safe_integer() {
    let registry = registry();
    let mut authority = authority();
    authority
        .synchronize_epoch(ALICE, MAX_SESSION_EPOCH)
        .unwrap();
    let error = open(&mut authority, &registry, ALICE, &alice_key(), T0).unwrap_err();
    assert_eq!(error, AuthError::EpochExhausted);
    assert_eq!(authority.current_epoch(ALICE), MAX_SESSION_EPOCH);
}

#[test]
fn an_expired_token_is_refused() {
    let registry = registry();
    let mut authority = authority();
    let grant = open(&mut authority, &registry, ALICE, &alice_key(), T0).unwrap();
    assert!(
        authority
            .verify_session(&registry, &grant.token, at(15 * 60_000 - 1))
            .is_ok()
    );
    let error = authority
        .verify_session(&registry, &grant.token, at(15 * 60_000))
        .unwrap_err();
    assert_eq!(error, AuthError::SessionExpired);
    assert_eq!(error.code(), WireCode::AuthRequired);
}

#[test]
fn forged_tokens_are_refused() {
    let registry = registry();
    let mut authority = authority();
    let grant = open(&mut authority, &registry, ALICE, &alice_key(), T0).unwrap();
    let (body, mac) = grant.token.split_once('.').unwrap();
    // Claims rewritten to a later expiry, keeping the MAC.
    let claims = String::from_utf8(decode_base64url(body).unwrap()).unwrap();
    let forged_claims = claims.replace(
        &format!("\"expiresAt\":{}", grant.expires_at.0),
        &format!("\"expiresAt\":{}", grant.expires_at.0 + 1),
    );
    assert_ne!(claims, forged_claims);
    let mut flipped_mac = decode_base64url(mac).unwrap();
    flipped_mac[0] ^= 1;
    let other_secret = SessionAuthority::new(
        vec![7; 32],
        SessionConfig::default(),
        Box::new(CountingNonces::default()),
    )
    .unwrap();
    let mut other = other_secret;
    other.synchronize_epoch(ALICE, 1).unwrap();
    let foreign = open(&mut other, &registry, ALICE, &alice_key(), T0).unwrap();
    for forged in [
        format!("{}.{mac}", encode_base64url(forged_claims.as_bytes())),
        format!("{body}.{}", encode_base64url(&flipped_mac)),
        format!(
            "{body}.{}",
            encode_base64url(&decode_base64url(mac).unwrap()[..31])
        ),
        format!("{body}.{mac}.x"),
        format!("{body}{mac}"),
        format!("{body}."),
        String::new(),
        foreign.token.clone(),
    ] {
        let error = authority
            .verify_session(&registry, &forged, T0)
            .unwrap_err();
        assert_eq!(error, AuthError::InvalidToken, "{forged:?}");
        assert_eq!(error.code(), WireCode::AuthRequired);
    }
}

#[test]
fn cross_agent_tokens_are_refused() {
    let registry = registry();
    let mut authority = authority();
    let alice = open(&mut authority, &registry, ALICE, &alice_key(), T0).unwrap();
    assert!(
        authority
            .verify_session_for(&registry, &alice.token, ALICE, T0)
            .is_ok()
    );
    let error = authority
        .verify_session_for(&registry, &alice.token, BOB, T0)
        .unwrap_err();
    assert_eq!(error, AuthError::AgentMismatch);
    assert_eq!(error.code(), WireCode::AuthRequired);
    // Bob's epoch does not make Alice's old token current, nor the other way round.
    let _bob = open(&mut authority, &registry, BOB, &bob_key(), T0).unwrap();
    let _bob2 = open(&mut authority, &registry, BOB, &bob_key(), T0).unwrap();
    assert!(
        authority
            .verify_session(&registry, &alice.token, T0)
            .is_ok()
    );
}

#[test]
fn a_token_of_a_revoked_or_expired_key_is_refused() {
    let mut registry = registry();
    let mut authority = authority();
    let grant = open(&mut authority, &registry, ALICE, &alice_key(), T0).unwrap();
    registry.revoke(ALICE, ALICE_KEY, at(100)).unwrap();
    assert!(
        authority
            .verify_session(&registry, &grant.token, at(99))
            .is_ok()
    );
    let error = authority
        .verify_session(&registry, &grant.token, at(100))
        .unwrap_err();
    assert_eq!(error, AuthError::KeyRevoked);
    assert_eq!(error.code(), WireCode::AuthInvalidSignature);

    let mut registry = fixture::registry();
    let bob = open(&mut authority, &registry, BOB, &bob_key(), T0).unwrap();
    registry
        .register(
            BOB,
            &bob_key().public_key_bytes(),
            Some(BOB_KEY),
            missionweaveprotocol_agent::auth::KeyValidity {
                valid_until: Some(at(50)),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(
        authority
            .verify_session(&registry, &bob.token, at(50))
            .unwrap_err(),
        AuthError::KeyExpired
    );
}

#[test]
fn pending_challenges_are_bounded_and_expired_ones_dropped() {
    let registry = registry();
    let mut authority = SessionAuthority::new(
        SECRET.to_vec(),
        SessionConfig {
            max_pending_challenges: 2,
            ..SessionConfig::default()
        },
        Box::new(CountingNonces::default()),
    )
    .unwrap();
    challenge_for(&mut authority, &registry, ALICE, T0);
    challenge_for(&mut authority, &registry, ALICE, T0);
    let error = authority
        .issue_challenge(&registry, ALICE, None, None, "0.1", T0)
        .unwrap_err();
    assert_eq!(error, AuthError::TooManyChallenges);
    assert_eq!(error.code(), WireCode::RateLimited);
    assert!(error.retryable());
    // Once they expire, room is made again.
    assert!(
        authority
            .issue_challenge(&registry, ALICE, None, None, "0.1", at(30_000))
            .is_ok()
    );
    assert_eq!(authority.pending_challenges(), 1);
}

#[test]
fn the_authority_refuses_weak_configuration() {
    let nonces = || Box::new(CountingNonces::default());
    let short = SessionAuthority::new(vec![1; 31], SessionConfig::default(), nonces());
    assert_eq!(short.unwrap_err().reason(), "invalid_argument");
    let zero_ttl = SessionAuthority::new(
        SECRET.to_vec(),
        SessionConfig {
            session_ttl_ms: 0,
            ..SessionConfig::default()
        },
        nonces(),
    );
    assert_eq!(zero_ttl.unwrap_err().reason(), "invalid_argument");
}

#[test]
fn no_secret_token_or_mac_appears_in_debug_or_errors() {
    let registry = registry();
    let mut authority = authority();
    let grant = open(&mut authority, &registry, ALICE, &alice_key(), T0).unwrap();
    let (_, mac) = grant.token.split_once('.').unwrap();
    let secret_text = String::from_utf8_lossy(&SECRET).into_owned();
    let secret_b64 = encode_base64url(&SECRET);
    let secret_bytes_debug = format!("{:?}", SECRET);
    let renderings = [
        format!("{authority:?}"),
        format!("{authority:#?}"),
        format!("{grant:?}"),
        format!("{grant:#?}"),
        format!(
            "{:?}",
            authority
                .verify_session(&registry, &format!("{}x", grant.token), T0)
                .unwrap_err()
        ),
        authority
            .verify_session(&registry, &format!("{}x", grant.token), T0)
            .unwrap_err()
            .to_string(),
    ];
    for text in &renderings {
        assert!(!text.contains(&secret_text), "{text}");
        assert!(!text.contains(&secret_b64), "{text}");
        assert!(!text.contains(&secret_bytes_debug), "{text}");
        assert!(!text.contains(mac), "{text}");
        assert!(!text.contains(&grant.token), "{text}");
    }
    assert!(renderings[2].contains("<redacted>"));
}
