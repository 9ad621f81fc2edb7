//! [`OrganizationAuthorizer`]: the default [`CommandAuthorizer`], the actor-type and service
//! rules the spec states for each Command kind. Role checks that need state (MissionOwner,
//! current Coordinator, owner, Membership) stay in the engine, after ingress (§15.1 order).

use std::collections::BTreeSet;

use missionweaveprotocol::PrincipalType;

use super::authorizer::{AuthorizationRefusal, CommandAuthorizer};
use super::verified_command::VerifiedCommand;

/// The bootstrap service kinds (§15.1: "The bootstrap Commands
/// `ext.missionweaveprotocol.registry.agent_card_register` and
/// `ext.missionweaveprotocol.identity.session_open` omit Group ID and all three epochs").
pub const BOOTSTRAP_KINDS: [&str; 2] = [
    "ext.missionweaveprotocol.identity.session_open",
    "ext.missionweaveprotocol.registry.agent_card_register",
];

/// Kinds only a human may sign: Mission creation (§7.1 "The MissionOwner of a root Mission MUST
/// be human"; `command.schema.json`: actor `human`) and execution approval (digest A.3: "signed
/// human decision"). `mission.approve` is not here: a child Mission's MissionOwner is the
/// Parent Coordinator, an Agent (§3 roles).
pub const HUMAN_KINDS: [&str; 3] = [
    "mission.create",
    "mission.create_follow_up",
    "approval.grant_execution",
];

/// Kinds only an Agent may sign: the Coordinator-lease kinds (`command.schema.json` requires
/// actor `agent` and `coordinatorEpoch`, digest A.1), and the Worker kinds whose authority is an
/// offer or a lease bound to an Agent ID (§10.3 "offered Worker"; §11.3 "Execution Lease …
/// bound to the Agent ID"; §13.1 "producer Agent").
pub const AGENT_KINDS: [&str; 12] = [
    "mission.renew_coordinator",
    "mission.submit_for_approval",
    "mission.create_child",
    "membership.grant_delegation",
    "work.accept_result",
    "work.accept_offer",
    "work.start",
    "work.checkpoint",
    "work.block",
    "work.submit",
    "artifact.publish",
    "ext.missionweaveprotocol.core.work_execution_lease_renew",
];

/// Group kinds an Organization policy service may sign, each with the spec's authority text:
/// `mission.cancel` ("MissionOwner or Organization policy", §7.1), `mission.terminate`
/// ("Coordinator or Organization policy"; schema: agent or service), `mission.assign_coordinator`
/// ("control plane or MissionOwner", §7.2), `work.cancel` (Organization policy, docs/work.md),
/// `policy.grant_cooperation_override` ("authorized Organization policy actor"), and the
/// archival ext Command `ext.missionweaveprotocol.core.group_archive` (§15.2).
pub const SERVICE_KINDS: [&str; 6] = [
    "mission.cancel",
    "mission.terminate",
    "mission.assign_coordinator",
    "work.cancel",
    "policy.grant_cooperation_override",
    "ext.missionweaveprotocol.core.group_archive",
];

/// The Organization's authorization policy at ingress (§6.4: "Signer role and authorization
/// MUST be verified against authoritative policy … after six-stage verification").
///
/// Built from plain data — the service principal IDs the Organization trusts — so bindings can
/// construct it from configuration:
///
/// - a bootstrap kind ([`BOOTSTRAP_KINDS`]) must come from one of `bootstrap_services` (the
///   identity and registry authorities that issue Session Epochs and Agent Cards, §6.3);
/// - any other service Command must come from one of `policy_services`, and be one of the kinds
///   the spec lets Organization policy sign ([`SERVICE_KINDS`]);
/// - [`HUMAN_KINDS`] need a human, [`AGENT_KINDS`] an Agent.
///
/// Refusals become `AUTH_FORBIDDEN` at ingress with the reason slug `not_bootstrap_service`,
/// `unknown_service`, `service_kind_not_allowed`, `human_only` or `agent_only`.
///
/// ```
/// use missionweaveprotocol_engine::ingress::OrganizationAuthorizer;
/// let authorizer = OrganizationAuthorizer::new(
///     ["urn:missionweaveprotocol:service:identity"],
///     ["urn:missionweaveprotocol:service:control-plane"],
/// );
/// assert!(authorizer.is_bootstrap_service("urn:missionweaveprotocol:service:identity"));
/// assert!(!authorizer.is_policy_service("urn:missionweaveprotocol:service:identity"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OrganizationAuthorizer {
    bootstrap_services: BTreeSet<String>,
    policy_services: BTreeSet<String>,
}

impl OrganizationAuthorizer {
    /// An authorizer trusting `bootstrap_services` for the bootstrap kinds and
    /// `policy_services` for Organization-policy Group Commands.
    pub fn new<B, P>(bootstrap_services: B, policy_services: P) -> Self
    where
        B: IntoIterator,
        B::Item: Into<String>,
        P: IntoIterator,
        P::Item: Into<String>,
    {
        Self {
            bootstrap_services: bootstrap_services.into_iter().map(Into::into).collect(),
            policy_services: policy_services.into_iter().map(Into::into).collect(),
        }
    }

    /// Whether `service_id` may send the bootstrap kinds.
    pub fn is_bootstrap_service(&self, service_id: &str) -> bool {
        self.bootstrap_services.contains(service_id)
    }

    /// Whether `service_id` may sign Organization-policy Group Commands.
    pub fn is_policy_service(&self, service_id: &str) -> bool {
        self.policy_services.contains(service_id)
    }
}

impl CommandAuthorizer for OrganizationAuthorizer {
    fn authorize(&self, command: &VerifiedCommand) -> Result<(), AuthorizationRefusal> {
        let kind = command.kind();
        let actor = command.actor();
        if BOOTSTRAP_KINDS.contains(&kind) {
            // The schema already makes the actor a service (digest A.1).
            return if actor.kind == PrincipalType::Service && self.is_bootstrap_service(&actor.id) {
                Ok(())
            } else {
                Err(AuthorizationRefusal::new(
                    "not_bootstrap_service",
                    format!("{} may not send {kind}", actor.id),
                ))
            };
        }
        match actor.kind {
            PrincipalType::Service if !self.is_policy_service(&actor.id) => {
                Err(AuthorizationRefusal::new(
                    "unknown_service",
                    format!("{} is not an Organization policy service", actor.id),
                ))
            }
            PrincipalType::Service if !SERVICE_KINDS.contains(&kind) => {
                Err(AuthorizationRefusal::new(
                    "service_kind_not_allowed",
                    format!("Organization policy does not sign {kind}"),
                ))
            }
            PrincipalType::Agent | PrincipalType::Service if HUMAN_KINDS.contains(&kind) => Err(
                AuthorizationRefusal::new("human_only", format!("{kind} is a human decision")),
            ),
            PrincipalType::Human if AGENT_KINDS.contains(&kind) => Err(AuthorizationRefusal::new(
                "agent_only",
                format!("{kind} is signed by an Agent"),
            )),
            _ => Ok(()),
        }
    }
}
