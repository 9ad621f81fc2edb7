//! Command ingress: wire Command bytes → a [`VerifiedCommand`], the engine's only input.
//!
//! The pipeline, in the order the spec requires (§6.4, §15.1; `spec-digest.md` §3.12):
//!
//! 1. six-stage Signed Document verification with the Command profile
//!    ([`SignedDocumentCodec`](missionweaveprotocol::SignedDocumentCodec), default
//!    `DOCUMENT` parse limits) against the Organization's Registry;
//! 2. the freshness and clock-skew window of `issuedAt` against the caller's `now` (§6.4: "a
//!    newly presented Command MUST fall within an Organization-defined, bounded freshness and
//!    clock-skew window"; the admission bundle does not prove this, §22) — [`FreshnessWindow`];
//! 3. signer authorization under role and policy, after all of the above (§6.4) — the
//!    [`CommandAuthorizer`] hook the engine implements.
//!
//! Wire codes: a verification failure keeps the verifier's code and fixed message; a freshness
//! failure is `AUTH_INVALID_SIGNATURE` with the same fixed message, so it is indistinguishable
//! from a stage 3, 4 or 6 failure on the wire (§6.4 last paragraphs); an authorization refusal
//! is `AUTH_FORBIDDEN`. The specific reason stays in the protected detail.

mod authorizer;
mod command_ingress;
mod error;
mod freshness;
mod organization_authorizer;
mod verified_command;

pub use authorizer::{AllowAllAuthorizerForTests, AuthorizationRefusal, CommandAuthorizer};
pub use command_ingress::CommandIngress;
pub use error::{FreshnessError, FreshnessViolation, IngressError};
pub use freshness::FreshnessWindow;
pub use organization_authorizer::{
    AGENT_KINDS, BOOTSTRAP_KINDS, HUMAN_KINDS, OrganizationAuthorizer, SERVICE_KINDS,
};
pub use verified_command::VerifiedCommand;
