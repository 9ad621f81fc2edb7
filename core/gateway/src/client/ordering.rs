//! Per-Group order on the client (§16; digest §2.11): "A recipient MUST deduplicate by Event
//! ID and MUST process each Group in sequence order. It MAY buffer an out-of-order Event, but
//! MUST NOT advance its durable Cursor over a gap." Routed by Group first (§17.2).
//!
//! | received | action |
//! | --- | --- |
//! | `sequence ≤ cursor`, or an Event ID already seen at that position | duplicate: dropped |
//! | an Event ID seen at another position, or another Event at a buffered position | rejected |
//! | `sequence = cursor + 1` | delivered in order, then every buffered successor |
//! | `sequence > cursor + 1`, filtered subscription | delivered as attention, Cursor unchanged (the filter leaves gaps by design) |
//! | `sequence > cursor + 1` | buffered (bounded); when full: dropped, one gap report |

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;

use super::outcome::DeliveredEvent;

/// What [`GroupOrder::offer`] decided.
#[derive(Debug)]
pub(super) enum Offer {
    /// In order: these Events, contiguous, the Cursor at the last.
    Deliver(Vec<DeliveredEvent>),
    /// Delivered outside the order (filtered subscription).
    Attention(DeliveredEvent),
    /// Already processed.
    Duplicate,
    /// Kept until the gap fills.
    Buffered,
    /// Another Event already holds this position.
    Conflict,
    /// The buffer is full: dropped (`first`: the first drop since the buffer last drained).
    Overflow { first: bool },
}

/// One Group's Cursor and out-of-order buffer.
#[derive(Debug)]
pub(super) struct GroupOrder {
    cursor: u64,
    filtered: bool,
    buffer: BTreeMap<u64, DeliveredEvent>,
    buffered_bytes: usize,
    overflowed: bool,
}

impl GroupOrder {
    pub fn new(cursor: u64, filtered: bool) -> Self {
        Self {
            cursor,
            filtered,
            buffer: BTreeMap::new(),
            buffered_bytes: 0,
            overflowed: false,
        }
    }

    /// The highest contiguous sequence delivered in order.
    pub fn cursor(&self) -> u64 {
        self.cursor
    }

    /// Buffered Events.
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }

    /// Moves the Cursor up to `cursor` (a visibility start the host learned, §8): what lies
    /// before it will never come. Returns the buffered Events now contiguous.
    pub fn raise_to(&mut self, cursor: u64) -> Vec<DeliveredEvent> {
        if cursor <= self.cursor {
            return Vec::new();
        }
        self.cursor = cursor;
        let stale: Vec<u64> = self.buffer.range(..=cursor).map(|(s, _)| *s).collect();
        for sequence in stale {
            if let Some(event) = self.buffer.remove(&sequence) {
                self.buffered_bytes -= event.bytes.len();
            }
        }
        self.drain()
    }

    fn drain(&mut self) -> Vec<DeliveredEvent> {
        let mut out = Vec::new();
        while let Some(mut event) = self.buffer.remove(&(self.cursor + 1)) {
            self.buffered_bytes -= event.bytes.len();
            self.cursor = event.sequence;
            event.in_order = true;
            out.push(event);
        }
        if self.buffer.is_empty() {
            self.overflowed = false;
        }
        out
    }

    /// Offers a verified Event of this Group.
    pub fn offer(&mut self, event: DeliveredEvent, max_events: usize, max_bytes: usize) -> Offer {
        let sequence = event.sequence;
        if sequence <= self.cursor {
            return Offer::Duplicate;
        }
        if sequence == self.cursor + 1 {
            // The buffer only ever holds sequences after `cursor + 1` (a drain takes each one
            // as soon as it becomes next), so nothing is buffered at this position.
            let mut event = event;
            event.in_order = true;
            self.cursor = sequence;
            let mut out = vec![event];
            out.extend(self.drain());
            return Offer::Deliver(out);
        }
        if self.filtered {
            let mut event = event;
            event.in_order = false;
            return Offer::Attention(event);
        }
        if let Some(existing) = self.buffer.get(&sequence) {
            return if existing.event_id == event.event_id {
                Offer::Duplicate
            } else {
                Offer::Conflict
            };
        }
        if self.buffer.len() >= max_events || self.buffered_bytes + event.bytes.len() > max_bytes {
            let first = !self.overflowed;
            self.overflowed = true;
            return Offer::Overflow { first };
        }
        self.buffered_bytes += event.bytes.len();
        self.buffer.insert(sequence, event);
        Offer::Buffered
    }
}

/// Whether an Event ID was seen, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Seen {
    /// Not in the window.
    New,
    /// Seen at this very position: a duplicate.
    Same,
    /// Seen at another position: the Event cannot be trusted (an Event ID never moves).
    Moved,
}

/// The last Event IDs seen, with their positions (bounded; oldest forgotten first).
#[derive(Debug)]
pub(super) struct RecentIds {
    order: VecDeque<Arc<str>>,
    positions: HashMap<Arc<str>, (Option<Arc<str>>, u64)>,
    max: usize,
}

impl RecentIds {
    pub fn new(max: usize) -> Self {
        Self {
            order: VecDeque::new(),
            positions: HashMap::new(),
            max: max.max(1),
        }
    }

    pub fn check(&self, event_id: &str, group: Option<&str>, sequence: u64) -> Seen {
        match self.positions.get(event_id) {
            None => Seen::New,
            Some((g, s)) if g.as_deref() == group && *s == sequence => Seen::Same,
            Some(_) => Seen::Moved,
        }
    }

    pub fn remember(&mut self, event_id: &str, group: Option<&str>, sequence: u64) {
        if self.positions.contains_key(event_id) {
            return;
        }
        if self.order.len() >= self.max
            && let Some(oldest) = self.order.pop_front()
        {
            self.positions.remove(&oldest);
        }
        let id: Arc<str> = Arc::from(event_id);
        self.positions
            .insert(Arc::clone(&id), (group.map(Arc::from), sequence));
        self.order.push_back(id);
    }
}
