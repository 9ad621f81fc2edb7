//! Commits: one `BEGIN IMMEDIATE` transaction per call that validates the whole write set
//! against committed state plus the write set's own earlier writes (the rules every backend
//! shares, `store::commit_rules`, answered by point reads: [`View`]; `docs/store.md`, "Commit
//! semantics"), then applies it. A refusal or a failure rolls everything back.
//!
//! Every row written carries its authenticator under the store's [`Integrity`] scheme
//! (`store::integrity`): appends extend each Group's hash chain, heads, aggregates and receipts
//! store their checksum, and the row of each receipt's first Event records its Action
//! ([`ActionBindings`]). The chain hash to extend is read once per Group per write set, with
//! the head (`read::group_state`, which also checks the head's checksum and the head against
//! the last row, so nothing is appended to a damaged log); inside a group commit it is carried
//! in memory from one write set to the next ([`Tips`]). A receipt not found is looked up among
//! the recorded Actions (`CommitView::recorded_action`): a removed receipt refuses the commit
//! instead of letting the Command apply twice.

use std::collections::HashMap;

use missionweaveprotocol_engine::store::integrity::{ActionBindings, GENESIS, Hash32};
use missionweaveprotocol_engine::store::{
    AggregateKey, CommitView, GroupHead, Integrity, Receipt, ReceiptKey, SnapshotPointer,
    StoreError, Transaction, commit_rules, read_rules,
};
use rusqlite::{Connection, TransactionBehavior, params};

use crate::convert::{backend, to_sql};
use crate::read;

/// Where a Group's log stands inside an open write transaction: its head (what the head
/// row's checksum covers) and the chain hash of the row before the next sequence. Exactly the
/// database's state, since the transaction holds the write lock and every append of it goes
/// through [`apply`].
#[derive(Debug, Clone)]
struct Tip {
    head: GroupHead,
    chain_before: Hash32,
    chain: Hash32,
}

impl Tip {
    /// The tip of `group` as stored (`None`: a Group without a log, whose chain starts at
    /// `GENESIS`).
    fn of(state: Option<read::GroupState>) -> Self {
        match state {
            Some(state) => Self {
                head: state.head,
                chain_before: state.chain_before,
                chain: state.tip,
            },
            None => Self {
                head: read_rules::absent_head(),
                chain_before: GENESIS,
                chain: GENESIS,
            },
        }
    }
}

/// The tips of the Groups a batch appended to so far (committed savepoints only).
type Tips = HashMap<String, Tip>;

