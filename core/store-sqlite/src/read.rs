//! Reads of committed state: aggregates, prefix listing (a range scan), receipts, Group heads
//! and replay pages (§16). Every read checks what it returns against the integrity columns
//! under the store's [`Integrity`] scheme (`store::integrity`, `docs/store.md` "Data at
//! rest"): an aggregate against its checksum, a receipt against its checksum, a replay page
//! against the Group's hash chain from the stored hash before it, a head against its checksum
//! and the log's last row; a receipt not found against the Actions the log records. A damaged
//! or missing row is [`StoreError::Corrupt`] and is never served, nor taken for absent.

use std::sync::Arc;

use missionweaveprotocol_engine::store::integrity::{
    Hash32, action_key, hash_from_slice, missing_event, missing_receipt,
};
use missionweaveprotocol_engine::store::read_rules::{self, PagePlan};
use missionweaveprotocol_engine::store::{
    Aggregate, AggregateKey, EventRecord, EventRef, GroupHead, Integrity, Receipt, ReceiptKey,
    ReplayPage, SnapshotPointer, StoreError,
};
use rusqlite::{Connection, Row, params};

use crate::convert::{backend, bytes, corrupt, integer, text, text_ref, to_sql};

/// Plans every statement of `conn` without looking at bound values (SQLite's query planner
/// stability guarantee), so that a cached statement is prepared once. The bundled SQLite is
/// built with STAT4, under which a statement constraining an indexed column by a range on a
/// bound parameter (`list`'s `id >= ?2`, a replay page's `sequence >= ?2`) is otherwise
/// re-prepared (parsed and planned again) on every execution. Every statement here is a
/// primary-key lookup or range whose plan no value changes.
pub(crate) fn plan_once(conn: &Connection) -> Result<(), StoreError> {
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )
    .map_err(backend)?;
    Ok(())
}

const AGGREGATE_SQL: &str =
    "SELECT revision, value, checksum, action_key FROM aggregates WHERE kind = ?1 AND id = ?2";
const LIST_SQL: &str = "SELECT id, revision, value, checksum, action_key FROM aggregates \
     WHERE kind = ?1 AND id >= ?2 ORDER BY id";
const REPLAY_SQL: &str = "SELECT sequence, event_id, body, chain_hash, action_key FROM events \
     WHERE group_id = ?1 AND sequence >= ?2 ORDER BY sequence LIMIT ?3";
/// A receipt with its checksum or, when none is stored, the Event or aggregate recording its
/// Action (`?4`, `integrity::action_key`; the partial indexes `events_by_action` and
/// `aggregates_by_action`): always one row, one statement, so one snapshot.
const RECEIPT_SQL: &str = "SELECT r.signing_hash, r.event_id, r.group_id, r.sequence, \
     r.checksum, e.group_id, e.sequence, a.kind, a.id FROM (SELECT 1) AS one \
     LEFT JOIN receipts r ON r.actor_type = ?1 AND r.actor_id = ?2 AND r.action_id = ?3 \
     LEFT JOIN events e ON e.action_key = ?4 AND r.actor_type IS NULL \
     LEFT JOIN aggregates a ON a.action_key = ?4 AND r.actor_type IS NULL";

/// A nullable stored hash column (`action_key`): NULL is none, anything else must be 32 bytes.
pub(crate) fn optional_hash(
    what: &'static str,
    locator: impl Fn() -> String,
    column: &str,
    value: rusqlite::types::ValueRef<'_>,
) -> Result<Option<Hash32>, StoreError> {
    match value {
        rusqlite::types::ValueRef::Null => Ok(None),
        value => hash_from_slice(what, &locator, bytes(what, &locator, column, value)?).map(Some),
    }
}

