//! The WorkItem aggregate (§10): pure, sans-IO decision functions.
//!
//! Each function takes the state the engine read, a typed Command input and `now`, and returns
//! either a [`Transition`] (the new state and the Events to append) or a [`WorkError`] with its
//! §19 wire code. Nothing here stores, signs or reads a clock: the engine does that, and applies
//! a transition only as a whole (nothing half-applied).
//!
//! Who may send a Command (Coordinator, delegate, owner; §9.1, §15.1), Session / Membership /
//! Coordinator Epoch fencing and the aggregate revision CAS (§15.3) are the engine's checks. The
//! Ownership Epoch and lease fencing (§4.5, §11.3) are decided here because they need the
//! aggregate.
//!
//! | module | spec | what |
//! | --- | --- | --- |
//! | [`state`] | §10.2, `work-item.schema.json` | the aggregate, its states, offers, owner |
//! | [`document`] | §2, §15.3 | the stored aggregate as canonical JSON (kind `work_item`) |
//! | [`proposal`] | digest 2.3 | the Work Proposal (stored as kind `work_proposal`) |
//! | [`contract`] | §10.1 | Work Contract validation |
//! | [`dependencies`] | §10.4 | the dependency DAG: cycles refused, readiness |
//! | [`evidence`] | §13.2 | Evidence coverage of acceptance criteria |
//! | [`offers`] | §10.3, digest 2.6 | `work.offer`, `work.accept_offer` |
//! | [`fencing`] | §4.5, §11.3, §11.5 | Ownership Epoch and lease claims, live owners |
//! | [`transitions`] | §10.2 rows 1–5, 7–14, 18 | one function per Command kind |
//! | [`projection`] | §16, §7.4 | replica-side rebuild of a Group's WorkItems from its Events |
//! | [`error`] | §19 | [`WorkError`] |
//! | [`decide`] | §10.2, §15.1 | the engine wiring: read, authorize the role, decide, plan Events and writes |
//! | [`authority`] | §9.1, §15.1 | who may send each WorkItem Command; Coordinator Epoch fencing |
//! | [`input`] | §10 | the WorkItem Commands' payload readers |
//! | [`plan`] | §15.1 | planned Events and aggregate writes of a transition |
//! | [`read`] | §15.3 | stored WorkItems, the Mission's WorkItem index |
//! | [`usage`] | §12 | `…resource_usage_record`: charges to the budget ancestry |
//! | [`offline`] | §11.5 | Core-side reconciliation of rebased offline progress |
//! | [`scope`] | §10.1, §12 | what a Work Contract allows (tools, resources, approval) and high-risk operations |
//!
//! The WorkItem Commands (§10.2 rows 1–4, 7–14, Execution Lease renewal and dependency
//! insertion) wired into the engine: read, authorize the role, call the pure `work` decision,
//! plan the Events and writes.
//!
//! Check order (§15.1): Group and Mission (`GROUP_NOT_FOUND`), Mission non-terminal, role and
//! Coordinator Epoch fencing ([`authority`]), `expectedRevision` against the addressed
//! aggregate (§15.3), then the `work` decision (Ownership Epoch, state, owner, lease, payload).

pub mod contract;
pub mod dependencies;
pub mod document;
pub mod error;
pub mod evidence;
pub mod fencing;
pub mod offers;
pub mod projection;
pub mod proposal;
pub(crate) mod proposal_document;
pub mod state;
pub mod transitions;

pub use self::commands::{KINDS, handles};
pub use self::contract::WorkContract;
pub use self::dependencies::DependencyGraph;
pub use self::document::AGGREGATE_KIND;
pub use self::error::WorkError;
pub use self::evidence::{EvidenceRef, EvidenceResult};
pub use self::proposal::{ProposalStatus, WorkProposal};
pub use self::proposal_document::PROPOSAL_AGGREGATE_KIND;
pub use self::state::{
    Actor, ActorType, LeaseGrant, Offer, OfferStatus, Owner, Submission, Transition, WorkEvent,
    WorkItem, WorkItemState,
};

pub mod scope;

mod authority;
pub(crate) mod commands;
mod decide;

mod input;
pub mod offline;
pub(crate) mod plan;
pub(crate) mod read;
mod usage;
