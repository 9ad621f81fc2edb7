//! Wake-ups: which local connection to wake when a Group's head moves, and, on PostgreSQL, the
//! `NOTIFY mwp_group_head, '<groupId> <sequence>'` / `LISTEN` pair that carries head moves
//! between server processes on one database (`docs/network.md`, "Scale-out").
//!
//! A wake-up is only a hint: each woken connection reads the next page after its own cursor
//! from the Core, and every connection re-reads its subscribed heads every `--head-poll-ms`
//! (`Limits::poll_interval_ms`), so a lost or dropped notification only delays delivery.
//! Nothing here grows with traffic: wake-ups are coalesced per (connection, Group), the
//! `NOTIFY` queue is bounded (a full queue drops, counted in `mwp_notify_dropped_total`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use missionweaveprotocol_gateway::server::{ConnectionId, Hub};
use tokio::sync::Notify;

use crate::metrics::Metrics;

/// The PostgreSQL notification channel.
pub const CHANNEL: &str = "mwp_group_head";

/// Wake-ups pending per connection (distinct Groups); past it a wake-up is dropped (the head
/// poll catches up). The gateway's default `max_subscriptions`.
pub const MAX_PENDING_WAKES: usize = 1024;

/// Notifications waiting to be sent.
pub const NOTIFY_QUEUE: usize = 4096;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What the server knows about one live connection besides its machine.
#[derive(Debug, Default)]
pub struct ConnHandle {
    pending: Mutex<HashMap<String, Option<u64>>>,
    /// Woken when `pending` gains an entry.
    pub notify: Notify,
    /// Its paused subscriptions (for `/metrics`).
    pub paused: AtomicU64,
    /// Its subscriptions (for `/metrics`).
    pub subscriptions: AtomicU64,
    /// Bytes its machine holds for the writer (for `/metrics`).
    pub queued_bytes: AtomicU64,
}

impl ConnHandle {
    /// `group` moved to `sequence` (`None`: ask the Core).
    pub fn wake(&self, group: &str, sequence: Option<u64>) {
        {
            let mut pending = lock(&self.pending);
            let len = pending.len();
            match pending.get_mut(group) {
                Some(known) => {
                    *known = match (*known, sequence) {
                        (Some(a), Some(b)) => Some(a.max(b)),
                        _ => None,
                    }
                }
                None if len < MAX_PENDING_WAKES => {
                    pending.insert(group.to_owned(), sequence);
                }
                None => return,
            }
        }
        self.notify.notify_one();
    }

    /// Takes every pending wake-up.
    pub fn take(&self) -> Vec<(String, Option<u64>)> {
        lock(&self.pending).drain().collect()
    }
}

/// Gauges read from the live connections.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Gauges {
    /// Subscriptions paused by `BACKPRESSURE`.
    pub paused_groups: u64,
    /// (connection, Group) subscriptions.
    pub subscriptions: u64,
    /// Bytes the machines hold for their writers, all connections.
    pub queued_bytes: u64,
    /// The largest of one connection.
    pub max_queued_bytes: u64,
    /// Groups with a local subscriber.
    pub groups: u64,
}

/// The live connections of this process, by hub ID.
#[derive(Debug, Default)]
pub struct Connections {
    handles: Mutex<HashMap<ConnectionId, Arc<ConnHandle>>>,
}

impl Connections {
    /// Registers a connection.
    pub fn insert(&self, id: ConnectionId) -> Arc<ConnHandle> {
        let handle = Arc::new(ConnHandle::default());
        lock(&self.handles).insert(id, Arc::clone(&handle));
        handle
    }

    /// Forgets a connection.
    pub fn remove(&self, id: ConnectionId) {
        lock(&self.handles).remove(&id);
    }

    /// Wakes `ids` for `group`.
    pub fn wake(
        &self,
        ids: &[ConnectionId],
        group: &str,
        sequence: Option<u64>,
        metrics: &Metrics,
    ) {
        if ids.is_empty() {
            return;
        }
        let handles: Vec<Arc<ConnHandle>> = {
            let map = lock(&self.handles);
            ids.iter().filter_map(|id| map.get(id).cloned()).collect()
        };
        for handle in handles {
            handle.wake(group, sequence);
            Metrics::inc(&metrics.wakeups);
        }
    }

