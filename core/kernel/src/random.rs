//! Randomness the host supplies. The sans-IO layers (kernel, engine, agent) never read an
//! operating-system source themselves: HELLO challenges and session secrets (§6.3), capability
//! and membership token IDs (§8, §12) and random Event IDs (§16) draw from a [`RandomSource`]
//! the host injects — the operating system's (`missionweaveprotocol_host::OsRandom`), a browser's
//! `crypto.getRandomValues`, or a deterministic one in tests. Nothing here can build for a
//! target without a source and silently fall back to a guessable value.

use core::fmt;

/// A source of unpredictable bytes.
pub trait RandomSource: fmt::Debug + Send {
    /// Fills `out` with unpredictable bytes, or reports that the source is unavailable (the
    /// caller then refuses its operation; it never continues with zeros).
    fn fill(&mut self, out: &mut [u8]) -> Result<(), RandomUnavailable>;
}

impl<R: RandomSource + ?Sized> RandomSource for Box<R> {
    fn fill(&mut self, out: &mut [u8]) -> Result<(), RandomUnavailable> {
        (**self).fill(out)
    }
}

/// The host's random source failed or does not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RandomUnavailable;

impl fmt::Display for RandomUnavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("no randomness available from the host")
    }
}

impl std::error::Error for RandomUnavailable {}
