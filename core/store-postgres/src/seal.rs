//! Sealing a schema under an integrity scheme (`store::integrity`, `docs/store.md` "Data at
//! rest"), as the SQLite store does (`core/store-sqlite/src/seal.rs`): the `integrity` table
//! that records the scheme, the check of the scheme and key a store is opened with, and
//! [`reseal`], which authenticates every row anew — when migration 2 binds receipts to their
//! Events, and when an unkeyed store adopts a key (`StoreOptions::adopt_key`). Both run inside
//! the migration transaction, under its advisory lock.
//!
//! Resealing never launders damage: each row is first verified as it was sealed, and a row
//! that fails gets a [`poisoned`](missionweaveprotocol_engine::store::integrity::poisoned) authenticator, so it is reported at the same place
//! afterwards.

use std::collections::HashMap;

use missionweaveprotocol_engine::store::integrity::{
    GENESIS, Hash32, SealCheck, action_key, check_seal, hash_from_slice, sealed, v1,
};
use missionweaveprotocol_engine::store::{
    EventRef, GroupHead, Integrity, Receipt, ReceiptKey, SnapshotPointer, StoreError, StoreOptions,
};
use postgres::Transaction as Db;

use crate::convert::{backend, from_sql};

/// How the rows being resealed were sealed before.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Sealed<'a> {
    /// Schema version 1: the version-1 Event chain and aggregate checksums
    /// (`integrity::v1`), no receipt or head checksums, no recorded Actions.
    Version1,
    /// The current schema under `Integrity` (an unkeyed store adopting a key).
    Current(&'a Integrity),
}

/// Rows read and rewritten per statement.
const PAGE: i64 = 512;

/// Authenticates every row under `to`, verifying it first as `from` sealed it, and records
/// `to` in the `integrity` table.
pub(crate) fn reseal(db: &mut Db<'_>, from: Sealed<'_>, to: &Integrity) -> Result<(), StoreError> {
    let unbound = receipts(db, from, to)?;
    let anchors = heads(db, from, to)?;
    events(db, from, to, &anchors)?;
    aggregates(db, from, to, unbound)?;
    db.execute("DELETE FROM integrity", &[]).map_err(backend)?;
    let key_check = to.key_check().map(|check| check.to_vec());
    db.execute(
        "INSERT INTO integrity (scheme, key_check) VALUES ($1, $2)",
        &[&to.scheme(), &key_check],
    )
    .map_err(backend)?;
    Ok(())
}

/// The scheme a store at the current version is sealed with, checked against `options`
/// (the same rules as the SQLite store's): answers the scheme to read and write with.
pub(crate) fn check(db: &mut Db<'_>, options: &StoreOptions) -> Result<Integrity, StoreError> {
    let wanted = options.integrity();
    let damaged = |detail: String| StoreError::Corrupt {
        what: "store",
        locator: "integrity".to_owned(),
        detail,
    };
    let rows = db
        .query("SELECT scheme, key_check FROM integrity", &[])
        .map_err(backend)?;
    let row = match &rows[..] {
        [row] => row,
        [] => return Err(damaged("the store records no integrity scheme".to_owned())),
        _ => {
            return Err(damaged(
                "the store records two integrity schemes".to_owned(),
            ));
        }
    };
    let scheme: String = row.try_get(0).map_err(backend)?;
    let key_check: Option<Vec<u8>> = row.try_get(1).map_err(backend)?;
    match check_seal(
        &scheme,
        key_check.as_ref().map(|c| &c[..]),
        &wanted,
        options.adopt_key,
        damaged,
    )? {
        // This backend leaves `Store::authenticates_events` false: an adopted key needs no
        // different handling here.
        SealCheck::Accept | SealCheck::AcceptAdopted => {}
        SealCheck::Adopt => reseal(db, Sealed::Current(&Integrity::unkeyed()), &wanted)?,
    }
    Ok(wanted)
}

fn hash(what: &'static str, locator: &str, bytes: Option<&[u8]>) -> Result<Hash32, StoreError> {
    hash_from_slice(what, || locator.to_owned(), bytes.unwrap_or_default())
}

fn optional_hash(
    what: &'static str,
    locator: &str,
    bytes: Option<&[u8]>,
) -> Result<Option<Hash32>, StoreError> {
    bytes
        .map(|bytes| hash_from_slice(what, || locator.to_owned(), bytes))
        .transpose()
}

