//! Signer authorization: the hook the engine fills with role and policy (§6.4, §15.1).
//!
//! §6.4: "Signer role and authorization MUST be verified against authoritative policy and state
//! at the protected time … after six-stage verification"; failure → `AUTH_FORBIDDEN`. Ingress
//! calls the hook only for a Command that verified and is fresh.

use core::fmt;

use super::verified_command::VerifiedCommand;

/// Decides whether the Command's signer may issue it (role, Membership, policy).
pub trait CommandAuthorizer {
    /// `Ok(())` to let the Command through; a refusal becomes `AUTH_FORBIDDEN`.
    fn authorize(&self, command: &VerifiedCommand) -> Result<(), AuthorizationRefusal>;
}

impl<A: CommandAuthorizer + ?Sized> CommandAuthorizer for &A {
    fn authorize(&self, command: &VerifiedCommand) -> Result<(), AuthorizationRefusal> {
        (**self).authorize(command)
    }
}

impl<A: CommandAuthorizer + ?Sized> CommandAuthorizer for Box<A> {
    fn authorize(&self, command: &VerifiedCommand) -> Result<(), AuthorizationRefusal> {
        (**self).authorize(command)
    }
}

/// Why the signer is not authorized: a stable reason slug and a readable protected detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorizationRefusal {
    /// Stable snake_case reason (e.g. `not_mission_owner`).
    pub reason: String,
    /// Readable detail for the protected audit record.
    pub detail: String,
}

impl AuthorizationRefusal {
    /// A refusal with a reason slug and a detail.
    pub fn new(reason: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
            detail: detail.into(),
        }
    }
}

impl fmt::Display for AuthorizationRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.detail)
    }
}

/// Authorizes every verified, fresh Command. Deployments use
/// [`OrganizationAuthorizer`](super::OrganizationAuthorizer) instead. **For tests only**: it checks no role and no
/// policy, so a deployment using it lets any registered key act as anyone's role.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AllowAllAuthorizerForTests;

impl CommandAuthorizer for AllowAllAuthorizerForTests {
    fn authorize(&self, _command: &VerifiedCommand) -> Result<(), AuthorizationRefusal> {
        Ok(())
    }
}