/// An aggregate row (`revision, value, checksum, action_key` from column `first`) checked
/// against its checksum.
fn checked_aggregate(
    integrity: &Integrity,
    kind: &str,
    id: &str,
    row: &Row<'_>,
    first: usize,
) -> Result<Aggregate, StoreError> {
    let locator = || format!("{kind} {id}");
    let value_at = |i: usize| row.get_ref(first + i).map_err(backend);
    let revision = integer("aggregate", locator, "revision", value_at(0)?)?;
    let value = bytes("aggregate", locator, "value", value_at(1)?)?;
    let stored = bytes("aggregate", locator, "checksum", value_at(2)?)?;
    let stored = hash_from_slice("aggregate", locator, stored)?;
    let action = optional_hash("aggregate", locator, "action_key", value_at(3)?)?;
    integrity.check_aggregate(kind, id, revision, value, action.as_ref(), &stored)?;
    Ok(Aggregate {
        revision,
        value: value.into(),
    })
}

pub(crate) fn aggregate(
    conn: &Connection,
    integrity: &Integrity,
    key: &AggregateKey,
) -> Result<Option<Aggregate>, StoreError> {
    let mut statement = conn.prepare_cached(AGGREGATE_SQL).map_err(backend)?;
    let mut rows = statement
        .query(params![key.kind, key.id])
        .map_err(backend)?;
    match rows.next().map_err(backend)? {
        Some(row) => checked_aggregate(integrity, &key.kind, &key.id, row, 0).map(Some),
        None => Ok(None),
    }
}

/// The current revision of `key` (0: absent). Commit-time validation reads the revision alone:
/// a revision changed behind the store's back makes the write a conflict, and the re-read that
/// follows (`aggregate`) reports the damage.
pub(crate) fn revision(conn: &Connection, key: &AggregateKey) -> Result<u64, StoreError> {
    let mut statement = conn
        .prepare_cached("SELECT revision FROM aggregates WHERE kind = ?1 AND id = ?2")
        .map_err(backend)?;
    let mut rows = statement
        .query(params![key.kind, key.id])
        .map_err(backend)?;
    match rows.next().map_err(backend)? {
        Some(row) => integer(
            "aggregate",
            || format!("{} {}", key.kind, key.id),
            "revision",
            row.get_ref(0).map_err(backend)?,
        ),
        None => Ok(0),
    }
}

/// A range scan over the primary key from `(kind, prefix)`, stopped at the first ID that no
/// longer starts with `prefix` (TEXT compares bytewise, so the matches are contiguous).
pub(crate) fn list(
    conn: &Connection,
    integrity: &Integrity,
    kind: &str,
    prefix: &str,
) -> Result<Vec<(String, Aggregate)>, StoreError> {
    let mut statement = conn.prepare_cached(LIST_SQL).map_err(backend)?;
    let mut rows = statement.query(params![kind, prefix]).map_err(backend)?;
    let mut found = Vec::new();
    while let Some(row) = rows.next().map_err(backend)? {
        let id = text(
            "aggregate",
            || format!("{kind} after {prefix:?}"),
            "id",
            row.get_ref(0).map_err(backend)?,
        )?;
        if !id.starts_with(prefix) {
            break;
        }
        let aggregate = checked_aggregate(integrity, kind, &id, row, 1)?;
        found.push((id, aggregate));
    }
    Ok(found)
}

/// What a receipt lookup found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// The stored receipt, checked against its checksum.
    Stored(Receipt),
    /// No receipt, but this row (`event g #n`, `aggregate kind id`) records the Action: the
    /// receipt was removed.
    Recorded(String),
    /// No receipt and no record: a new Action.
    Absent,
}

/// The receipt of `key` as a read answers it: the stored receipt, checked against its
/// checksum; or, when none is stored, nothing — unless a stored row records the Action, which
/// means its receipt was removed ([`missing_receipt`]).
pub(crate) fn receipt(
    conn: &Connection,
    integrity: &Integrity,
    key: &ReceiptKey,
) -> Result<Option<Receipt>, StoreError> {
    match lookup(conn, integrity, key)? {
        Lookup::Stored(receipt) => Ok(Some(receipt)),
        Lookup::Recorded(row) => Err(missing_receipt(key, &row)),
        Lookup::Absent => Ok(None),
    }
}

