//! Reads of committed state, each one statement on a pooled connection (one snapshot), each
//! row checked against its integrity column under the store's [`Integrity`] scheme before it
//! is served (`store::integrity`): aggregates, receipts and heads against their checksum,
//! Event pages against the Group's hash chain; a receipt not stored against the Actions the
//! rows record (a removed receipt is corrupt, never "new").

use std::sync::Arc;

use missionweaveprotocol_engine::store::integrity::{self, Hash32};
use missionweaveprotocol_engine::store::read_rules::{self, PagePlan};
use missionweaveprotocol_engine::store::{
    Aggregate, AggregateKey, EventRecord, EventRef, GroupHead, Integrity, Receipt, ReceiptKey,
    ReplayPage, SnapshotPointer, StoreError,
};
use postgres::Row;

use crate::convert::{backend, from_sql, prefix_successor, storable, to_sql};
use crate::pool::Conn;

/// Where an aggregate row's columns are: `revision`, `value`, `checksum`, `action_key`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AggregateColumns(pub usize, pub usize, pub usize, pub usize);

impl AggregateColumns {
    /// Four consecutive columns from `first`.
    pub(crate) const fn from(first: usize) -> Self {
        Self(first, first + 1, first + 2, first + 3)
    }
}

/// An aggregate row checked against its checksum.
pub(crate) fn checked_aggregate(
    integrity: &Integrity,
    kind: &str,
    id: &str,
    row: &Row,
    columns: AggregateColumns,
) -> Result<Aggregate, StoreError> {
    let AggregateColumns(revision, value, checksum, action) = columns;
    let revision = from_sql("revision", row.try_get(revision).map_err(backend)?)?;
    let value: &[u8] = row.try_get(value).map_err(backend)?;
    let stored: Option<&[u8]> = row.try_get(checksum).map_err(backend)?;
    let action: Option<&[u8]> = row.try_get(action).map_err(backend)?;
    integrity.verified_aggregate(
        kind,
        id,
        revision,
        value,
        action,
        stored.unwrap_or_default(),
    )
}

pub(crate) fn aggregate(
    conn: &mut Conn,
    integrity: &Integrity,
    key: &AggregateKey,
) -> Result<Option<Aggregate>, StoreError> {
    if !storable(&key.kind) || !storable(&key.id) {
        return Ok(None);
    }
    let row = conn
        .client
        .query_opt(&conn.statements.aggregate, &[&key.kind, &key.id])
        .map_err(backend)?;
    row.map(|row| {
        checked_aggregate(
            integrity,
            &key.kind,
            &key.id,
            &row,
            AggregateColumns::from(0),
        )
    })
    .transpose()
}

/// A range scan over the primary key from `(kind, prefix)` to the prefix's successor.
pub(crate) fn list(
    conn: &mut Conn,
    integrity: &Integrity,
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
        let aggregate = checked_aggregate(integrity, kind, &id, &row, AggregateColumns::from(1))?;
        found.push((id, aggregate));
    }
    Ok(found)
}

/// A stored receipt (`signing_hash`, `event_id`, `group_id`, `sequence` from column `first`,
/// its `checksum` at `first + 4`) checked against its checksum; `None` when the row holds no
/// receipt (a `LEFT JOIN` that found none).
pub(crate) fn receipt_from_row(
    integrity: &Integrity,
    key: &ReceiptKey,
    row: &Row,
    first: usize,
) -> Result<Option<Receipt>, StoreError> {
    let Some(signing_hash) = row.try_get::<_, Option<String>>(first).map_err(backend)? else {
        return Ok(None);
    };
    let locator = || integrity::receipt_locator(key);
    let event_id: Option<String> = row.try_get(first + 1).map_err(backend)?;
    let group: Option<String> = row.try_get(first + 2).map_err(backend)?;
    let sequence: Option<i64> = row.try_get(first + 3).map_err(backend)?;
    let corrupt = |detail: &str| StoreError::Corrupt {
        what: "receipt",
        locator: locator(),
        detail: detail.to_owned(),
    };
    let event_id = event_id.ok_or_else(|| corrupt("no first Event ID"))?;
    let position = match (group, sequence) {
        (Some(group), Some(sequence)) => Some((group, from_sql("sequence", sequence)?)),
        (None, None) => None,
        _ => return Err(corrupt("a Group without a sequence or the reverse")),
    };
    let receipt = Receipt {
        signing_hash,
        first_event: EventRef { event_id, position },
    };
    let stored: Option<&[u8]> = row.try_get(first + 4).map_err(backend)?;
    integrity.check_receipt(key, &receipt, stored.unwrap_or_default())?;
    Ok(Some(receipt))
}

