//! Data at rest changed behind a durable store's back, by someone with write access to the
//! database but not the integrity key (`store::integrity`, `docs/store.md` "Data at rest").
//! Each durable backend implements [`Tamper`] with raw SQL on its own tables and runs these
//! cases with [`store_tamper_suite!`](crate::store_tamper_suite), keyed and unkeyed: the
//! in-memory store has nothing at rest to tamper with.
//!
//! - A removed receipt is reported as `store_corrupt` naming the receipt — at the dedup read,
//!   at commit, and through the engine when the signed Command is sent again — never taken for
//!   a new Command (a second Event for the same Action).
//! - An altered signing hash is corrupt, not `ACTION_ID_COLLISION` (nor `AlreadyApplied`).
//! - A changed Event body is refused by `Core::replay` as `store_corrupt` at that row, and
//!   the refusal comes from the store's chain check: the Core runs no signature check for it
//!   (issue 27 item 3; `service/verified_events.rs`), and none at all on a store keyed since
//!   its Events were written (`service/served_events.rs`).
//! - With a key, an aggregate whose value was edited and whose unkeyed checksum was recomputed
//!   is corrupt, and so is a log cut short whose head was moved back (the next append would
//!   reuse sequence numbers). Without a key both are served: anyone can recompute SHA-256,
//!   and the cases pin that limit too.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::engine::{GROUP, MISSION, NOW, create, engine, keys};
use super::*;
use crate::store::integrity::{GENESIS, Integrity, receipt_locator};
use crate::store::{GroupHead, Read, ReadValue};

/// What a tamperer does to a backend's rows (raw SQL in each backend's tests). Checksums are
/// recomputed the way anyone can: unkeyed, with [`Integrity::unkeyed`].
pub trait Tamper {
    /// Deletes the receipt of `key`.
    fn delete_receipt(&self, key: &ReceiptKey);
    /// Sets the stored signing hash of `key`'s receipt to `hash`, leaving its checksum.
    fn set_signing_hash(&self, key: &ReceiptKey, hash: &str);
    /// Sets `key`'s stored value to `value` and its checksum to the unkeyed checksum of the
    /// row (same revision, no recorded Action).
    fn forge_aggregate(&self, key: &AggregateKey, value: &[u8]);
    /// Deletes `group`'s Events from `from` on and moves its head back to `from`, with the
    /// head's unkeyed checksum recomputed (nothing archived: first online 1, `GENESIS`).
    fn truncate_log(&self, group: &str, from: u64);
    /// Sets the stored body of `group`'s Event at `sequence` to `body`, leaving its chain hash.
    fn set_event_body(&self, group: &str, sequence: u64, body: &[u8]);
}

/// The unkeyed checksum of an aggregate row, as a tamperer recomputes it.
pub fn unkeyed_aggregate_checksum(key: &AggregateKey, revision: u64, value: &[u8]) -> [u8; 32] {
    Integrity::unkeyed().aggregate_checksum(&key.kind, &key.id, revision, value, None)
}

/// The unkeyed checksum of a head at `next_sequence` that archived nothing.
pub fn unkeyed_head_checksum(group: &str, next_sequence: u64) -> [u8; 32] {
    let head = GroupHead {
        next_sequence,
        first_online: 1,
        snapshot: None,
    };
    Integrity::unkeyed().head_checksum(group, &head, &GENESIS)
}

/// `result` is `store_corrupt` about `what` at `locator`; answers its message.
pub fn assert_corrupt<T: std::fmt::Debug>(
    result: Result<T, StoreError>,
    what: &str,
    locator: &str,
) -> String {
    let e = result.unwrap_err();
    assert_describes(&e, WireCode::InternalError, "store_corrupt");
    assert!(!e.retryable() && !e.is_contention(), "{e}");
    assert_eq!(field(&e, "stored"), FieldValue::Text(what.into()), "{e}");
    assert_eq!(
        field(&e, "locator"),
        FieldValue::Text(locator.into()),
        "{e}"
    );
    e.to_string()
}

const HASH: &str = "sha256:first";

fn agent_receipt(group: &str, sequence: u64) -> Receipt {
    receipt(HASH, group, sequence)
}

