//! The Events a [`Core`](super::Core) has already checked, remembered by digest so that a
//! replay serves them again without a second Ed25519 verification (issue 27, item 3: "verify
//! once where trust changes hands").
//!
//! Trust changes hands when stored bytes reach the Core: the first time an Event is served,
//! `served_events.rs` checks it in full (strict parse, log position, the Group Authority's
//! signature). Its digest is then kept here under its Group and sequence. A later replay
//! of the same position serves the row without the signature check only when its record
//! hashes to the same digest — the same Event ID and the same body, byte for byte. Any other
//! row (a body edited, an Event ID changed, another genuine Event moved to that position, a
//! row rewritten by a tamperer who also recomputed the store's unkeyed hash chain) differs in
//! its digest and goes through the full check again, which refuses it as before. So no
//! detection is lost: the digest comparison decides exactly "these are the bytes that passed",
//! and the store's own integrity checks (hash chain, keyed integrity) still run on every read.
//!
//! Digest: SHA-256 over the length-prefixed Group, sequence, Event ID and body, truncated to
//! 128 bits (finding other bytes with the same digest is a second preimage, 2^128 work).
//! Memory is bounded: at most [`CAPACITY`] entries (about 40 bytes each, so ≤ ~48 MiB with the
//! map's overhead); past it new Events are checked in full on every replay, as before.
//! The memo lives in the process: a Core opened on an existing store checks each Event once.

use std::collections::HashMap;
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use crate::store::EventRecord;

/// The most Events remembered (across Groups).
pub const CAPACITY: usize = 1 << 20;

type EventDigest = [u8; 16];

/// Digests of the Events this Core checked in full, by Group and sequence.
#[derive(Debug, Default)]
pub(super) struct VerifiedEvents {
    inner: Mutex<Memo>,
}

#[derive(Debug, Default)]
struct Memo {
    groups: HashMap<Box<str>, HashMap<u64, EventDigest>>,
    len: usize,
}

impl VerifiedEvents {
    /// For each record of `events` of `group`: whether its digest is the one remembered at
    /// its sequence (the bytes that passed the full check there).
    pub(super) fn known(&self, group: &str, events: &[EventRecord]) -> Vec<bool> {
        let digests: Vec<EventDigest> = events.iter().map(|r| digest(group, r)).collect();
        let memo = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let Some(known) = memo.groups.get(group) else {
            return vec![false; events.len()];
        };
        events
            .iter()
            .zip(&digests)
            .map(|(record, d)| known.get(&record.sequence) == Some(d))
            .collect()
    }

    /// Remembers `events` of `group`, each just checked in full.
    pub(super) fn remember<'a>(
        &self,
        group: &str,
        events: impl IntoIterator<Item = &'a EventRecord>,
    ) {
        let digests: Vec<(u64, EventDigest)> = events
            .into_iter()
            .map(|r| (r.sequence, digest(group, r)))
            .collect();
        if digests.is_empty() {
            return;
        }
        let mut memo = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let Memo { groups, len } = &mut *memo;
        let known = groups.entry(group.into()).or_default();
        for (sequence, d) in digests {
            if let Some(old) = known.get_mut(&sequence) {
                *old = d;
            } else if *len < CAPACITY {
                known.insert(sequence, d);
                *len += 1;
            }
        }
    }
}

fn digest(group: &str, record: &EventRecord) -> EventDigest {
    let mut h = Sha256::new();
    h.update(b"mwp.core.served-event.v1");
    for part in [
        group.as_bytes(),
        record.event_id.as_bytes(),
        &record.body[..],
    ] {
        h.update((part.len() as u64).to_be_bytes());
        h.update(part);
    }
    h.update(record.sequence.to_be_bytes());
    let full = h.finalize();
    let mut out = [0; 16];
    out.copy_from_slice(&full[..16]);
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn record(sequence: u64, id: &str, body: &[u8]) -> EventRecord {
        EventRecord::new(sequence, id, body.to_vec())
    }

    #[test]
    fn only_the_same_bytes_at_the_same_position_are_known() {
        let memo = VerifiedEvents::default();
        let genuine = record(1, "e1", b"{\"a\":1}");
        memo.remember("g", [&genuine]);
        assert_eq!(memo.known("g", std::slice::from_ref(&genuine)), [true]);
        for other in [
            record(1, "e1", b"{\"a\":2}"),
            record(1, "e2", b"{\"a\":1}"),
            record(2, "e1", b"{\"a\":1}"),
        ] {
            assert_eq!(memo.known("g", &[other]), [false]);
        }
        assert_eq!(memo.known("h", &[genuine]), [false]);
    }
}
