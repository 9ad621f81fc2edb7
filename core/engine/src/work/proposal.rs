//! The Work Proposal (digest 2.3): a non-executable suggestion any Group member may make
//! (`work.propose`); `work.authorize` turns it into a WorkItem. No schema exists for it.

use super::contract::WorkContract;
use super::state::Actor;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// Proposal status (the reference's `WorkProposalStatus`; `withdrawn` has no Command in 0.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProposalStatus {
    /// Awaiting authorization.
    Open,
    /// A WorkItem was authorized from it.
    Authorized,
    /// Withdrawn (never set by Core in 0.1).
    Withdrawn,
}

missionweaveprotocol::spelling!(ProposalStatus {
    Open => "open",
    Authorized => "authorized",
    Withdrawn => "withdrawn",
});

/// A Work Proposal.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkProposal {
    /// Proposal ID.
    pub proposal_id: String,
    /// Its Mission.
    pub mission_id: String,
    /// The Mission's Group.
    pub group_id: String,
    /// Any Group member.
    pub proposed_by: Actor,
    /// The proposed contract (validated like any contract, §10.1).
    pub contract: WorkContract,
    /// Status.
    pub status: ProposalStatus,
    /// The WorkItem authorized from it.
    pub authorized_work_item_id: Option<String>,
    /// Aggregate revision.
    pub revision: u64,
    /// Creation instant.
    pub created_at: UnixMillis,
    /// Last change.
    pub updated_at: UnixMillis,
}
