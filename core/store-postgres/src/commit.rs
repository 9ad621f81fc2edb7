//! Commits: the write set validated by the rules every store shares (`store::commit_rules`:
//! receipts, then appends, then aggregate writes, against committed state plus the write set's
//! own earlier writes; `docs/store.md`, "Commit semantics"), then applied, all or nothing,
//! under the advisory locks of every key it names (`locks.rs`), so that engines in several
//! processes sharing one database keep every rule.
//!
//! One round trip per step whatever the write set's size: lock, load the receipts, heads and
//! aggregates it names (arrays of keys), validate in Rust, write every row in one statement.
//!
//! Every row loaded is checked under the store's [`Integrity`] scheme and every row written
//! carries its authenticator (`store::integrity`); the row of each receipt's first Event
//! records its Action ([`ActionBindings`]), and a receipt key with no receipt but a recorded
//! Action (its receipt removed behind the store's back) refuses its write set as corrupt.

use std::collections::HashMap;

use missionweaveprotocol_engine::store::integrity::{self, ActionBindings, GENESIS, Hash32};
use missionweaveprotocol_engine::store::{
    AggregateKey, Blob, CommitView, EventRecord, GroupHead, Integrity, Receipt, ReceiptKey,
    SnapshotPointer, StoreError, Transaction, WriteSetKeys, commit_rules, read_rules,
};
use postgres::Transaction as Db;

use crate::convert::{backend, from_sql, text, to_sql};
use crate::pool::{Conn, Statements};
use crate::read::{
    AggregateColumns, HeadColumns, checked_aggregate, checked_head, receipt_from_row,
    recorded_from_row,
};
use crate::{locks, sql};

/// Refuses what PostgreSQL cannot store before anything is locked or written.
pub(crate) fn check_arguments(tx: &Transaction) -> Result<(), StoreError> {
    for (key, receipt) in tx.receipts() {
        text("actor_type", &key.actor_type)?;
        text("actor_id", &key.actor_id)?;
        text("action_id", &key.action_id)?;
        text("signing_hash", &receipt.signing_hash)?;
        text("event_id", &receipt.first_event.event_id)?;
        if let Some((group, sequence)) = &receipt.first_event.position {
            text("group", group)?;
            to_sql("sequence", *sequence)?;
        }
    }
    for (group, event) in tx.appends() {
        text("group", group)?;
        text("event_id", &event.event_id)?;
    }
    for write in tx.writes() {
        text("kind", &write.key.kind)?;
        text("id", &write.key.id)?;
    }
    Ok(())
}

/// A Group's head as loaded, then as the batch's earlier write sets left it.
#[derive(Debug)]
struct Head {
    /// The stored `next_sequence`, `None` without a row.
    stored: Option<u64>,
    /// The head (`next_sequence` as the batch moved it), what its checksum covers.
    head: GroupHead,
    chain_before: Hash32,
    /// The stored head row's own check: a damaged head takes no append.
    checked: Result<(), StoreError>,
    /// The chain hash the next append follows (an error when the last row is missing).
    chain: Result<Hash32, StoreError>,
}

impl Head {
    /// The head of a Group without a log.
    fn new() -> Self {
        Self {
            stored: None,
            head: read_rules::absent_head(),
            chain_before: GENESIS,
            checked: Ok(()),
            chain: Ok(GENESIS),
        }
    }
}

/// An aggregate's revision as loaded (`stored`, `None` when absent), then as written.
#[derive(Debug)]
struct Revision {
    stored: Option<u64>,
    current: Result<u64, StoreError>,
    written: Option<Blob>,
    /// The Action the written row records.
    action: Option<Hash32>,
}

/// Committed state of every key the batch names, plus the batch's own validated writes.
#[derive(Debug, Default)]
struct State {
    /// Stored receipts, each as its check answered (a damaged one refuses only the write sets
    /// naming it).
    receipts: HashMap<ReceiptKey, Result<Receipt, StoreError>>,
    /// Receipt keys without a receipt whose Action a stored row records, and that row.
    recorded: HashMap<ReceiptKey, String>,
    new_receipts: Vec<(ReceiptKey, Receipt)>,
    heads: HashMap<String, Head>,
    events: Vec<(String, EventRecord, Hash32, Option<Hash32>)>,
    revisions: HashMap<AggregateKey, Revision>,
}

