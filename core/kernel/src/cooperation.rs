//! The §20 cooperation limits: one set of thresholds (the reference's `CooperationLimits`),
//! enforced authoritatively by the engine (queued and active WorkItems, proposal rate,
//! delegation depth) and locally by an Agent's `PolicyGuard` (all of them, plus Message and
//! clarification rates and unresolved clarification rounds). `None` is no limit.

/// The §20 limits; defaults are the reference's. `None` = no limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CooperationLimits {
    /// Deepest delegation chain (§9.1; default 3).
    pub maximum_delegation_depth: Option<u32>,
    /// WorkItems of a Group not yet started: `open`, `offered`, `queued` (default 100).
    pub maximum_queued_work_items: Option<u32>,
    /// `active` WorkItems of one Worker in one Group (default 4).
    pub maximum_active_work_items: Option<u32>,
    /// Open clarification rounds (default 5).
    pub maximum_unresolved_clarifications: Option<u32>,
    /// Messages per principal and Group per minute (default 120).
    pub maximum_message_rate_per_minute: Option<u32>,
    /// Work proposals per principal and Group per minute (default 30).
    pub maximum_proposal_rate_per_minute: Option<u32>,
    /// Clarification requests per principal and Group per minute (default 30).
    pub maximum_clarification_rate_per_minute: Option<u32>,
    /// Rate keys a local guard tracks at once (default 4,096; not a reference field): the
    /// bound on its memory.
    pub maximum_tracked_keys: usize,
}

impl Default for CooperationLimits {
    /// The reference's defaults.
    fn default() -> Self {
        Self {
            maximum_delegation_depth: Some(3),
            maximum_queued_work_items: Some(100),
            maximum_active_work_items: Some(4),
            maximum_unresolved_clarifications: Some(5),
            maximum_message_rate_per_minute: Some(120),
            maximum_proposal_rate_per_minute: Some(30),
            maximum_clarification_rate_per_minute: Some(30),
            maximum_tracked_keys: 4096,
        }
    }
}

impl CooperationLimits {
    /// No limits at all (the tracked-key bound stays the default's).
    pub const NONE: CooperationLimits = CooperationLimits {
        maximum_delegation_depth: None,
        maximum_queued_work_items: None,
        maximum_active_work_items: None,
        maximum_unresolved_clarifications: None,
        maximum_message_rate_per_minute: None,
        maximum_proposal_rate_per_minute: None,
        maximum_clarification_rate_per_minute: None,
        maximum_tracked_keys: 4096,
    };
}
