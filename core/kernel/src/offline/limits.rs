//! The offline bounds both sides enforce (§11.5): the Worker while buffering, the Core while
//! reconciling.

use super::error::OfflineError;
use crate::resources::{MAX_SAFE_INTEGER, Resources};

/// The offline bounds (reference `OfflineLimits`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OfflineLimits {
    /// The longest offline window after the disconnect, in milliseconds (> 0).
    pub max_disconnect_grace_ms: u64,
    /// The most Commands buffered in one window (≥ 1).
    pub max_actions: u32,
    /// The most cumulative usage in one window.
    pub max_usage: Resources,
}

impl OfflineLimits {
    /// Checks the bounds (`max_disconnect_grace_ms > 0`, `max_actions ≥ 1`).
    pub fn validate(&self) -> Result<(), OfflineError> {
        if self.max_disconnect_grace_ms == 0 || self.max_disconnect_grace_ms > MAX_SAFE_INTEGER {
            return Err(OfflineError::InvalidArgument("max_disconnect_grace"));
        }
        if self.max_actions == 0 {
            return Err(OfflineError::InvalidArgument("max_actions"));
        }
        Ok(())
    }
}