/// A receipt for Action `act-1` of agent `a`, its Event at `g` #1, a WorkItem; and an
/// Organization-scoped receipt whose Event is stored as an aggregate.
fn applied<S: Store>(store: &S) -> (ReceiptKey, ReceiptKey) {
    let key = ReceiptKey::new("agent", "a", "act-1");
    let mut tx = appends("g", 1, 1);
    tx.record_receipt(key.clone(), agent_receipt("g", 1)).put(
        AggregateKey::new("work_item", "w"),
        0,
        blob(r#"{"owner":"a"}"#),
    );
    store.commit(tx).unwrap();
    let org = ReceiptKey::new("service", "s", "open-1");
    let mut tx = Transaction::new();
    tx.record_receipt(
        org.clone(),
        Receipt {
            signing_hash: HASH.into(),
            first_event: EventRef {
                event_id: "org-e1".into(),
                position: None,
            },
        },
    )
    .put(
        AggregateKey::new("organization_event", "org-e1"),
        0,
        blob(r#"{"eventId":"org-e1"}"#),
    );
    store.commit(tx).unwrap();
    (key, org)
}

/// The same signed Command sent again after its first application: its receipt and the next
/// append of its Group.
fn resend(key: &ReceiptKey, next: u64) -> Transaction {
    let mut tx = appends("g", next, 1);
    tx.record_receipt(key.clone(), agent_receipt("g", next));
    tx
}

/// §15.1 at most once: the receipt of an applied Command is removed; its Event still records
/// the Action, so the dedup read, the commit of a re-send, and a batched read all report the
/// receipt as corrupt, and nothing is appended. Keyed or not (the record is chained with the
/// Event; removing it too means changing a chained row).
pub fn a_removed_receipt_is_detected_not_applied_again<S: Store, T: Tamper>(store: &S, tamper: &T) {
    let (key, org) = applied(store);
    tamper.delete_receipt(&key);
    let locator = "agent a act-1";
    let message = assert_corrupt(store.dedup(&key, HASH), "receipt", locator);
    assert!(message.contains("event g #1"), "{message}");
    assert_corrupt(store.receipt(&key), "receipt", locator);
    assert_corrupt(store.commit(resend(&key, 2)), "receipt", locator);
    assert_corrupt(
        store.commit_many(vec![resend(&key, 2)]).pop().unwrap(),
        "receipt",
        locator,
    );
    assert_corrupt(
        store.read_many(&[Read::Receipt(key.clone())]),
        "receipt",
        locator,
    );
    assert_eq!(online_sequences(store, "g"), [1]);
    // The Organization-scoped Event records its Action in its aggregate.
    tamper.delete_receipt(&org);
    let message = assert_corrupt(store.dedup(&org, HASH), "receipt", "service s open-1");
    assert!(
        message.contains("aggregate organization_event org-e1"),
        "{message}"
    );
    // Other Actions are untouched: new ones apply, applied ones answer their receipt.
    let other = ReceiptKey::new("agent", "a", "act-2");
    assert_eq!(store.dedup(&other, HASH).unwrap(), None);
    let mut tx = appends("g", 2, 1);
    tx.record_receipt(other.clone(), agent_receipt("g", 2));
    store.commit(tx).unwrap();
    assert_eq!(
        store.dedup(&other, HASH).unwrap(),
        Some(agent_receipt("g", 2))
    );
    assert_eq!(
        store.read_many(&[Read::Receipt(other)]).unwrap(),
        [ReadValue::Receipt(Some(agent_receipt("g", 2)))]
    );
}

/// A receipt whose signing hash was changed is corrupt: a legitimate retry is not turned into
/// `ACTION_ID_COLLISION`, and a forged hash is not answered as the original.
pub fn an_altered_signing_hash_is_corrupt_not_a_collision<S: Store, T: Tamper>(
    store: &S,
    tamper: &T,
) {
    let (key, _) = applied(store);
    tamper.set_signing_hash(&key, "sha256:forged");
    for hash in [HASH, "sha256:forged", "sha256:other"] {
        assert_corrupt(store.dedup(&key, hash), "receipt", "agent a act-1");
    }
    assert_corrupt(store.commit(resend(&key, 2)), "receipt", "agent a act-1");
    assert_eq!(online_sequences(store, "g"), [1]);
}

/// With a key, an aggregate edited with its unkeyed checksum recomputed is corrupt wherever it
/// is read (a changed WorkItem owner is not served as true); without one it is served.
pub fn a_forged_aggregate_is_refused_under_a_key<S: Store, T: Tamper>(
    store: &S,
    tamper: &T,
    keyed: bool,
) {
    applied(store);
    let key = AggregateKey::new("work_item", "w");
    tamper.forge_aggregate(&key, br#"{"owner":"mallory"}"#);
    if keyed {
        assert_corrupt(store.aggregate(&key), "aggregate", "work_item w");
        assert_corrupt(store.list("work_item", ""), "aggregate", "work_item w");
        assert_corrupt(
            store.read_many(&[Read::Aggregate(key.clone())]),
            "aggregate",
            "work_item w",
        );
    } else {
        let served = store.aggregate(&key).unwrap().unwrap();
        assert_eq!(&*served.value, br#"{"owner":"mallory"}"#);
    }
}

/// With a key, a log cut short with its head moved back (and the head's unkeyed checksum
/// recomputed) is corrupt: no append reuses the removed sequences. Without one the shorter
/// log is consistent and takes the append; only an anchor outside the store (the last Event a
/// client saw, `docs/store.md`) shows it.
pub fn a_truncated_log_is_refused_under_a_key<S: Store, T: Tamper>(
    store: &S,
    tamper: &T,
    keyed: bool,
) {
    store.commit(appends("g", 1, 5)).unwrap();
    tamper.truncate_log("g", 4);
    let mut tx = Transaction::new();
    tx.append("g", EventRecord::new(4, "reused-4", &b"{}"[..]));
    if keyed {
        assert_corrupt(store.head("g"), "group", "g");
        assert_corrupt(store.replay("g", 0, 10), "group", "g");
        assert_corrupt(store.read_many(&[Read::Head("g".into())]), "group", "g");
        assert_corrupt(store.commit(tx), "group", "g");
    } else {
        assert_eq!(store.head("g").unwrap().next_sequence, 4);
        store.commit(tx).unwrap();
        assert_eq!(online_sequences(store, "g"), [1, 2, 3, 4]);
    }
    // Other Groups are untouched.
    store.commit(appends("h", 1, 2)).unwrap();
    assert_eq!(online_sequences(store, "h"), [1, 2]);
}

/// Through the engine: a signed `mission.create` applied, its receipt removed, and the same
/// signed bytes sent again: refused as `INTERNAL_ERROR` / `store_corrupt` naming the receipt,
/// with one Event in the Group and the Mission as the first application left it.
pub fn a_resent_command_whose_receipt_was_removed_is_refused<S: Store, T: Tamper>(
    store: &S,
    tamper: &T,
) {
    let keys = keys();
    let engine = engine(&keys, store, "urn:uuid:event-");
    let command = create(&keys);
    let first = engine.perform(&command, NOW).unwrap();
    assert!(!first.duplicate);
    // Sent again while the receipt is there: the original Event (§15.1).
    let again = engine.perform(&command, NOW).unwrap();
    assert!(again.duplicate);
    assert_eq!(again.events, first.events);
    let key = command.receipt_key();
    tamper.delete_receipt(&key);
    let e = engine.perform(&command, NOW).unwrap_err();
    assert_eq!(e.wire_code(), WireCode::InternalError, "{e}");
    assert_eq!(DescribeError::reason(&e), "store_corrupt");
    assert!(!e.retryable(), "{e}");
    assert_eq!(
        e.fields().get("stored").cloned(),
        Some(FieldValue::Text("receipt".into()))
    );
    assert_eq!(
        e.fields().get("locator").cloned(),
        Some(FieldValue::Text(receipt_locator(&key)))
    );
    assert_eq!(online_sequences(store, GROUP), [1]);
    assert!(engine.mission(MISSION).unwrap().is_some());
}

/// A Core over `store` whose Group Authority is the suite's ([`keys`]), with the suite's
/// Registry.
pub fn authority_core<S: Store>(store: S) -> crate::service::Core<S> {
    use std::sync::Arc;

    use crate::events::{EventIssuer, SequentialEventIds};
    use crate::service::{Core, default_authorizer};
    use missionweaveprotocol::{Principal, PrincipalType};

    let keys = keys();
    Core::new(
        store,
        Arc::clone(&keys.registry),
        EventIssuer::new(
            Principal::new(PrincipalType::Service, super::engine::AUTHORITY),
            keys.authority.clone(),
        ),
        default_authorizer(Vec::new(), Vec::new()),
        Box::new(SequentialEventIds::new("urn:uuid:event-")),
    )
}

/// Through the Core: a log is served (each Event checked in full, signature included, unless
/// the store authenticates its Events under a key since they were written: then none is,
/// `Store::authenticates_events`) and served again without a signature check; after one
/// Event's body is changed at rest, every page holding it is refused as `store_corrupt` at
/// that row by the store's chain check, and still without a signature check
/// (`Core::served_events_checked` does not move); the pages before it still serve.
pub fn a_tampered_event_body_is_refused_on_replay_without_signature_checks<S: Store, T: Tamper>(
    store: &S,
    tamper: &T,
) {
    let keys = keys();
    let core = authority_core(store);
    core.perform_verified(&create(&keys), NOW).unwrap();
    let genuine = core.replay(GROUP, 0, 100).unwrap().events;
    assert!(!genuine.is_empty());
    let checked = core.served_events_checked();
    let expected = if store.authenticates_events() {
        0
    } else {
        genuine.len() as u64
    };
    assert_eq!(checked, expected, "signature checks of the first serve");
    assert_eq!(core.replay(GROUP, 0, 100).unwrap().events, genuine);
    assert_eq!(
        core.served_events_checked(),
        checked,
        "served again: no signature check"
    );

    let target = genuine.last().unwrap();
    let mut body = target.body.to_vec();
    let at = body.len() / 2;
    body[at] ^= 0x01;
    tamper.set_event_body(GROUP, target.sequence, &body);
    for (after, limit) in [(0, 100), (target.sequence as i64 - 1, 1)] {
        let e = core.replay(GROUP, after, limit).unwrap_err();
        assert_eq!(e.wire_code(), WireCode::InternalError, "{e}");
        assert_eq!(DescribeError::reason(&e), "store_corrupt");
        assert!(!e.retryable(), "{e}");
        assert_eq!(
            e.fields().get("stored").cloned(),
            Some(FieldValue::Text("event".into()))
        );
        assert_eq!(
            e.fields().get("locator").cloned(),
            Some(FieldValue::Text(format!("{GROUP} #{}", target.sequence)))
        );
    }
    assert_eq!(
        core.served_events_checked(),
        checked,
        "refused without a signature check"
    );
    if target.sequence > 1 {
        let before = core.replay(GROUP, 0, (target.sequence - 1) as i64).unwrap();
        assert_eq!(before.events[..], genuine[..before.events.len()]);
    }
}

/// Defines the tamper cases for a durable backend: `$keyed` and `$unkeyed` each build a fresh
/// store (keyed under some key, unkeyed) and its [`Tamper`], as `(store, tamper)`. Exported
/// only with the `testing` feature.
#[cfg(feature = "testing")]
#[macro_export]
macro_rules! store_tamper_suite {
    ($keyed:expr, $unkeyed:expr) => {
        mod tamper_keyed {
            #[allow(unused_imports)]
            use super::*;
            $crate::store_tamper_suite!(@cases $keyed, true;
                a_removed_receipt_is_detected_not_applied_again,
                an_altered_signing_hash_is_corrupt_not_a_collision,
                a_resent_command_whose_receipt_was_removed_is_refused,
                a_tampered_event_body_is_refused_on_replay_without_signature_checks,
            );
            $crate::store_tamper_suite!(@keyed $keyed, true;
                a_forged_aggregate_is_refused_under_a_key,
                a_truncated_log_is_refused_under_a_key,
            );
        }
        mod tamper_unkeyed {
            #[allow(unused_imports)]
            use super::*;
            $crate::store_tamper_suite!(@cases $unkeyed, false;
                a_removed_receipt_is_detected_not_applied_again,
                an_altered_signing_hash_is_corrupt_not_a_collision,
                a_resent_command_whose_receipt_was_removed_is_refused,
                a_tampered_event_body_is_refused_on_replay_without_signature_checks,
            );
            $crate::store_tamper_suite!(@keyed $unkeyed, false;
                a_forged_aggregate_is_refused_under_a_key,
                a_truncated_log_is_refused_under_a_key,
            );
        }
    };
    (@cases $make:expr, $keyed:expr; $($case:ident),* $(,)?) => {
        $(
            #[test]
            fn $case() {
                let (store, tamper) = ($make)();
                $crate::store::suite::tampering::$case(&store, &tamper);
            }
        )*
    };
    (@keyed $make:expr, $keyed:expr; $($case:ident),* $(,)?) => {
        $(
            #[test]
            fn $case() {
                let (store, tamper) = ($make)();
                $crate::store::suite::tampering::$case(&store, &tamper, $keyed);
            }
        )*
    };
}
