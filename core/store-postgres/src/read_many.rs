//! `Store::read_many` in one statement (`sql::READ_MANY`): the receipts, aggregates and Group
//! heads a Command will probably read, in one round trip instead of one each. Rows are checked
//! as the single reads check them (`read.rs`): aggregates, receipts and heads against their
//! checksum, a receipt not stored against the Actions the rows record.

use missionweaveprotocol_engine::store::integrity::{self, Hash32};
use missionweaveprotocol_engine::store::{Integrity, Read, ReadValue, StoreError, read_rules};

use crate::convert::{backend, storable};
use crate::pool::Conn;
use crate::read::{
    AggregateColumns, HeadColumns, checked_aggregate, checked_head, receipt_from_row,
    recorded_from_row,
};

/// The key arrays of the statement, and which read each array entry answers.
#[derive(Default)]
struct Keys<'r> {
    receipt_types: Vec<&'r str>,
    receipt_actors: Vec<&'r str>,
    receipt_actions: Vec<&'r str>,
    receipt_action_keys: Vec<Hash32>,
    receipt_reads: Vec<usize>,
    kinds: Vec<&'r str>,
    ids: Vec<&'r str>,
    aggregate_reads: Vec<usize>,
    groups: Vec<&'r str>,
    head_reads: Vec<usize>,
}

fn absent(read: &Read) -> ReadValue {
    match read {
        Read::Receipt(_) => ReadValue::Receipt(None),
        Read::Aggregate(_) => ReadValue::Aggregate(None),
        Read::Head(_) => ReadValue::Head(read_rules::absent_head()),
    }
}

/// The array entry a row answers and the read it belongs to: `n` is the 1-based position
/// `WITH ORDINALITY` gives.
fn position(reads: &[usize], n: i64) -> Result<(usize, usize), StoreError> {
    usize::try_from(n)
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| reads.get(i).map(|&read| (i, read)))
        .ok_or_else(|| StoreError::Backend {
            detail: format!("read_many answered key position {n}, which was not asked"),
        })
}

pub(crate) fn read_many(
    conn: &mut Conn,
    integrity: &Integrity,
    reads: &[Read],
) -> Result<Vec<ReadValue>, StoreError> {
    // Every read starts absent; a key a column cannot hold (`storable`) stays absent, as its
    // single read answers.
    let mut answers: Vec<ReadValue> = reads.iter().map(absent).collect();
    let mut keys = Keys::default();
    for (index, read) in reads.iter().enumerate() {
        match read {
            Read::Receipt(key) => {
                if [&key.actor_type, &key.actor_id, &key.action_id]
                    .iter()
                    .all(|t| storable(t))
                {
                    keys.receipt_types.push(&key.actor_type);
                    keys.receipt_actors.push(&key.actor_id);
                    keys.receipt_actions.push(&key.action_id);
                    keys.receipt_action_keys.push(integrity::action_key(key));
                    keys.receipt_reads.push(index);
                }
            }
            Read::Aggregate(key) => {
                if storable(&key.kind) && storable(&key.id) {
                    keys.kinds.push(&key.kind);
                    keys.ids.push(&key.id);
                    keys.aggregate_reads.push(index);
                }
            }
            Read::Head(group) => {
                if storable(group) {
                    keys.groups.push(group);
                    keys.head_reads.push(index);
                }
            }
        }
    }
    if keys.receipt_reads.is_empty()
        && keys.aggregate_reads.is_empty()
        && keys.head_reads.is_empty()
    {
        return Ok(answers);
    }
    let action_keys: Vec<&[u8]> = keys.receipt_action_keys.iter().map(|k| &k[..]).collect();
    let rows = conn
        .client
        .query(
            &conn.statements.read_many,
            &[
                &keys.receipt_types,
                &keys.receipt_actors,
                &keys.receipt_actions,
                &keys.kinds,
                &keys.ids,
                &keys.groups,
                &action_keys,
            ],
        )
        .map_err(backend)?;
    for row in rows {
        let table: i16 = row.try_get(0).map_err(backend)?;
        let n: i64 = row.try_get(1).map_err(backend)?;
        match table {
            0 => {
                let (_, index) = position(&keys.receipt_reads, n)?;
                let Read::Receipt(key) = &reads[index] else {
                    return Err(StoreError::Backend {
                        detail: "read_many answered a receipt for another read".to_owned(),
                    });
                };
                let receipt = match receipt_from_row(integrity, key, &row, 2)? {
                    Some(receipt) => receipt,
                    None => {
                        let recorded = recorded_from_row(&row, 10, 12, 11, 13)?;
                        return Err(integrity::missing_receipt(
                            key,
                            recorded.as_deref().unwrap_or("a stored row"),
                        ));
                    }
                };
                answers[index] = ReadValue::Receipt(Some(receipt));
            }
            1 => {
                let (entry, index) = position(&keys.aggregate_reads, n)?;
                let (kind, id) = (keys.kinds[entry], keys.ids[entry]);
                let columns = AggregateColumns(5, 6, 7, 9);
                answers[index] = ReadValue::Aggregate(Some(checked_aggregate(
                    integrity, kind, id, &row, columns,
                )?));
            }
            2 => {
                let (entry, index) = position(&keys.head_reads, n)?;
                let columns = HeadColumns {
                    next_sequence: 5,
                    first_online: 8,
                    snapshot_hash: 2,
                    chain_before: 9,
                    checksum: 7,
                };
                let (head, _) = checked_head(integrity, keys.groups[entry], &row, columns)?;
                answers[index] = ReadValue::Head(head);
            }
            other => {
                return Err(StoreError::Backend {
                    detail: format!("read_many answered a row of unknown table tag {other}"),
                });
            }
        }
    }
    Ok(answers)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::position;

    #[test]
    fn positions_outside_the_keys_asked_are_backend_errors() {
        assert_eq!(position(&[4, 7], 1).unwrap(), (0, 4));
        assert_eq!(position(&[4, 7], 2).unwrap(), (1, 7));
        for n in [0, 3, -1, i64::MAX] {
            assert!(position(&[4, 7], n).is_err(), "{n}");
        }
    }
}
