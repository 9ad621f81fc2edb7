//! The Mission lifecycle states (§7.1, `mission.schema.json` `state`).

/// A Mission state. The schema enum is exactly these five (`completed` is invalid, conformance
/// vector `mission-legacy-completed-state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MissionState {
    Active,
    AwaitingApproval,
    Approved,
    Failed,
    Cancelled,
}

impl MissionState {
    /// Every state.
    pub const ALL: [MissionState; 5] = [
        Self::Active,
        Self::AwaitingApproval,
        Self::Approved,
        Self::Failed,
        Self::Cancelled,
    ];

    /// The wire spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::AwaitingApproval => "awaiting_approval",
            Self::Approved => "approved",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    /// The state spelled `text`, if any.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// `approved`, `cancelled` and `failed` are terminal (§7.1): no row leaves them, and an
    /// approved Mission is never reopened or rewritten.
    pub const fn is_terminal(self) -> bool {
        matches!(self, Self::Approved | Self::Failed | Self::Cancelled)
    }
}
