//! Sealing a database under an integrity scheme (`store::integrity`, `docs/store.md` "Data at
//! rest"): the `integrity` table that records the scheme, the check of the scheme and key a
//! store is opened with, and [`reseal`], which authenticates every row anew — when migration 3
//! binds receipts to their Events, and when an unkeyed store adopts a key
//! (`StoreOptions::adopt_key`).
//!
//! Resealing never launders damage: each row is first verified as it was sealed (the
//! version-2 formulas, or the unkeyed scheme), and a row that fails gets a
//! [`poisoned`](missionweaveprotocol_engine::store::integrity::poisoned) authenticator, so it is reported at the same place afterwards; the rows after
//! it chain from what is stored, as a reader starting after the damage would.

use std::collections::HashMap;

use missionweaveprotocol_engine::store::integrity::{
    GENESIS, Hash32, SealCheck, action_key, check_seal, hash_from_slice, sealed, v1,
};
use missionweaveprotocol_engine::store::{
    EventRef, GroupHead, Integrity, Receipt, ReceiptKey, SnapshotPointer, StoreError, StoreOptions,
};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, params};

use crate::convert::{backend, bytes, corrupt, integer, text, to_sql};
use crate::read::optional_hash;

/// How the rows being resealed were sealed before.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Sealed<'a> {
    /// Schema version 2: the version-1 Event chain and aggregate checksums
    /// (`integrity::v1`), no receipt or head checksums, no recorded Actions.
    Version2,
    /// Schema version 3 under `Integrity` (an unkeyed store adopting a key).
    Current(&'a Integrity),
}

/// Rows read and rewritten per statement: bounded memory, whatever the store's size.
const PAGE: i64 = 512;

/// Authenticates every row under `to`, verifying it first as `from` sealed it, and records
/// `to` in the `integrity` table. Runs inside the caller's write transaction.
pub(crate) fn reseal(
    conn: &Connection,
    from: Sealed<'_>,
    to: &Integrity,
) -> Result<(), StoreError> {
    let unbound = receipts(conn, from, to)?;
    let groups = heads(conn, from, to)?;
    events(conn, from, to, &groups)?;
    aggregates(conn, from, to, unbound)?;
    // A key sealing Events that were stored before it vouches for rows it did not
    // authenticate when they were written (`Integrity::adopted_key_check`); sealing a store
    // without Events (a new one) does not.
    let over_events: bool = conn
        .query_row("SELECT EXISTS (SELECT 1 FROM events)", [], |row| row.get(0))
        .map_err(backend)?;
    record(conn, to, over_events)
}

/// Records `integrity`'s scheme (and key check) as the store's.
fn record(conn: &Connection, integrity: &Integrity, over_events: bool) -> Result<(), StoreError> {
    conn.execute("DELETE FROM integrity", []).map_err(backend)?;
    conn.execute(
        "INSERT INTO integrity (scheme, key_check) VALUES (?1, ?2)",
        params![
            integrity.scheme(),
            integrity
                .recorded_key_check(over_events)
                .as_ref()
                .map(|check| &check[..])
        ],
    )
    .map_err(backend)?;
    Ok(())
}

/// Whether every Event of a store opened under `integrity` (checked by [`check`]) has been
/// authenticated under its key since it was written: keyed, and not a key adopted over stored
/// Events (`Store::authenticates_events`).
pub(crate) fn events_authenticated(
    conn: &Connection,
    integrity: &Integrity,
) -> Result<bool, StoreError> {
    let Some(born) = integrity.key_check() else {
        return Ok(false);
    };
    let recorded: Option<Vec<u8>> = conn
        .query_row("SELECT key_check FROM integrity", [], |row| row.get(0))
        .map_err(backend)?;
    Ok(recorded.as_deref() == Some(&born[..]))
}

/// The scheme a store at the current version is sealed with, checked against `options`:
/// answers the scheme to read and write with. A keyed store opens only with its key; an
/// unkeyed one with a key only when the options adopt it (then it is resealed here).
pub(crate) fn check(conn: &Connection, options: &StoreOptions) -> Result<Integrity, StoreError> {
    let wanted = options.integrity();
    let damaged = |detail: String| corrupt("store", "integrity".to_owned(), detail);
    let mut statement = conn
        .prepare("SELECT scheme, key_check FROM integrity")
        .map_err(backend)?;
    let mut rows = statement.query([]).map_err(backend)?;
    let Some(row) = rows.next().map_err(backend)? else {
        return Err(damaged("the store records no integrity scheme".to_owned()));
    };
    let locator = || "integrity".to_owned();
    let scheme = text("store", locator, "scheme", row.get_ref(0).map_err(backend)?)?;
    let key_check = optional_hash(
        "store",
        locator,
        "key_check",
        row.get_ref(1).map_err(backend)?,
    )?;
    if rows.next().map_err(backend)?.is_some() {
        return Err(damaged(
            "the store records two integrity schemes".to_owned(),
        ));
    }
    drop(rows);
    drop(statement);
    match check_seal(
        &scheme,
        key_check.as_ref().map(|c| &c[..]),
        &wanted,
        options.adopt_key,
        damaged,
    )? {
        SealCheck::Accept | SealCheck::AcceptAdopted => {}
        SealCheck::Adopt => reseal(conn, Sealed::Current(&Integrity::unkeyed()), &wanted)?,
    }
    Ok(wanted)
}