/// The row recording an Action whose receipt is not stored, from columns `group_id`,
/// `sequence` (an Event) and `kind`, `id` (an aggregate), if either found one.
pub(crate) fn recorded_from_row(
    row: &Row,
    group: usize,
    sequence: usize,
    kind: usize,
    id: usize,
) -> Result<Option<String>, StoreError> {
    let group: Option<&str> = row.try_get(group).map_err(backend)?;
    let sequence: Option<i64> = row.try_get(sequence).map_err(backend)?;
    if let (Some(group), Some(sequence)) = (group, sequence) {
        return Ok(Some(format!("event {group} #{sequence}")));
    }
    let kind: Option<&str> = row.try_get(kind).map_err(backend)?;
    let id: Option<&str> = row.try_get(id).map_err(backend)?;
    Ok(kind
        .zip(id)
        .map(|(kind, id)| format!("aggregate {kind} {id}")))
}

pub(crate) fn receipt(
    conn: &mut Conn,
    integrity: &Integrity,
    key: &ReceiptKey,
) -> Result<Option<Receipt>, StoreError> {
    if ![&key.actor_type, &key.actor_id, &key.action_id]
        .iter()
        .all(|t| storable(t))
    {
        return Ok(None);
    }
    let action = integrity::action_key(key);
    let row = conn
        .client
        .query_one(
            &conn.statements.receipt,
            &[&key.actor_type, &key.actor_id, &key.action_id, &&action[..]],
        )
        .map_err(backend)?;
    if let Some(receipt) = receipt_from_row(integrity, key, &row, 0)? {
        return Ok(Some(receipt));
    }
    match recorded_from_row(&row, 5, 6, 7, 8)? {
        Some(recorded) => Err(integrity::missing_receipt(key, &recorded)),
        None => Ok(None),
    }
}

fn snapshot(hash: Option<String>) -> Option<SnapshotPointer> {
    hash.map(|artifact_hash| SnapshotPointer { artifact_hash })
}

pub(crate) fn head(
    conn: &mut Conn,
    integrity: &Integrity,
    group: &str,
) -> Result<GroupHead, StoreError> {
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
    let columns = HeadColumns {
        next_sequence: 0,
        first_online: 1,
        snapshot_hash: 2,
        chain_before: 3,
        checksum: 4,
    };
    Ok(checked_head(integrity, group, &row, columns)?.0)
}

/// Where a head row's columns are.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HeadColumns {
    pub(crate) next_sequence: usize,
    pub(crate) first_online: usize,
    pub(crate) snapshot_hash: usize,
    pub(crate) chain_before: usize,
    pub(crate) checksum: usize,
}

/// A head row checked against its checksum; answers the head and its `chain_before`.
pub(crate) fn checked_head(
    integrity: &Integrity,
    group: &str,
    row: &Row,
    columns: HeadColumns,
) -> Result<(GroupHead, Hash32), StoreError> {
    let head = GroupHead {
        next_sequence: from_sql(
            "next_sequence",
            row.try_get(columns.next_sequence).map_err(backend)?,
        )?,
        first_online: from_sql(
            "first_online",
            row.try_get(columns.first_online).map_err(backend)?,
        )?,
        snapshot: snapshot(row.try_get(columns.snapshot_hash).map_err(backend)?),
    };
    let chain_before: &[u8] = row.try_get(columns.chain_before).map_err(backend)?;
    let chain_before = integrity::hash_from_slice("group", || group.to_owned(), chain_before)?;
    let stored: Option<&[u8]> = row.try_get(columns.checksum).map_err(backend)?;
    integrity.check_head(group, &head, &chain_before, stored.unwrap_or_default())?;
    Ok((head, chain_before))
}

/// One replay page, planned as every store plans it (`store::read_rules::PagePlan`, §16), every
/// Event verified against the Group's hash chain from the stored hash just before the page: a
/// changed body or ID, a swapped or missing row is [`StoreError::Corrupt`], never a page with a
/// silent gap.
pub(crate) fn replay(
    conn: &mut Conn,
    integrity: &Integrity,
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
    let columns = HeadColumns {
        next_sequence: 0,
        first_online: 1,
        snapshot_hash: 2,
        chain_before: 3,
        checksum: 9,
    };
    let (head, chain_before) = checked_head(integrity, group, first, columns)?;
    let plan = PagePlan::for_head(group, after_sequence, limit, &head)?;
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
        None => chain_before,
    };
    let mut verifier = integrity.verifier(group, plan.start, anchor);
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
        let action: Option<&[u8]> = row.try_get(8).map_err(backend)?;
        let action = action
            .map(|action| integrity::hash_from_slice("event", || locator(sequence), action))
            .transpose()?;
        verifier.check(sequence, event_id, body, action.as_ref(), &stored)?;
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
