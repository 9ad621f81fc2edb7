//! The rules of the reads every backend answers alike (§16, §15.2), written once: what a
//! Group without a log looks like, and which Events one replay page holds.
//!
//! Backends differ in how they fetch and decode rows and how they verify them against the
//! integrity columns (`store::integrity`); what a page must contain, where it continues and
//! when a cursor is too old are the same everywhere, so the in-memory store, SQLite and
//! PostgreSQL all page through [`PagePlan`].

use crate::store::{
    error::StoreError,
    event_log::{EventRecord, GroupHead, ReplayPage, SnapshotPointer},
};

/// The head of a Group without a log: sequence 1 comes next, nothing is archived (§15.2).
pub const fn absent_head() -> GroupHead {
    GroupHead {
        next_sequence: 1,
        first_online: 1,
        snapshot: None,
    }
}

/// The replay page of a Group without a log: no Events, last sequence 0 (§16).
pub const fn absent_page() -> ReplayPage {
    ReplayPage {
        events: Vec::new(),
        continuation: None,
        last_sequence: 0,
    }
}

/// A replay `limit` of 0 is an argument error: a page that may hold nothing would never let a
/// reader move its cursor (§16). Checked before anything is read.
pub fn check_limit(limit: usize) -> Result<(), StoreError> {
    if limit == 0 {
        return Err(StoreError::InvalidArgument {
            argument: "limit",
            detail: "a replay page holds at least one Event".to_owned(),
        });
    }
    Ok(())
}

/// Which Events one replay page holds, decided from the Group's head before any row is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PagePlan {
    /// The first sequence of the page.
    pub start: u64,
    /// How many Events the page holds: every sequence from `start`, up to the limit and the
    /// head (§15.2: the online log has no gap, so fewer rows mean a damaged log).
    pub count: u64,
    /// The Group's first online sequence.
    pub first_online: u64,
    /// The Group's last sequence (0 without Events).
    pub last_sequence: u64,
}

impl PagePlan {
    /// The page of at most `limit` Events after `after_sequence` of `group`, whose head is
    /// (`first_online`, `next_sequence`, `snapshot`). A cursor before the online log is
    /// [`StoreError::CursorTooOld`] with the snapshot covering the archived part (§16, §7.4):
    /// the reader restores it and replays after `first_online - 1`. A cursor at or past the
    /// head plans an empty page.
    pub fn new(
        group: &str,
        after_sequence: u64,
        limit: usize,
        first_online: u64,
        next_sequence: u64,
        snapshot: Option<&SnapshotPointer>,
    ) -> Result<Self, StoreError> {
        let wanted = after_sequence.saturating_add(1);
        if let Some(snapshot) = snapshot.filter(|_| wanted < first_online) {
            return Err(StoreError::CursorTooOld {
                group: group.to_owned(),
                after_sequence,
                first_online,
                snapshot: snapshot.clone(),
            });
        }
        let last_sequence = next_sequence.saturating_sub(1);
        let start = wanted.max(first_online);
        let count = if start > last_sequence {
            0
        } else {
            (last_sequence - start + 1).min(u64::try_from(limit).unwrap_or(u64::MAX))
        };
        Ok(Self {
            start,
            count,
            first_online,
            last_sequence,
        })
    }

    /// [`new`](Self::new) from a [`GroupHead`].
    pub fn for_head(
        group: &str,
        after_sequence: u64,
        limit: usize,
        head: &GroupHead,
    ) -> Result<Self, StoreError> {
        Self::new(
            group,
            after_sequence,
            limit,
            head.first_online,
            head.next_sequence,
            head.snapshot.as_ref(),
        )
    }

    /// The sequence whose stored chain hash the page is verified from, when the page starts
    /// after the first online Event; `None` when it starts at the first online Event, verified
    /// from the chain hash stored before it (`store::integrity`).
    pub fn anchor(&self) -> Option<u64> {
        (self.start > self.first_online).then(|| self.start - 1)
    }

    /// The first sequence missing from a page that read `found` Events, if it is short.
    pub fn first_missing(&self, found: usize) -> Option<u64> {
        let found = found as u64;
        (found < self.count).then(|| self.start + found)
    }

