//! Pull-based delivery with per-Group flow control (§16, §17.3, §8 "An Agent's noisy Group
//! MUST NOT starve traffic from another Group. Gateways MUST implement per-Group flow control
//! and SHOULD allow independent subscription cursors").
//!
//! Each subscribed Group has its own delivery cursor. When its head moves (a wake-up from the
//! host, this connection's own commit, the periodic head poll) the connection reads the next
//! page after the cursor from the Core and queues the Events, as long as the Group is within
//! its share of the outbound queue (`group_share_*`) and the queue within its bound
//! (`max_queue_*`). The store is the buffer: nothing is ever dropped, a Group that cannot queue
//! more simply stops reading.
//!
//! ```text
//! Flowing ──share or queue full──▶ Blocked ──new Events arrive──▶ Paused (one ERROR BACKPRESSURE
//!    ▲                                │                                  with groupId, retryAfterMs)
//!    └──── queue below low-water ─────┴──────────────────────────────────┘  then reads again
//! ```
//!
//! A Group that fills its share while catching up is only *blocked*: it resumes as the host
//! drains, with no error (a catch-up the client is reading is not backpressure). It is
//! *paused*, with one `BACKPRESSURE`, when new Events arrive while it is blocked: the client is
//! not keeping up with live traffic (§17.3: "pause that Group and emit BACKPRESSURE with retry
//! guidance rather than disconnecting unrelated Groups"). Other Groups keep their own shares and
//! keep flowing; the connection stays open. The low-water mark is half the share and half the
//! queue.
//!
//! Visibility is asked of the Core again before delivering any Event that may have changed it
//! (a Membership that ended stops delivery with `GROUP_NOT_FOUND`, and its ending Event is not
//! delivered to it): every write of a Membership is a Command of that Group whose Event carries
//! the Membership (`"membership":` as a member name, which no JSON string value can contain
//! unescaped). Delivery stops before such an Event committed after the Core last answered, asks
//! again, and goes on only if the Agent still sees the Group; between such Events the answer
//! cannot change, so live delivery needs no store read for it. Events before
//! `visibilityStartSequence` are never delivered (§8); the
//! attention filter applies to Events committed after the subscription only (§17.2: replay is
//! never filtered).

use std::sync::Arc;

use missionweaveprotocol::WireCode;
use missionweaveprotocol::json::{Document, ParseLimits};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

use super::attention;
use super::connection::Connection;
use super::core_seam::{GroupPage, Visibility};
use super::errors;
use super::event_body::may_change_membership;
use crate::frames::{self, Attention, ErrorBody};

/// Subscriptions whose head `on_tick` re-reads per call (bounds one tick's work).
const HEADS_PER_TICK: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    Flowing,
    Blocked,
    Paused,
}

/// One subscribed Group of a connection.
#[derive(Debug)]
pub(super) struct Subscription {
    /// The last sequence queued (or passed over: invisible or filtered out).
    cursor: u64,
    /// The last sequence known to exist.
    known_head: u64,
    /// Events after this sequence are live (committed after the subscription): filtered.
    live_from: u64,
    /// `visibilityStartSequence` (§8).
    visibility_start: u64,
    attention: Option<Attention>,
    queued_frames: usize,
    queued_bytes: usize,
    flow: Flow,
    /// Whether the Group is in the connection's `blocked` list (at most once).
    listed: bool,
    /// The head known when the Core last answered `visibility`: an Event up to it that may
    /// change a Membership is reflected in that answer; a later one is asked about first.
    view_through: u64,
    /// Such a later Event is next: the pull asks the Core before reading on.
    view_stale: bool,
    last_polled: UnixMillis,
}

impl Subscription {
    pub(super) fn new(
        after: u64,
        head: u64,
        visibility: Visibility,
        attention: Option<Attention>,
        now: UnixMillis,
    ) -> Self {
        Self {
            cursor: visibility.start_after(after),
            known_head: head,
            live_from: head,
            visibility_start: visibility.start_sequence,
            attention,
            queued_frames: 0,
            queued_bytes: 0,
            flow: Flow::Flowing,
            listed: false,
            view_through: head,
            view_stale: false,
            last_polled: now,
        }
    }

