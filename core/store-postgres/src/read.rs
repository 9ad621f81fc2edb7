//! Reads of committed state, each one statement on a pooled connection (one snapshot), each
//! row checked against its integrity column before it is served (`store::integrity`):
//! aggregates against their checksum, Event pages against the Group's hash chain.

use std::sync::Arc;

use missionweaveprotocol_engine::store::integrity::{self, ChainVerifier};
use missionweaveprotocol_engine::store::read_rules::{self, PagePlan};
use missionweaveprotocol_engine::store::{
    Aggregate, AggregateKey, EventRecord, EventRef, GroupHead, Receipt, ReceiptKey, ReplayPage,
    SnapshotPointer, StoreError,
};
use postgres::Row;

use crate::convert::{backend, from_sql, prefix_successor, storable, to_sql};
use crate::pool::Conn;

/// An aggregate row (`revision`, `value`, `checksum` from column `first`) checked against its
/// checksum.
pub(crate) fn checked_aggregate(
    kind: &str,
    id: &str,
    row: &Row,
    first: usize,
) -> Result<Aggregate, StoreError> {
    let revision = from_sql("revision", row.try_get(first).map_err(backend)?)?;
    let value: &[u8] = row.try_get(first + 1).map_err(backend)?;
    let stored: &[u8] = row.try_get(first + 2).map_err(backend)?;
    integrity::verified_aggregate(kind, id, revision, value, stored)
}

pub(crate) fn aggregate(
    conn: &mut Conn,
    key: &AggregateKey,
) -> Result<Option<Aggregate>, StoreError> {
    if !storable(&key.kind) || !storable(&key.id) {
        return Ok(None);
    }
    let row = conn
        .client
        .query_opt(&conn.statements.aggregate, &[&key.kind, &key.id])
        .map_err(backend)?;
    row.map(|row| checked_aggregate(&key.kind, &key.id, &row, 0))
        .transpose()
}

/// A range scan over the primary key from `(kind, prefix)` to the prefix's successor.
pub(crate) fn list(
    conn: &mut Conn,
    kind: &str,
    prefix: &str,
) -> Result<Vec<(String, Aggregate)>, StoreError> {
    if !storable(kind) || !storable(prefix) {
        return Ok(Vec::new());
    }
    let rows = match prefix_successor(prefix) {
        Some(bound) => conn
            .client
            .query(&conn.statements.list_bounded, &[&kind, &prefix, &bound]),
        None => conn.client.query(&conn.statements.list, &[&kind, &prefix]),
    }
    .map_err(backend)?;
    let mut found = Vec::with_capacity(rows.len());
    for row in rows {
        let id: String = row.try_get(0).map_err(backend)?;
        if !id.starts_with(prefix) {
            continue;
        }
        let aggregate = checked_aggregate(kind, &id, &row, 1)?;
        found.push((id, aggregate));
    }
    Ok(found)
}

/// A receipt row (`signing_hash`, `event_id`, `group_id`, `sequence` from column `first`).
pub(crate) fn receipt_from_row(row: &Row, first: usize) -> Result<Receipt, StoreError> {
    let signing_hash: String = row.try_get(first).map_err(backend)?;
    let event_id: String = row.try_get(first + 1).map_err(backend)?;
    let group: Option<String> = row.try_get(first + 2).map_err(backend)?;
    let sequence: Option<i64> = row.try_get(first + 3).map_err(backend)?;
    let position = match (group, sequence) {
        (Some(group), Some(sequence)) => Some((group, from_sql("sequence", sequence)?)),
        (None, None) => None,
        _ => {
            return Err(StoreError::Corrupt {
                what: "receipt",
                locator: event_id,
                detail: "a Group without a sequence or the reverse".to_owned(),
            });
        }
    };
    Ok(Receipt {
        signing_hash,
        first_event: EventRef { event_id, position },
    })
}

pub(crate) fn receipt(conn: &mut Conn, key: &ReceiptKey) -> Result<Option<Receipt>, StoreError> {
    if ![&key.actor_type, &key.actor_id, &key.action_id]
        .iter()
        .all(|t| storable(t))
    {
        return Ok(None);
    }
    let row = conn
        .client
        .query_opt(
            &conn.statements.receipt,
            &[&key.actor_type, &key.actor_id, &key.action_id],
        )
        .map_err(backend)?;
    row.map(|row| receipt_from_row(&row, 0)).transpose()
}

