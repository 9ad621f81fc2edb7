//! Commits: one `BEGIN IMMEDIATE` transaction per call that validates the whole write set
//! against committed state plus the write set's own earlier writes (the rules every backend
//! shares, `store::commit_rules`, answered by point reads: [`View`]; `docs/store.md`, "Commit
//! semantics"), then applies it. A refusal or a failure rolls everything back.
//!
//! Appends extend each Group's hash chain and aggregate writes store their checksum
//! (`store::integrity`). The chain hash to extend is read once per Group per write set, with
//! the head (`read::group_state`, which also checks the head against the last row, so nothing
//! is appended to a damaged log); inside a group commit it is carried in memory from one write
//! set to the next ([`Tips`]).

use std::collections::HashMap;

use missionweaveprotocol_engine::store::integrity::{Hash32, aggregate_checksum, event_chain};
use missionweaveprotocol_engine::store::{
    AggregateKey, CommitView, Receipt, ReceiptKey, SnapshotPointer, StoreError, Transaction,
    commit_rules, read_rules,
};
use rusqlite::{Connection, TransactionBehavior, params};

use crate::convert::{backend, to_sql};
use crate::read;

/// Where a Group's log stands inside an open write transaction: the next sequence and the
/// chain hash of the row before it. Exactly the database's state, since the transaction holds
/// the write lock and every append of it goes through [`apply`].
#[derive(Debug, Clone, Copy)]
struct Tip {
    next_sequence: u64,
    chain: Hash32,
}

/// The tips of the Groups a batch appended to so far (committed savepoints only).
type Tips = HashMap<String, Tip>;

/// Commits `tx` in its own durable transaction.
pub(crate) fn commit(conn: &mut Connection, tx: &Transaction) -> Result<(), StoreError> {
    if tx.is_empty() {
        // Nothing to check or write: no write lock, no fsync.
        return Ok(());
    }
    let db = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let starts = validate(&db, tx, &Tips::new())?;
    apply(&db, tx, starts)?;
    db.commit().map_err(backend)
}

/// Group commit: every write set in one durable transaction (one fsync), each atomic, a later
/// one seeing the earlier ones. If the final commit fails, none is durable and every result is
/// that failure.
///
/// Fast path, no savepoints: each write set is validated (reads only, so a refused one has
/// written nothing) and then applied. Validation covers every conflict a write can meet, so
/// an apply fails only on a backend failure or a row the checks do not see (a row damaged
/// behind the store's back, e.g. one past the head beyond the next sequence): then the whole
/// transaction rolls back and the batch runs again with one savepoint per write set
/// ([`commit_many_savepoints`]), which isolates the failing write set. Savepoints cost every
/// write set a statement journal of the pages it changes that the batch had changed already
/// (`docs/store.md`, "Group commit and concurrency").
pub(crate) fn commit_many(
    conn: &mut Connection,
    txs: &[Transaction],
) -> Vec<Result<(), StoreError>> {
    let db = match conn.transaction_with_behavior(TransactionBehavior::Immediate) {
        Ok(db) => db,
        Err(e) => return all_failed(txs, backend(e)),
    };
    let mut tips = Tips::new();
    let mut results = Vec::with_capacity(txs.len());
    for tx in txs {
        let starts = match validate(&db, tx, &tips) {
            Ok(starts) => starts,
            Err(refused) => {
                if db.is_autocommit() {
                    // SQLite ended the transaction itself (an I/O error, out of memory):
                    // nothing of the batch is written, and nothing more may be.
                    return all_failed(txs, refused);
                }
                results.push(Err(refused));
                continue;
            }
        };
        match apply(&db, tx, starts) {
            Ok(ends) => {
                tips.extend(ends.into_iter().map(|(group, tip)| (group.to_owned(), tip)));
                results.push(Ok(()));
            }
            Err(_) => {
                // Part of this write set may be written: start over, isolated.
                drop(db);
                return commit_many_savepoints(conn, txs);
            }
        }
    }
    match db.commit() {
        Ok(()) => results,
        Err(e) => all_failed(txs, backend(e)),
    }
}

fn all_failed(txs: &[Transaction], failure: StoreError) -> Vec<Result<(), StoreError>> {
    txs.iter().map(|_| Err(failure.clone())).collect()
}

/// [`commit_many`] with each write set in its own savepoint: a write set failing while it
/// applies rolls back alone.
pub(crate) fn commit_many_savepoints(
    conn: &mut Connection,
    txs: &[Transaction],
) -> Vec<Result<(), StoreError>> {
    let mut db = match conn.transaction_with_behavior(TransactionBehavior::Immediate) {
        Ok(db) => db,
        Err(e) => return all_failed(txs, backend(e)),
    };
    let mut tips = Tips::new();
    let mut results = Vec::with_capacity(txs.len());
    for tx in txs {
        results.push(commit_savepoint(&mut db, tx, &mut tips));
    }
    match db.commit() {
        Ok(()) => results,
        Err(e) => all_failed(txs, backend(e)),
    }
}

fn commit_savepoint(
    db: &mut rusqlite::Transaction<'_>,
    tx: &Transaction,
    tips: &mut Tips,
) -> Result<(), StoreError> {
    // Dropped without `commit` (on any error), the savepoint rolls back, and `tips` keeps
    // what it had.
    let savepoint = db.savepoint().map_err(backend)?;
    let starts = validate(&savepoint, tx, tips)?;
    let ends = apply(&savepoint, tx, starts)?;
    savepoint.commit().map_err(backend)?;
    tips.extend(ends.into_iter().map(|(group, tip)| (group.to_owned(), tip)));
    Ok(())
}