    /// Wakes every local subscriber of `group` (a `NOTIFY` from any process).
    pub fn wake_subscribers(
        &self,
        hub: &Hub,
        group: &str,
        sequence: Option<u64>,
        metrics: &Metrics,
    ) {
        self.wake(&hub.subscribers(group), group, sequence, metrics);
    }

    /// The gauges summed over every connection.
    pub fn gauges(&self) -> Gauges {
        let map = lock(&self.handles);
        let mut gauges = Gauges::default();
        for h in map.values() {
            gauges.paused_groups += h.paused.load(Ordering::Relaxed);
            gauges.subscriptions += h.subscriptions.load(Ordering::Relaxed);
            let queued = h.queued_bytes.load(Ordering::Relaxed);
            gauges.queued_bytes += queued;
            gauges.max_queued_bytes = gauges.max_queued_bytes.max(queued);
        }
        gauges
    }

    /// Every handle (shutdown).
    pub fn all(&self) -> Vec<Arc<ConnHandle>> {
        lock(&self.handles).values().cloned().collect()
    }
}

/// The sending side of `NOTIFY`: a bounded queue drained by one thread with its own database
/// connection.
#[derive(Debug, Clone)]
pub struct Notifier {
    tx: SyncSender<(String, u64)>,
    metrics: Arc<Metrics>,
}

impl Notifier {
    /// Queues a head move for the other processes; never blocks.
    pub fn notify(&self, group: &str, sequence: u64) {
        match self.tx.try_send((group.to_owned(), sequence)) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                Metrics::inc(&self.metrics.notify_dropped);
            }
        }
    }
}

/// The `NOTIFY` payload of a head move.
pub fn payload(group: &str, sequence: u64) -> String {
    format!("{group} {sequence}")
}

/// A `NOTIFY` payload read back: a Group ID has no space (it is an absolute URI).
pub fn parse_payload(payload: &str) -> Option<(&str, u64)> {
    let (group, sequence) = payload.rsplit_once(' ')?;
    if group.is_empty() || group.contains(' ') {
        return None;
    }
    Some((group, sequence.parse().ok()?))
}

fn connect(url: &str) -> Result<postgres::Client, postgres::Error> {
    let mut config: postgres::Config = url.parse()?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_secs(10));
    }
    config.application_name("missionweaveprotocol-server");
    config.connect(postgres::NoTls)
}

/// Starts the `NOTIFY` thread for the libpq `url`.
pub fn start_notifier(
    url: String,
    metrics: Arc<Metrics>,
    stop: Arc<AtomicBool>,
) -> std::io::Result<Notifier> {
    let (tx, rx) = std::sync::mpsc::sync_channel(NOTIFY_QUEUE);
    let thread_metrics = Arc::clone(&metrics);
    std::thread::Builder::new()
        .name("mwp-notify".into())
        .spawn(move || notify_loop(&url, &rx, &thread_metrics, &stop))?;
    Ok(Notifier { tx, metrics })
}