    /// The same Group subscribed again (a new cursor and filter); what it already queued
    /// stays counted until the host takes it.
    pub(super) fn restart(&mut self, fresh: Self) {
        let (frames, bytes, listed) = (self.queued_frames, self.queued_bytes, self.listed);
        *self = fresh;
        self.queued_frames = frames;
        self.queued_bytes = bytes;
        self.listed = listed;
    }

    pub(super) fn cursor(&self) -> u64 {
        self.cursor
    }

    /// The last sequence known to exist.
    pub(super) fn known_head(&self) -> u64 {
        self.known_head
    }

    /// What its filter costs against `Limits::max_attention_bytes`.
    pub(super) fn attention_cost(&self) -> usize {
        self.attention
            .as_ref()
            .map_or(0, super::limits::attention_cost)
    }

    pub(super) fn is_paused(&self) -> bool {
        self.flow == Flow::Paused
    }

    /// The queue was dropped (the connection is closing).
    pub(super) fn forget_queue(&mut self) {
        self.queued_frames = 0;
        self.queued_bytes = 0;
    }
}

/// Why a pull stopped.
enum Stop {
    /// Caught up, or the Group stopped (unsubscribed, refused).
    Done,
    /// No room: the Group waits for the queue to drain.
    Full,
}

impl Connection {
    /// The head of subscribed `group` is at least `head`: pause it if it is blocked (new
    /// Events it cannot take), otherwise read.
    pub(super) fn wake(&mut self, group: &Arc<str>, head: u64, now: UnixMillis) {
        let Some(subscription) = self.subscriptions.get_mut(group) else {
            return;
        };
        if head > subscription.known_head {
            subscription.known_head = head;
            if subscription.flow == Flow::Blocked {
                subscription.flow = Flow::Paused;
                let mut body = ErrorBody::new(
                    WireCode::Backpressure,
                    "delivery of this Group is paused until the connection drains",
                )
                .in_group(group);
                body.retry_after_ms = Some(self.gateway.limits().backpressure_retry_after_ms);
                self.reply_error(body, now);
            }
        }
        self.pull(group, now);
    }

    /// An error of delivery, answering the `SUBSCRIBE` being handled if any.
    fn delivery_error(&mut self, mut body: ErrorBody, now: UnixMillis) {
        if body.related_frame_id.is_none() {
            body.related_frame_id = self.relating.clone();
        }
        self.reply_error(body, now);
    }

    /// Stops delivering `group` (refused, ended visibility, `CURSOR_TOO_OLD`).
    pub(super) fn unsubscribe(&mut self, group: &str) {
        if let Some(subscription) = self.subscriptions.remove(group) {
            self.attention_bytes -= subscription.attention_cost();
            self.gateway.hub().unsubscribe(self.id, group);
            if subscription.listed {
                self.blocked.retain(|g| &**g != group);
            }
        }
    }

    fn block(&mut self, group: &Arc<str>) {
        if let Some(subscription) = self.subscriptions.get_mut(group)
            && subscription.flow == Flow::Flowing
        {
            subscription.flow = Flow::Blocked;
            // Listed once, whatever happens to the subscription meanwhile: the list never
            // holds more entries than there are subscriptions.
            if !subscription.listed {
                subscription.listed = true;
                self.blocked.push_back(Arc::clone(group));
            }
        }
    }

    /// Reads and queues `group`'s Events after its cursor while it has room.
    pub(super) fn pull(&mut self, group: &Arc<str>, now: UnixMillis) {
        let mut checked = false;
        loop {
            let Some(subscription) = self.subscriptions.get(group) else {
                return;
            };
            if subscription.flow != Flow::Flowing || subscription.cursor >= subscription.known_head
            {
                return;
            }
            let mut before = subscription.cursor;
            if !checked || subscription.view_stale {
                checked = true;
                if !self.check_visibility(group, now) {
                    return;
                }
                // The visibility start may have moved the cursor.
                before = self.subscriptions.get(group).map_or(before, |s| s.cursor);
            }
            match self.read_once(group, now) {
                Stop::Done => {}
                Stop::Full => return self.block(group),
            }
            if self.memory_only && self.io_pending.iter().any(|(g, _)| g == group) {
                // The rest needs the store: `finish_io` goes on from the cursor.
                return;
            }
            // A page that moved nothing ends the pull (never spin on a log that answers
            // nothing new) — unless it stopped to ask about the Agent's view, which the next
            // turn does once (the answer covers the Event it stopped at).
            if let Some(subscription) = self.subscriptions.get_mut(group)
                && subscription.cursor == before
                && !subscription.view_stale
            {
                subscription.known_head = subscription.cursor;
                return;
            }
        }
    }

