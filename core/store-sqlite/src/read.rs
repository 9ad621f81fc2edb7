//! Reads of committed state: aggregates, prefix listing (a range scan), receipts, Group heads
//! and replay pages (§16).

use std::sync::Arc;

use missionweaveprotocol_authority::store::{
    Aggregate, AggregateKey, EventRecord, EventRef, GroupHead, Receipt, ReceiptKey, ReplayPage,
    SnapshotPointer, StoreError,
};
use rusqlite::{Connection, OptionalExtension, params};

use crate::convert::{backend, from_sql, to_sql};

pub(crate) fn aggregate(
    conn: &Connection,
    key: &AggregateKey,
) -> Result<Option<Aggregate>, StoreError> {
    let row = conn
        .prepare_cached("SELECT revision, value FROM aggregates WHERE kind = ?1 AND id = ?2")
        .map_err(backend)?
        .query_row(params![key.kind, key.id], |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, Vec<u8>>(1)?))
        })
        .optional()
        .map_err(backend)?;
    row.map(|(revision, value)| {
        Ok(Aggregate {
            revision: from_sql("revision", revision)?,
            value: value.into(),
        })
    })
    .transpose()
}

/// The current revision of `key` (0: absent).
pub(crate) fn revision(conn: &Connection, key: &AggregateKey) -> Result<u64, StoreError> {
    let revision: Option<i64> = conn
        .prepare_cached("SELECT revision FROM aggregates WHERE kind = ?1 AND id = ?2")
        .map_err(backend)?
        .query_row(params![key.kind, key.id], |row| row.get(0))
        .optional()
        .map_err(backend)?;
    revision.map_or(Ok(0), |r| from_sql("revision", r))
}

/// A range scan over the primary key from `(kind, prefix)`, stopped at the first ID that no
/// longer starts with `prefix` (TEXT compares bytewise, so the matches are contiguous).
pub(crate) fn list(
    conn: &Connection,
    kind: &str,
    prefix: &str,
) -> Result<Vec<(String, Aggregate)>, StoreError> {
    let mut statement = conn
        .prepare_cached(
            "SELECT id, revision, value FROM aggregates WHERE kind = ?1 AND id >= ?2 ORDER BY id",
        )
        .map_err(backend)?;
    let mut rows = statement.query(params![kind, prefix]).map_err(backend)?;
    let mut found = Vec::new();
    while let Some(row) = rows.next().map_err(backend)? {
        let id: String = row.get(0).map_err(backend)?;
        if !id.starts_with(prefix) {
            break;
        }
        let revision = from_sql("revision", row.get(1).map_err(backend)?)?;
        let value: Vec<u8> = row.get(2).map_err(backend)?;
        found.push((
            id,
            Aggregate {
                revision,
                value: value.into(),
            },
        ));
    }
    Ok(found)
}

pub(crate) fn receipt(conn: &Connection, key: &ReceiptKey) -> Result<Option<Receipt>, StoreError> {
    type Row = (String, String, Option<String>, Option<i64>);
    let row: Option<Row> = conn
        .prepare_cached(
            "SELECT signing_hash, event_id, group_id, sequence FROM receipts \
             WHERE actor_type = ?1 AND actor_id = ?2 AND action_id = ?3",
        )
        .map_err(backend)?
        .query_row(
            params![key.actor_type, key.actor_id, key.action_id],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
        )
        .optional()
        .map_err(backend)?;
    let Some((signing_hash, event_id, group, sequence)) = row else {
        return Ok(None);
    };
    let position = match (group, sequence) {
        (Some(group), Some(sequence)) => Some((group, from_sql("sequence", sequence)?)),
        (None, None) => None,
        _ => {
            return Err(StoreError::Backend {
                detail: "a receipt row has a Group without a sequence or the reverse: the \
                         database is damaged"
                    .to_owned(),
            });
        }
    };
    Ok(Some(Receipt {
        signing_hash,
        first_event: EventRef { event_id, position },
    }))
}

