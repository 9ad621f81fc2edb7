//! The heads the periodic polls read, shared by a gateway's connections.
//!
//! Every subscription re-reads its Group's head now and then (`Limits::poll_interval_ms`): the
//! safety net for a wake-up that never came (a `NOTIFY` lost between server processes, §16:
//! catch-up by sequence is the truth). One read answers every connection subscribed to that
//! Group for half an interval: 1,000 connections × 5 subscriptions polled every 1.5 s were
//! 3,300 store reads per second; with this, at most two reads per Group per interval.
//!
//! Bounded: at most [`MAX_POLLED_GROUPS`] entries (a full map is emptied and refilled: the
//! cost of forgetting is one more store read per Group).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// Groups remembered at once (about 100 bytes each: at most about 6.4 MiB).
pub const MAX_POLLED_GROUPS: usize = 65_536;

/// The last head read of each Group, with when it was read.
#[derive(Debug, Default)]
pub struct PolledHeads {
    heads: Mutex<HashMap<Arc<str>, (u64, UnixMillis)>>,
}

impl PolledHeads {
    /// An empty record.
    pub fn new() -> Self {
        Self::default()
    }

    /// The head of `group` read at most `max_age_ms` before `now`, if any.
    pub fn fresh(&self, group: &str, now: UnixMillis, max_age_ms: u64) -> Option<u64> {
        let heads = self.heads.lock().unwrap_or_else(PoisonError::into_inner);
        let (head, read_at) = *heads.get(group)?;
        // A read "in the future" (a clock stepped back) is not trusted.
        (read_at <= now && now < read_at.saturating_add_ms(max_age_ms)).then_some(head)
    }

    /// Records `head`, read from the store at `now`. A head never moves back: an older answer
    /// (a read that raced a newer one) keeps the newer head with the later time.
    pub fn record(&self, group: &Arc<str>, head: u64, now: UnixMillis) {
        let mut heads = self.heads.lock().unwrap_or_else(PoisonError::into_inner);
        if heads.len() >= MAX_POLLED_GROUPS && !heads.contains_key(group) {
            heads.clear();
        }
        let entry = heads.entry(Arc::clone(group)).or_insert((head, now));
        entry.0 = entry.0.max(head);
        entry.1 = entry.1.max(now);
    }

    /// Groups remembered now.
    pub fn len(&self) -> usize {
        self.heads
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(name: &str) -> Arc<str> {
        Arc::from(name)
    }

    #[test]
    fn a_read_answers_for_its_age_only() {
        let heads = PolledHeads::new();
        let g = group("urn:g");
        assert_eq!(heads.fresh("urn:g", UnixMillis(1_000), 750), None);
        heads.record(&g, 7, UnixMillis(1_000));
        assert_eq!(heads.fresh("urn:g", UnixMillis(1_000), 750), Some(7));
        assert_eq!(heads.fresh("urn:g", UnixMillis(1_749), 750), Some(7));
        assert_eq!(heads.fresh("urn:g", UnixMillis(1_750), 750), None);
        // A clock that went back does not make an old read fresh.
        assert_eq!(heads.fresh("urn:g", UnixMillis(999), 750), None);
        assert_eq!(heads.fresh("urn:other", UnixMillis(1_000), 750), None);
    }

    #[test]
    fn a_head_never_moves_back() {
        let heads = PolledHeads::new();
        let g = group("urn:g");
        heads.record(&g, 9, UnixMillis(2_000));
        heads.record(&g, 4, UnixMillis(1_500));
        assert_eq!(heads.fresh("urn:g", UnixMillis(2_000), 100), Some(9));
    }

    #[test]
    fn the_record_is_bounded() {
        let heads = PolledHeads::new();
        for i in 0..MAX_POLLED_GROUPS + 10 {
            heads.record(&group(&format!("urn:g:{i}")), 1, UnixMillis(1));
        }
        assert!(heads.len() <= MAX_POLLED_GROUPS);
        assert!(!heads.is_empty());
    }
}