/// Loads the committed state of every key `txs` name: one statement per table, whatever the
/// number of write sets and keys.
fn load(
    db: &mut Db<'_>,
    st: &Statements,
    integrity: &Integrity,
    txs: &[&Transaction],
) -> Result<State, StoreError> {
    let mut state = State::default();
    let keys = WriteSetKeys::of(txs.iter().copied());
    if !keys.receipts.is_empty() {
        let types: Vec<&str> = keys
            .receipts
            .iter()
            .map(|k| k.actor_type.as_str())
            .collect();
        let ids: Vec<&str> = keys.receipts.iter().map(|k| k.actor_id.as_str()).collect();
        let actions: Vec<&str> = keys.receipts.iter().map(|k| k.action_id.as_str()).collect();
        let action_keys: Vec<Hash32> = keys
            .receipts
            .iter()
            .map(|k| integrity::action_key(k))
            .collect();
        let action_keys: Vec<&[u8]> = action_keys.iter().map(|k| &k[..]).collect();
        for row in db
            .query(&st.load_receipts, &[&types, &ids, &actions, &action_keys])
            .map_err(backend)?
        {
            let key = ReceiptKey::new(
                row.try_get::<_, String>(0).map_err(backend)?,
                row.try_get::<_, String>(1).map_err(backend)?,
                row.try_get::<_, String>(2).map_err(backend)?,
            );
            match receipt_from_row(integrity, &key, &row, 3) {
                Ok(Some(receipt)) => {
                    state.receipts.insert(key, Ok(receipt));
                }
                Ok(None) => {
                    if let Some(recorded) = recorded_from_row(&row, 8, 9, 10, 11)? {
                        state.recorded.insert(key, recorded);
                    }
                }
                Err(damaged) => {
                    state.receipts.insert(key, Err(damaged));
                }
            }
        }
    }
    if !keys.groups.is_empty() {
        for row in db.query(&st.load_heads, &[&keys.groups]).map_err(backend)? {
            let group: String = row.try_get(0).map_err(backend)?;
            let columns = HeadColumns {
                next_sequence: 1,
                first_online: 2,
                snapshot_hash: 5,
                chain_before: 3,
                checksum: 6,
            };
            let (head, chain_before, checked) = match checked_head(integrity, &group, &row, columns)
            {
                Ok((head, chain_before)) => (head, chain_before, Ok(())),
                Err(damaged) => (read_rules::absent_head(), GENESIS, Err(damaged)),
            };
            let next = from_sql("next_sequence", row.try_get(1).map_err(backend)?)?;
            let first_online = from_sql("first_online", row.try_get(2).map_err(backend)?)?;
            // The chain hash the next append follows: the last row's, or `chain_before` when
            // nothing is online. A missing last row is kept as the Group's answer to
            // `appendable`, asked after the sequences are checked.
            let stored: Option<&[u8]> = if next == first_online {
                Some(row.try_get(3).map_err(backend)?)
            } else {
                row.try_get(4).map_err(backend)?
            };
            let chain = match stored {
                Some(stored) => integrity::hash_from_slice(
                    "event",
                    || format!("{group} #{}", next.saturating_sub(1)),
                    stored,
                ),
                None => Err(integrity::missing_event(&group, next.saturating_sub(1))),
            };
            state.heads.insert(
                group,
                Head {
                    stored: Some(next),
                    head: GroupHead {
                        next_sequence: next,
                        ..head
                    },
                    chain_before,
                    checked,
                    chain,
                },
            );
        }
    }
    if !keys.aggregates.is_empty() {
        let kinds: Vec<&str> = keys.aggregates.iter().map(|k| k.kind.as_str()).collect();
        let ids: Vec<&str> = keys.aggregates.iter().map(|k| k.id.as_str()).collect();
        for row in db
            .query(&st.load_aggregates, &[&kinds, &ids])
            .map_err(backend)?
        {
            let key = AggregateKey::new(
                row.try_get::<_, String>(0).map_err(backend)?,
                row.try_get::<_, String>(1).map_err(backend)?,
            );
            let stored = from_sql("revision", row.try_get(2).map_err(backend)?)?;
            let current = checked_aggregate(
                integrity,
                &key.kind,
                &key.id,
                &row,
                AggregateColumns::from(2),
            )
            .map(|a| a.revision);
            state.revisions.insert(
                key,
                Revision {
                    stored: Some(stored),
                    current,
                    written: None,
                    action: None,
                },
            );
        }
    }
    Ok(state)
}

