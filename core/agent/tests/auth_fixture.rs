//! Shared fixture of the auth tests: two Agents with registered keys, a session authority with
//! a known secret and counter-derived nonces, and a helper that runs a full challenge/response.
//! Included with `#[path]`; as its own test target it holds no tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::schema_formats::encode_base64url;
use missionweaveprotocol_agent::auth::{
    AgentKeyRegistry, AuthError, Challenge, KeyValidity, SessionAuthority, SessionConfig,
    SessionGrant,
};
use missionweaveprotocol_kernel::random::{RandomSource, RandomUnavailable};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

pub const ALICE: &str = "urn:missionweaveprotocol:agent:alice";
pub const BOB: &str = "urn:missionweaveprotocol:agent:bob";
pub const ALICE_KEY: &str = "urn:missionweaveprotocol:key:alice";
pub const BOB_KEY: &str = "urn:missionweaveprotocol:key:bob";
/// The HMAC secret of the fixture authority: tests look for it in `Debug` output.
pub const SECRET: [u8; 32] = *b"fixture-secret-0123456789abcdef!";
pub const T0: UnixMillis = UnixMillis(1_780_000_000_000);

/// Deterministic nonces: 8-byte counter repeated (tests only; deployments use `missionweaveprotocol_host::OsRandom`).
#[derive(Debug, Default)]
pub struct CountingNonces(u64);

impl RandomSource for CountingNonces {
    fn fill(&mut self, out: &mut [u8]) -> Result<(), RandomUnavailable> {
        self.0 += 1;
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = self.0.to_le_bytes()[i % 8] ^ (i as u8);
        }
        Ok(())
    }
}

pub fn key(seed: u8, key_id: &str) -> SigningKey {
    SigningKey::from_seed(key_id, &[seed; 32])
}

pub fn alice_key() -> SigningKey {
    key(1, ALICE_KEY)
}

pub fn bob_key() -> SigningKey {
    key(2, BOB_KEY)
}

pub fn registry() -> AgentKeyRegistry {
    let mut registry = AgentKeyRegistry::new();
    registry
        .register(
            ALICE,
            &alice_key().public_key_bytes(),
            Some(ALICE_KEY),
            KeyValidity::default(),
        )
        .unwrap();
    registry
        .register(
            BOB,
            &bob_key().public_key_bytes(),
            Some(BOB_KEY),
            KeyValidity::default(),
        )
        .unwrap();
    registry
}

pub fn authority() -> SessionAuthority {
    SessionAuthority::new(
        SECRET.to_vec(),
        SessionConfig::default(),
        Box::new(CountingNonces::default()),
    )
    .unwrap()
}

pub fn sign(key: &SigningKey, challenge: &Challenge) -> String {
    encode_base64url(&key.sign(&challenge.signing_bytes().unwrap()))
}

pub fn challenge_for(
    authority: &mut SessionAuthority,
    registry: &AgentKeyRegistry,
    agent: &str,
    now: UnixMillis,
) -> Challenge {
    authority
        .issue_challenge(registry, agent, None, None, "0.1", now)
        .unwrap()
}

/// A full challenge/response for `agent` signed with `key`.
pub fn open(
    authority: &mut SessionAuthority,
    registry: &AgentKeyRegistry,
    agent: &str,
    key: &SigningKey,
    now: UnixMillis,
) -> Result<SessionGrant, AuthError> {
    let challenge = authority
        .issue_challenge(registry, agent, Some(key.key_id()), None, "0.1", now)
        .unwrap();
    authority.open_session(
        registry,
        &challenge.challenge_id,
        &sign(key, &challenge),
        now,
    )
}

pub fn at(offset_ms: i64) -> UnixMillis {
    UnixMillis(T0.0 + offset_ms)
}
