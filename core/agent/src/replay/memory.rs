//! [`MemoryAgentStore`]: the in-memory [`AgentLocalStore`] for tests and ephemeral Agents.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::error::{LocalStoreError, LocalStoreErrorKind};
use super::traits::AgentLocalStore;
use super::types::{EventPosition, ReplayBatch};
use missionweaveprotocol_kernel::scheduler::SchedulerSnapshot;

#[derive(Debug, Default, Clone)]
struct State {
    cursors: HashMap<(String, String), u64>,
    /// (agent, event) → position (None when remembered without one).
    inbox: HashMap<(String, String), Option<(String, u64)>>,
    /// (agent, group, sequence) → event.
    positions: HashMap<(String, String, u64), String>,
    schedulers: HashMap<String, SchedulerSnapshot>,
    commits: u64,
}

/// Every [`AgentLocalStore`] rule, in memory. A batch is validated in full before anything is
/// written, so a refused batch changes nothing (as a rolled-back SQLite transaction).
#[derive(Debug, Default)]
pub struct MemoryAgentStore {
    state: Mutex<State>,
}

impl MemoryAgentStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every write validates before it mutates, so a panic never leaves half a batch.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Replay batches committed so far.
    pub fn commits(&self) -> u64 {
        self.lock().commits
    }

    /// Inbox rows of `agent_id`.
    pub fn inbox_len(&self, agent_id: &str) -> usize {
        self.lock()
            .inbox
            .keys()
            .filter(|(a, _)| a == agent_id)
            .count()
    }
}

/// Refuses an empty identifier named `argument`, as every [`AgentLocalStore`] does: nothing
/// can be remembered for no Agent, no Event or no Group.
fn non_empty(argument: &str, value: &str) -> Result<(), LocalStoreError> {
    if value.is_empty() {
        Err(LocalStoreError::empty(argument))
    } else {
        Ok(())
    }
}

fn collision(event_id: &str, known: &(String, u64), group: &str, sequence: u64) -> LocalStoreError {
    LocalStoreError::new(
        LocalStoreErrorKind::EventPositionCollision,
        format!(
            "Event {event_id:?} is remembered at {:?}#{} and cannot move to {group:?}#{sequence}",
            known.0, known.1
        ),
    )
}

fn taken(group: &str, sequence: u64, holder: &str, event_id: &str) -> LocalStoreError {
    LocalStoreError::new(
        LocalStoreErrorKind::EventPositionCollision,
        format!("{group:?}#{sequence} holds Event {holder:?}, not {event_id:?}"),
    )
}

impl State {
    /// Checks one row; `Ok(true)` when it must be written.
    fn check_row(
        &self,
        agent: &str,
        event_id: &str,
        group: &str,
        sequence: u64,
    ) -> Result<bool, LocalStoreError> {
        match self.inbox.get(&(agent.to_owned(), event_id.to_owned())) {
            Some(Some(known)) if known.0 == group && known.1 == sequence => return Ok(false),
            Some(Some(known)) => return Err(collision(event_id, known, group, sequence)),
            Some(None) | None => {}
        }
        match self
            .positions
            .get(&(agent.to_owned(), group.to_owned(), sequence))
        {
            Some(holder) if holder != event_id => Err(taken(group, sequence, holder, event_id)),
            _ => Ok(true),
        }
    }

    fn write_row(&mut self, agent: &str, event_id: &str, group: &str, sequence: u64) {
        self.inbox.insert(
            (agent.to_owned(), event_id.to_owned()),
            Some((group.to_owned(), sequence)),
        );
        self.positions.insert(
            (agent.to_owned(), group.to_owned(), sequence),
            event_id.to_owned(),
        );
    }
}

impl AgentLocalStore for MemoryAgentStore {
    fn cursor(&self, agent_id: &str, group_id: &str) -> Result<u64, LocalStoreError> {
        Ok(self
            .lock()
            .cursors
            .get(&(agent_id.to_owned(), group_id.to_owned()))
            .copied()
            .unwrap_or(0))
    }

    fn event_position(
        &self,
        agent_id: &str,
        event_id: &str,
    ) -> Result<Option<EventPosition>, LocalStoreError> {
        Ok(self
            .lock()
            .inbox
            .get(&(agent_id.to_owned(), event_id.to_owned()))
            .cloned()
            .flatten()
            .map(|(group_id, sequence)| EventPosition { group_id, sequence }))
    }

    fn remember_event(
        &self,
        agent_id: &str,
        event_id: &str,
        position: Option<(&str, u64)>,
    ) -> Result<bool, LocalStoreError> {
        non_empty("agent_id", agent_id)?;
        non_empty("event_id", event_id)?;
        if let Some((group, _)) = position {
            non_empty("group_id", group)?;
        }
        let mut state = self.lock();
        let key = (agent_id.to_owned(), event_id.to_owned());
        let known = state.inbox.contains_key(&key);
        match position {
            None => {
                state.inbox.entry(key).or_insert(None);
                Ok(!known)
            }
            Some((group, sequence)) => {
                if state.check_row(agent_id, event_id, group, sequence)? {
                    state.write_row(agent_id, event_id, group, sequence);
                }
                Ok(!known)
            }
        }
    }

    fn load_scheduler(&self, agent_id: &str) -> Result<Option<SchedulerSnapshot>, LocalStoreError> {
        Ok(self.lock().schedulers.get(agent_id).cloned())
    }

    fn save_scheduler(
        &self,
        agent_id: &str,
        snapshot: &SchedulerSnapshot,
    ) -> Result<(), LocalStoreError> {
        non_empty("agent_id", agent_id)?;
        self.lock()
            .schedulers
            .insert(agent_id.to_owned(), snapshot.clone());
        Ok(())
    }

    fn commit_replay(&self, batch: &ReplayBatch<'_>) -> Result<(), LocalStoreError> {
        non_empty("agent_id", batch.agent_id)?;
        non_empty("group_id", batch.group_id)?;
        let mut state = self.lock();
        let key = (batch.agent_id.to_owned(), batch.group_id.to_owned());
        let current = state.cursors.get(&key).copied().unwrap_or(0);
        if current != batch.from_cursor || batch.to_cursor < batch.from_cursor {
            return Err(LocalStoreError::new(
                LocalStoreErrorKind::CursorConflict,
                format!(
                    "the batch moves the cursor {} → {}, the stored cursor is {current}",
                    batch.from_cursor, batch.to_cursor
                ),
            ));
        }
        // Validate every row (also against earlier rows of this batch) before writing any.
        let mut scratch = State {
            inbox: HashMap::new(),
            positions: HashMap::new(),
            ..State::default()
        };
        let mut writes = Vec::with_capacity(batch.events.len());
        for row in batch.events {
            let fresh =
                state.check_row(batch.agent_id, &row.event_id, batch.group_id, row.sequence)?
                    && scratch.check_row(
                        batch.agent_id,
                        &row.event_id,
                        batch.group_id,
                        row.sequence,
                    )?;
            if fresh {
                scratch.write_row(batch.agent_id, &row.event_id, batch.group_id, row.sequence);
                writes.push(row);
            }
        }
        for row in writes {
            state.write_row(batch.agent_id, &row.event_id, batch.group_id, row.sequence);
        }
        state.cursors.insert(key, batch.to_cursor);
        if let Some(snapshot) = batch.scheduler {
            state
                .schedulers
                .insert(batch.agent_id.to_owned(), snapshot.clone());
        }
        state.commits += 1;
        Ok(())
    }
}