/// A key column read back as text (the locator of a row that has none).
fn key_text(value: ValueRef<'_>, column: &str, what: &'static str) -> Result<String, StoreError> {
    text(what, || format!("a {what} row"), column, value)
}

/// Reseals every receipt; in a version-2 store, records each receipt's Action in the Event at
/// its position (when that Event is there, under the receipt's Event ID). Answers the Actions
/// of receipts without a position, by Event ID, for the aggregates holding those Events.
fn receipts(
    conn: &Connection,
    from: Sealed<'_>,
    to: &Integrity,
) -> Result<HashMap<String, Hash32>, StoreError> {
    let mut unbound = HashMap::new();
    let mut after: Option<(String, String, String)> = None;
    loop {
        const COLUMNS: &str = "SELECT actor_type, actor_id, action_id, signing_hash, event_id, \
             group_id, sequence, checksum FROM receipts";
        let mut select;
        let mut rows = match &after {
            None => {
                select = conn
                    .prepare_cached(&format!(
                        "{COLUMNS} ORDER BY actor_type, actor_id, action_id LIMIT ?1"
                    ))
                    .map_err(backend)?;
                select.query(params![PAGE])
            }
            Some((actor_type, actor_id, action_id)) => {
                select = conn
                    .prepare_cached(&format!(
                        "{COLUMNS} WHERE (actor_type, actor_id, action_id) > (?1, ?2, ?3) \
                         ORDER BY actor_type, actor_id, action_id LIMIT ?4"
                    ))
                    .map_err(backend)?;
                select.query(params![actor_type, actor_id, action_id, PAGE])
            }
        }
        .map_err(backend)?;
        let mut page = Vec::new();
        while let Some(row) = rows.next().map_err(backend)? {
            let column = |i: usize| row.get_ref(i).map_err(backend);
            let key = ReceiptKey::new(
                key_text(column(0)?, "actor_type", "receipt")?,
                key_text(column(1)?, "actor_id", "receipt")?,
                key_text(column(2)?, "action_id", "receipt")?,
            );
            let locator = || missionweaveprotocol_engine::store::integrity::receipt_locator(&key);
            let signing_hash = text("receipt", locator, "signing_hash", column(3)?)?;
            let event_id = text("receipt", locator, "event_id", column(4)?)?;
            let position = match (column(5)?, column(6)?) {
                (ValueRef::Null, ValueRef::Null) => None,
                (group, sequence) => Some((
                    text("receipt", locator, "group_id", group)?,
                    integer("receipt", locator, "sequence", sequence)?,
                )),
            };
            let receipt = Receipt {
                signing_hash,
                first_event: EventRef { event_id, position },
            };
            let ok = match from {
                Sealed::Version2 => true,
                Sealed::Current(integrity) => {
                    let stored = bytes("receipt", locator, "checksum", column(7)?)?;
                    integrity.check_receipt(&key, &receipt, stored).is_ok()
                }
            };
            page.push((key, receipt, ok));
        }
        drop(rows);
        drop(select);
        let Some((last, _, _)) = page.last() else {
            return Ok(unbound);
        };
        after = Some((
            last.actor_type.clone(),
            last.actor_id.clone(),
            last.action_id.clone(),
        ));
        for (key, receipt, ok) in &page {
            let checksum = sealed(to.receipt_checksum(key, receipt), *ok);
            conn.prepare_cached(
                "UPDATE receipts SET checksum = ?4 \
                 WHERE actor_type = ?1 AND actor_id = ?2 AND action_id = ?3",
            )
            .map_err(backend)?
            .execute(params![
                key.actor_type,
                key.actor_id,
                key.action_id,
                &checksum[..]
            ])
            .map_err(backend)?;
            if !matches!(from, Sealed::Version2) {
                // A version-3 store records its Actions already (and verifies them below).
                continue;
            }
            let action = action_key(key);
            match &receipt.first_event.position {
                Some((group, sequence)) => {
                    conn.prepare_cached(
                        "UPDATE events SET action_key = ?4 WHERE group_id = ?1 \
                         AND sequence = ?2 AND event_id = ?3 AND action_key IS NULL",
                    )
                    .map_err(backend)?
                    .execute(params![
                        group,
                        to_sql("sequence", *sequence)?,
                        receipt.first_event.event_id,
                        &action[..]
                    ])
                    .map_err(backend)?;
                }
                None => {
                    unbound.insert(receipt.first_event.event_id.clone(), action);
                }
            }
        }
    }
}