/// The loaded state answers the commit rules: nothing more is read. A damaged aggregate row or
/// a log whose last row is missing answers with its error when the rules ask about it.
impl<'t> CommitView<'t> for State {
    fn receipt(&mut self, key: &'t ReceiptKey) -> Result<Option<Receipt>, StoreError> {
        self.receipts.get(key).cloned().transpose()
    }

    fn recorded_action(&mut self, key: &'t ReceiptKey) -> Result<Option<String>, StoreError> {
        Ok(self.recorded.get(key).cloned())
    }

    /// A damaged head takes no append.
    fn next_sequence(&mut self, group: &'t str) -> Result<u64, StoreError> {
        match self.heads.get(group) {
            None => Ok(1),
            Some(head) => head.checked.clone().map(|()| head.head.next_sequence),
        }
    }

    /// A log whose last row is missing takes no append (it would chain onto nothing).
    fn appendable(&mut self, group: &'t str) -> Result<(), StoreError> {
        match self.heads.get(group).map(|head| &head.chain) {
            Some(Err(missing)) => Err(missing.clone()),
            _ => Ok(()),
        }
    }

    fn revision(&mut self, key: &'t AggregateKey) -> Result<u64, StoreError> {
        self.revisions.get(key).map_or(Ok(0), |r| r.current.clone())
    }
}

impl State {
    /// Records a validated write set: later write sets of the batch see it.
    fn stage(&mut self, integrity: &Integrity, tx: &Transaction) {
        let bindings = ActionBindings::of(tx);
        for (key, receipt) in tx.receipts() {
            self.receipts.insert(key.clone(), Ok(receipt.clone()));
            self.new_receipts.push((key.clone(), receipt.clone()));
        }
        for (index, (group, event)) in tx.appends().iter().enumerate() {
            let head = self.heads.entry(group.clone()).or_insert_with(Head::new);
            let previous = head.chain.as_ref().copied().unwrap_or(GENESIS);
            let action = bindings.append(index).copied();
            let chain = integrity.event_chain(
                &previous,
                group,
                event.sequence,
                &event.event_id,
                &event.body,
                action.as_ref(),
            );
            head.head.next_sequence = event.sequence + 1;
            head.chain = Ok(chain);
            self.events
                .push((group.clone(), event.clone(), chain, action));
        }
        for (index, write) in tx.writes().iter().enumerate() {
            let Some(value) = &write.value else {
                continue;
            };
            let revision = self.revisions.entry(write.key.clone()).or_insert(Revision {
                stored: None,
                current: Ok(0),
                written: None,
                action: None,
            });
            revision.current = Ok(write.expected_revision + 1);
            revision.written = Some(value.clone());
            revision.action = bindings.write(index).copied();
        }
    }
}

