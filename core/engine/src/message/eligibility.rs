//! Who may speak and be addressed in a Group, and which Conversations exist (§8, §9).
//!
//! - **Sender** (§9 "Any Group Agent MAY post a Message"; digest A "any Group member"): the
//!   holder of an `active` Membership in the Group, or the Mission's current Coordinator (whose
//!   authority is the Coordinator lease, §7.2: a Coordinator appointed by
//!   `mission.assign_coordinator` has no Membership yet; a Coordinator Epoch, when carried,
//!   must be current). No Membership, or a `provisional` one (JIT step 3 activates it),
//!   → `MEMBERSHIP_REQUIRED`; an ended one is fenced before (`MEMBERSHIP_STALE`).
//! - **Mentions** (§8 attention): each mentioned Principal is the MissionOwner, the current
//!   Coordinator, or holds a `provisional` or `active` Membership (a mention is attention,
//!   never authority; an offered Worker may be addressed) → otherwise `INVALID_COMMAND`
//!   `mention_not_member`.
//! - **Conversations** (§9): the Group's planning Conversation (`mainConversationId`) or the
//!   dedicated Conversation of a WorkItem of the same Mission, named by `workItemId`; any other
//!   → `INVALID_COMMAND` `unknown_conversation` (the engine creates no other Conversations; a
//!   WorkItem of another Mission is not disclosed, §4 invariant 9).
//!
//! Every Membership read here is checked at commit; the WorkItem's `conversationId` and
//! `missionId` never change once authorized, so its read needs no check.

use missionweaveprotocol::{Principal, PrincipalType};

use crate::decision::Decision;
use crate::error::EngineError;
use crate::ingress::VerifiedCommand;
use crate::membership::aggregate::{Membership, MembershipState, membership_key};
use crate::mission::aggregate::Mission;
use crate::store::{AggregateKey, Store};
use crate::work::document::AGGREGATE_KIND as WORK_ITEM_KIND;
use crate::work::read::read_item;

/// Whether `p` is the Mission's current Coordinator.
fn is_coordinator(mission: &Mission, p: &Principal) -> bool {
    p.kind == PrincipalType::Agent && p.id == mission.coordinator().agent_id
}

/// The sender may post in the Group; returns `decision` with the commit-time check of the
/// Membership it relied on.
pub(crate) fn require_sender(
    store: &dyn Store,
    command: &VerifiedCommand,
    mission: &Mission,
    decision: Decision,
) -> Result<Decision, EngineError> {
    let actor = command.actor();
    let group_id = mission.group_id();
    let key = membership_key(group_id, actor);
    let membership = Membership::read(store, group_id, actor)?;
    let revision = membership.as_ref().map_or(0, Membership::revision);
    if is_coordinator(mission, actor) {
        if let Some(presented) = command.coordinator_epoch() {
            let current = mission.coordinator().coordinator_epoch;
            if presented != current {
                return Err(EngineError::StaleCoordinator {
                    presented: Some(presented),
                    current,
                });
            }
        }
        return Ok(decision.check(key, revision));
    }
    match membership {
        Some(m) if m.state() == MembershipState::Active => Ok(decision.check(key, revision)),
        _ => Err(EngineError::MembershipRequired {
            group: group_id.to_owned(),
            member: actor.clone(),
        }),
    }
}

/// Every mention names a Principal of the Group; returns `decision` with the checks.
pub(crate) fn require_mentioned(
    store: &dyn Store,
    mission: &Mission,
    mentions: &[Principal],
    mut decision: Decision,
) -> Result<Decision, EngineError> {
    let group_id = mission.group_id();
    for p in mentions {
        let key = membership_key(group_id, p);
        let membership = Membership::read(store, group_id, p)?;
        let revision = membership.as_ref().map_or(0, Membership::revision);
        let member = membership.is_some_and(|m| m.state() != MembershipState::Ended);
        if !(member || p == mission.owner() || is_coordinator(mission, p)) {
            return Err(EngineError::invalid(
                "mention_not_member",
                format!(
                    "{} {} is not a member of Group {group_id}: only Group members may be mentioned (§8)",
                    p.kind.as_str(),
                    p.id
                ),
            ));
        }
        if !decision.writes.iter().any(|w| w.key == key) {
            decision = decision.check(key, revision);
        }
    }
    Ok(decision)
}

/// The Conversation `conversation_id` exists in the Mission's Group: the planning
/// Conversation, or the named WorkItem's. Returns the WorkItem ID for a WorkItem Conversation.
pub(crate) fn resolve_conversation(
    store: &dyn Store,
    main_conversation_id: Option<&str>,
    mission: &Mission,
    conversation_id: &str,
    work_item_id: Option<&str>,
) -> Result<Option<String>, EngineError> {
    let unknown = || {
        EngineError::invalid(
            "unknown_conversation",
            format!(
                "Conversation {conversation_id} is neither the Group's planning Conversation nor the named WorkItem's (§9)"
            ),
        )
    };
    if let Some(item_id) = work_item_id {
        let item = read_item(store, &AggregateKey::new(WORK_ITEM_KIND, item_id))?;
        return match item {
            Some((_, item))
                if item.mission_id == mission.mission_id()
                    && item.conversation_id == conversation_id =>
            {
                Ok(Some(item_id.to_owned()))
            }
            _ => Err(unknown()),
        };
    }
    if main_conversation_id == Some(conversation_id) {
        Ok(None)
    } else {
        Err(unknown())
    }
}
