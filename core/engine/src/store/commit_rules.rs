//! The rules of a commit, written once for every backend (§15.1, §15.2, §15.3, §7.4).
//!
//! A backend answers a few questions about committed state through [`CommitView`]; [`validate`]
//! decides whether a [`Transaction`] may be applied, with the same [`StoreError`] for the same
//! state whatever the backend. The in-memory store answers from its maps, SQLite with point
//! reads inside its write transaction, PostgreSQL from the state it loaded for every key of a
//! batch in one round trip ([`WriteSetKeys`]). How a backend then applies a validated write set
//! stays its own business.
//!
//! The order of the checks is part of the contract (`Store::commit`): receipts first, so that
//! an Action already applied wins over any other conflict (§15.1: the caller gets the first
//! result again, not a conflict it cannot resolve); then the Group appends (§15.2); then the
//! aggregate writes (§15.3). Each check sees committed state plus the transaction's own earlier
//! writes: two appends to one Group carry consecutive sequences, a second write to one aggregate
//! expects the first one's revision.

use std::collections::HashMap;

use crate::store::{
    aggregate::AggregateKey,
    error::StoreError,
    integrity,
    receipt::{Receipt, ReceiptKey},
    transaction::Transaction,
};

/// What [`validate`] asks a backend about committed state (plus, inside a group commit, the
/// batch's earlier write sets). Each question is asked at most once per key and transaction,
/// when the rules first need it, in transaction order; an `Err` answer (a backend failure, a
/// damaged row) stops validation there and is the commit's result.
///
/// `'t` is the transaction's lifetime: a view may keep the keys it was asked about (SQLite
/// remembers where each appended Group's hash chain starts, for the apply that follows).
pub trait CommitView<'t> {
    /// The receipt recorded for `key`, if any (§15.1).
    fn receipt(&mut self, key: &'t ReceiptKey) -> Result<Option<Receipt>, StoreError>;

    /// Asked when [`receipt`](Self::receipt) found none: which stored row, if any, records
    /// `key`'s Action as applied (`store::integrity`, "Receipts that vanish"), named for the
    /// error (`event g #3`, `aggregate kind id`). A recorded Action without its receipt is a
    /// receipt removed behind the store's back: the commit is refused as corrupt instead of
    /// applying the Command a second time. Default: nothing is recorded (a store whose rows
    /// cannot vanish, the in-memory one).
    fn recorded_action(&mut self, key: &'t ReceiptKey) -> Result<Option<String>, StoreError> {
        let _ = key;
        Ok(None)
    }

    /// The sequence `group`'s next append must carry: 1 for a Group without a log (§15.2).
    fn next_sequence(&mut self, group: &'t str) -> Result<u64, StoreError>;

    /// Whether `group`'s log can be extended at all, asked once per appended Group after every
    /// append's sequence was checked (so a stale sequence is reported as the conflict it is,
    /// not as damage found later). A backend whose log's last row is missing refuses here: an
    /// append would chain onto nothing (`store::integrity`). Default: always.
    fn appendable(&mut self, group: &'t str) -> Result<(), StoreError> {
        let _ = group;
        Ok(())
    }

    /// The current revision of `key`: 0 when absent (§15.3).
    fn revision(&mut self, key: &'t AggregateKey) -> Result<u64, StoreError>;
}

/// Every check of a commit; changes nothing. `Ok` means `tx` may be applied as a whole.
///
/// - A receipt whose key has no stored receipt but whose Action a stored row records is
///   refused as [`StoreError::Corrupt`] (`receipt`, the key): its receipt was removed.
/// - A receipt for a key that has one (committed, or earlier in `tx`) is refused: with the
///   same signing hash as [`StoreError::AlreadyApplied`] carrying the first receipt (a
///   concurrent commit of the same Command won; answer with its result), otherwise as
///   [`StoreError::ActionIdCollision`] (§15.1).
/// - Each append must carry its Group's next sequence, counting the appends before it in `tx`
///   (§15.2: contiguous from 1, no gap, no duplicate), else [`StoreError::SequenceConflict`];
///   then each appended Group must be [`appendable`](CommitView::appendable).
/// - Each aggregate write or check must name the revision current at that point of `tx`, else
///   [`StoreError::RevisionConflict`] (§15.3); a write moves it on by one, a check does not.
pub fn validate<'t, V>(view: &mut V, tx: &'t Transaction) -> Result<(), StoreError>
where
    V: CommitView<'t> + ?Sized,
{
    let mut recorded: HashMap<&ReceiptKey, &Receipt> = HashMap::new();
    for (key, receipt) in tx.receipts() {
        let existing = match view.receipt(key)? {
            Some(existing) => Some(existing),
            None => {
                if let Some(row) = view.recorded_action(key)? {
                    return Err(integrity::missing_receipt(key, &row));
                }
                recorded.get(key).map(|first| (*first).clone())
            }
        };
        if let Some(existing) = existing {
            return Err(receipt_conflict(key, existing, receipt));
        }
        recorded.insert(key, receipt);
    }

    let mut next: HashMap<&str, u64> = HashMap::new();
    for (group, event) in tx.appends() {
        let expected = match next.get_mut(group.as_str()) {
            Some(expected) => expected,
            None => {
                let stored = view.next_sequence(group)?;
                next.entry(group.as_str()).or_insert(stored)
            }
        };
        if event.sequence != *expected {
            return Err(StoreError::SequenceConflict {
                group: group.clone(),
                expected: event.sequence,
                next: *expected,
            });
        }
        *expected += 1;
    }
    // Each appended Group once, in the order of its first append.
    for (group, _) in tx.appends() {
        if next.remove(group.as_str()).is_some() {
            view.appendable(group)?;
        }
    }

    let mut revisions: HashMap<&AggregateKey, u64> = HashMap::new();
    for write in tx.writes() {
        let current = match revisions.get_mut(&write.key) {
            Some(current) => current,
            None => {
                let stored = view.revision(&write.key)?;
                revisions.entry(&write.key).or_insert(stored)
            }
        };
        if write.expected_revision != *current {
            return Err(StoreError::RevisionConflict {
                key: write.key.clone(),
                expected: write.expected_revision,
                current: *current,
            });
        }
        if write.value.is_some() {
            *current += 1;
        }
    }
    Ok(())
}

/// Same signed content → the first application stands; different → collision (§15.1).
fn receipt_conflict(key: &ReceiptKey, existing: Receipt, new: &Receipt) -> StoreError {
    if existing.signing_hash == new.signing_hash {
        StoreError::AlreadyApplied {
            key: key.clone(),
            receipt: Box::new(existing),
        }
    } else {
        StoreError::ActionIdCollision { key: key.clone() }
    }
}

/// The archive fence (§7.4, §16): archiving `group` before `before` must move the archive
/// forward (`before > first_online`) and may not pass the head (`before <= next_sequence`),
/// so sequences are never reused and nothing unwritten is declared archived. A Group without a
/// log has `first_online = next_sequence = 1`, so every boundary is refused.
pub fn check_archive(
    group: &str,
    before: u64,
    first_online: u64,
    next_sequence: u64,
) -> Result<(), StoreError> {
    if before > first_online && before <= next_sequence {
        Ok(())
    } else {
        Err(StoreError::ArchiveOutOfRange {
            group: group.to_owned(),
            before,
            first_online,
            next_sequence,
        })
    }
}

/// Every key some write sets name, each once and sorted: what a backend that loads state in
/// one round trip per table asks for before it answers [`CommitView`] from memory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteSetKeys<'t> {
    /// The receipt keys (§15.1).
    pub receipts: Vec<&'t ReceiptKey>,
    /// The appended Groups (§15.2).
    pub groups: Vec<&'t str>,
    /// The aggregates written or checked (§15.3).
    pub aggregates: Vec<&'t AggregateKey>,
}