/// Reseals every receipt; in a version-1 store, records each receipt's Action in the Event at
/// its position. Answers the Actions of receipts without a position, by Event ID.
fn receipts(
    db: &mut Db<'_>,
    from: Sealed<'_>,
    to: &Integrity,
) -> Result<HashMap<String, Hash32>, StoreError> {
    let mut unbound = HashMap::new();
    let mut after: Option<ReceiptKey> = None;
    loop {
        const COLUMNS: &str = "SELECT actor_type, actor_id, action_id, signing_hash, event_id, \
             group_id, sequence, checksum FROM receipts";
        let rows = match &after {
            None => db.query(
                &format!("{COLUMNS} ORDER BY actor_type, actor_id, action_id LIMIT $1"),
                &[&PAGE],
            ),
            Some(last) => db.query(
                &format!(
                    "{COLUMNS} WHERE (actor_type, actor_id, action_id) > ($1, $2, $3) \
                     ORDER BY actor_type, actor_id, action_id LIMIT $4"
                ),
                &[&last.actor_type, &last.actor_id, &last.action_id, &PAGE],
            ),
        }
        .map_err(backend)?;
        let Some(last) = rows.last() else {
            return Ok(unbound);
        };
        after = Some(ReceiptKey::new(
            last.try_get::<_, String>(0).map_err(backend)?,
            last.try_get::<_, String>(1).map_err(backend)?,
            last.try_get::<_, String>(2).map_err(backend)?,
        ));
        for row in &rows {
            let key = ReceiptKey::new(
                row.try_get::<_, String>(0).map_err(backend)?,
                row.try_get::<_, String>(1).map_err(backend)?,
                row.try_get::<_, String>(2).map_err(backend)?,
            );
            let group: Option<String> = row.try_get(5).map_err(backend)?;
            let sequence: Option<i64> = row.try_get(6).map_err(backend)?;
            let position = match (group, sequence) {
                (Some(group), Some(sequence)) => Some((group, from_sql("sequence", sequence)?)),
                _ => None,
            };
            let receipt = Receipt {
                signing_hash: row.try_get(3).map_err(backend)?,
                first_event: EventRef {
                    event_id: row.try_get(4).map_err(backend)?,
                    position,
                },
            };
            let ok = match from {
                Sealed::Version1 => true,
                Sealed::Current(integrity) => {
                    let stored: Option<&[u8]> = row.try_get(7).map_err(backend)?;
                    integrity
                        .check_receipt(&key, &receipt, stored.unwrap_or_default())
                        .is_ok()
                }
            };
            let checksum = sealed(to.receipt_checksum(&key, &receipt), ok);
            db.execute(
                "UPDATE receipts SET checksum = $4 \
                 WHERE actor_type = $1 AND actor_id = $2 AND action_id = $3",
                &[
                    &key.actor_type,
                    &key.actor_id,
                    &key.action_id,
                    &&checksum[..],
                ],
            )
            .map_err(backend)?;
            if !matches!(from, Sealed::Version1) {
                continue;
            }
            let action = action_key(&key);
            match &receipt.first_event.position {
                Some((group, sequence)) => {
                    let sequence = i64::try_from(*sequence).unwrap_or(i64::MAX);
                    db.execute(
                        "UPDATE events SET action_key = $4 WHERE group_id = $1 \
                         AND sequence = $2 AND event_id = $3 AND action_key IS NULL",
                        &[
                            group,
                            &sequence,
                            &receipt.first_event.event_id,
                            &&action[..],
                        ],
                    )
                    .map_err(backend)?;
                }
                None => {
                    unbound.insert(receipt.first_event.event_id.clone(), action);
                }
            }
        }
    }
}

struct Anchor {
    first_online: u64,
    chain_before: Hash32,
}

