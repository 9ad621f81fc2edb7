//! MissionWeaveProtocol 0.1 — the host edges.
//!
//! The kernel, the engine and the Agent crates are sans-IO: they read no clock, no randomness
//! and no file. This crate holds what a native host injects into them:
//!
//! | item | spec | what |
//! | --- | --- | --- |
//! | [`OsRandom`] | §6.3, §8, §16 | the operating system's random source, a [`RandomSource`] |
//! | [`SystemClock`] | §6.4 | the wall clock as [`UnixMillis`] |
//! | [`random_token_id`], [`random_secret`] | §8, §12 | fresh token IDs and secrets for the policy services |
//! | [`LocalArtifactStore`] | §13.1 | Artifact bytes on a local filesystem, content-addressed |
//!
//! Browsers inject their own (`crypto.getRandomValues`, `Date.now()`); the WebAssembly build
//! never links this crate.

mod artifact_store;

use std::time::{SystemTime, UNIX_EPOCH};

pub use artifact_store::LocalArtifactStore;
use missionweaveprotocol_kernel::random::{RandomSource, RandomUnavailable};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The operating system's random source (`getrandom`).
#[derive(Debug, Clone, Copy, Default)]
pub struct OsRandom;

impl RandomSource for OsRandom {
    fn fill(&mut self, out: &mut [u8]) -> Result<(), RandomUnavailable> {
        getrandom::fill(out).map_err(|_| RandomUnavailable)
    }
}

/// The wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl SystemClock {
    /// Now, in integer milliseconds since the Unix epoch (0 before the epoch; saturated far
    /// in the future).
    pub fn now(self) -> UnixMillis {
        UnixMillis(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
                .unwrap_or(0),
        )
    }
}

/// A fresh `urn:uuid:` v4 token ID from the operating system, or `None` if it has no
/// randomness to give.
pub fn random_token_id() -> Option<String> {
    let mut bytes = [0u8; 16];
    OsRandom.fill(&mut bytes).ok()?;
    Some(missionweaveprotocol_engine::events::uuid_v4_urn(bytes))
}

/// A fresh 32-byte secret from the operating system, or `None`. Never logged.
pub fn random_secret() -> Option<[u8; 32]> {
    let mut secret = [0u8; 32];
    OsRandom.fill(&mut secret).ok()?;
    Some(secret)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_randomness_differs_between_draws() {
        let (a, b) = (random_secret(), random_secret());
        assert!(a.is_some() && b.is_some());
        assert_ne!(a, b);
        let id = random_token_id().unwrap_or_default();
        assert!(id.starts_with("urn:uuid:") && id.len() == 45, "{id}");
    }

    #[test]
    fn the_clock_is_past_2026() {
        assert!(SystemClock.now().0 > 1_767_225_600_000);
    }
}
