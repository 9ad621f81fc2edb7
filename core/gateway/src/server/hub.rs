//! The delivery hub: which connections of one gateway subscribe to which Group, so that a
//! Group's head moving (a commit on this process, or a `NOTIFY` from another) wakes exactly
//! its subscribers (`docs/network.md`, "Delivery and backpressure").
//!
//! The hub holds no Events and no cursors: delivery is pull-based, each connection reads the
//! next page after its own cursor from the Core when woken (`Connection::on_group_moved`), so a
//! lost wake-up only delays delivery (the periodic head poll of `on_tick` catches up) and
//! nothing here grows with traffic. Its size is one entry per (connection, subscribed Group),
//! bounded by `Limits::max_subscriptions` per connection.
//!
//! Sans-IO and host-friendly: a connection registers itself when created and leaves when
//! dropped; the host asks [`Hub::subscribers`] whom to wake and delivers the wake-up to those
//! connections' tasks however it likes.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

/// A connection's identity within one gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnectionId(pub u64);

#[derive(Debug, Default)]
struct HubState {
    next: u64,
    connections: usize,
    groups: HashMap<Arc<str>, BTreeSet<ConnectionId>>,
}

/// Which connections subscribe to which Group.
#[derive(Debug, Default)]
pub struct Hub {
    state: Mutex<HubState>,
}

impl Hub {
    /// An empty hub.
    pub fn new() -> Self {
        Self::default()
    }

    // A panic while holding the lock cannot leave the index inconsistent (every update is one
    // map operation), so a poisoned lock is used as is.
    fn state(&self) -> MutexGuard<'_, HubState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn register(&self) -> ConnectionId {
        let mut state = self.state();
        state.next += 1;
        state.connections += 1;
        ConnectionId(state.next)
    }

    pub(crate) fn subscribe(&self, connection: ConnectionId, group: &Arc<str>) {
        self.state()
            .groups
            .entry(Arc::clone(group))
            .or_default()
            .insert(connection);
    }

    pub(crate) fn unsubscribe(&self, connection: ConnectionId, group: &str) {
        let mut state = self.state();
        if let Some(set) = state.groups.get_mut(group) {
            set.remove(&connection);
            if set.is_empty() {
                state.groups.remove(group);
            }
        }
    }

    pub(crate) fn release<'a>(
        &self,
        connection: ConnectionId,
        groups: impl Iterator<Item = &'a Arc<str>>,
    ) {
        let mut state = self.state();
        for group in groups {
            if let Some(set) = state.groups.get_mut(&**group) {
                set.remove(&connection);
                if set.is_empty() {
                    state.groups.remove(&**group);
                }
            }
        }
        state.connections = state.connections.saturating_sub(1);
    }

    /// The connections subscribed to `group`, in ID order.
    pub fn subscribers(&self, group: &str) -> Vec<ConnectionId> {
        self.state()
            .groups
            .get(group)
            .map(|set| set.iter().copied().collect())
            .unwrap_or_default()
    }

    /// [`subscribers`](Self::subscribers) without `except` (the connection whose own commit
    /// moved the head already pulled).
    pub fn wake_list(&self, group: &str, except: ConnectionId) -> Vec<ConnectionId> {
        self.state()
            .groups
            .get(group)
            .map(|set| set.iter().copied().filter(|c| *c != except).collect())
            .unwrap_or_default()
    }

    /// Groups with at least one subscriber.
    pub fn group_count(&self) -> usize {
        self.state().groups.len()
    }

    /// Live connections.
    pub fn connection_count(&self) -> usize {
        self.state().connections
    }
}