/// Commits `tx` in its own durable transaction.
pub(crate) fn commit(
    conn: &mut Connection,
    integrity: &Integrity,
    tx: &Transaction,
) -> Result<(), StoreError> {
    if tx.is_empty() {
        // Nothing to check or write: no write lock, no fsync.
        return Ok(());
    }
    let db = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let starts = validate(&db, integrity, tx, &Tips::new())?;
    apply(&db, integrity, tx, starts)?;
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
    integrity: &Integrity,
    txs: &[Transaction],
) -> Vec<Result<(), StoreError>> {
    let db = match conn.transaction_with_behavior(TransactionBehavior::Immediate) {
        Ok(db) => db,
        Err(e) => return all_failed(txs, backend(e)),
    };
    let mut tips = Tips::new();
    let mut results = Vec::with_capacity(txs.len());
    for tx in txs {
        let starts = match validate(&db, integrity, tx, &tips) {
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
        match apply(&db, integrity, tx, starts) {
            Ok(ends) => {
                tips.extend(ends.into_iter().map(|(group, tip)| (group.to_owned(), tip)));
                results.push(Ok(()));
            }
            Err(_) => {
                // Part of this write set may be written: start over, isolated.
                drop(db);
                return commit_many_savepoints(conn, integrity, txs);
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
    integrity: &Integrity,
    txs: &[Transaction],
) -> Vec<Result<(), StoreError>> {
    let mut db = match conn.transaction_with_behavior(TransactionBehavior::Immediate) {
        Ok(db) => db,
        Err(e) => return all_failed(txs, backend(e)),
    };
    let mut tips = Tips::new();
    let mut results = Vec::with_capacity(txs.len());
    for tx in txs {
        results.push(commit_savepoint(&mut db, integrity, tx, &mut tips));
    }
    match db.commit() {
        Ok(()) => results,
        Err(e) => all_failed(txs, backend(e)),
    }
}

fn commit_savepoint(
    db: &mut rusqlite::Transaction<'_>,
    integrity: &Integrity,
    tx: &Transaction,
    tips: &mut Tips,
) -> Result<(), StoreError> {
    // Dropped without `commit` (on any error), the savepoint rolls back, and `tips` keeps
    // what it had.
    let savepoint = db.savepoint().map_err(backend)?;
    let starts = validate(&savepoint, integrity, tx, tips)?;
    let ends = apply(&savepoint, integrity, tx, starts)?;
    savepoint.commit().map_err(backend)?;
    tips.extend(ends.into_iter().map(|(group, tip)| (group.to_owned(), tip)));
    Ok(())
}

/// Every check of the commit (`commit_rules::validate`); changes nothing. Answers the tip each
/// appended Group starts from.
fn validate<'t>(
    conn: &Connection,
    integrity: &Integrity,
    tx: &'t Transaction,
    tips: &Tips,
) -> Result<HashMap<&'t str, Tip>, StoreError> {
    let mut view = View {
        conn,
        integrity,
        tips,
        starts: HashMap::new(),
        recorded: HashMap::new(),
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
    integrity: &'c Integrity,
    tips: &'c Tips,
    /// The tip each appended Group starts from, for [`apply`].
    starts: HashMap<&'t str, Tip>,
    /// Receipt keys without a receipt whose Action a row records (from the receipt lookup).
    recorded: HashMap<&'t ReceiptKey, String>,
}

impl<'t> CommitView<'t> for View<'_, 't> {
    fn receipt(&mut self, key: &'t ReceiptKey) -> Result<Option<Receipt>, StoreError> {
        match read::lookup(self.conn, self.integrity, key)? {
            read::Lookup::Stored(receipt) => Ok(Some(receipt)),
            read::Lookup::Recorded(row) => {
                self.recorded.insert(key, row);
                Ok(None)
            }
            read::Lookup::Absent => Ok(None),
        }
    }

    /// Answered by the lookup [`receipt`](Self::receipt) just made.
    fn recorded_action(&mut self, key: &'t ReceiptKey) -> Result<Option<String>, StoreError> {
        Ok(self.recorded.remove(key))
    }

    fn next_sequence(&mut self, group: &'t str) -> Result<u64, StoreError> {
        let tip = match self.tips.get(group) {
            Some(tip) => tip.clone(),
            None => Tip::of(read::group_state(self.conn, self.integrity, group)?),
        };
        let next = tip.head.next_sequence;
        self.starts.insert(group, tip);
        Ok(next)
    }

    fn revision(&mut self, key: &'t AggregateKey) -> Result<u64, StoreError> {
        read::revision(self.conn, key)
    }
}

/// Writes a validated transaction, chaining each append from its Group's tip in `tips`;
/// answers the tips after it.
fn apply<'t>(
    conn: &Connection,
    integrity: &Integrity,
    tx: &'t Transaction,
    mut tips: HashMap<&'t str, Tip>,
) -> Result<HashMap<&'t str, Tip>, StoreError> {
    let bindings = ActionBindings::of(tx);
    for (key, receipt) in tx.receipts() {
        let (group, sequence) = match &receipt.first_event.position {
            Some((group, sequence)) => (Some(group.as_str()), Some(to_sql("sequence", *sequence)?)),
            None => (None, None),
        };
        let checksum = integrity.receipt_checksum(key, receipt);
        conn.prepare_cached(
            "INSERT INTO receipts (actor_type, actor_id, action_id, signing_hash, event_id, \
             group_id, sequence, checksum) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )
        .map_err(backend)?
        .execute(params![
            key.actor_type,
            key.actor_id,
            key.action_id,
            receipt.signing_hash,
            receipt.first_event.event_id,
            group,
            sequence,
            &checksum[..]
        ])
        .map_err(backend)?;
    }
    for (index, (group, event)) in tx.appends().iter().enumerate() {
        let Some(tip) = tips.get_mut(group.as_str()) else {
            return Err(StoreError::Backend {
                detail: format!("no validated tip for Group {group}"),
            });
        };
        let action = bindings.append(index);
        let chain = integrity.event_chain(
            &tip.chain,
            group,
            event.sequence,
            &event.event_id,
            &event.body,
            action,
        );
        conn.prepare_cached(
            "INSERT INTO events (group_id, sequence, event_id, body, chain_hash, action_key) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .map_err(backend)?
        .execute(params![
            group,
            to_sql("sequence", event.sequence)?,
            &*event.event_id,
            &*event.body,
            &chain[..],
            action.map(|a| &a[..])
        ])
        .map_err(backend)?;
        // Validated contiguous, so `sequence + 1` is the next.
        tip.head.next_sequence = event.sequence + 1;
        tip.chain = chain;
    }
    // Each appended Group's head follows its last append, with its checksum; a new Group's log
    // starts at 1 with nothing archived before it.
    for (group, tip) in &tips {
        let checksum = integrity.head_checksum(group, &tip.head, &tip.chain_before);
        conn.prepare_cached(
            "INSERT INTO groups (group_id, next_sequence, first_online, chain_before, checksum) \
             VALUES (?1, ?2, ?3, ?4, ?5) \
             ON CONFLICT (group_id) DO UPDATE SET next_sequence = excluded.next_sequence, \
             checksum = excluded.checksum",
        )
        .map_err(backend)?
        .execute(params![
            group,
            to_sql("sequence", tip.head.next_sequence)?,
            to_sql("sequence", tip.head.first_online)?,
            &tip.chain_before[..],
            &checksum[..]
        ])
        .map_err(backend)?;
    }
    for (index, write) in tx.writes().iter().enumerate() {
        let Some(value) = &write.value else {
            continue;
        };
        let revision = write.expected_revision + 1;
        let action = bindings.write(index);
        let checksum =
            integrity.aggregate_checksum(&write.key.kind, &write.key.id, revision, value, action);
        conn.prepare_cached(
            "INSERT INTO aggregates (kind, id, revision, value, checksum, action_key) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
             ON CONFLICT (kind, id) DO UPDATE SET revision = excluded.revision, \
             value = excluded.value, checksum = excluded.checksum, \
             action_key = excluded.action_key",
        )
        .map_err(backend)?
        .execute(params![
            write.key.kind,
            write.key.id,
            to_sql("revision", revision)?,
            &**value,
            &checksum[..],
            action.map(|a| &a[..])
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
    integrity: &Integrity,
    group: &str,
    before: u64,
    snapshot: &SnapshotPointer,
) -> Result<(), StoreError> {
    let db = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let head = read::head(&db, integrity, group)?.unwrap_or_else(read_rules::absent_head);
    commit_rules::check_archive(group, before, head.first_online, head.next_sequence)?;
    // `before - 1 >= first_online`: the last archived row is online until this commit.
    let chain_before = read::stored_chain(&db, group, before - 1)?;
    let boundary = to_sql("before", before)?;
    db.execute(
        "DELETE FROM events WHERE group_id = ?1 AND sequence < ?2",
        params![group, boundary],
    )
    .map_err(backend)?;
    let archived = GroupHead {
        next_sequence: head.next_sequence,
        first_online: before,
        snapshot: Some(snapshot.clone()),
    };
    let checksum = integrity.head_checksum(group, &archived, &chain_before);
    db.execute(
        "UPDATE groups SET first_online = ?2, snapshot_hash = ?3, chain_before = ?4, \
         checksum = ?5 WHERE group_id = ?1",
        params![
            group,
            boundary,
            snapshot.artifact_hash,
            &chain_before[..],
            &checksum[..]
        ],
    )
    .map_err(backend)?;
    db.commit().map_err(backend)
}
