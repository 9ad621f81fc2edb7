//! The authorizer a binding's core uses by default.
//!
//! **Placeholder.** The Organization's role-and-policy authorizer (`OrganizationAuthorizer`) is
//! being written separately; until it lands, [`default_authorizer`] returns
//! [`PlaceholderAuthorizer`], which lets every verified, fresh Command through to the engine.
//! The engine still enforces each row's authority column (MissionOwner, current Coordinator,
//! offered Agent, owner; `docs/engine.md`) and every epoch fence, so what the placeholder
//! leaves out is Organization policy beyond those rows (§6.4 "authorization under role and
//! policy"). Swapping in the real authorizer is the one line in [`default_authorizer`].

use super::BoxedAuthorizer;
use crate::ingress::{AuthorizationRefusal, CommandAuthorizer, VerifiedCommand};

/// Authorizes every verified, fresh Command (see the module documentation): a placeholder for
/// the Organization authorizer, never a policy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlaceholderAuthorizer;

impl CommandAuthorizer for PlaceholderAuthorizer {
    fn authorize(&self, _command: &VerifiedCommand) -> Result<(), AuthorizationRefusal> {
        Ok(())
    }
}

/// The authorizer bindings construct their core with.
pub fn default_authorizer() -> BoxedAuthorizer {
    Box::new(PlaceholderAuthorizer)
}