fn notify_loop(url: &str, rx: &Receiver<(String, u64)>, metrics: &Metrics, stop: &AtomicBool) {
    let mut client: Option<postgres::Client> = None;
    while !stop.load(Ordering::Relaxed) {
        let first = match rx.recv_timeout(Duration::from_millis(500)) {
            Ok(item) => item,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => return,
        };
        // Coalesce what is queued: one notification per Group, its highest sequence.
        let mut batch: HashMap<String, u64> = HashMap::new();
        batch.insert(first.0, first.1);
        while batch.len() < 512 {
            match rx.try_recv() {
                Ok((group, sequence)) => {
                    let entry = batch.entry(group).or_insert(sequence);
                    *entry = (*entry).max(sequence);
                }
                Err(_) => break,
            }
        }
        if client.as_ref().is_none_or(postgres::Client::is_closed) {
            client = match connect(url) {
                Ok(c) => Some(c),
                Err(error) => {
                    tracing::warn!(%error, "NOTIFY connection failed; head moves reach other processes by their head poll");
                    for _ in 0..batch.len() {
                        Metrics::inc(&metrics.notify_dropped);
                    }
                    std::thread::sleep(Duration::from_secs(1));
                    continue;
                }
            };
        }
        let Some(db) = client.as_mut() else { continue };
        let mut failed = false;
        for (group, sequence) in &batch {
            let text = payload(group, *sequence);
            match db.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &text]) {
                Ok(_) => Metrics::inc(&metrics.notify_sent),
                Err(error) => {
                    tracing::warn!(%error, "NOTIFY failed");
                    Metrics::inc(&metrics.notify_dropped);
                    failed = true;
                }
            }
        }
        if failed {
            client = None;
        }
    }
}

/// Starts the `LISTEN` thread: every notification wakes this process's subscribers of its
/// Group. Reconnects with a pause after a failure.
pub fn start_listener(
    url: String,
    hub_wake: impl Fn(&str, u64) + Send + 'static,
    metrics: Arc<Metrics>,
    stop: Arc<AtomicBool>,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("mwp-listen".into())
        .spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                match listen_once(&url, &hub_wake, &metrics, &stop) {
                    Ok(()) => return,
                    Err(error) => {
                        metrics.listen_connected.store(0, Ordering::Relaxed);
                        tracing::warn!(%error, "LISTEN connection lost; reconnecting (the head poll covers the gap)");
                        std::thread::sleep(Duration::from_secs(1));
                    }
                }
            }
        })?;
    Ok(())
}

fn listen_once(
    url: &str,
    wake: &impl Fn(&str, u64),
    metrics: &Metrics,
    stop: &AtomicBool,
) -> Result<(), postgres::Error> {
    let mut client = connect(url)?;
    client.batch_execute(&format!("LISTEN {CHANNEL}"))?;
    metrics.listen_connected.store(1, Ordering::Relaxed);
    tracing::info!("listening for head moves of other processes ({CHANNEL})");
    while !stop.load(Ordering::Relaxed) {
        {
            let mut notifications = client.notifications();
            let mut iter = notifications.timeout_iter(Duration::from_millis(500));
            while let Some(note) = postgres::fallible_iterator::FallibleIterator::next(&mut iter)? {
                Metrics::inc(&metrics.notify_received);
                if let Some((group, sequence)) = parse_payload(note.payload()) {
                    wake(group, sequence);
                }
            }
        }
        if client.is_closed() {
            // A closed client fails every query: that error ends this connection.
            client.simple_query("SELECT 1")?;
        }
    }
    metrics.listen_connected.store(0, Ordering::Relaxed);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_round_trip() {
        let text = payload("urn:missionweaveprotocol:group:finance", 42);
        assert_eq!(text, "urn:missionweaveprotocol:group:finance 42");
        assert_eq!(
            parse_payload(&text),
            Some(("urn:missionweaveprotocol:group:finance", 42))
        );
        assert_eq!(parse_payload("nospace"), None);
        assert_eq!(parse_payload("a b 3"), None);
        assert_eq!(parse_payload("g x"), None);
    }

    #[test]
    fn wakes_coalesce_and_stay_bounded() {
        let handle = ConnHandle::default();
        handle.wake("g", Some(3));
        handle.wake("g", Some(5));
        handle.wake("g", Some(4));
        assert_eq!(handle.take(), vec![("g".to_owned(), Some(5))]);
        handle.wake("g", Some(3));
        handle.wake("g", None);
        assert_eq!(handle.take(), vec![("g".to_owned(), None)]);
        for i in 0..MAX_PENDING_WAKES + 10 {
            handle.wake(&format!("g{i}"), Some(1));
        }
        assert_eq!(handle.take().len(), MAX_PENDING_WAKES);
    }
}