/// What the Event pass needs of a Group: its first online sequence and `chain_before`.
struct Anchor {
    first_online: u64,
    chain_before: Hash32,
}

/// Reseals every Group head; answers each Group's anchor.
fn heads(
    conn: &Connection,
    from: Sealed<'_>,
    to: &Integrity,
) -> Result<HashMap<String, Anchor>, StoreError> {
    let mut anchors = HashMap::new();
    let mut rows_read = Vec::new();
    {
        let mut select = conn
            .prepare(
                "SELECT group_id, next_sequence, first_online, snapshot_hash, chain_before, \
                 checksum FROM groups",
            )
            .map_err(backend)?;
        let mut rows = select.query([]).map_err(backend)?;
        while let Some(row) = rows.next().map_err(backend)? {
            let column = |i: usize| row.get_ref(i).map_err(backend);
            let group = key_text(column(0)?, "group_id", "group")?;
            let locator = || group.clone();
            let head = GroupHead {
                next_sequence: integer("group", locator, "next_sequence", column(1)?)?,
                first_online: integer("group", locator, "first_online", column(2)?)?,
                snapshot: match column(3)? {
                    ValueRef::Null => None,
                    value => Some(SnapshotPointer {
                        artifact_hash: text("group", locator, "snapshot_hash", value)?,
                    }),
                },
            };
            let chain_before = hash_from_slice(
                "group",
                locator,
                bytes("group", locator, "chain_before", column(4)?)?,
            )?;
            let ok = match from {
                Sealed::Version2 => true,
                Sealed::Current(integrity) => {
                    let stored = bytes("group", locator, "checksum", column(5)?)?;
                    integrity
                        .check_head(&group, &head, &chain_before, stored)
                        .is_ok()
                }
            };
            rows_read.push((group, head, chain_before, ok));
        }
    }
    for (group, head, chain_before, ok) in rows_read {
        let checksum = sealed(to.head_checksum(&group, &head, &chain_before), ok);
        conn.prepare_cached("UPDATE groups SET checksum = ?2 WHERE group_id = ?1")
            .map_err(backend)?
            .execute(params![group, &checksum[..]])
            .map_err(backend)?;
        anchors.insert(
            group,
            Anchor {
                first_online: head.first_online,
                chain_before,
            },
        );
    }
    Ok(anchors)
}

/// Where the Event pass stands in the Group it is in: the previous row's stored hash as sealed
/// before and as sealed now, and the sequence the next row should have.
struct Cursor {
    group: String,
    old: Hash32,
    new: Hash32,
    next: u64,
}

