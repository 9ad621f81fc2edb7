//! Worker-local weighted-fair Scheduler (§10.3 admission, §11.1 per-Group queues, §11.2
//! disclosure, §11.3 cooperative preemption, §11.4 blocking and retries).
//!
//! # Model
//!
//! Each Group has its own queue, ordered by a *virtual ready time* key: the instant the item
//! became ready, moved earlier by `(priority + 100) · priority_step_ms` for its Organization
//! priority class and by its deadline (once within `deadline_horizon_ms` of its latest start),
//! but never by more than H = [`SchedulerPolicy::horizon_ms`]. Because every item in a Group
//! ages at the same rate, ordering by this fixed key is exactly ordering by "age + priority
//! credit" at any instant: aging needs no rescoring and every operation is O(log n).
//!
//! Across Groups the Scheduler uses stride scheduling (weighted fair queuing): each Group has
//! a pass that advances by `slots / weight` on every dispatch, and a Group that becomes
//! eligible starts no lower than the current virtual time, so idle Groups bank no credit. The
//! next Group served is the one whose head has the best key, provided its pass is within
//! `fairness_lag_slots` (or `fairness_lag_pass`, in 2^-40 slots) of the most-behind eligible
//! Group; otherwise the most-behind Group.
//! A Group at its slot quota is not eligible. When the chosen head needs more slots than are
//! free, nothing else is dispatched (a reservation), so multi-slot work cannot be starved by
//! one-slot work; if the head outranks the lowest-priority preemptible running item by
//! `preemption_margin`, one cooperative preemption is requested.
//!
//! # Starvation bound
//!
//! Let L = the fairness lag in slots (`fairness_lag_slots`, or `fairness_lag_pass / PASS_UNIT`),
//! `s_max` the largest slot count of any item, and `w_x` the weight of Group x. While Group g continuously has a ready head that fits its quota:
//!
//! 1. **Across Groups**: before g's head is dispatched, every other Group h receives at most
//!    `⌈w_h · (s_max / w_g + 2·L)⌉ + 1` dispatches. With the defaults (weights 1, L = 1,
//!    one-slot items) that is 4 dispatches per other Group.
//! 2. **Within a Group**: an item that became ready at instant t can be overtaken only by
//!    items of its Group that became ready before t + H. Items becoming ready later queue
//!    behind it.
//!
//! Together: once an item has waited H, at most (its Group's queue length at that moment) ×
//! (1 + Σ_h bound₁) dispatches happen before it starts. Preemption is never forced: a slot
//! is only taken back after the Worker reports a durable, safe checkpoint (§11.3).
//!
//! # The reference's shapes
//!
//! [`reference`] maps the reference runtime's knobs (effort bands, score weights, a Group's
//! priority bias) onto this policy, or refuses what has no exact equivalent.
//!
//! # Disclosure
//!
//! [`Scheduler::disclose`] estimates from the item's own Group and Worker-wide aggregates only
//! (§11.2): no other Group's names, content, assignments or queue positions are consulted.

mod core;
mod disclosure;
mod json;
pub mod reference;
mod snapshot;
mod types;

pub use self::core::Scheduler;
pub use self::disclosure::{CapacityStatus, Confidence, ScheduleDisclosure};
pub use self::snapshot::{
    GroupRecord, QueueRecord, RUNTIME_SESSION_LOST, SNAPSHOT_VERSION, SchedulerSnapshot,
};
pub use self::types::{
    AdmissionDecision, AdmissionReason, CheckpointRef, DeclineCategory, Dispatch, Eligibility,
    GroupPolicy, MAX_FAIRNESS_LAG_PASS, MAX_PRIORITY, MAX_WEIGHT, MIN_PRIORITY, PASS_UNIT,
    PreemptRequest, ScheduleAction, SchedulerError, SchedulerPolicy, Transition, WorkOffer,
    WorkState, priority,
};
