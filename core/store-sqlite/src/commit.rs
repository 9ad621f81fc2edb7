//! Commits: one `BEGIN IMMEDIATE` transaction per call that validates the whole write set
//! against committed state plus the write set's own earlier writes (the in-memory store's
//! rules and order: receipts, appends, aggregate writes; `docs/store.md`, "Commit
//! semantics"), then applies it. A refusal or a failure rolls everything back.

use std::collections::HashMap;

use missionweaveprotocol_authority::store::{
    AggregateKey, Receipt, ReceiptKey, SnapshotPointer, StoreError, Transaction,
};
use rusqlite::{Connection, TransactionBehavior, params};

use crate::convert::{backend, to_sql};
use crate::read;

/// Commits `tx` in its own durable transaction.
pub(crate) fn commit(conn: &mut Connection, tx: &Transaction) -> Result<(), StoreError> {
    if tx.is_empty() {
        // Nothing to check or write: no write lock, no fsync.
        return Ok(());
    }
    let db = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    validate(&db, tx)?;
    apply(&db, tx)?;
    db.commit().map_err(backend)
}

/// Group commit: every write set in one durable transaction (one fsync), each in its own
/// savepoint so each stays atomic and a later one sees the earlier ones. If the final commit
/// fails, none is durable and every result is that failure.
pub(crate) fn commit_many(
    conn: &mut Connection,
    txs: &[Transaction],
) -> Vec<Result<(), StoreError>> {
    let mut db = match conn.transaction_with_behavior(TransactionBehavior::Immediate) {
        Ok(db) => db,
        Err(e) => {
            let failure = backend(e);
            return txs.iter().map(|_| Err(failure.clone())).collect();
        }
    };
    let mut results = Vec::with_capacity(txs.len());
    for tx in txs {
        results.push(commit_savepoint(&mut db, tx));
    }
    match db.commit() {
        Ok(()) => results,
        Err(e) => {
            let failure = backend(e);
            txs.iter().map(|_| Err(failure.clone())).collect()
        }
    }
}

fn commit_savepoint(
    db: &mut rusqlite::Transaction<'_>,
    tx: &Transaction,
) -> Result<(), StoreError> {
    // Dropped without `commit` (on any error), the savepoint rolls back.
    let savepoint = db.savepoint().map_err(backend)?;
    validate(&savepoint, tx)?;
    apply(&savepoint, tx)?;
    savepoint.commit().map_err(backend)
}

/// Every check of the commit; changes nothing.
fn validate(conn: &Connection, tx: &Transaction) -> Result<(), StoreError> {
    let mut recorded: HashMap<&ReceiptKey, &Receipt> = HashMap::new();
    for (key, receipt) in tx.receipts() {
        let existing = match read::receipt(conn, key)? {
            Some(existing) => Some(existing),
            None => recorded.get(key).map(|r| (*r).clone()),
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
                let head = read::head(conn, group)?.map_or(1, |h| h.next_sequence);
                next.entry(group.as_str()).or_insert(head)
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
    let mut revisions: HashMap<&AggregateKey, u64> = HashMap::new();
    for write in tx.writes() {
        let current = match revisions.get_mut(&write.key) {
            Some(current) => current,
            None => {
                let stored = read::revision(conn, &write.key)?;
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

/// Writes a validated transaction.
fn apply(conn: &Connection, tx: &Transaction) -> Result<(), StoreError> {
    for (key, receipt) in tx.receipts() {
        let (group, sequence) = match &receipt.first_event.position {
            Some((group, sequence)) => (Some(group.as_str()), Some(to_sql("sequence", *sequence)?)),
            None => (None, None),
        };
        conn.prepare_cached(
            "INSERT INTO receipts (actor_type, actor_id, action_id, signing_hash, event_id, \
             group_id, sequence) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )
        .map_err(backend)?
        .execute(params![
            key.actor_type,
            key.actor_id,
            key.action_id,
            receipt.signing_hash,
            receipt.first_event.event_id,
            group,
            sequence
        ])
        .map_err(backend)?;
    }
    for (group, event) in tx.appends() {
        let sequence = to_sql("sequence", event.sequence)?;
        conn.prepare_cached(
            "INSERT INTO events (group_id, sequence, event_id, body) VALUES (?1, ?2, ?3, ?4)",
        )
        .map_err(backend)?
        .execute(params![group, sequence, &*event.event_id, &*event.body])
        .map_err(backend)?;
        // The head follows the append (validated contiguous, so `sequence + 1` is the next).
        conn.prepare_cached(
            "INSERT INTO groups (group_id, next_sequence, first_online) VALUES (?1, ?2, 1) \
             ON CONFLICT (group_id) DO UPDATE SET next_sequence = excluded.next_sequence",
        )
        .map_err(backend)?
        .execute(params![group, to_sql("sequence", event.sequence + 1)?])
        .map_err(backend)?;
    }
    for write in tx.writes() {
        let Some(value) = &write.value else {
            continue;
        };
        let revision = to_sql("revision", write.expected_revision + 1)?;
        conn.prepare_cached(
            "INSERT INTO aggregates (kind, id, revision, value) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT (kind, id) DO UPDATE SET revision = excluded.revision, \
             value = excluded.value",
        )
        .map_err(backend)?
        .execute(params![write.key.kind, write.key.id, revision, &**value])
        .map_err(backend)?;
    }
    Ok(())
}

/// Archival (§7.4, §16): the boundary must advance the archive and not pass the head; Events
/// before it are deleted and the snapshot pointer recorded, in one transaction.
pub(crate) fn archive_before(
    conn: &mut Connection,
    group: &str,
    before: u64,
    snapshot: &SnapshotPointer,
) -> Result<(), StoreError> {
    let db = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let head = read::head(&db, group)?;
    let (first_online, next_sequence) = head
        .as_ref()
        .map_or((1, 1), |h| (h.first_online, h.next_sequence));
    if head.is_none() || before <= first_online || before > next_sequence {
        return Err(StoreError::ArchiveOutOfRange {
            group: group.to_owned(),
            before,
            first_online,
            next_sequence,
        });
    }
    let boundary = to_sql("before", before)?;
    db.execute(
        "DELETE FROM events WHERE group_id = ?1 AND sequence < ?2",
        params![group, boundary],
    )
    .map_err(backend)?;
    db.execute(
        "UPDATE groups SET first_online = ?2, snapshot_hash = ?3 WHERE group_id = ?1",
        params![group, boundary, snapshot.artifact_hash],
    )
    .map_err(backend)?;
    db.commit().map_err(backend)
}
