//! The per-connection HELLO state machine (digest §2.10): phase order, version negotiation,
//! echo checks, one use per challenge, `AUTH_REQUIRED` before authentication.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "auth_fixture.rs"]
mod fixture;

use fixture::*;
use missionweaveprotocol::WireCode;
use missionweaveprotocol_agent::auth::{
    AuthError, ClientInit, ClientResponse, Handshake, HelloPhase,
};

fn init(agent: &str, key_id: &str) -> ClientInit {
    ClientInit {
        agent_id: agent.to_owned(),
        key_id: key_id.to_owned(),
        client_nonce: "Y2xpZW50LW5vbmNl".to_owned(),
        supported_versions: vec!["0.1".to_owned()],
    }
}

fn response_to(
    challenge: &missionweaveprotocol_agent::auth::Challenge,
    key: &missionweaveprotocol::crypto::SigningKey,
) -> ClientResponse {
    ClientResponse {
        agent_id: challenge.agent_id.clone(),
        key_id: challenge.key_id.clone(),
        client_nonce: challenge.client_nonce.clone(),
        server_nonce: challenge.server_nonce.clone(),
        challenge_signature: sign(key, challenge),
    }
}

#[test]
fn phases_have_their_wire_spellings() {
    let spelled: Vec<_> = HelloPhase::ALL.iter().map(|p| p.as_str()).collect();
    assert_eq!(
        spelled,
        [
            "client_init",
            "server_challenge",
            "client_response",
            "server_accept"
        ]
    );
    for phase in HelloPhase::ALL {
        assert_eq!(HelloPhase::parse(phase.as_str()), Some(phase));
    }
    assert_eq!(HelloPhase::parse("CHALLENGE"), None);
}

#[test]
fn a_full_handshake_authenticates_the_connection() {
    let registry = registry();
    let mut authority = authority();
    let mut connection = Handshake::default();
    assert_eq!(
        connection.require_authenticated().unwrap_err().code(),
        WireCode::AuthRequired
    );
    let challenge = connection
        .client_init(&mut authority, &registry, &init(ALICE, ALICE_KEY), T0)
        .unwrap();
    assert_eq!(challenge.client_nonce, "Y2xpZW50LW5vbmNl");
    assert_eq!(
        connection.require_authenticated().unwrap_err(),
        AuthError::NotAuthenticated
    );
    let grant = connection
        .client_response(
            &mut authority,
            &registry,
            &response_to(&challenge, &alice_key()),
            at(1),
        )
        .unwrap();
    assert_eq!(grant.session_epoch, 1);
    assert_eq!(connection.require_authenticated().unwrap(), &grant);
    // A second HELLO on an authenticated connection is out of order.
    let error = connection
        .client_init(&mut authority, &registry, &init(ALICE, ALICE_KEY), at(2))
        .unwrap_err();
    assert_eq!(error, AuthError::UnexpectedPhase);
    assert_eq!(error.code(), WireCode::ProtocolViolation);
}

#[test]
fn no_compatible_version_is_unsupported_version() {
    let registry = registry();
    let mut authority = authority();
    let mut connection = Handshake::default();
    let mut hello = init(ALICE, ALICE_KEY);
    hello.supported_versions = vec!["0.2".to_owned(), "1.0".to_owned()];
    let error = connection
        .client_init(&mut authority, &registry, &hello, T0)
        .unwrap_err();
    assert_eq!(error.code(), WireCode::UnsupportedVersion);
    assert_eq!(authority.pending_challenges(), 0);
}

#[test]
fn a_response_before_init_is_out_of_order() {
    let registry = registry();
    let mut authority = authority();
    let mut connection = Handshake::default();
    let challenge = challenge_for(&mut authority, &registry, ALICE, T0);
    let error = connection
        .client_response(
            &mut authority,
            &registry,
            &response_to(&challenge, &alice_key()),
            T0,
        )
        .unwrap_err();
    assert_eq!(error, AuthError::UnexpectedPhase);
}

#[test]
fn a_response_that_does_not_echo_the_challenge_is_refused_and_spends_it() {
    let registry = registry();
    let mut authority = authority();
    type Tamper = fn(&mut ClientResponse);
    let tampers: [Tamper; 4] = [
        |r| r.agent_id = BOB.to_owned(),
        |r| r.key_id = BOB_KEY.to_owned(),
        |r| r.client_nonce = "b3RoZXI".to_owned(),
        |r| r.server_nonce = "b3RoZXI".to_owned(),
    ];
    for tamper in tampers {
        let mut connection = Handshake::default();
        let challenge = connection
            .client_init(&mut authority, &registry, &init(ALICE, ALICE_KEY), T0)
            .unwrap();
        let mut response = response_to(&challenge, &alice_key());
        tamper(&mut response);
        let error = connection
            .client_response(&mut authority, &registry, &response, T0)
            .unwrap_err();
        assert_eq!(error, AuthError::ChallengeMismatch);
        assert_eq!(error.code(), WireCode::AuthInvalidSignature);
        assert!(matches!(connection, Handshake::Failed));
        // The challenge is gone: it cannot be answered through the authority either.
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
    }
}