/// The receipt of `key`, or the row recording its Action, in one statement.
pub(crate) fn lookup(
    conn: &Connection,
    integrity: &Integrity,
    key: &ReceiptKey,
) -> Result<Lookup, StoreError> {
    let action = action_key(key);
    let mut statement = conn.prepare_cached(RECEIPT_SQL).map_err(backend)?;
    let mut rows = statement
        .query(params![
            key.actor_type,
            key.actor_id,
            key.action_id,
            &action[..]
        ])
        .map_err(backend)?;
    let Some(row) = rows.next().map_err(backend)? else {
        return Err(StoreError::Backend {
            detail: "the receipt lookup answered no row".to_owned(),
        });
    };
    let locator = || missionweaveprotocol_engine::store::integrity::receipt_locator(key);
    let column = |i: usize| row.get_ref(i).map_err(backend);
    let null =
        |value: rusqlite::types::ValueRef<'_>| value.data_type() == rusqlite::types::Type::Null;
    if null(column(0)?) {
        if !null(column(5)?) {
            let group = text_ref("event", locator, "group_id", column(5)?)?;
            let sequence = integer("event", locator, "sequence", column(6)?)?;
            return Ok(Lookup::Recorded(format!("event {group} #{sequence}")));
        }
        if !null(column(7)?) {
            let kind = text_ref("aggregate", locator, "kind", column(7)?)?;
            let id = text_ref("aggregate", locator, "id", column(8)?)?;
            return Ok(Lookup::Recorded(format!("aggregate {kind} {id}")));
        }
        return Ok(Lookup::Absent);
    }
    let signing_hash = text("receipt", locator, "signing_hash", column(0)?)?;
    let event_id = text("receipt", locator, "event_id", column(1)?)?;
    let group = column(2)?;
    let sequence = column(3)?;
    let position = match (group.data_type(), sequence.data_type()) {
        (rusqlite::types::Type::Null, rusqlite::types::Type::Null) => None,
        (rusqlite::types::Type::Null, _) | (_, rusqlite::types::Type::Null) => {
            return Err(corrupt(
                "receipt",
                locator(),
                "a Group without a sequence or a sequence without a Group".to_owned(),
            ));
        }
        _ => Some((
            text("receipt", locator, "group_id", group)?,
            integer("receipt", locator, "sequence", sequence)?,
        )),
    };
    let receipt = Receipt {
        signing_hash,
        first_event: EventRef { event_id, position },
    };
    let stored = bytes("receipt", locator, "checksum", column(4)?)?;
    integrity.check_receipt(key, &receipt, stored)?;
    Ok(Lookup::Stored(receipt))
}

/// A Group's head with what integrity checks need: the chain hash before the first online
/// sequence and the chain hash of the last row (`tip`, `chain_before` when nothing is online).
#[derive(Debug, Clone)]
pub(crate) struct GroupState {
    pub(crate) head: GroupHead,
    pub(crate) chain_before: Hash32,
    pub(crate) tip: Hash32,
}