/// The head of `group`, `None` for a Group without a log.
pub(crate) fn head(conn: &Connection, group: &str) -> Result<Option<GroupHead>, StoreError> {
    let row: Option<(i64, i64, Option<String>)> = conn
        .prepare_cached(
            "SELECT next_sequence, first_online, snapshot_hash FROM groups WHERE group_id = ?1",
        )
        .map_err(backend)?
        .query_row([group], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .optional()
        .map_err(backend)?;
    row.map(|(next, first, snapshot)| {
        Ok(GroupHead {
            next_sequence: from_sql("next_sequence", next)?,
            first_online: from_sql("first_online", first)?,
            snapshot: snapshot.map(|artifact_hash| SnapshotPointer { artifact_hash }),
        })
    })
    .transpose()
}

/// One replay page, as the in-memory store pages (§16): a cursor before the archive answers
/// `CURSOR_TOO_OLD`, one at or past the head an empty page, an unknown Group an empty page
/// with `last_sequence` 0.
pub(crate) fn replay(
    conn: &Connection,
    group: &str,
    after_sequence: u64,
    limit: usize,
) -> Result<ReplayPage, StoreError> {
    if limit == 0 {
        return Err(StoreError::InvalidArgument {
            argument: "limit",
            detail: "a replay page holds at least one Event".to_owned(),
        });
    }
    let Some(head) = head(conn, group)? else {
        return Ok(ReplayPage {
            events: Vec::new(),
            continuation: None,
            last_sequence: 0,
        });
    };
    let wanted = after_sequence.saturating_add(1);
    if let Some(snapshot) = head
        .snapshot
        .as_ref()
        .filter(|_| wanted < head.first_online)
    {
        return Err(StoreError::CursorTooOld {
            group: group.to_owned(),
            after_sequence,
            first_online: head.first_online,
            snapshot: snapshot.clone(),
        });
    }
    let last_sequence = head.last_sequence();
    let start = wanted.max(head.first_online);
    let mut events = Vec::new();
    if start <= last_sequence {
        let count = u64::try_from(limit).unwrap_or(u64::MAX);
        let mut statement = conn
            .prepare_cached(
                "SELECT sequence, event_id, body FROM events \
                 WHERE group_id = ?1 AND sequence >= ?2 ORDER BY sequence LIMIT ?3",
            )
            .map_err(backend)?;
        let mut rows = statement
            .query(params![
                group,
                to_sql("after_sequence", start)?,
                i64::try_from(limit).unwrap_or(i64::MAX)
            ])
            .map_err(backend)?;
        while let Some(row) = rows.next().map_err(backend)? {
            let sequence = from_sql("sequence", row.get(0).map_err(backend)?)?;
            let event_id: String = row.get(1).map_err(backend)?;
            let body: Vec<u8> = row.get(2).map_err(backend)?;
            events.push(EventRecord {
                sequence,
                event_id: Arc::from(event_id),
                body: body.into(),
            });
        }
        check_contiguous(group, start, &events, last_sequence, count)?;
    }
    let continuation = events
        .last()
        .map(|event| event.sequence)
        .filter(|&last| last < last_sequence);
    Ok(ReplayPage {
        events,
        continuation,
        last_sequence,
    })
}

/// The log holds every sequence from `first_online` to the head (§15.2): a missing or
/// out-of-place row is a damaged database, reported as a typed error rather than a page
/// with a silent gap.
fn check_contiguous(
    group: &str,
    start: u64,
    events: &[EventRecord],
    last_sequence: u64,
    limit: u64,
) -> Result<(), StoreError> {
    let expected_len = (last_sequence - start + 1).min(limit);
    let in_order = events
        .iter()
        .zip(start..)
        .all(|(event, sequence)| event.sequence == sequence);
    if in_order && events.len() as u64 == expected_len {
        return Ok(());
    }
    Err(StoreError::Backend {
        detail: format!(
            "Group {group}'s stored log is not contiguous from sequence {start}: the database \
             is damaged"
        ),
    })
}
