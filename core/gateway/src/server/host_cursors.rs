//! Durable delivery Cursors kept by the host (§16): the reference's
//! `GroupGateway(core, sessions, *, cursors=CursorStore)`.
//!
//! A gateway built with [`DurableCursors::Host`] keeps, besides the Core store's delivery
//! Cursor, the host's own store up to date and resumes from it — every rule stays here, the
//! host only reads and writes its store:
//!
//! - **ACK**: each acknowledgement the machine accepts (a Group the Agent sees, at most its
//!   last sequence) that is above the highest Cursor this connection knows of the host's store
//!   for that Group is reported once ([`Connection::poll_acknowledged`]); a duplicate or older
//!   one is not, so the host's store never sees a Cursor move backwards (§16). The host writes
//!   it; if its store fails it calls [`Connection::on_cursor_store_failed`] and the Agent gets a
//!   retryable `INTERNAL_ERROR` for that `ACK` (it may send it again).
//! - **SUBSCRIBE**: once the frame passed its frame-wide checks, the machine asks the host for
//!   the stored Cursor of each Group it names ([`Connection::poll_cursors_wanted`]) and holds the
//!   frame until [`Connection::on_stored_cursors`] answers. A Group subscribed with
//!   `afterSequence` 0 — the Agent names no Cursor of its own, the reference's `GroupCursor`
//!   default — replays after the stored Cursor (the reference's "replay from
//!   max(afterSequence, durable ACK cursor)"; §16: "Acknowledgement permits delivery cleanup");
//!   a Cursor the Agent does name is honoured as §16 says ("the server replays Events after
//!   that position"): where the reference would skip to the stored Cursor, a client whose own
//!   Cursor is behind it (a lost local store) gets the Events it lacks instead of a gap its
//!   session could never close, and one ahead of it gets nothing twice. Either way the
//!   visibility start applies after. A stored Cursor past the Group's head (a store from
//!   another deployment) counts as the head: nothing is skipped that was never delivered. A store failure refuses the SUBSCRIBE with a retryable
//!   `INTERNAL_ERROR`; nothing is subscribed. A host that feeds a text frame without answering
//!   has the question answered "no stored Cursor" first, so frames stay in order.
//!
//! [`DurableCursors::Core`] (the Rust server): the Core store's Cursor only, replay after
//! `afterSequence` (the Agent's own durable Cursor, §16 "Reconnection uses
//! `SUBSCRIBE.afterSequence`").
//!
//! Bounded: the reports waiting for the host are coalesced per Group (at most
//! [`MAX_PENDING_REPORTS`], the oldest dropped: a lost report only means a later replay
//! repeats Events, at-least-once), the known Cursors at most [`MAX_KNOWN_CURSORS`] (past it the
//! memory is cleared and reports are no longer filtered — the host store's `acknowledge` is
//! monotonic by contract, as `InMemoryCursorStore` and `SQLiteAgentStore` are). With IDs of at
//! most 512 bytes that is at most 256 × 1 616 B of reports and 1024 × about 600 B of known
//! Cursors: about 1 MiB per connection on top of `Limits::connection_memory_bound` (a `Core`
//! gateway holds none of it; the held SUBSCRIBE is the frame's own Groups, bounded by
//! `max_groups_per_subscribe`).

use std::collections::{HashMap, VecDeque};

use missionweaveprotocol::WireCode;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

use super::connection::Connection;
use super::subscribe::Entry;
use crate::frames::ErrorBody;

/// Where a gateway's durable delivery Cursors are read from on `SUBSCRIBE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DurableCursors {
    /// The Core store's only; replay after `afterSequence` (the Rust server).
    #[default]
    Core,
    /// The host's store too: ACKs reported, SUBSCRIBE asks for the stored Cursors (the
    /// reference's `GroupGateway(cursors=…)`).
    Host,
}

/// Reports waiting for the host, at most (coalesced per Group): one `ACK`'s worth (the default
/// `max_acknowledgements`); hosts take them after every input.
pub const MAX_PENDING_REPORTS: usize = 256;
/// Host-store Cursors a connection remembers, at most (the default `max_subscriptions`).
pub const MAX_KNOWN_CURSORS: usize = 1024;

/// An accepted `ACK` moved a durable Cursor: write it into the host's store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CursorAcknowledged {
    /// The authenticated Agent.
    pub agent_id: String,
    /// The Group.
    pub group_id: String,
    /// The new Cursor.
    pub sequence: u64,
    /// The `ACK` frame (for [`Connection::on_cursor_store_failed`]).
    pub frame_id: String,
}

/// A `SUBSCRIBE` waits for the host's stored Cursors of these Groups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CursorsWanted {
    /// The authenticated Agent.
    pub agent_id: String,
    /// The Groups, in the frame's order; answer one Cursor each, in this order.
    pub group_ids: Vec<String>,
    /// The `SUBSCRIBE` frame.
    pub frame_id: String,
}

#[derive(Debug)]
struct Parked {
    wanted: CursorsWanted,
    entries: Vec<Entry>,
    /// Handed to the host by [`Connection::poll_cursors_wanted`] (each question once).
    asked: bool,
}

/// A connection's part of the host's Cursors.
#[derive(Debug, Default)]
pub(super) struct HostCursors {
    parked: Option<Parked>,
    reports: VecDeque<CursorAcknowledged>,
    known: HashMap<String, u64>,
}

