//! [`BudgetMeter`]: a local hard meter over one grant's or one WorkItem's six limits (§12
//! "Agents MUST NOT silently exceed a limit"). A dimension with limit 0 allows nothing (the
//! reference's "unallocated dimension"); a delta that would pass any limit is refused whole
//! (`BUDGET_EXCEEDED` naming the first dimension) and leaves the meter unchanged.

use super::error::PolicyError;
use missionweaveprotocol_kernel::resources::Resources;

/// Cumulative usage against fixed limits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BudgetMeter {
    limit: Resources,
    usage: Resources,
}

impl BudgetMeter {
    /// A meter with `limit` and no usage.
    pub fn new(limit: Resources) -> Result<Self, PolicyError> {
        if let Some(d) = limit.first_unsafe() {
            return Err(PolicyError::invalid(
                "limit",
                format!("limit {} is above 2^53-1", d.as_str()),
            ));
        }
        Ok(Self {
            limit,
            usage: Resources::ZERO,
        })
    }

    /// The limits.
    pub fn limit(&self) -> Resources {
        self.limit
    }

    /// Usage so far.
    pub fn usage(&self) -> Resources {
        self.usage
    }

    /// What is left.
    pub fn remaining(&self) -> Resources {
        self.limit.saturating_sub(&self.usage)
    }

    /// Adds `delta` and returns the new cumulative usage, or refuses the whole delta.
    pub fn consume(&mut self, delta: &Resources) -> Result<Resources, PolicyError> {
        let next = self.usage.checked_add(delta).map_err(|d| {
            PolicyError::budget_exceeded(d, format!("{} usage overflows", d.as_str()))
        })?;
        if let Some(d) = next.first_exceeding(&self.limit) {
            return Err(PolicyError::budget_exceeded(
                d,
                format!(
                    "{} usage {} would exceed the limit {}",
                    d.as_str(),
                    next.get(d),
                    self.limit.get(d)
                ),
            )
            .with_integer("limit", self.limit.get(d)));
        }
        self.usage = next;
        Ok(next)
    }
}