    /// The page of `events` (the planned ones, in order): it continues after its last Event
    /// while the head lies beyond it (§16).
    pub fn page(self, events: Vec<EventRecord>) -> ReplayPage {
        let continuation = events
            .last()
            .map(|event| event.sequence)
            .filter(|&last| last < self.last_sequence);
        ReplayPage {
            events,
            continuation,
            last_sequence: self.last_sequence,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use missionweaveprotocol::{DescribeError, WireCode};

    fn events(range: std::ops::RangeInclusive<u64>) -> Vec<EventRecord> {
        range
            .map(|s| EventRecord::new(s, &format!("e{s}"), &b"{}"[..]))
            .collect()
    }

    #[test]
    fn a_limit_of_zero_is_refused() {
        check_limit(1).unwrap();
        let e = check_limit(0).unwrap_err();
        assert_eq!(e.wire_code(), WireCode::ProtocolViolation);
        assert_eq!(
            e.to_string(),
            "limit: a replay page holds at least one Event"
        );
    }

    #[test]
    fn a_group_without_a_log_starts_at_one_and_pages_nothing() {
        let head = absent_head();
        assert_eq!((head.next_sequence, head.first_online), (1, 1));
        assert!(head.snapshot.is_none());
        let plan = PagePlan::for_head("g", 0, 10, &head).unwrap();
        assert_eq!(plan.count, 0);
        assert_eq!(plan.page(Vec::new()), absent_page());
    }

    #[test]
    fn a_page_holds_up_to_the_limit_and_continues_while_the_head_is_beyond() {
        // Log 1..=10, nothing archived.
        let plan = PagePlan::new("g", 0, 4, 1, 11, None).unwrap();
        assert_eq!((plan.start, plan.count, plan.anchor()), (1, 4, None));
        let page = plan.page(events(1..=4));
        assert_eq!((page.continuation, page.last_sequence), (Some(4), 10));
        // The last page ends the replay.
        let plan = PagePlan::new("g", 8, 4, 1, 11, None).unwrap();
        assert_eq!((plan.start, plan.count, plan.anchor()), (9, 2, Some(8)));
        assert_eq!(plan.page(events(9..=10)).continuation, None);
        // A cursor at or past the head: an empty page at the head.
        for after in [10, 11, u64::MAX] {
            let plan = PagePlan::new("g", after, 4, 1, 11, None).unwrap();
            assert_eq!(plan.count, 0);
            let page = plan.page(Vec::new());
            assert_eq!((page.continuation, page.last_sequence), (None, 10));
        }
    }

    #[test]
    fn a_cursor_before_the_archive_is_too_old_and_one_after_it_is_served() {
        let snapshot = SnapshotPointer {
            artifact_hash: "sha256:aa".into(),
        };
        // Log 5..=10 online, 1..=4 archived.
        let e = PagePlan::new("g", 3, 4, 5, 11, Some(&snapshot)).unwrap_err();
        assert_eq!(
            e,
            StoreError::CursorTooOld {
                group: "g".into(),
                after_sequence: 3,
                first_online: 5,
                snapshot: snapshot.clone(),
            }
        );
        assert_eq!(e.wire_code(), WireCode::CursorTooOld);
        let plan = PagePlan::new("g", 4, 4, 5, 11, Some(&snapshot)).unwrap();
        assert_eq!((plan.start, plan.count, plan.anchor()), (5, 4, None));
        // Without a snapshot the online log is served from its start.
        let plan = PagePlan::new("g", 0, 4, 5, 11, None).unwrap();
        assert_eq!(plan.start, 5);
    }

    #[test]
    fn a_short_page_names_its_first_missing_sequence() {
        let plan = PagePlan::new("g", 2, 4, 1, 11, None).unwrap();
        assert_eq!(plan.first_missing(4), None);
        assert_eq!(plan.first_missing(1), Some(4));
        assert_eq!(plan.first_missing(0), Some(3));
    }

    #[test]
    fn a_damaged_head_of_zero_pages_nothing() {
        // `next_sequence` 0 can only come from a damaged row: no underflow, no Events.
        let plan = PagePlan::new("g", 0, 4, 0, 0, None).unwrap();
        assert_eq!((plan.count, plan.last_sequence), (0, 0));
    }
}