/// Reseals every Event, Group by Group in sequence order.
fn events(
    conn: &Connection,
    from: Sealed<'_>,
    to: &Integrity,
    anchors: &HashMap<String, Anchor>,
) -> Result<(), StoreError> {
    let mut cursor: Option<Cursor> = None;
    let mut after: (String, i64) = (String::new(), -1);
    loop {
        let mut page = Vec::new();
        {
            let mut select = conn
                .prepare_cached(
                    "SELECT group_id, sequence, event_id, body, chain_hash, action_key \
                     FROM events WHERE (group_id, sequence) > (?1, ?2) \
                     ORDER BY group_id, sequence LIMIT ?3",
                )
                .map_err(backend)?;
            let mut rows = select
                .query(params![after.0, after.1, PAGE])
                .map_err(backend)?;
            while let Some(row) = rows.next().map_err(backend)? {
                let column = |i: usize| row.get_ref(i).map_err(backend);
                let group = key_text(column(0)?, "group_id", "event")?;
                let sequence = integer("event", || group.clone(), "sequence", column(1)?)?;
                let locator = || format!("{group} #{sequence}");
                let event_id = text("event", locator, "event_id", column(2)?)?;
                let body = bytes("event", locator, "body", column(3)?)?.to_vec();
                let stored = hash_from_slice(
                    "event",
                    locator,
                    bytes("event", locator, "chain_hash", column(4)?)?,
                )?;
                let action = optional_hash("event", locator, "action_key", column(5)?)?;
                page.push((group, sequence, event_id, body, stored, action));
            }
        }
        let Some((group, sequence, ..)) = page.last() else {
            return Ok(());
        };
        after = (group.clone(), to_sql("sequence", *sequence)?);
        for (group, sequence, event_id, body, stored, action) in page {
            let current = match cursor.take() {
                Some(cursor) if cursor.group == group => cursor,
                _ => {
                    let anchor = anchors.get(&group);
                    let before = anchor.map_or(GENESIS, |a| a.chain_before);
                    Cursor {
                        group: group.clone(),
                        old: before,
                        new: before,
                        next: anchor.map_or(1, |a| a.first_online),
                    }
                }
            };
            let expected = match from {
                Sealed::Version2 => {
                    v1::event_chain(&current.old, &group, sequence, &event_id, &body)
                }
                Sealed::Current(integrity) => integrity.event_chain(
                    &current.old,
                    &group,
                    sequence,
                    &event_id,
                    &body,
                    action.as_ref(),
                ),
            };
            let ok = sequence == current.next && expected == stored;
            let new = sealed(
                to.event_chain(
                    &current.new,
                    &group,
                    sequence,
                    &event_id,
                    &body,
                    action.as_ref(),
                ),
                ok,
            );
            conn.prepare_cached(
                "UPDATE events SET chain_hash = ?3 WHERE group_id = ?1 AND sequence = ?2",
            )
            .map_err(backend)?
            .execute(params![group, to_sql("sequence", sequence)?, &new[..]])
            .map_err(backend)?;
            cursor = Some(Cursor {
                group,
                old: stored,
                new,
                next: sequence + 1,
            });
        }
    }
}

/// Reseals every aggregate; in a version-2 store, records the Action of each receipt without a
/// position in the aggregate holding its Event (the one stored under its Event ID).
fn aggregates(
    conn: &Connection,
    from: Sealed<'_>,
    to: &Integrity,
    mut unbound: HashMap<String, Hash32>,
) -> Result<(), StoreError> {
    let mut after: Option<(String, String)> = None;
    loop {
        let mut page = Vec::new();
        {
            const COLUMNS: &str =
                "SELECT kind, id, revision, value, checksum, action_key FROM aggregates";
            let mut select;
            let mut rows = match &after {
                None => {
                    select = conn
                        .prepare_cached(&format!("{COLUMNS} ORDER BY kind, id LIMIT ?1"))
                        .map_err(backend)?;
                    select.query(params![PAGE])
                }
                Some((kind, id)) => {
                    select = conn
                        .prepare_cached(&format!(
                            "{COLUMNS} WHERE (kind, id) > (?1, ?2) ORDER BY kind, id LIMIT ?3"
                        ))
                        .map_err(backend)?;
                    select.query(params![kind, id, PAGE])
                }
            }
            .map_err(backend)?;
            while let Some(row) = rows.next().map_err(backend)? {
                let column = |i: usize| row.get_ref(i).map_err(backend);
                let kind = key_text(column(0)?, "kind", "aggregate")?;
                let id = key_text(column(1)?, "id", "aggregate")?;
                let locator = || format!("{kind} {id}");
                let revision = integer("aggregate", locator, "revision", column(2)?)?;
                let value = bytes("aggregate", locator, "value", column(3)?)?.to_vec();
                let stored = hash_from_slice(
                    "aggregate",
                    locator,
                    bytes("aggregate", locator, "checksum", column(4)?)?,
                )?;
                let action = optional_hash("aggregate", locator, "action_key", column(5)?)?;
                page.push((kind, id, revision, value, stored, action));
            }
        }
        let Some((kind, id, ..)) = page.last() else {
            return Ok(());
        };
        after = Some((kind.clone(), id.clone()));
        for (kind, id, revision, value, stored, action) in page {
            let ok = match from {
                Sealed::Version2 => v1::aggregate_checksum(&kind, &id, revision, &value) == stored,
                Sealed::Current(integrity) => integrity
                    .check_aggregate(&kind, &id, revision, &value, action.as_ref(), &stored)
                    .is_ok(),
            };
            let action = action.or_else(|| unbound.remove(&id));
            let checksum = sealed(
                to.aggregate_checksum(&kind, &id, revision, &value, action.as_ref()),
                ok,
            );
            conn.prepare_cached(
                "UPDATE aggregates SET checksum = ?3, action_key = ?4 WHERE kind = ?1 AND id = ?2",
            )
            .map_err(backend)?
            .execute(params![
                kind,
                id,
                &checksum[..],
                action.as_ref().map(|a| &a[..])
            ])
            .map_err(backend)?;
        }
    }
}