    /// Re-checks the Agent's view of `group` before a read: still visible (the cursor moved
    /// past anything before the visibility start), or unsubscribed with `GROUP_NOT_FOUND`.
    fn check_visibility(&mut self, group: &Arc<str>, now: UnixMillis) -> bool {
        let Some(member) = self.session.as_ref().map(|s| s.principal.clone()) else {
            return false;
        };
        if self.subscriptions.get(group).is_some_and(|s| !s.view_stale) {
            return true;
        }
        if self.memory_only {
            self.wait_for_io(group, false);
            return false;
        }
        match self.gateway.core().visibility(&member, group) {
            Ok(Some(view)) => {
                if let Some(subscription) = self.subscriptions.get_mut(group) {
                    subscription.visibility_start = view.start_sequence;
                    subscription.cursor = view.start_after(subscription.cursor);
                    subscription.view_through = subscription.known_head;
                    subscription.view_stale = false;
                }
                true
            }
            Ok(None) => {
                self.unsubscribe(group);
                self.delivery_error(errors::group_not_found(group), now);
                false
            }
            Err(error) => {
                self.delivery_error(errors::core_error(&error, Some(group)), now);
                false
            }
        }
    }

    /// One page: queues what fits, moves the cursor over what it queued or passed over.
    fn read_once(&mut self, group: &Arc<str>, now: UnixMillis) -> Stop {
        let limits = *self.gateway.limits();
        let Some(agent_id) = self.session.as_ref().map(|s| s.principal.id.clone()) else {
            return Stop::Done;
        };
        let Some(subscription) = self.subscriptions.get(group) else {
            return Stop::Done;
        };
        let room = limits
            .group_share_frames
            .saturating_sub(subscription.queued_frames)
            .min(
                limits
                    .max_queue_frames
                    .saturating_sub(self.outbound.data_frames),
            );
        let bytes_full = subscription.queued_bytes >= limits.group_share_bytes
            || (self.outbound.data_frames > 0
                && self.outbound.data_bytes >= limits.max_queue_bytes);
        if room == 0 || bytes_full {
            return Stop::Full;
        }
        let (after, limit) = (subscription.cursor, room.min(limits.page_size));
        let read = if self.memory_only {
            match self.gateway.core().recent_page(group, after, limit) {
                Some(page) => Ok(GroupPage::Events(page)),
                None => {
                    self.wait_for_io(group, false);
                    return Stop::Done;
                }
            }
        } else {
            self.gateway.core().read_page(group, after, limit)
        };
        let page = match read {
            Ok(GroupPage::Events(page)) => page,
            Ok(GroupPage::CursorTooOld {
                snapshot_artifact_hash,
            }) => {
                self.unsubscribe(group);
                let mut body = ErrorBody::new(
                    WireCode::CursorTooOld,
                    "the cursor is before the online log: restore the snapshot and subscribe after it",
                )
                .in_group(group);
                body.snapshot_artifact_hash = snapshot_artifact_hash;
                self.delivery_error(body, now);
                return Stop::Done;
            }
            Err(error) => {
                // Left as is: the next wake-up or head poll reads again.
                self.delivery_error(errors::core_error(&error, Some(group)), now);
                if let Some(subscription) = self.subscriptions.get_mut(group) {
                    subscription.known_head = subscription.cursor;
                }
                return Stop::Done;
            }
        };
        let Some(subscription) = self.subscriptions.get_mut(group) else {
            return Stop::Done;
        };
        subscription.known_head = subscription.known_head.max(page.last_sequence);
        if page.events.is_empty() {
            // Nothing after the cursor: the head is the cursor.
            subscription.known_head = subscription.cursor;
            return Stop::Done;
        }
        for record in &page.events {
            if record.sequence <= subscription.cursor {
                continue;
            }
            if record.sequence > subscription.view_through && may_change_membership(&record.body) {
                // It may have changed the Agent's Membership: the pull asks the Core before
                // delivering it.
                subscription.view_stale = true;
                break;
            }
            if record.sequence < subscription.visibility_start {
                subscription.cursor = record.sequence;
                continue;
            }
            if record.sequence > subscription.live_from
                && let Some(attention) = &subscription.attention
            {
                let selected = Document::parse(&record.body, &ParseLimits::DOCUMENT)
                    .is_ok_and(|doc| attention::selects(attention, doc.root(), &agent_id));
                if !selected {
                    subscription.cursor = record.sequence;
                    continue;
                }
            }
            let Ok(frame) = frames::event(&self.ids.next_id(), &record.body) else {
                // A stored Event the Core served always frames; never stall on one that
                // does not.
                subscription.cursor = record.sequence;
                continue;
            };
            let size = frame.len();
            let full = subscription.queued_frames >= limits.group_share_frames
                || self.outbound.data_frames >= limits.max_queue_frames
                || (subscription.queued_frames > 0
                    && subscription.queued_bytes + size > limits.group_share_bytes)
                || (self.outbound.data_frames > 0
                    && self.outbound.data_bytes + size > limits.max_queue_bytes);
            if full {
                return Stop::Full;
            }
            subscription.queued_frames += 1;
            subscription.queued_bytes += size;
            subscription.cursor = record.sequence;
            self.outbound.push_data(Arc::clone(group), frame);
        }
        Stop::Done
    }