/// The state of `group`, `None` for a Group without a log. Checks the head against the log's
/// last row (one more seek on the log's key): the head may not promise a row that is missing,
/// and no row may lie past it.
pub(crate) fn group_state(
    conn: &Connection,
    integrity: &Integrity,
    group: &str,
) -> Result<Option<GroupState>, StoreError> {
    let mut statement = conn
        .prepare_cached(
            "SELECT next_sequence, first_online, snapshot_hash, chain_before, checksum \
             FROM groups WHERE group_id = ?1",
        )
        .map_err(backend)?;
    let mut rows = statement.query([group]).map_err(backend)?;
    let Some(row) = rows.next().map_err(backend)? else {
        return Ok(None);
    };
    let locator = || group.to_owned();
    let column = |i: usize| row.get_ref(i).map_err(backend);
    let next_sequence = integer("group", locator, "next_sequence", column(0)?)?;
    let first_online = integer("group", locator, "first_online", column(1)?)?;
    let snapshot = match column(2)? {
        rusqlite::types::ValueRef::Null => None,
        value => Some(SnapshotPointer {
            artifact_hash: text("group", locator, "snapshot_hash", value)?,
        }),
    };
    let chain_before = hash_from_slice(
        "group",
        locator,
        bytes("group", locator, "chain_before", column(3)?)?,
    )?;
    if first_online == 0 || first_online > next_sequence {
        return Err(corrupt(
            "group",
            locator(),
            format!("first online sequence {first_online} is outside 1..={next_sequence}"),
        ));
    }
    let head = GroupHead {
        next_sequence,
        first_online,
        snapshot,
    };
    // The head as a whole (a log cut short and its head moved back, an archive boundary
    // moved) before the log against it.
    integrity.check_head(
        group,
        &head,
        &chain_before,
        bytes("group", locator, "checksum", column(4)?)?,
    )?;
    let tip = check_last_row(conn, group, &head)?.unwrap_or(chain_before);
    Ok(Some(GroupState {
        head,
        chain_before,
        tip,
    }))
}

/// The log's last row against the head; the last row's stored chain hash, if any is online.
///
/// Two point reads on the log's full primary key: the head's last sequence must be there
/// (when anything is online) and its next sequence must not. Only full-key lookups: with the
/// bundled SQLite's STAT4, a statement constraining part of the key by a bound parameter is
/// re-prepared on every execution, which would cost each commit more than both reads.
fn check_last_row(
    conn: &Connection,
    group: &str,
    head: &GroupHead,
) -> Result<Option<Hash32>, StoreError> {
    let last_sequence = head.last_sequence();
    let tip = if head.next_sequence > head.first_online {
        match row_chain(conn, group, last_sequence)? {
            Some(hash) => Some(hash),
            None => {
                return Err(corrupt(
                    "event",
                    format!("{group} #{last_sequence}"),
                    format!(
                        "sequence {last_sequence} is missing: the head says the log reaches it"
                    ),
                ));
            }
        }
    } else {
        None
    };
    if row_chain(conn, group, head.next_sequence)?.is_some() {
        return Err(corrupt(
            "group",
            group.to_owned(),
            format!(
                "row #{} lies past the head (next sequence {})",
                head.next_sequence, head.next_sequence
            ),
        ));
    }
    Ok(tip)
}

/// The stored chain hash of the row at `sequence`, if there is one.
fn row_chain(conn: &Connection, group: &str, sequence: u64) -> Result<Option<Hash32>, StoreError> {
    let mut statement = conn
        .prepare_cached("SELECT chain_hash FROM events WHERE group_id = ?1 AND sequence = ?2")
        .map_err(backend)?;
    let mut rows = statement
        .query(params![group, to_sql("sequence", sequence)?])
        .map_err(backend)?;
    let Some(row) = rows.next().map_err(backend)? else {
        return Ok(None);
    };
    let locator = || format!("{group} #{sequence}");
    let hash = bytes(
        "event",
        locator,
        "chain_hash",
        row.get_ref(0).map_err(backend)?,
    )?;
    hash_from_slice("event", locator, hash).map(Some)
}

/// The head of `group` (checked, `group_state`), `None` for a Group without a log.
pub(crate) fn head(
    conn: &Connection,
    integrity: &Integrity,
    group: &str,
) -> Result<Option<GroupHead>, StoreError> {
    Ok(group_state(conn, integrity, group)?.map(|state| state.head))
}

/// The stored chain hash of the row at `sequence` (missing: a damaged log).
pub(crate) fn stored_chain(
    conn: &Connection,
    group: &str,
    sequence: u64,
) -> Result<Hash32, StoreError> {
    row_chain(conn, group, sequence)?.ok_or_else(|| missing_event(group, sequence))
}