#[test]
fn a_failed_signature_fails_the_connection_for_good() {
    let registry = registry();
    let mut authority = authority();
    let mut connection = Handshake::default();
    let challenge = connection
        .client_init(&mut authority, &registry, &init(ALICE, ALICE_KEY), T0)
        .unwrap();
    let mut response = response_to(&challenge, &alice_key());
    response.challenge_signature = sign(&bob_key(), &challenge);
    assert_eq!(
        connection
            .client_response(&mut authority, &registry, &response, T0)
            .unwrap_err(),
        AuthError::InvalidSignature
    );
    // Retrying with the right signature on the same connection is refused.
    let error = connection
        .client_response(
            &mut authority,
            &registry,
            &response_to(&challenge, &alice_key()),
            T0,
        )
        .unwrap_err();
    assert_eq!(error, AuthError::UnexpectedPhase);
    assert_eq!(authority.current_epoch(ALICE), 0);
}

#[test]
fn a_second_connection_fences_the_first() {
    let registry = registry();
    let mut authority = authority();
    let mut first = Handshake::default();
    let c1 = first
        .client_init(&mut authority, &registry, &init(ALICE, ALICE_KEY), T0)
        .unwrap();
    let g1 = first
        .client_response(
            &mut authority,
            &registry,
            &response_to(&c1, &alice_key()),
            T0,
        )
        .unwrap();
    let mut second = Handshake::default();
    let c2 = second
        .client_init(&mut authority, &registry, &init(ALICE, ALICE_KEY), at(1))
        .unwrap();
    let g2 = second
        .client_response(
            &mut authority,
            &registry,
            &response_to(&c2, &alice_key()),
            at(1),
        )
        .unwrap();
    assert_eq!((g1.session_epoch, g2.session_epoch), (1, 2));
    // The first connection is still "authenticated", but its session is fenced (§4.4).
    let token = &first.require_authenticated().unwrap().token;
    assert_eq!(
        authority
            .verify_session(&registry, token, at(2))
            .unwrap_err()
            .code(),
        WireCode::AuthStaleSession
    );
}

#[test]
fn an_epoch_opened_elsewhere_is_verified_first_then_sealed_into_the_token() {
    // The gateway's flow: verify the response, open the epoch through the Core, seal it.
    let registry = registry();
    let mut authority = authority();
    let mut connection = Handshake::default();
    let challenge = connection
        .client_init(&mut authority, &registry, &init(ALICE, ALICE_KEY), T0)
        .unwrap();
    let verified = connection
        .verify_response(
            &mut authority,
            &registry,
            &response_to(&challenge, &alice_key()),
            at(1),
        )
        .unwrap();
    assert_eq!(verified, challenge);
    assert!(matches!(connection, Handshake::Verified(_)));
    assert_eq!(authority.current_epoch(ALICE), 0, "nothing issued yet");
    // The authoritative epoch (say another process already opened 6) is the token's.
    let grant = connection.open_at(&mut authority, 7, at(2)).unwrap();
    assert_eq!(grant.session_epoch, 7);
    assert_eq!(authority.current_epoch(ALICE), 7);
    assert_eq!(
        authority
            .verify_session(&registry, &grant.token, at(3))
            .unwrap()
            .session_epoch,
        7
    );
    assert_eq!(connection.require_authenticated().unwrap(), &grant);
}

#[test]
fn a_bad_signature_never_reaches_the_epoch_and_an_old_epoch_is_refused() {
    let registry = registry();
    let mut authority = authority();
    let mut connection = Handshake::default();
    let challenge = connection
        .client_init(&mut authority, &registry, &init(ALICE, ALICE_KEY), T0)
        .unwrap();
    let mut response = response_to(&challenge, &alice_key());
    response.challenge_signature = sign(&bob_key(), &challenge);
    assert_eq!(
        connection
            .verify_response(&mut authority, &registry, &response, T0)
            .unwrap_err(),
        AuthError::InvalidSignature
    );
    assert!(matches!(connection, Handshake::Failed));
    assert_eq!(
        connection.open_at(&mut authority, 1, T0).unwrap_err(),
        AuthError::UnexpectedPhase
    );
    // An epoch at or below the current one was already issued.
    authority.synchronize_epoch(ALICE, 3).unwrap();
    let mut again = Handshake::default();
    let challenge = again
        .client_init(&mut authority, &registry, &init(ALICE, ALICE_KEY), T0)
        .unwrap();
    again
        .verify_response(
            &mut authority,
            &registry,
            &response_to(&challenge, &alice_key()),
            T0,
        )
        .unwrap();
    let error = again.open_at(&mut authority, 3, T0).unwrap_err();
    assert_eq!(error, AuthError::StaleSession);
    assert!(matches!(again, Handshake::Failed));
    assert_eq!(
        authority
            .check_answer(
                &registry,
                &challenge,
                &sign(&alice_key(), &challenge),
                at(30_000)
            )
            .unwrap_err(),
        AuthError::ChallengeExpired
    );
}