/// Writes every staged row in one statement and checks that each part wrote exactly what was
/// validated: fewer rows mean a writer changed a key without its lock (outside this store),
/// and the caller rolls back.
fn write(
    db: &mut Db<'_>,
    st: &Statements,
    integrity: &Integrity,
    state: &State,
) -> Result<(), StoreError> {
    let receipts = &state.new_receipts;
    let r_types: Vec<&str> = receipts
        .iter()
        .map(|(k, _)| k.actor_type.as_str())
        .collect();
    let r_ids: Vec<&str> = receipts.iter().map(|(k, _)| k.actor_id.as_str()).collect();
    let r_actions: Vec<&str> = receipts.iter().map(|(k, _)| k.action_id.as_str()).collect();
    let r_hashes: Vec<&str> = receipts
        .iter()
        .map(|(_, r)| r.signing_hash.as_str())
        .collect();
    let r_events: Vec<&str> = receipts
        .iter()
        .map(|(_, r)| r.first_event.event_id.as_str())
        .collect();
    let r_groups: Vec<Option<&str>> = receipts
        .iter()
        .map(|(_, r)| r.first_event.position.as_ref().map(|(g, _)| g.as_str()))
        .collect();
    let mut r_sequences: Vec<Option<i64>> = Vec::with_capacity(receipts.len());
    for (_, r) in receipts {
        r_sequences.push(match &r.first_event.position {
            Some((_, s)) => Some(to_sql("sequence", *s)?),
            None => None,
        });
    }
    let r_sums: Vec<Vec<u8>> = receipts
        .iter()
        .map(|(k, r)| integrity.receipt_checksum(k, r).to_vec())
        .collect();

    let events = &state.events;
    let e_groups: Vec<&str> = events.iter().map(|(g, ..)| g.as_str()).collect();
    let mut e_sequences = Vec::with_capacity(events.len());
    for (_, e, ..) in events {
        e_sequences.push(to_sql("sequence", e.sequence)?);
    }
    let e_ids: Vec<&str> = events.iter().map(|(_, e, ..)| &*e.event_id).collect();
    let e_bodies: Vec<&[u8]> = events.iter().map(|(_, e, ..)| &*e.body).collect();
    let e_chains: Vec<&[u8]> = events.iter().map(|(_, _, c, _)| &c[..]).collect();
    let e_actions: Vec<Option<&[u8]>> = events
        .iter()
        .map(|(.., a)| a.as_ref().map(|a| &a[..]))
        .collect();

    let (mut gu_groups, mut gu_next, mut gu_stored, mut gu_sums) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut gi_groups, mut gi_next, mut gi_sums) = (Vec::new(), Vec::new(), Vec::new());
    for (group, head) in &state.heads {
        let sum = || {
            integrity
                .head_checksum(group, &head.head, &head.chain_before)
                .to_vec()
        };
        let next = head.head.next_sequence;
        match head.stored {
            Some(stored) if stored != next => {
                gu_groups.push(group.as_str());
                gu_next.push(to_sql("sequence", next)?);
                gu_stored.push(to_sql("sequence", stored)?);
                gu_sums.push(sum());
            }
            Some(_) => {}
            None => {
                gi_groups.push(group.as_str());
                gi_next.push(to_sql("sequence", next)?);
                gi_sums.push(sum());
            }
        }
    }

    let (mut au_kinds, mut au_ids, mut au_revisions, mut au_values, mut au_sums, mut au_stored) = (
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
    );
    let mut au_actions: Vec<Option<&[u8]>> = Vec::new();
    let (mut ai_kinds, mut ai_ids, mut ai_revisions, mut ai_values, mut ai_sums) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut ai_actions: Vec<Option<&[u8]>> = Vec::new();
    for (key, revision) in &state.revisions {
        let (Some(value), Ok(current)) = (&revision.written, &revision.current) else {
            continue;
        };
        let action = revision.action.as_ref();
        let sum = integrity.aggregate_checksum(&key.kind, &key.id, *current, value, action);
        match revision.stored {
            Some(stored) => {
                au_kinds.push(key.kind.as_str());
                au_ids.push(key.id.as_str());
                au_revisions.push(to_sql("revision", *current)?);
                au_values.push(&**value);
                au_sums.push(sum.to_vec());
                au_stored.push(to_sql("revision", stored)?);
                au_actions.push(action.map(|a| &a[..]));
            }
            None => {
                ai_kinds.push(key.kind.as_str());
                ai_ids.push(key.id.as_str());
                ai_revisions.push(to_sql("revision", *current)?);
                ai_values.push(&**value);
                ai_sums.push(sum.to_vec());
                ai_actions.push(action.map(|a| &a[..]));
            }
        }
    }
    let genesis: &[u8] = &GENESIS;
    let row = db
        .query_one(
            &st.apply,
            &[
                &r_types,
                &r_ids,
                &r_actions,
                &r_hashes,
                &r_events,
                &r_groups,
                &r_sequences,
                &r_sums,
                &e_groups,
                &e_sequences,
                &e_ids,
                &e_bodies,
                &e_chains,
                &e_actions,
                &gu_groups,
                &gu_next,
                &gu_stored,
                &gu_sums,
                &gi_groups,
                &gi_next,
                &genesis,
                &gi_sums,
                &au_kinds,
                &au_ids,
                &au_revisions,
                &au_values,
                &au_sums,
                &au_stored,
                &au_actions,
                &ai_kinds,
                &ai_ids,
                &ai_revisions,
                &ai_values,
                &ai_sums,
                &ai_actions,
            ],
        )
        .map_err(backend)?;
    let expected = [
        receipts.len(),
        events.len(),
        gu_groups.len(),
        gi_groups.len(),
        au_kinds.len(),
        ai_kinds.len(),
    ];
    for (i, (part, wanted)) in [
        "receipts",
        "events",
        "group heads",
        "new groups",
        "aggregates",
        "new aggregates",
    ]
    .iter()
    .zip(expected)
    .enumerate()
    {
        let written: i64 = row.try_get(i).map_err(backend)?;
        if written != wanted as i64 {
            return Err(StoreError::Backend {
                detail: format!(
                    "{written} of {wanted} {part} written: rows changed without the store's \
                     locks (another writer on the schema?); nothing was committed"
                ),
            });
        }
    }
    Ok(())
}

