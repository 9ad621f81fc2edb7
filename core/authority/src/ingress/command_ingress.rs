//! [`CommandIngress`]: verify, check freshness, authorize — in the order of §6.4.

use missionweaveprotocol::{KeyResolver, SignedDocumentCodec, SignedDocumentKind};

use super::authorizer::CommandAuthorizer;
use super::error::IngressError;
use super::freshness::FreshnessWindow;
use super::verified_command::VerifiedCommand;
use crate::unix_millis::UnixMillis;

/// Turns wire Command bytes into a [`VerifiedCommand`] (reference name: `ingress.CommandIngress`,
/// `reference-python.md` §1.8; unlike the reference, ingress also checks freshness and
/// authorization, so its result is ready for the engine).
#[derive(Debug, Clone)]
pub struct CommandIngress<A> {
    codec: SignedDocumentCodec<'static>,
    window: FreshnessWindow,
    authorizer: A,
}

impl<A: CommandAuthorizer> CommandIngress<A> {
    /// Ingress over the embedded schemas, default `DOCUMENT` parse limits and the default
    /// [`FreshnessWindow`].
    pub fn new(authorizer: A) -> Self {
        Self {
            codec: SignedDocumentCodec::new(),
            window: FreshnessWindow::default(),
            authorizer,
        }
    }

    /// The same ingress with another freshness window (Organization policy, §6.4).
    pub fn with_window(mut self, window: FreshnessWindow) -> Self {
        self.window = window;
        self
    }

    /// The freshness window in use.
    pub fn window(&self) -> &FreshnessWindow {
        &self.window
    }

    /// The authorizer in use.
    pub fn authorizer(&self) -> &A {
        &self.authorizer
    }

    /// Verifies `bytes` as a Command at `now` with this ingress's authorizer.
    pub fn verify(
        &self,
        bytes: &[u8],
        resolver: &dyn KeyResolver,
        now: UnixMillis,
    ) -> Result<VerifiedCommand, IngressError> {
        self.verify_with(bytes, resolver, &self.authorizer, now)
    }

    /// Like [`verify`](Self::verify) with a per-call authorizer (e.g. one holding the state the
    /// engine read in the current transaction).
    pub fn verify_with(
        &self,
        bytes: &[u8],
        resolver: &dyn KeyResolver,
        authorizer: &dyn CommandAuthorizer,
        now: UnixMillis,
    ) -> Result<VerifiedCommand, IngressError> {
        // 1. The six stages, Command profile; nothing else runs before all six succeed (§6.4).
        let verified = self
            .codec
            .verify(SignedDocumentKind::Command, bytes, resolver)?;
        // 2. Freshness of the protected time `issuedAt` (§6.4, §22).
        self.window
            .check(&verified.protected_time, now)
            .map_err(IngressError::Freshness)?;
        let command = VerifiedCommand::from_verified(verified, bytes)?;
        // 3. Signer role and authorization, after all of the above (§6.4).
        authorizer
            .authorize(&command)
            .map_err(IngressError::Forbidden)?;
        Ok(command)
    }
}