    /// The host took an `EVENT` frame of `group`: its share is given back.
    pub(super) fn delivered(&mut self, group: &str, size: usize) {
        if let Some(subscription) = self.subscriptions.get_mut(group) {
            subscription.queued_frames = subscription.queued_frames.saturating_sub(1);
            subscription.queued_bytes = subscription.queued_bytes.saturating_sub(size);
        }
    }

    /// Below the queue's low-water mark, blocked and paused Groups below their own resume,
    /// oldest first, each reading again.
    pub(super) fn resume(&mut self, now: UnixMillis) {
        if self.blocked.is_empty() {
            return;
        }
        let limits = *self.gateway.limits();
        let low = |c: &Self| {
            c.outbound.data_frames <= limits.max_queue_frames / 2
                && c.outbound.data_bytes <= limits.max_queue_bytes / 2
        };
        if !low(self) {
            return;
        }
        for _ in 0..self.blocked.len() {
            let Some(group) = self.blocked.pop_front() else {
                break;
            };
            let Some(subscription) = self.subscriptions.get_mut(&group) else {
                continue;
            };
            if subscription.flow == Flow::Flowing {
                subscription.listed = false;
                continue;
            }
            if subscription.queued_frames <= limits.group_share_frames / 2
                && subscription.queued_bytes <= limits.group_share_bytes / 2
            {
                subscription.flow = Flow::Flowing;
                subscription.listed = false;
                self.pull(&group, now);
            } else {
                self.blocked.push_back(group);
            }
        }
    }

    /// The periodic head poll: a missed wake-up only delays delivery by
    /// `Limits::poll_interval_ms`.
    pub(super) fn poll_heads(&mut self, now: UnixMillis) {
        let interval = self.gateway.limits().poll_interval_ms;
        let due: Vec<Arc<str>> = self
            .subscriptions
            .iter()
            .filter(|(_, s)| now >= s.last_polled.saturating_add_ms(interval))
            .map(|(g, _)| Arc::clone(g))
            .take(HEADS_PER_TICK)
            .collect();
        // A head another connection's poll read within half an interval answers this one
        // too (`polled_heads.rs`); in memory-only mode the read waits for `finish_io`.
        let max_age = interval / 2;
        for group in due {
            if let Some(subscription) = self.subscriptions.get_mut(&group) {
                subscription.last_polled = now;
            }
            if let Some(head) = self.gateway.polled_heads().fresh(&group, now, max_age) {
                self.wake(&group, head, now);
            } else if self.memory_only {
                self.wait_for_io(&group, true);
            } else {
                self.read_head_and_wake(&group, now);
            }
        }
    }
}