/// Takes the advisory locks `ids` (sorted) for the rest of the transaction.
fn lock(db: &mut Db<'_>, st: &Statements, ids: &[i64]) -> Result<(), StoreError> {
    if !ids.is_empty() {
        db.query_one(&st.lock, &[&ids]).map_err(backend)?;
    }
    Ok(())
}

/// Validates and stages each write set in order against the loaded state, then writes the
/// valid ones. The outer `Err` is a failure of the database (or of the backstop) that leaves
/// the transaction to roll back; the inner results are each write set's outcome.
fn run(
    db: &mut Db<'_>,
    st: &Statements,
    integrity: &Integrity,
    txs: &[&Transaction],
) -> Result<Vec<Result<(), StoreError>>, StoreError> {
    let mut state = load(db, st, integrity, txs)?;
    let results: Vec<Result<(), StoreError>> = txs
        .iter()
        .map(|tx| {
            commit_rules::validate(&mut state, tx)?;
            state.stage(integrity, tx);
            Ok(())
        })
        .collect();
    if results.iter().any(Result::is_ok) {
        write(db, st, integrity, &state)?;
    }
    Ok(results)
}

/// Commits one write set in its own durable transaction.
pub(crate) fn commit(
    conn: &mut Conn,
    namespace: &str,
    integrity: &Integrity,
    tx: &Transaction,
) -> Result<(), StoreError> {
    let Conn { client, statements } = conn;
    let mut db = client.transaction().map_err(backend)?;
    lock(
        &mut db,
        statements,
        &locks::for_transactions(namespace, [tx]),
    )?;
    let result = run(&mut db, statements, integrity, &[tx])?
        .pop()
        .unwrap_or(Ok(()));
    match result {
        Ok(()) => db.commit().map_err(backend),
        Err(e) => {
            // Nothing was written; the rollback only ends the transaction (and its locks).
            let _ = db.rollback();
            Err(e)
        }
    }
}

/// Group commit: every write set in one durable transaction (one `COMMIT`, one WAL flush),
/// each atomic, a later one seeing the earlier ones. The batch's locks are taken up front in
/// one sorted order. All valid write sets are written in one statement; if that statement
/// fails, the batch starts over with a savepoint per write set, so a failing one costs only
/// itself. If the final `COMMIT` fails, none is durable and every result is that failure.
pub(crate) fn commit_many(
    conn: &mut Conn,
    namespace: &str,
    integrity: &Integrity,
    txs: &[&Transaction],
) -> Vec<Result<(), StoreError>> {
    match group_commit(conn, namespace, integrity, txs) {
        Ok(results) => results,
        Err(e) => txs.iter().map(|_| Err(e.clone())).collect(),
    }
}

