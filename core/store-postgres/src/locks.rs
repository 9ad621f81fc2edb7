//! Transaction-scoped advisory locks: how commits from several processes on one database stay
//! serializable per key (`docs/store.md`, "PostgreSQL backend", "Why advisory locks").
//!
//! A commit locks every key its write set names (each receipt key, each Group, each aggregate,
//! written or only checked, present or absent) before it reads anything, in ascending lock-ID
//! order, with `pg_advisory_xact_lock`; the locks are released by `COMMIT` or `ROLLBACK`. Two
//! commits that share a key are therefore ordered, and a commit's validation reads committed
//! state that cannot change before its own `COMMIT`; commits sharing no key run in parallel.
//! One sorted order for every transaction (a group commit locks the union of its write sets'
//! keys up front) means no lock cycle, hence no deadlock.
//!
//! A lock ID is the first 8 bytes of a SHA-256 over the store's namespace (its schema) and the
//! key, so every process computes the same ID whatever built it; two keys sharing an ID only
//! wait for each other, never break a rule.

use missionweaveprotocol_engine::store::{AggregateKey, ReceiptKey, Transaction};
use sha2::{Digest, Sha256};

const DOMAIN: &[u8] = b"missionweaveprotocol/store-postgres/lock/v1\0";

fn lock_id(namespace: &str, tag: u8, parts: &[&str]) -> i64 {
    let mut hasher = Sha256::new();
    hasher.update(DOMAIN);
    hasher.update((namespace.len() as u64).to_be_bytes());
    hasher.update(namespace.as_bytes());
    hasher.update([tag]);
    for part in parts {
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part.as_bytes());
    }
    let digest = hasher.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    i64::from_be_bytes(first)
}

/// The lock of a Group's log (appends, archival).
pub(crate) fn group(namespace: &str, group: &str) -> i64 {
    lock_id(namespace, b'g', &[group])
}

/// The lock of an aggregate.
pub(crate) fn aggregate(namespace: &str, key: &AggregateKey) -> i64 {
    lock_id(namespace, b'a', &[&key.kind, &key.id])
}

/// The lock of a receipt key.
pub(crate) fn receipt(namespace: &str, key: &ReceiptKey) -> i64 {
    lock_id(
        namespace,
        b'r',
        &[&key.actor_type, &key.actor_id, &key.action_id],
    )
}

/// The lock serializing schema creation and migration.
pub(crate) fn migration(namespace: &str) -> i64 {
    lock_id(namespace, b'm', &[])
}

/// Every lock the write sets need, sorted and without duplicates: the order every commit
/// takes them in.
pub(crate) fn for_transactions<'t>(
    namespace: &str,
    txs: impl IntoIterator<Item = &'t Transaction>,
) -> Vec<i64> {
    let mut ids = Vec::new();
    for tx in txs {
        ids.extend(tx.receipts().iter().map(|(k, _)| receipt(namespace, k)));
        ids.extend(tx.appends().iter().map(|(g, _)| group(namespace, g)));
        ids.extend(tx.writes().iter().map(|w| aggregate(namespace, &w.key)));
    }
    ids.sort_unstable();
    ids.dedup();
    ids
}

#[cfg(test)]
mod tests {
    use super::*;
    use missionweaveprotocol_engine::store::EventRecord;

    #[test]
    fn lock_ids_are_stable_distinct_and_sorted() {
        // Fixed across builds and processes: the ID is part of the cross-process protocol.
        assert_eq!(group("public", "g"), group("public", "g"));
        assert_ne!(group("public", "g"), group("other", "g"));
        assert_ne!(
            group("public", "g"),
            aggregate("public", &AggregateKey::new("g", ""))
        );
        assert_ne!(
            aggregate("public", &AggregateKey::new("ab", "c")),
            aggregate("public", &AggregateKey::new("a", "bc"))
        );
        let mut tx = Transaction::new();
        tx.append("g", EventRecord::new(1, "e", &b"{}"[..]))
            .append("g", EventRecord::new(2, "f", &b"{}"[..]))
            .check(AggregateKey::new("m", "x"), 0)
            .record_receipt(
                ReceiptKey::new("agent", "a", "1"),
                missionweaveprotocol_engine::store::Receipt {
                    signing_hash: "sha256:00".into(),
                    first_event: missionweaveprotocol_engine::store::EventRef {
                        event_id: "e".into(),
                        position: None,
                    },
                },
            );
        let ids = for_transactions("public", [&tx, &tx]);
        assert_eq!(ids.len(), 3);
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
    }
}