fn snapshot(hash: Option<String>) -> Option<SnapshotPointer> {
    hash.map(|artifact_hash| SnapshotPointer { artifact_hash })
}

pub(crate) fn head(conn: &mut Conn, group: &str) -> Result<GroupHead, StoreError> {
    if !storable(group) {
        return Ok(read_rules::absent_head());
    }
    let Some(row) = conn
        .client
        .query_opt(&conn.statements.head, &[&group])
        .map_err(backend)?
    else {
        return Ok(read_rules::absent_head());
    };
    head_from_row(&row, 0, 1, 2)
}

/// A head row: `next_sequence`, `first_online` and `snapshot_hash` from the given columns.
pub(crate) fn head_from_row(
    row: &Row,
    next_sequence: usize,
    first_online: usize,
    snapshot_hash: usize,
) -> Result<GroupHead, StoreError> {
    Ok(GroupHead {
        next_sequence: from_sql(
            "next_sequence",
            row.try_get(next_sequence).map_err(backend)?,
        )?,
        first_online: from_sql("first_online", row.try_get(first_online).map_err(backend)?)?,
        snapshot: snapshot(row.try_get(snapshot_hash).map_err(backend)?),
    })
}

/// One replay page, planned as every store plans it (`store::read_rules::PagePlan`, §16), every
/// Event verified against the Group's hash chain from the stored hash just before the page: a
/// changed body or ID, a swapped or missing row is [`StoreError::Corrupt`], never a page with a
/// silent gap.
pub(crate) fn replay(
    conn: &mut Conn,
    group: &str,
    after_sequence: u64,
    limit: usize,
) -> Result<ReplayPage, StoreError> {
    read_rules::check_limit(limit)?;
    if !storable(group) {
        return Ok(read_rules::absent_page());
    }
    let wanted = after_sequence.saturating_add(1);
    // One row more than the page: the anchor before it.
    let rows_wanted = i64::try_from(limit).unwrap_or(i64::MAX - 1) + 1;
    let rows = conn
        .client
        .query(
            &conn.statements.replay,
            // A cursor past every storable sequence reads nothing (an empty page).
            &[
                &group,
                &i64::try_from(wanted).unwrap_or(i64::MAX),
                &rows_wanted,
            ],
        )
        .map_err(backend)?;
    let Some(first) = rows.first() else {
        return Ok(read_rules::absent_page());
    };
    let plan = PagePlan::for_head(
        group,
        after_sequence,
        limit,
        &head_from_row(first, 0, 1, 2)?,
    )?;
    if plan.count == 0 {
        return Ok(plan.page(Vec::new()));
    }
    let locator = |sequence: u64| format!("{group} #{sequence}");
    let mut rows = rows.iter();
    let anchor = match plan.anchor() {
        // The row before the page: only its stored chain hash is used.
        Some(before) => {
            let row = rows
                .next()
                .ok_or_else(|| integrity::missing_event(group, before))?;
            let sequence: Option<i64> = row.try_get(4).map_err(backend)?;
            if sequence != Some(to_sql("sequence", before)?) {
                return Err(integrity::missing_event(group, before));
            }
            let stored: &[u8] = row.try_get(7).map_err(backend)?;
            integrity::hash_from_slice("event", || locator(before), stored)?
        }
        None => {
            let stored: &[u8] = first.try_get(3).map_err(backend)?;
            integrity::hash_from_slice("group", || group.to_owned(), stored)?
        }
    };
    let mut verifier = ChainVerifier::new(group, plan.start, anchor);
    let mut events = Vec::with_capacity(limit.min(rows.len()));
    for row in rows.take(limit) {
        let Some(sequence) = row.try_get::<_, Option<i64>>(4).map_err(backend)? else {
            break;
        };
        let sequence = from_sql("sequence", sequence)?;
        let event_id: &str = row.try_get(5).map_err(backend)?;
        let body: &[u8] = row.try_get(6).map_err(backend)?;
        let stored: &[u8] = row.try_get(7).map_err(backend)?;
        let stored = integrity::hash_from_slice("event", || locator(sequence), stored)?;
        verifier.check(sequence, event_id, body, &stored)?;
        events.push(EventRecord {
            sequence,
            event_id: Arc::from(event_id),
            body: body.into(),
        });
    }
    // The log holds every sequence from `first_online` to the head (§15.2).
    if let Some(missing) = plan.first_missing(events.len()) {
        return Err(integrity::missing_event(group, missing));
    }
    Ok(plan.page(events))
}
