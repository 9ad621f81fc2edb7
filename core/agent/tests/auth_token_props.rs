//! Arbitrary token strings never panic, are refused unless they are the authority's own token,
//! and are read in bounded time: any input longer than `MAX_TOKEN_CHARS` (8192, the
//! `sessionToken` bound of the frame schema) is refused before decoding, so the work per call
//! is O(8192) whatever the input.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "auth_fixture.rs"]
mod fixture;

use std::time::{Duration, Instant};

use fixture::*;
use missionweaveprotocol::schema_formats::encode_base64url;
use missionweaveprotocol_agent::auth::{AuthError, MAX_TOKEN_CHARS};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_strings_are_refused_without_panicking(token in ".{0,300}") {
        let registry = registry();
        let mut authority = authority();
        open(&mut authority, &registry, ALICE, &alice_key(), T0).unwrap();
        let error = authority.verify_session(&registry, &token, T0).unwrap_err();
        prop_assert_eq!(error, AuthError::InvalidToken);
    }

    #[test]
    fn token_shaped_garbage_is_refused(
        body in proptest::collection::vec(any::<u8>(), 0..600),
        tag in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        let registry = registry();
        let authority = authority();
        let token = format!("{}.{}", encode_base64url(&body), encode_base64url(&tag));
        let error = authority.verify_session(&registry, &token, T0).unwrap_err();
        prop_assert_eq!(error, AuthError::InvalidToken);
    }

    #[test]
    fn any_single_character_change_breaks_a_real_token(
        position in any::<prop::sample::Index>(),
        replacement in prop::char::range('-', 'z'),
    ) {
        let registry = registry();
        let mut authority = authority();
        let grant = open(&mut authority, &registry, ALICE, &alice_key(), T0).unwrap();
        let mut chars: Vec<char> = grant.token.chars().collect();
        let index = position.index(chars.len());
        prop_assume!(chars[index] != replacement);
        chars[index] = replacement;
        let tampered: String = chars.into_iter().collect();
        prop_assert!(authority.verify_session(&registry, &tampered, T0).is_err());
    }
}

#[test]
fn oversized_tokens_are_refused_in_bounded_time() {
    let registry = registry();
    let mut authority = authority();
    let grant = open(&mut authority, &registry, ALICE, &alice_key(), T0).unwrap();
    // A valid token padded past the cap, and 16 MiB of junk: both refused, both quickly.
    let padded = format!("{}{}", grant.token, "A".repeat(MAX_TOKEN_CHARS));
    let huge = "A".repeat(16 << 20) + "." + &"B".repeat(43);
    for token in [&padded, &huge] {
        let started = Instant::now();
        assert_eq!(
            authority.verify_session(&registry, token, T0).unwrap_err(),
            AuthError::InvalidToken
        );
        assert!(started.elapsed() < Duration::from_millis(50));
    }
    // At the cap exactly, a token-shaped input is read (and refused by its MAC).
    let at_cap = format!("{}.{}", "A".repeat(MAX_TOKEN_CHARS - 44), "B".repeat(43));
    assert_eq!(at_cap.len(), MAX_TOKEN_CHARS);
    assert_eq!(
        authority
            .verify_session(&registry, &at_cap, T0)
            .unwrap_err(),
        AuthError::InvalidToken
    );
}
