//! Authenticated connections per Agent within one gateway (`Limits::max_connections_per_agent`).
//!
//! §6.3: "two runtimes MUST NOT operate that identity concurrently" is enforced by Session
//! Epoch fencing in the Core (a newer `session_open` fences every older session, on every
//! process). This counter only bounds how many sockets one Agent ID may hold open at once in
//! this process (a reconnect while the old socket is half-open needs two); a gateway spread
//! over several processes gets one counter per process.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

/// The shared per-Agent connection counter.
#[derive(Debug)]
pub struct AgentConnections {
    max: usize,
    counts: Mutex<HashMap<String, usize>>,
}

impl AgentConnections {
    /// A counter allowing `max` connections per Agent.
    pub fn new(max: usize) -> Self {
        Self {
            max,
            counts: Mutex::new(HashMap::new()),
        }
    }

    fn counts(&self) -> MutexGuard<'_, HashMap<String, usize>> {
        self.counts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes one slot for `agent_id`; `false` when it already holds `max`.
    pub(crate) fn acquire(&self, agent_id: &str) -> bool {
        let mut counts = self.counts();
        let count = counts.entry(agent_id.to_owned()).or_insert(0);
        if *count >= self.max {
            if *count == 0 {
                counts.remove(agent_id);
            }
            return false;
        }
        *count += 1;
        true
    }

    /// Gives one slot of `agent_id` back.
    pub(crate) fn release(&self, agent_id: &str) {
        let mut counts = self.counts();
        if let Some(count) = counts.get_mut(agent_id) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                counts.remove(agent_id);
            }
        }
    }

    /// Authenticated connections `agent_id` holds now.
    pub fn count(&self, agent_id: &str) -> usize {
        self.counts().get(agent_id).copied().unwrap_or(0)
    }
}
