//! [`CommandIngress`]: verify, check freshness, authorize — in the order of §6.4.

use missionweaveprotocol::{KeyResolver, SignedDocumentCodec, SignedDocumentKind};

use super::authorizer::CommandAuthorizer;
use super::error::IngressError;
use super::freshness::FreshnessWindow;
use super::verified_command::VerifiedCommand;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// Turns wire Command bytes into a [`VerifiedCommand`] (reference name: `ingress.CommandIngress`,
/// `reference-python.md` §1.8; unlike the reference, ingress also checks freshness and
/// authorization, so its result is ready for the engine).
///
/// ```
/// use std::sync::Arc;
/// use missionweaveprotocol::crypto::SigningKey;
/// use missionweaveprotocol::registry::RegistryBuilder;
/// use missionweaveprotocol::{json, Principal, PrincipalType, SignedDocumentCodec, SignedDocumentKind, WireCode};
/// use missionweaveprotocol::DescribeError;
/// use missionweaveprotocol_engine::ingress::{AllowAllAuthorizerForTests, CommandIngress};
/// use missionweaveprotocol_kernel::unix_millis::UnixMillis;
///
/// let key = SigningKey::from_seed("urn:missionweaveprotocol:key:planner-1", &[7; 32]);
/// let mut builder = RegistryBuilder::new("urn:missionweaveprotocol:organization:acme");
/// let agent = Principal::new(PrincipalType::Agent, "urn:missionweaveprotocol:agent:planner");
/// builder.add_key(key.key_id(), agent, &key.public_key_bytes(), "2026-01-01T00:00:00Z")?;
/// let registry = Arc::new(builder.build()?.1);
/// let command = json::parse_state(br#"{"protocolVersion": "0.1",
///     "actionId": "urn:uuid:0b6d1c1e-6f0a-4b7e-9a53-2f1f0c9e7d11",
///     "actor": {"type": "agent", "id": "urn:missionweaveprotocol:agent:planner"},
///     "sessionEpoch": 3, "membershipEpoch": 1, "groupId": "urn:missionweaveprotocol:group:finance",
///     "kind": "work.checkpoint", "correlationId": "urn:uuid:5e0c2a4b-1d3f-4e6a-8b7c-9d0e1f2a3b4c",
///     "issuedAt": "2026-07-15T09:30:00Z", "payload": {"step": 1}}"#)?;
/// let bytes = SignedDocumentCodec::new().sign(SignedDocumentKind::Command, &command, &key)?.bytes;
///
/// // A real deployment passes its role-and-policy authorizer here.
/// let ingress = CommandIngress::new(AllowAllAuthorizerForTests);
/// let issued = UnixMillis(1_784_107_800_000); // 2026-07-15T09:30:00Z
/// let verified = ingress.verify(&bytes, &registry, issued)?;
/// assert_eq!(verified.session_epoch(), Some(3));
///
/// // Ten minutes later the same bytes are stale: AUTH_INVALID_SIGNATURE, as a bad signature.
/// let error = ingress.verify(&bytes, &registry, UnixMillis(issued.0 + 600_000)).unwrap_err();
/// assert_eq!(error.wire_code(), WireCode::AuthInvalidSignature);
/// assert_eq!(error.to_string(), "AUTH_INVALID_SIGNATURE: signed document rejected");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