impl<'t> WriteSetKeys<'t> {
    /// The keys of `txs`.
    pub fn of(txs: impl IntoIterator<Item = &'t Transaction>) -> Self {
        let mut keys = Self::default();
        for tx in txs {
            keys.receipts
                .extend(tx.receipts().iter().map(|(key, _)| key));
            keys.groups
                .extend(tx.appends().iter().map(|(group, _)| group.as_str()));
            keys.aggregates
                .extend(tx.writes().iter().map(|write| &write.key));
        }
        keys.receipts.sort_unstable();
        keys.receipts.dedup();
        keys.groups.sort_unstable();
        keys.groups.dedup();
        keys.aggregates.sort_unstable();
        keys.aggregates.dedup();
        keys
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    //! The rules against a scripted view: each rule accepts what it must and refuses what it
    //! must, with the error every backend returns, and asks each question once, lazily.

    use super::*;
    use crate::store::{event_log::EventRecord, receipt::EventRef};
    use missionweaveprotocol::{DescribeError, WireCode};

    /// Committed state as a backend would answer it, with a log of the questions asked.
    #[derive(Default)]
    struct Scripted {
        receipts: HashMap<ReceiptKey, Receipt>,
        heads: HashMap<String, u64>,
        revisions: HashMap<AggregateKey, u64>,
        /// Groups whose log cannot be extended.
        broken: Vec<String>,
        /// Actions recorded by a stored row, by Action ID.
        recorded: HashMap<String, String>,
        /// Keys whose answer is a backend failure.
        failing: Vec<String>,
        asked: Vec<String>,
    }

    impl Scripted {
        fn fail(&self, what: &str) -> Result<(), StoreError> {
            if self.failing.iter().any(|f| f == what) {
                return Err(StoreError::Backend {
                    detail: format!("reading {what} failed"),
                });
            }
            Ok(())
        }
    }

    impl<'t> CommitView<'t> for Scripted {
        fn receipt(&mut self, key: &'t ReceiptKey) -> Result<Option<Receipt>, StoreError> {
            self.asked.push(format!("receipt {}", key.action_id));
            self.fail(&key.action_id)?;
            Ok(self.receipts.get(key).cloned())
        }

        fn recorded_action(&mut self, key: &'t ReceiptKey) -> Result<Option<String>, StoreError> {
            self.asked.push(format!("recorded {}", key.action_id));
            Ok(self.recorded.get(&key.action_id).cloned())
        }

        fn next_sequence(&mut self, group: &'t str) -> Result<u64, StoreError> {
            self.asked.push(format!("head {group}"));
            self.fail(group)?;
            Ok(self.heads.get(group).copied().unwrap_or(1))
        }

        fn appendable(&mut self, group: &'t str) -> Result<(), StoreError> {
            self.asked.push(format!("appendable {group}"));
            if self.broken.iter().any(|g| g == group) {
                return Err(StoreError::Corrupt {
                    what: "event",
                    locator: format!("{group} #1"),
                    detail: "sequence 1 is missing".to_owned(),
                });
            }
            Ok(())
        }

        fn revision(&mut self, key: &'t AggregateKey) -> Result<u64, StoreError> {
            self.asked.push(format!("revision {}", key.id));
            self.fail(&key.id)?;
            Ok(self.revisions.get(key).copied().unwrap_or(0))
        }
    }

    fn key(action: &str) -> ReceiptKey {
        ReceiptKey::new("agent", "urn:agent:a", action)
    }

    fn receipt(hash: &str) -> Receipt {
        Receipt {
            signing_hash: hash.to_owned(),
            first_event: EventRef {
                event_id: "e1".into(),
                position: Some(("g".into(), 1)),
            },
        }
    }

    fn event(sequence: u64) -> EventRecord {
        EventRecord::new(sequence, &format!("e{sequence}"), &b"{}"[..])
    }

    fn aggregate(id: &str) -> AggregateKey {
        AggregateKey::new("work_item", id)
    }

    #[test]
    fn a_new_receipt_passes_and_a_known_one_is_refused_by_its_hash() {
        let mut tx = Transaction::new();
        tx.record_receipt(key("1"), receipt("sha256:aa"));
        let mut view = Scripted::default();
        validate(&mut view, &tx).unwrap();

        // Same signed content applied before: the first receipt comes back (§15.1).
        view.receipts.insert(key("1"), receipt("sha256:aa"));
        let e = validate(&mut view, &tx).unwrap_err();
        assert_eq!(
            e,
            StoreError::AlreadyApplied {
                key: key("1"),
                receipt: Box::new(receipt("sha256:aa")),
            }
        );
        assert_eq!(e.wire_code(), WireCode::InternalError);
        assert!(e.is_contention());

        // Other content under the same Action ID: a collision.
        view.receipts.insert(key("1"), receipt("sha256:bb"));
        let e = validate(&mut view, &tx).unwrap_err();
        assert_eq!(e, StoreError::ActionIdCollision { key: key("1") });
        assert_eq!(e.wire_code(), WireCode::ActionIdCollision);
        assert_eq!(StoreError::reason(&e), "action_id_collision");
    }

    #[test]
    fn a_recorded_action_without_its_receipt_is_corrupt_and_applies_nothing() {
        let mut tx = Transaction::new();
        tx.record_receipt(key("1"), receipt("sha256:aa"))
            .append("g", event(2))
            .put(aggregate("w"), 0, b"{}"[..].into());
        let mut view = Scripted::default();
        view.heads.insert("g".into(), 2);
        validate(&mut view, &tx).unwrap();
        assert_eq!(
            view.asked,
            [
                "receipt 1",
                "recorded 1",
                "head g",
                "appendable g",
                "revision w"
            ]
        );
        // The receipt was removed, its Event is still there: refused before anything else.
        view.recorded.insert("1".into(), "event g #1".into());
        view.asked.clear();
        let e = validate(&mut view, &tx).unwrap_err();
        assert_eq!(
            e,
            StoreError::Corrupt {
                what: "receipt",
                locator: "agent urn:agent:a 1".into(),
                detail: "missing, but event g #1 records this Action as applied".into(),
            }
        );
        assert_eq!(e.wire_code(), WireCode::InternalError);
        assert_eq!(StoreError::reason(&e), "store_corrupt");
        assert!(!e.is_contention() && !e.retryable());
        assert_eq!(view.asked, ["receipt 1", "recorded 1"]);
        // A present receipt is answered from itself: the record is not asked for.
        view.receipts.insert(key("1"), receipt("sha256:aa"));
        view.asked.clear();
        assert!(matches!(
            validate(&mut view, &tx),
            Err(StoreError::AlreadyApplied { .. })
        ));
        assert_eq!(view.asked, ["receipt 1"]);
    }

    #[test]
    fn a_receipt_repeated_inside_one_transaction_is_refused() {
        let mut same = Transaction::new();
        same.record_receipt(key("1"), receipt("sha256:aa"))
            .record_receipt(key("1"), receipt("sha256:aa"));
        let e = validate(&mut Scripted::default(), &same).unwrap_err();
        assert!(
            matches!(&e, StoreError::AlreadyApplied { receipt, .. } if receipt.signing_hash == "sha256:aa"),
            "{e:?}"
        );
        let mut other = Transaction::new();
        other
            .record_receipt(key("1"), receipt("sha256:aa"))
            .record_receipt(key("1"), receipt("sha256:bb"));
        assert_eq!(
            validate(&mut Scripted::default(), &other).unwrap_err(),
            StoreError::ActionIdCollision { key: key("1") }
        );
        // Two different Action IDs in one transaction are fine.
        let mut two = Transaction::new();
        two.record_receipt(key("1"), receipt("sha256:aa"))
            .record_receipt(key("2"), receipt("sha256:aa"));
        validate(&mut Scripted::default(), &two).unwrap();
    }

    #[test]
    fn receipts_are_checked_before_appends_and_writes() {
        let mut tx = Transaction::new();
        tx.append("g", event(5))
            .put(aggregate("w"), 3, b"{}"[..].into())
            .record_receipt(key("1"), receipt("sha256:aa"));
        let mut view = Scripted::default();
        view.receipts.insert(key("1"), receipt("sha256:bb"));
        // The stale sequence and revision are not what is reported: the Action is.
        assert_eq!(
            validate(&mut view, &tx).unwrap_err(),
            StoreError::ActionIdCollision { key: key("1") }
        );
        assert_eq!(view.asked, ["receipt 1"]);
    }

    #[test]
    fn appends_must_carry_the_next_sequences_in_order() {
        let mut view = Scripted::default();
        view.heads.insert("g".into(), 4);
        let mut tx = Transaction::new();
        tx.append("g", event(4))
            .append("h", event(1))
            .append("g", event(5))
            .append("g", event(6));
        validate(&mut view, &tx).unwrap();
        // Each Group's head asked once, then each Group's log once, in first-append order.
        assert_eq!(
            view.asked,
            ["head g", "head h", "appendable g", "appendable h"]
        );

        for (sequences, carried, next) in [(&[3][..], 3, 4), (&[5], 5, 4), (&[4, 6], 6, 5)] {
            let mut tx = Transaction::new();
            for &s in sequences {
                tx.append("g", event(s));
            }
            let e = validate(&mut view, &tx).unwrap_err();
            assert_eq!(
                e,
                StoreError::SequenceConflict {
                    group: "g".into(),
                    expected: carried,
                    next,
                }
            );
            assert_eq!(e.wire_code(), WireCode::RevisionConflict);
            assert_eq!(StoreError::reason(&e), "sequence_conflict");
        }
        // A Group without a log starts at 1: 0 is refused.
        let mut tx = Transaction::new();
        tx.append("new", event(0));
        assert!(matches!(
            validate(&mut view, &tx),
            Err(StoreError::SequenceConflict { next: 1, .. })
        ));
    }

    #[test]
    fn an_unappendable_log_is_refused_after_every_sequence_check() {
        let mut view = Scripted {
            broken: vec!["g".into()],
            ..Scripted::default()
        };
        let mut tx = Transaction::new();
        tx.append("g", event(1)).append("h", event(1));
        let e = validate(&mut view, &tx).unwrap_err();
        assert!(
            matches!(e, StoreError::Corrupt { what: "event", .. }),
            "{e:?}"
        );
        assert_eq!(view.asked, ["head g", "head h", "appendable g"]);
        // A stale sequence in the same write set is the conflict reported, not the damage.
        let mut stale = Transaction::new();
        stale.append("g", event(1)).append("h", event(2));
        assert!(matches!(
            validate(&mut view, &stale),
            Err(StoreError::SequenceConflict { .. })
        ));
        // A healthy log takes the same append.
        view.broken.clear();
        validate(&mut view, &tx).unwrap();
    }

    #[test]
    fn writes_must_name_the_current_revision_and_a_put_moves_it_on() {
        let mut view = Scripted::default();
        view.revisions.insert(aggregate("w"), 2);
        let mut tx = Transaction::new();
        tx.check(aggregate("w"), 2)
            .put(aggregate("w"), 2, b"{}"[..].into())
            .check(aggregate("w"), 3)
            .put(aggregate("new"), 0, b"{}"[..].into())
            .put(aggregate("new"), 1, b"{}"[..].into());
        validate(&mut view, &tx).unwrap();
        assert_eq!(view.asked, ["revision w", "revision new"]);

        for (expected, current, tx) in [
            // A stale read.
            (1, 2, {
                let mut tx = Transaction::new();
                tx.put(aggregate("w"), 1, b"{}"[..].into());
                tx
            }),
            // A check does not move the revision on.
            (3, 2, {
                let mut tx = Transaction::new();
                tx.check(aggregate("w"), 2).check(aggregate("w"), 3);
                tx
            }),
            // A second put must expect the first one's revision.
            (2, 3, {
                let mut tx = Transaction::new();
                tx.put(aggregate("w"), 2, b"{}"[..].into()).put(
                    aggregate("w"),
                    2,
                    b"{}"[..].into(),
                );
                tx
            }),
        ] {
            let e = validate(&mut view, &tx).unwrap_err();
            assert_eq!(
                e,
                StoreError::RevisionConflict {
                    key: aggregate("w"),
                    expected,
                    current,
                }
            );
            assert_eq!(e.wire_code(), WireCode::RevisionConflict);
        }
    }

    #[test]
    fn appends_are_checked_before_writes_and_a_failing_answer_stops_validation() {
        let mut tx = Transaction::new();
        tx.put(aggregate("w"), 7, b"{}"[..].into())
            .append("g", event(9));
        let mut view = Scripted::default();
        assert!(matches!(
            validate(&mut view, &tx),
            Err(StoreError::SequenceConflict { .. })
        ));
        assert_eq!(view.asked, ["head g"]);

        let mut view = Scripted {
            failing: vec!["w".into()],
            ..Scripted::default()
        };
        let mut tx = Transaction::new();
        tx.put(aggregate("v"), 0, b"{}"[..].into())
            .put(aggregate("w"), 0, b"{}"[..].into())
            .put(aggregate("x"), 5, b"{}"[..].into());
        assert!(matches!(
            validate(&mut view, &tx),
            Err(StoreError::Backend { .. })
        ));
        assert_eq!(view.asked, ["revision v", "revision w"]);
        view.failing.clear();
        assert!(matches!(
            validate(&mut view, &tx),
            Err(StoreError::RevisionConflict { .. })
        ));
    }

    #[test]
    fn an_empty_transaction_asks_nothing() {
        let mut view = Scripted::default();
        validate(&mut view, &Transaction::new()).unwrap();
        assert!(view.asked.is_empty());
    }

    #[test]
    fn the_archive_fence_moves_forward_and_never_past_the_head() {
        check_archive("g", 2, 1, 5).unwrap();
        check_archive("g", 5, 4, 5).unwrap();
        for (before, first_online, next_sequence) in [
            (1, 1, 5), // does not advance
            (3, 3, 5), // already archived there
            (2, 3, 5), // moves back
            (6, 1, 5), // past the head
            (2, 1, 1), // a Group without a log
            (0, 1, 1), // nothing to archive before 0
        ] {
            let e = check_archive("g", before, first_online, next_sequence).unwrap_err();
            assert_eq!(
                e,
                StoreError::ArchiveOutOfRange {
                    group: "g".into(),
                    before,
                    first_online,
                    next_sequence,
                }
            );
            assert_eq!(e.wire_code(), WireCode::ProtocolViolation);
        }
    }

    #[test]
    fn write_set_keys_name_each_key_once_in_order() {
        let mut a = Transaction::new();
        a.record_receipt(key("2"), receipt("sha256:aa"))
            .append("h", event(1))
            .append("g", event(1))
            .put(aggregate("w"), 0, b"{}"[..].into());
        let mut b = Transaction::new();
        b.record_receipt(key("1"), receipt("sha256:aa"))
            .record_receipt(key("2"), receipt("sha256:aa"))
            .append("g", event(2))
            .check(aggregate("v"), 0)
            .check(aggregate("w"), 1);
        let keys = WriteSetKeys::of([&a, &b]);
        assert_eq!(keys.receipts, [&key("1"), &key("2")]);
        assert_eq!(keys.groups, ["g", "h"]);
        assert_eq!(keys.aggregates, [&aggregate("v"), &aggregate("w")]);
        assert_eq!(
            WriteSetKeys::of([&Transaction::new()]),
            WriteSetKeys::default()
        );
    }
}