/// Every check of the commit (`commit_rules::validate`); changes nothing. Answers the tip each
/// appended Group starts from.
fn validate<'t>(
    conn: &Connection,
    tx: &'t Transaction,
    tips: &Tips,
) -> Result<HashMap<&'t str, Tip>, StoreError> {
    let mut view = View {
        conn,
        tips,
        starts: HashMap::new(),
    };
    commit_rules::validate(&mut view, tx)?;
    Ok(view.starts)
}

/// Committed state as the commit rules see it: point reads inside the write transaction, each
/// key read once, when the rules first need it. A Group's head is read with its chain tip
/// (`read::group_state`, which also checks the head against the last row, so a damaged log is
/// refused before anything is appended to it); inside a group commit, a Group an earlier write
/// set appended to is answered from [`Tips`].
struct View<'c, 't> {
    conn: &'c Connection,
    tips: &'c Tips,
    /// The tip each appended Group starts from, for [`apply`].
    starts: HashMap<&'t str, Tip>,
}

impl<'t> CommitView<'t> for View<'_, 't> {
    fn receipt(&mut self, key: &'t ReceiptKey) -> Result<Option<Receipt>, StoreError> {
        read::receipt(self.conn, key)
    }

    fn next_sequence(&mut self, group: &'t str) -> Result<u64, StoreError> {
        let tip = match self.tips.get(group) {
            Some(tip) => *tip,
            None => {
                let state = read::group_state(self.conn, group)?;
                let (next_sequence, chain) = read::append_tip(state.as_ref());
                Tip {
                    next_sequence,
                    chain,
                }
            }
        };
        self.starts.insert(group, tip);
        Ok(tip.next_sequence)
    }

    fn revision(&mut self, key: &'t AggregateKey) -> Result<u64, StoreError> {
        read::revision(self.conn, key)
    }
}

/// Writes a validated transaction, chaining each append from its Group's tip in `tips`;
/// answers the tips after it.
fn apply<'t>(
    conn: &Connection,
    tx: &'t Transaction,
    mut tips: HashMap<&'t str, Tip>,
) -> Result<HashMap<&'t str, Tip>, StoreError> {
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
        let Some(tip) = tips.get_mut(group.as_str()) else {
            return Err(StoreError::Backend {
                detail: format!("no validated tip for Group {group}"),
            });
        };
        let chain = event_chain(
            &tip.chain,
            group,
            event.sequence,
            &event.event_id,
            &event.body,
        );
        conn.prepare_cached(
            "INSERT INTO events (group_id, sequence, event_id, body, chain_hash) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .map_err(backend)?
        .execute(params![
            group,
            to_sql("sequence", event.sequence)?,
            &*event.event_id,
            &*event.body,
            &chain[..]
        ])
        .map_err(backend)?;
        // Validated contiguous, so `sequence + 1` is the next.
        *tip = Tip {
            next_sequence: event.sequence + 1,
            chain,
        };
    }
    // Each appended Group's head follows its last append; a new Group's log starts at 1 with
    // nothing archived before it.
    for (group, tip) in &tips {
        conn.prepare_cached(
            "INSERT INTO groups (group_id, next_sequence, first_online, chain_before) \
             VALUES (?1, ?2, 1, ?3) \
             ON CONFLICT (group_id) DO UPDATE SET next_sequence = excluded.next_sequence",
        )
        .map_err(backend)?
        .execute(params![
            group,
            to_sql("sequence", tip.next_sequence)?,
            &missionweaveprotocol_engine::store::integrity::GENESIS[..]
        ])
        .map_err(backend)?;
    }
    for write in tx.writes() {
        let Some(value) = &write.value else {
            continue;
        };
        let revision = write.expected_revision + 1;
        let checksum = aggregate_checksum(&write.key.kind, &write.key.id, revision, value);
        conn.prepare_cached(
            "INSERT INTO aggregates (kind, id, revision, value, checksum) \
             VALUES (?1, ?2, ?3, ?4, ?5) \
             ON CONFLICT (kind, id) DO UPDATE SET revision = excluded.revision, \
             value = excluded.value, checksum = excluded.checksum",
        )
        .map_err(backend)?
        .execute(params![
            write.key.kind,
            write.key.id,
            to_sql("revision", revision)?,
            &**value,
            &checksum[..]
        ])
        .map_err(backend)?;
    }
    Ok(tips)
}

/// Archival (§7.4, §16): the boundary must advance the archive and not pass the head; Events
/// before it are deleted, the snapshot pointer recorded and the chain hash of the last
/// archived row kept as `chain_before` (so what stays online still verifies), in one
/// transaction.
pub(crate) fn archive_before(
    conn: &mut Connection,
    group: &str,
    before: u64,
    snapshot: &SnapshotPointer,
) -> Result<(), StoreError> {
    let db = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let head = read::head(&db, group)?.unwrap_or_else(read_rules::absent_head);
    commit_rules::check_archive(group, before, head.first_online, head.next_sequence)?;
    // `before - 1 >= first_online`: the last archived row is online until this commit.
    let chain_before = read::stored_chain(&db, group, before - 1)?;
    let boundary = to_sql("before", before)?;
    db.execute(
        "DELETE FROM events WHERE group_id = ?1 AND sequence < ?2",
        params![group, boundary],
    )
    .map_err(backend)?;
    db.execute(
        "UPDATE groups SET first_online = ?2, snapshot_hash = ?3, chain_before = ?4 \
         WHERE group_id = ?1",
        params![group, boundary, snapshot.artifact_hash, &chain_before[..]],
    )
    .map_err(backend)?;
    db.commit().map_err(backend)
}
