//! Rows 1–2: `work.propose` (none → open Work Proposal) and `work.authorize` (none or open Work
//! Proposal → `open`). Who may send them (any member; Coordinator or Grant holder, §9.1) is the
//! engine's check.

use missionweaveprotocol::json::Value;
use missionweaveprotocol::schema_formats::is_protocol_id;

use super::{actor, integer, object, strings, timestamp, touch};
use crate::work::contract::WorkContract;
use crate::work::dependencies::DependencyGraph;
use crate::work::error::WorkError;
use crate::work::proposal::{ProposalStatus, WorkProposal};
use crate::work::state::{Actor, Transition, WorkEvent, WorkItem, WorkItemState};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// `work.propose` input.
#[derive(Clone, Debug, PartialEq)]
pub struct ProposeInput {
    /// New proposal ID.
    pub proposal_id: String,
    /// Mission.
    pub mission_id: String,
    /// Group.
    pub group_id: String,
    /// The proposing member.
    pub proposed_by: Actor,
    /// The proposed Work Contract document.
    pub contract: Value,
}

pub(crate) fn check_id(field: &'static str, id: &str) -> Result<(), WorkError> {
    if is_protocol_id(id) {
        Ok(())
    } else {
        Err(WorkError::InvalidInput(field, "not a protocol identifier"))
    }
}

/// Row 1: none → open Work Proposal. A proposal reserves and authorizes nothing (§4.2).
pub fn propose(
    existing: Option<&WorkProposal>,
    input: ProposeInput,
    now: UnixMillis,
) -> Result<Transition<WorkProposal>, WorkError> {
    if existing.is_some() {
        return Err(WorkError::AlreadyExists("Work Proposal"));
    }
    check_id("proposalId", &input.proposal_id)?;
    let contract = WorkContract::from_value(input.contract)?;
    let proposal = WorkProposal {
        proposal_id: input.proposal_id,
        mission_id: input.mission_id,
        group_id: input.group_id,
        proposed_by: input.proposed_by,
        contract,
        status: ProposalStatus::Open,
        authorized_work_item_id: None,
        revision: 1,
        created_at: now,
        updated_at: now,
    };
    let event = WorkEvent {
        kind: "work.proposed",
        payload: object([
            ("proposalId", Value::string(proposal.proposal_id.as_str())),
            ("proposedBy", actor(&proposal.proposed_by)),
            ("contract", proposal.contract.document().clone()),
        ]),
    };
    Ok(Transition {
        state: proposal,
        events: vec![event],
    })
}

/// `work.authorize` input.
#[derive(Clone, Debug, PartialEq)]
pub struct AuthorizeInput {
    /// New WorkItem ID.
    pub work_item_id: String,
    /// Mission.
    pub mission_id: String,
    /// Group.
    pub group_id: String,
    /// The WorkItem Conversation.
    pub conversation_id: String,
    /// Exclusive ownership (§4.5).
    pub exclusive: bool,
    /// The contract; `None` takes the proposal's.
    pub contract: Option<Value>,
    /// The authorizing Coordinator or delegate.
    pub authorized_by: Actor,
    /// The Work Proposal being authorized, if any.
    pub proposal_id: Option<String>,
}

/// The result of `work.authorize`: the new WorkItem and the authorized proposal.
#[derive(Clone, Debug, PartialEq)]
pub struct Authorized {
    /// The new WorkItem (`open`, revision 1).
    pub item: WorkItem,
    /// The proposal, now `authorized`.
    pub proposal: Option<WorkProposal>,
}

/// Row 2: none or open Work Proposal → `open`. The contract is validated (§10.1) and its
/// dependencies must be known WorkItems of `graph` (§10.4); the engine then inserts the node.
pub fn authorize(
    existing: Option<&WorkItem>,
    proposal: Option<&WorkProposal>,
    graph: &DependencyGraph,
    input: AuthorizeInput,
    now: UnixMillis,
) -> Result<Transition<Authorized>, WorkError> {
    if existing.is_some() {
        return Err(WorkError::AlreadyExists("WorkItem"));
    }
    for (field, id) in [
        ("workItemId", &input.work_item_id),
        ("conversationId", &input.conversation_id),
    ] {
        check_id(field, id)?;
    }
    let proposal = match (&input.proposal_id, proposal) {
        (None, _) => None,
        (Some(_), None) => {
            return Err(WorkError::InvalidInput(
                "proposalId",
                "unknown Work Proposal",
            ));
        }
        (Some(id), Some(p)) if &p.proposal_id != id || p.mission_id != input.mission_id => {
            return Err(WorkError::InvalidInput(
                "proposalId",
                "the Work Proposal belongs elsewhere",
            ));
        }
        (Some(_), Some(p)) if p.status != ProposalStatus::Open => {
            return Err(WorkError::AlreadyExists("WorkItem of this Work Proposal"));
        }
        (Some(_), Some(p)) => Some(p),
    };
    let contract = match (input.contract, proposal) {
        (Some(document), _) => WorkContract::from_value(document)?,
        (None, Some(p)) => p.contract.clone(),
        (None, None) => return Err(WorkError::ContractIncomplete("contract")),
    };
    graph.check_new_item(&input.work_item_id, contract.dependencies())?;
    let created_by =
        proposal.map_or_else(|| input.authorized_by.clone(), |p| p.proposed_by.clone());
    let mut item = WorkItem {
        work_item_id: input.work_item_id,
        mission_id: input.mission_id,
        group_id: input.group_id,
        conversation_id: input.conversation_id,
        revision: 0,
        state: WorkItemState::Open,
        exclusive: input.exclusive,
        contract,
        offers: Vec::new(),
        owner: None,
        selection_basis: None,
        offered_selection_basis: None,
        ownership_lease: None,
        execution_lease: None,
        progress: None,
        blocker: None,
        submission: None,
        review_evidence: Vec::new(),
        failure: None,
        cancel_reason: None,
        created_by,
        authorized_by: input.authorized_by,
        created_at: now,
        updated_at: now,
    };
    touch(&mut item, now);
    let authorized_proposal = proposal.map(|p| {
        let mut p = p.clone();
        p.status = ProposalStatus::Authorized;
        p.authorized_work_item_id = Some(item.work_item_id.clone());
        p.revision = p.revision.saturating_add(1);
        p.updated_at = now;
        p
    });
    let mut event = super::event(
        "work.authorized",
        &item,
        [
            ("missionId", Value::string(item.mission_id.as_str())),
            (
                "conversationId",
                Value::string(item.conversation_id.as_str()),
            ),
            ("exclusive", Value::Bool(item.exclusive)),
            ("contract", item.contract.document().clone()),
            ("contractVersion", integer(item.contract.version())),
            (
                "dependencyWorkItemIds",
                strings(item.contract.dependencies()),
            ),
            ("authorizedBy", actor(&item.authorized_by)),
            ("createdAt", timestamp(now)?),
        ],
    );
    if let (Some(id), Value::Object(payload)) = (&input.proposal_id, &mut event.payload) {
        payload.insert("proposalId", Value::string(id.as_str()));
    }
    Ok(Transition {
        state: Authorized {
            item,
            proposal: authorized_proposal,
        },
        events: vec![event],
    })
}