/// One replay page, planned as every store plans it (`store::read_rules::PagePlan`, §16): a
/// cursor before the archive answers `CURSOR_TOO_OLD`, one at or past the head an empty page,
/// an unknown Group an empty page with `last_sequence` 0. Every row is checked against the
/// chain from the stored hash of the row before the page (`chain_before` at the first online
/// sequence).
pub(crate) fn replay(
    conn: &Connection,
    integrity: &Integrity,
    group: &str,
    after_sequence: u64,
    limit: usize,
) -> Result<ReplayPage, StoreError> {
    read_rules::check_limit(limit)?;
    let Some(state) = group_state(conn, integrity, group)? else {
        return Ok(read_rules::absent_page());
    };
    let plan = PagePlan::for_head(group, after_sequence, limit, &state.head)?;
    let mut events = Vec::new();
    if plan.count > 0 {
        let anchor = match plan.anchor() {
            Some(sequence) => stored_chain(conn, group, sequence)?,
            None => state.chain_before,
        };
        events = verified_rows(conn, integrity, group, plan.start, anchor, plan.count)?;
        if let Some(missing) = plan.first_missing(events.len()) {
            return Err(corrupt(
                "event",
                format!("{group} #{missing}"),
                format!(
                    "sequence {missing} is missing: the head says the log reaches {}",
                    plan.last_sequence
                ),
            ));
        }
    }
    Ok(plan.page(events))
}

/// Up to `count` rows of `group` from `start`, each checked against the chain from `anchor`.
fn verified_rows(
    conn: &Connection,
    integrity: &Integrity,
    group: &str,
    start: u64,
    anchor: Hash32,
    count: u64,
) -> Result<Vec<EventRecord>, StoreError> {
    let mut statement = conn.prepare_cached(REPLAY_SQL).map_err(backend)?;
    let mut rows = statement
        .query(params![
            group,
            to_sql("after_sequence", start)?,
            i64::try_from(count).unwrap_or(i64::MAX)
        ])
        .map_err(backend)?;
    let mut verifier = integrity.verifier(group, start, anchor);
    let mut events = Vec::with_capacity(usize::try_from(count.min(4096)).unwrap_or(0));
    while let Some(row) = rows.next().map_err(backend)? {
        let column = |i: usize| row.get_ref(i).map_err(backend);
        let sequence = integer(
            "event",
            || format!("{group} (after #{})", start + events.len() as u64),
            "sequence",
            column(0)?,
        )?;
        let locator = || format!("{group} #{sequence}");
        let event_id = text_ref("event", locator, "event_id", column(1)?)?;
        let body = bytes("event", locator, "body", column(2)?)?;
        let stored = hash_from_slice(
            "event",
            locator,
            bytes("event", locator, "chain_hash", column(3)?)?,
        )?;
        let action = optional_hash("event", locator, "action_key", column(4)?)?;
        verifier.check(sequence, event_id, body, action.as_ref(), &stored)?;
        events.push(EventRecord {
            sequence,
            event_id: Arc::from(event_id),
            body: body.into(),
        });
    }
    Ok(events)
}

#[cfg(test)]
mod tests {
    //! Every read statement is prepared once per connection and reused: with the bundled
    //! SQLite's STAT4, a statement whose plan could depend on a bound value is re-prepared on
    //! every execution once `sqlite_stat4` holds samples, so the range reads (`list`, replay)
    //! are checked with and without `ANALYZE`.
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use missionweaveprotocol_engine::store::{
        AggregateKey, EventRecord, Integrity, StoreOptions, Transaction,
    };
    use rusqlite::{Connection, StatementStatus};

    use super::{AGGREGATE_SQL, LIST_SQL, REPLAY_SQL};

    fn store(plan_once: bool) -> Connection {
        let mut conn = Connection::open_in_memory().unwrap();
        if plan_once {
            super::plan_once(&conn).unwrap();
        }
        crate::schema::migrate(&conn, &StoreOptions::default()).unwrap();
        for g in 0..20 {
            let group = format!("g{g}");
            let mut tx = Transaction::new();
            for sequence in 1..=30 {
                tx.append(
                    &group,
                    EventRecord::new(sequence, &format!("{group}-{sequence}"), &b"{}"[..]),
                );
                tx.put(
                    AggregateKey::new("mission", format!("{group}/{sequence}")),
                    0,
                    b"{}"[..].into(),
                );
            }
            crate::commit::commit(&mut conn, &Integrity::unkeyed(), &tx).unwrap();
        }
        conn
    }

