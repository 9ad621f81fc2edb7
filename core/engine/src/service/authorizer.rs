//! The authorizer a binding's core uses by default: the Organization's
//! [`OrganizationAuthorizer`] (`ingress/organization_authorizer.rs`), built from the
//! Organization service principals the binding is configured with. The engine still enforces
//! each row's authority column (MissionOwner, current Coordinator, offered Agent, owner;
//! `docs/engine.md`) and every epoch fence; the authorizer adds the kind-by-actor-type rules
//! (§6.4 "authorization under role and policy").

use super::BoxedAuthorizer;
use crate::ingress::OrganizationAuthorizer;

/// The authorizer bindings construct their core with: `bootstrap_services` may send the
/// Organization bootstrap Commands (`session_open`, `agent_card_register`), `policy_services`
/// the Group kinds Organization policy may sign.
pub fn default_authorizer(
    bootstrap_services: Vec<String>,
    policy_services: Vec<String>,
) -> BoxedAuthorizer {
    Box::new(OrganizationAuthorizer::new(
        bootstrap_services,
        policy_services,
    ))
}