fn group_commit(
    conn: &mut Conn,
    namespace: &str,
    integrity: &Integrity,
    txs: &[&Transaction],
) -> Result<Vec<Result<(), StoreError>>, StoreError> {
    let ids = locks::for_transactions(namespace, txs.iter().copied());
    let Conn { client, statements } = conn;
    let mut db = client.transaction().map_err(backend)?;
    lock(&mut db, statements, &ids)?;
    match run(&mut db, statements, integrity, txs) {
        Ok(results) => {
            db.commit().map_err(backend)?;
            return Ok(results);
        }
        Err(_) => db.rollback().map_err(backend)?,
    }
    let (db, results) = one_by_one(client, statements, integrity, &ids, txs)?;
    db.commit().map_err(backend)?;
    Ok(results)
}

/// The slow path of a group commit: each write set in a savepoint of its own.
fn one_by_one<'c>(
    client: &'c mut postgres::Client,
    statements: &Statements,
    integrity: &Integrity,
    ids: &[i64],
    txs: &[&Transaction],
) -> Result<(Db<'c>, Vec<Result<(), StoreError>>), StoreError> {
    let mut db = client.transaction().map_err(backend)?;
    lock(&mut db, statements, ids)?;
    let mut results = Vec::with_capacity(txs.len());
    for tx in txs {
        let mut savepoint = db.transaction().map_err(backend)?;
        let result = match run(&mut savepoint, statements, integrity, &[tx]) {
            Ok(mut result) => result.pop().unwrap_or(Ok(())),
            Err(e) => Err(e),
        };
        match result {
            Ok(()) => savepoint.commit().map_err(backend)?,
            Err(_) => savepoint.rollback().map_err(backend)?,
        }
        results.push(result);
    }
    Ok((db, results))
}

/// Archival (§7.4, §16): under the Group's lock, the boundary must advance the archive and
/// not pass the head; Events before it are deleted and the snapshot pointer and the chain hash
/// before the new first online Event recorded, in one transaction.
pub(crate) fn archive_before(
    conn: &mut Conn,
    namespace: &str,
    integrity: &Integrity,
    group: &str,
    before: u64,
    snapshot: &SnapshotPointer,
) -> Result<(), StoreError> {
    text("snapshot artifact_hash", &snapshot.artifact_hash)?;
    // A Group PostgreSQL cannot name has no log: the fence refuses it.
    let absent = read_rules::absent_head();
    if !crate::convert::storable(group) {
        return commit_rules::check_archive(
            group,
            before,
            absent.first_online,
            absent.next_sequence,
        );
    }
    let Conn { client, statements } = conn;
    let mut db = client.transaction().map_err(backend)?;
    lock(&mut db, statements, &[locks::group(namespace, group)])?;
    // A boundary beyond any stored integer lies past the head.
    let boundary = i64::try_from(before).unwrap_or(i64::MAX);
    let row = db
        .query_opt(sql::ARCHIVE_HEAD, &[&group, &boundary])
        .map_err(backend)?;
    let Some(row) = row else {
        return commit_rules::check_archive(
            group,
            before,
            absent.first_online,
            absent.next_sequence,
        );
    };
    let columns = HeadColumns {
        next_sequence: 0,
        first_online: 1,
        snapshot_hash: 3,
        chain_before: 4,
        checksum: 5,
    };
    let (head, _) = checked_head(integrity, group, &row, columns)?;
    commit_rules::check_archive(group, before, head.first_online, head.next_sequence)?;
    let stored: Option<&[u8]> = row.try_get(2).map_err(backend)?;
    let Some(stored) = stored else {
        return Err(integrity::missing_event(group, before - 1));
    };
    let chain = integrity::hash_from_slice("event", || format!("{group} #{}", before - 1), stored)?;
    db.execute(
        "DELETE FROM events WHERE group_id = $1 AND sequence < $2",
        &[&group, &boundary],
    )
    .map_err(backend)?;
    let archived = GroupHead {
        next_sequence: head.next_sequence,
        first_online: before,
        snapshot: Some(snapshot.clone()),
    };
    let checksum = integrity.head_checksum(group, &archived, &chain);
    db.execute(
        "UPDATE groups SET first_online = $2, snapshot_hash = $3, chain_before = $4, \
         checksum = $5 WHERE group_id = $1",
        &[
            &group,
            &boundary,
            &snapshot.artifact_hash,
            &&chain[..],
            &&checksum[..],
        ],
    )
    .map_err(backend)?;
    db.commit().map_err(backend)
}