    /// (executions, re-preparations) of the cached statement `sql`.
    fn status(conn: &Connection, sql: &str) -> (i32, i32) {
        let statement = conn.prepare_cached(sql).unwrap();
        (
            statement.get_status(StatementStatus::Run),
            statement.get_status(StatementStatus::RePrepare),
        )
    }

    fn reads(conn: &Connection, rounds: u64) {
        for i in 0..rounds {
            let group = format!("g{}", i % 20);
            assert_eq!(
                super::list(conn, &Integrity::unkeyed(), "mission", &format!("{group}/"))
                    .unwrap()
                    .len(),
                30
            );
            let page = super::replay(conn, &Integrity::unkeyed(), &group, i % 25, 5).unwrap();
            assert_eq!(page.events.len(), 5);
            let key = AggregateKey::new("mission", format!("{group}/1"));
            assert!(
                super::aggregate(conn, &Integrity::unkeyed(), &key)
                    .unwrap()
                    .is_some()
            );
        }
    }

    fn assert_reused(conn: &Connection, rounds: i32) {
        for sql in [REPLAY_SQL, AGGREGATE_SQL, LIST_SQL] {
            let (runs, reprepared) = status(conn, sql);
            assert!(runs >= rounds, "{sql}: {runs} runs");
            assert_eq!(reprepared, 0, "{sql}: re-prepared {reprepared} times");
        }
    }

    #[test]
    fn read_statements_are_prepared_once() {
        let conn = store(true);
        reads(&conn, 40);
        assert_reused(&conn, 40);
    }

    #[test]
    fn read_statements_are_prepared_once_after_analyze() {
        let conn = store(true);
        conn.execute_batch("ANALYZE").unwrap();
        let samples: i64 = conn
            .query_row("SELECT count(*) FROM sqlite_stat4", [], |row| row.get(0))
            .unwrap();
        assert!(samples > 0, "ANALYZE wrote no STAT4 samples");
        reads(&conn, 40);
        assert_reused(&conn, 40);
    }

    /// The receipt lookup probes the partial `action_key` indexes (never a scan of the log),
    /// with the plan fixed once (`plan_once`), and answers what it finds.
    #[test]
    fn the_receipt_lookup_probes_the_action_indexes() {
        let conn = store(true);
        let plan: Vec<String> = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {}", super::RECEIPT_SQL))
            .unwrap()
            .query_map(
                rusqlite::params![
                    "agent",
                    "a",
                    "act",
                    &missionweaveprotocol_engine::store::integrity::GENESIS[..]
                ],
                |row| row.get::<_, String>(3),
            )
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let plan = plan.join("\n");
        assert!(plan.contains("events_by_action"), "{plan}");
        assert!(plan.contains("aggregates_by_action"), "{plan}");
        assert!(
            !plan.contains("SCAN e") && !plan.contains("SCAN a"),
            "{plan}"
        );
        let key = missionweaveprotocol_engine::store::ReceiptKey::new("agent", "a", "act");
        assert_eq!(
            super::lookup(&conn, &Integrity::unkeyed(), &key).unwrap(),
            super::Lookup::Absent
        );
    }

    /// Why `plan_once` exists: without it the range reads are prepared again on every run.
    #[test]
    fn range_reads_are_prepared_again_without_plan_once() {
        let conn = store(false);
        reads(&conn, 40);
        for sql in [REPLAY_SQL, LIST_SQL] {
            let (runs, reprepared) = status(&conn, sql);
            assert!(
                runs >= 40 && reprepared >= 39,
                "{sql}: {runs} runs, {reprepared}"
            );
        }
        assert_eq!(status(&conn, AGGREGATE_SQL).1, 0);
    }
}
