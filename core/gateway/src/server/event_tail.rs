//! The recent Events of every Group, in memory, shared by all connections of a gateway
//! (`docs/network.md`, "Delivery from the Event tail").
//!
//! Live delivery is one Command fanned out to every subscriber of its Group (§17.2): without
//! this tail each subscriber's wake-up read the same new Event from the store (a membership
//! check, a head read, a page read, a digest of the body) — 25 store reads per Command with 25
//! subscribers. The tail keeps the last Events of each Group, as the Core handed them over:
//! the Events of a Command this gateway performed (signed and committed by this Core) and the
//! pages the Core served from the store (checked by `Core::replay` before they are served).
//! A subscriber whose cursor is inside the tail reads from memory; any other read goes to the
//! Core as before.
//!
//! Correctness rests on three rules:
//! - **contiguous**: a Group's tail is one run of consecutive sequences; a record that would
//!   leave a gap replaces the run (so a page served from the tail has every Event after the
//!   cursor, in order, as the log has them — Events are immutable once appended, §15.2);
//! - **an archived Group is not served**: `group.archived` clears the Group's tail, so a cursor
//!   before the online log still gets `CURSOR_TOO_OLD` from the Core (§16). A Group archived
//!   by another server process is noticed when its `group.archived` Event reaches this one;
//!   until then a read from the tail is the read that would have happened just before the
//!   archival (the Events were in the online log when this process saw them);
//! - **bounded**: at most [`TAIL_EVENTS_PER_GROUP`] Events per Group and `max_bytes` of bodies
//!   in all (past it, the least recently extended Groups are dropped until a quarter is free),
//!   plus 40 bytes of bookkeeping per Event held and one map entry per Group held.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use missionweaveprotocol_engine::store::{EventRecord, ReplayPage};

use super::event_body::is_archival;

/// The most Events a Group's tail holds (a subscriber further behind reads the store).
pub const TAIL_EVENTS_PER_GROUP: usize = 64;

/// The default bound on the bodies held, all Groups together.
pub const DEFAULT_TAIL_BYTES: usize = 32 * 1024 * 1024;

/// Store reads of one Group take turns (striped by Group): the subscribers woken together by
/// an Event another process committed all miss the tail; the first reads the store and fills
/// it, the others then read the tail instead of the store.
const READ_TURNS: usize = 64;

/// The recent Events of every Group (see the module documentation).
#[derive(Debug)]
pub struct EventTail {
    max_bytes: usize,
    inner: Mutex<Tails>,
    turns: [Mutex<()>; READ_TURNS],
}

#[derive(Debug, Default)]
struct Tails {
    groups: HashMap<Arc<str>, Tail>,
    bytes: usize,
    /// Stamps the last extension of each Group (the eviction picks the stalest).
    clock: u64,
}

#[derive(Debug, Default)]
struct Tail {
    records: VecDeque<EventRecord>,
    bytes: usize,
    touched: u64,
}

fn lock(inner: &Mutex<Tails>) -> MutexGuard<'_, Tails> {
    inner.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Default for EventTail {
    fn default() -> Self {
        Self::new(DEFAULT_TAIL_BYTES)
    }
}

impl EventTail {
    /// A tail holding at most `max_bytes` of Event bodies (0: hold nothing).
    pub fn new(max_bytes: usize) -> Self {
        Self {
            max_bytes,
            inner: Mutex::new(Tails::default()),
            turns: std::array::from_fn(|_| Mutex::new(())),
        }
    }

    /// Waits for `group`'s turn to read the store (held until the guard drops); the caller
    /// looks at the tail again once it has the turn.
    pub fn read_turn(&self, group: &str) -> MutexGuard<'_, ()> {
        use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
        let hash = BuildHasherDefault::<DefaultHasher>::default().hash_one(group);
        let turn = &self.turns[(hash % READ_TURNS as u64) as usize];
        turn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Up to `limit` Events of `group` after `after`, when the tail holds the Event at
    /// `after + 1`; `None` sends the reader to the store. `last_sequence` is the tail's last
    /// (the store may already be further: the reader's next read goes on from there).
    pub fn page(&self, group: &str, after: u64, limit: usize) -> Option<ReplayPage> {
        let tails = lock(&self.inner);
        let tail = &tails.groups.get(group)?.records;
        let first = tail.front()?.sequence;
        let last = tail.back()?.sequence;
        let next = after.checked_add(1)?;
        if limit == 0 || next < first || next > last {
            return None;
        }
        // Contiguous: the Event at `next` is at index `next - first`.
        let start = usize::try_from(next - first).ok()?;
        let events: Vec<EventRecord> = tail.iter().skip(start).take(limit).cloned().collect();
        let end = events.last()?.sequence;
        Some(ReplayPage {
            continuation: (end < last).then_some(end),
            events,
            last_sequence: last,
        })
    }

    /// Adds `records` (consecutive, ascending, all of `group`) to the Group's tail.
    pub fn extend(&self, group: &str, records: &[EventRecord]) {
        let Some(first_new) = records.first() else {
            return;
        };
        if records.iter().any(|r| is_archival(&r.body)) {
            return self.forget(group);
        }
        if self.max_bytes == 0 {
            return;
        }
        let mut tails = lock(&self.inner);
        tails.clock += 1;
        let touched = tails.clock;
        let before = tails.groups.get(group).map_or(0, |t| t.bytes);
        let tail = match tails.groups.get_mut(group) {
            Some(tail) => tail,
            None => tails.groups.entry(Arc::from(group)).or_default(),
        };
        tail.touched = touched;
        if tail
            .records
            .back()
            .is_some_and(|back| first_new.sequence > back.sequence + 1)
        {
            // A gap: the run starts again from these records.
            tail.records.clear();
            tail.bytes = 0;
        }
        for record in records {
            match tail.records.back() {
                Some(back) if record.sequence <= back.sequence => continue,
                Some(back) if record.sequence != back.sequence + 1 => break,
                _ => {}
            }
            tail.bytes += record.body.len();
            tail.records.push_back(record.clone());
        }
        while tail.records.len() > TAIL_EVENTS_PER_GROUP {
            if let Some(old) = tail.records.pop_front() {
                tail.bytes -= old.body.len();
            }
        }
        let after = tail.bytes;
        tails.bytes = tails.bytes - before + after;
        if tails.bytes > self.max_bytes {
            tails.evict(self.max_bytes - self.max_bytes / 4);
        }
    }

    /// Drops `group`'s tail (its reads go to the store).
    pub fn forget(&self, group: &str) {
        let mut tails = lock(&self.inner);
        if let Some(tail) = tails.groups.remove(group) {
            tails.bytes -= tail.bytes;
        }
    }

    /// Bytes of bodies held.
    pub fn bytes(&self) -> usize {
        lock(&self.inner).bytes
    }

    /// Events held, all Groups together.
    pub fn len(&self) -> usize {
        lock(&self.inner)
            .groups
            .values()
            .map(|t| t.records.len())
            .sum()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Tails {
    /// Drops whole tails, the least recently extended first, until the bodies fit `target`
    /// (a quarter below the bound, so that a full tail scans its Groups rarely).
    fn evict(&mut self, target: usize) {
        while self.bytes > target {
            let Some(stalest) = self
                .groups
                .iter()
                .min_by_key(|(_, t)| t.touched)
                .map(|(g, _)| Arc::clone(g))
            else {
                return;
            };
            if let Some(tail) = self.groups.remove(&stalest) {
                self.bytes -= tail.bytes;
            }
        }
    }
}