/// Reseals every Group head; answers each Group's anchor.
fn heads(
    db: &mut Db<'_>,
    from: Sealed<'_>,
    to: &Integrity,
) -> Result<HashMap<String, Anchor>, StoreError> {
    let rows = db
        .query(
            "SELECT group_id, next_sequence, first_online, snapshot_hash, chain_before, \
             checksum FROM groups",
            &[],
        )
        .map_err(backend)?;
    let mut anchors = HashMap::new();
    for row in &rows {
        let group: String = row.try_get(0).map_err(backend)?;
        let head = GroupHead {
            next_sequence: from_sql("next_sequence", row.try_get(1).map_err(backend)?)?,
            first_online: from_sql("first_online", row.try_get(2).map_err(backend)?)?,
            snapshot: row
                .try_get::<_, Option<String>>(3)
                .map_err(backend)?
                .map(|artifact_hash| SnapshotPointer { artifact_hash }),
        };
        let chain_before = hash("group", &group, row.try_get(4).map_err(backend)?)?;
        let ok = match from {
            Sealed::Version1 => true,
            Sealed::Current(integrity) => {
                let stored: Option<&[u8]> = row.try_get(5).map_err(backend)?;
                integrity
                    .check_head(&group, &head, &chain_before, stored.unwrap_or_default())
                    .is_ok()
            }
        };
        let checksum = sealed(to.head_checksum(&group, &head, &chain_before), ok);
        db.execute(
            "UPDATE groups SET checksum = $2 WHERE group_id = $1",
            &[&group, &&checksum[..]],
        )
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

/// Where the Event pass stands in its Group.
struct Cursor {
    group: String,
    old: Hash32,
    new: Hash32,
    next: u64,
}

/// Reseals every Event, Group by Group in sequence order.
fn events(
    db: &mut Db<'_>,
    from: Sealed<'_>,
    to: &Integrity,
    anchors: &HashMap<String, Anchor>,
) -> Result<(), StoreError> {
    let mut cursor: Option<Cursor> = None;
    let mut after: Option<(String, i64)> = None;
    loop {
        const COLUMNS: &str =
            "SELECT group_id, sequence, event_id, body, chain_hash, action_key FROM events";
        let rows = match &after {
            None => db.query(
                &format!("{COLUMNS} ORDER BY group_id, sequence LIMIT $1"),
                &[&PAGE],
            ),
            Some((group, sequence)) => db.query(
                &format!(
                    "{COLUMNS} WHERE (group_id, sequence) > ($1, $2) \
                     ORDER BY group_id, sequence LIMIT $3"
                ),
                &[group, sequence, &PAGE],
            ),
        }
        .map_err(backend)?;
        let Some(last) = rows.last() else {
            return Ok(());
        };
        after = Some((
            last.try_get(0).map_err(backend)?,
            last.try_get(1).map_err(backend)?,
        ));
        for row in &rows {
            let group: String = row.try_get(0).map_err(backend)?;
            let raw_sequence: i64 = row.try_get(1).map_err(backend)?;
            let sequence = from_sql("sequence", raw_sequence)?;
            let locator = format!("{group} #{sequence}");
            let event_id: String = row.try_get(2).map_err(backend)?;
            let body: &[u8] = row.try_get(3).map_err(backend)?;
            let stored = hash("event", &locator, row.try_get(4).map_err(backend)?)?;
            let action = optional_hash("event", &locator, row.try_get(5).map_err(backend)?)?;
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
                Sealed::Version1 => {
                    v1::event_chain(&current.old, &group, sequence, &event_id, body)
                }
                Sealed::Current(integrity) => integrity.event_chain(
                    &current.old,
                    &group,
                    sequence,
                    &event_id,
                    body,
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
                    body,
                    action.as_ref(),
                ),
                ok,
            );
            db.execute(
                "UPDATE events SET chain_hash = $3 WHERE group_id = $1 AND sequence = $2",
                &[&group, &raw_sequence, &&new[..]],
            )
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

/// Reseals every aggregate; in a version-1 store, records the Action of each receipt without
/// a position in the aggregate stored under its Event ID.
fn aggregates(
    db: &mut Db<'_>,
    from: Sealed<'_>,
    to: &Integrity,
    mut unbound: HashMap<String, Hash32>,
) -> Result<(), StoreError> {
    let mut after: Option<(String, String)> = None;
    loop {
        const COLUMNS: &str =
            "SELECT kind, id, revision, value, checksum, action_key FROM aggregates";
        let rows = match &after {
            None => db.query(&format!("{COLUMNS} ORDER BY kind, id LIMIT $1"), &[&PAGE]),
            Some((kind, id)) => db.query(
                &format!("{COLUMNS} WHERE (kind, id) > ($1, $2) ORDER BY kind, id LIMIT $3"),
                &[kind, id, &PAGE],
            ),
        }
        .map_err(backend)?;
        let Some(last) = rows.last() else {
            return Ok(());
        };
        after = Some((
            last.try_get(0).map_err(backend)?,
            last.try_get(1).map_err(backend)?,
        ));
        for row in &rows {
            let kind: String = row.try_get(0).map_err(backend)?;
            let id: String = row.try_get(1).map_err(backend)?;
            let locator = format!("{kind} {id}");
            let revision = from_sql("revision", row.try_get(2).map_err(backend)?)?;
            let value: &[u8] = row.try_get(3).map_err(backend)?;
            let stored = hash("aggregate", &locator, row.try_get(4).map_err(backend)?)?;
            let action = optional_hash("aggregate", &locator, row.try_get(5).map_err(backend)?)?;
            let ok = match from {
                Sealed::Version1 => v1::aggregate_checksum(&kind, &id, revision, value) == stored,
                Sealed::Current(integrity) => integrity
                    .check_aggregate(&kind, &id, revision, value, action.as_ref(), &stored)
                    .is_ok(),
            };
            let action = action.or_else(|| unbound.remove(&id));
            let checksum = sealed(
                to.aggregate_checksum(&kind, &id, revision, value, action.as_ref()),
                ok,
            );
            let action = action.map(|a| a.to_vec());
            db.execute(
                "UPDATE aggregates SET checksum = $3, action_key = $4 WHERE kind = $1 AND id = $2",
                &[&kind, &id, &&checksum[..], &action],
            )
            .map_err(backend)?;
        }
    }
}