impl HostCursors {
    fn know(&mut self, group: &str, sequence: u64) {
        if !self.known.contains_key(group) && self.known.len() >= MAX_KNOWN_CURSORS {
            self.known.clear();
        }
        let known = self.known.entry(group.to_owned()).or_insert(0);
        *known = (*known).max(sequence);
    }
}

fn store_failed() -> ErrorBody {
    // Retryable: the host's store may answer next time; the detail stays with the host.
    let mut body = ErrorBody::new(
        WireCode::InternalError,
        "the gateway's delivery cursor store failed",
    );
    body.retryable = true;
    body
}

impl Connection {
    fn keeps_host_cursors(&self) -> bool {
        self.gateway.durable_cursors() == DurableCursors::Host
    }

    /// SUBSCRIBE passed its frame-wide checks: subscribe now, or first ask the host.
    pub(super) fn subscribe_entries(
        &mut self,
        entries: Vec<Entry>,
        frame_id: &str,
        now: UnixMillis,
    ) {
        if !self.keeps_host_cursors() {
            for entry in entries {
                self.subscribe_one(entry, 0, frame_id, now);
            }
            return;
        }
        self.settle_parked(now);
        let Some(agent_id) = self.agent_id().map(str::to_owned) else {
            return;
        };
        let group_ids = entries.iter().map(|e| e.group.clone()).collect();
        self.host_cursors.parked = Some(Parked {
            wanted: CursorsWanted {
                agent_id,
                group_ids,
                frame_id: frame_id.to_owned(),
            },
            entries,
            asked: false,
        });
    }

    /// The question of a `SUBSCRIBE` held for the host's stored Cursors, if one is.
    pub fn cursors_wanted(&self) -> Option<&CursorsWanted> {
        self.host_cursors.parked.as_ref().map(|p| &p.wanted)
    }

    /// The same question for the host to answer, handed out once (a host draining several
    /// times before it answers reads its store once).
    pub fn poll_cursors_wanted(&mut self) -> Option<CursorsWanted> {
        let parked = self.host_cursors.parked.as_mut()?;
        if parked.asked {
            return None;
        }
        parked.asked = true;
        Some(parked.wanted.clone())
    }

    /// The host's answer to [`cursors_wanted`](Self::cursors_wanted): one stored Cursor per
    /// Group in its order (an unknown Group is 0), or `Err(())` when the store failed (the
    /// `SUBSCRIBE` is refused with a retryable `INTERNAL_ERROR`, nothing subscribed). An answer
    /// of the wrong length counts as a failure. Without a question: nothing happens.
    pub fn on_stored_cursors(&mut self, stored: Result<&[u64], ()>, now: UnixMillis) {
        let Some(parked) = self.host_cursors.parked.take() else {
            return;
        };
        if self.closed || self.closing.is_some() {
            return;
        }
        let frame_id = parked.wanted.frame_id;
        let stored = match stored {
            Ok(values) if values.len() == parked.entries.len() => values,
            _ => return self.reply_error(store_failed().related_to(&frame_id), now),
        };
        for (entry, &cursor) in parked.entries.into_iter().zip(stored) {
            self.host_cursors.know(&entry.group, cursor);
            self.subscribe_one(entry, cursor, &frame_id, now);
        }
    }

    /// A question the host left unanswered when it feeds the next frame: "no stored Cursor".
    pub(super) fn settle_parked(&mut self, now: UnixMillis) {
        if let Some(parked) = &self.host_cursors.parked {
            let zeros = vec![0; parked.entries.len()];
            self.on_stored_cursors(Ok(&zeros), now);
        }
    }

    /// An accepted acknowledgement (the Core store's Cursor already advanced): reported once
    /// when it moves the host store's Cursor forward.
    pub(super) fn report_acknowledged(&mut self, group: &str, sequence: u64, frame_id: &str) {
        if !self.keeps_host_cursors() || sequence == 0 {
            return;
        }
        if self
            .host_cursors
            .known
            .get(group)
            .is_some_and(|&known| sequence <= known)
        {
            return;
        }
        let Some(agent_id) = self.agent_id().map(str::to_owned) else {
            return;
        };
        self.host_cursors.know(group, sequence);
        let reports = &mut self.host_cursors.reports;
        if let Some(queued) = reports.iter_mut().find(|r| r.group_id == group) {
            queued.sequence = queued.sequence.max(sequence);
            frame_id.clone_into(&mut queued.frame_id);
            return;
        }
        if reports.len() >= MAX_PENDING_REPORTS {
            reports.pop_front();
        }
        reports.push_back(CursorAcknowledged {
            agent_id,
            group_id: group.to_owned(),
            sequence,
            frame_id: frame_id.to_owned(),
        });
    }

    /// The next durable Cursor for the host's store.
    pub fn poll_acknowledged(&mut self) -> Option<CursorAcknowledged> {
        self.host_cursors.reports.pop_front()
    }

    /// The host's store failed to write a reported Cursor: the `ACK` `frame_id` is answered
    /// with a retryable `INTERNAL_ERROR` for `group_id` (the Agent may acknowledge again; the
    /// report is no longer taken as known, so the next `ACK` is reported again).
    pub fn on_cursor_store_failed(&mut self, group_id: &str, frame_id: &str, now: UnixMillis) {
        if self.closed || self.closing.is_some() {
            return;
        }
        self.host_cursors.known.remove(group_id);
        let body = store_failed().in_group(group_id).related_to(frame_id);
        self.reply_error(body, now);
    }
}
