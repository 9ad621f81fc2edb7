//! Integrity of data at rest: what a durable backend stores beside each row so that a row
//! changed behind the store's back (a changed Event body, a broken revision, a removed
//! sequence) is detected when read and reported as [`StoreError::Corrupt`], never served.
//!
//! - **Events** form one hash chain per Group: the chain hash of the Event at sequence `n` is
//!   `SHA-256(DOMAIN ‖ chain(n-1) ‖ be64(n) ‖ len ‖ group ‖ len ‖ event_id ‖ SHA-256(body))`,
//!   and the chain before sequence 1 is [`GENESIS`]. A backend stores each Event's chain hash
//!   in its row and the chain hash just before the first online Event in the Group's head, so
//!   archival (§7.4) does not break verification of what stays online. A reader recomputes the
//!   chain over the rows it returns: a changed body, a changed Event ID, a swapped or missing
//!   sequence each break it.
//! - **Aggregates** carry a checksum `SHA-256(DOMAIN ‖ len ‖ kind ‖ len ‖ id ‖ be64(revision) ‖
//!   value)`, so a revision or value edited alone is detected.
//!
//! The chain is not keyed: it detects damage and tampering by anyone who does not also
//! recompute every later hash; the Group Authority's Ed25519 signature inside each Event is
//! what a forger cannot recompute, and the Core checks it where it serves Events
//! (`docs/store.md`, "Data at rest").

use sha2::{Digest, Sha256};

use crate::store::{aggregate::Aggregate, error::StoreError};

/// A 32-byte SHA-256 chain hash or checksum.
pub type Hash32 = [u8; 32];

/// The chain hash "before sequence 1" of every Group.
pub const GENESIS: Hash32 = [0; 32];

const EVENT_DOMAIN: &[u8] = b"missionweaveprotocol/store/event-chain/v1\0";
const AGGREGATE_DOMAIN: &[u8] = b"missionweaveprotocol/store/aggregate/v1\0";

fn put_text(hasher: &mut Sha256, text: &str) {
    hasher.update((text.len() as u64).to_be_bytes());
    hasher.update(text.as_bytes());
}

/// The chain hash of the Event at `sequence` of `group`, following `previous` (the chain hash
/// of sequence `sequence - 1`, or [`GENESIS`] before sequence 1).
pub fn event_chain(
    previous: &Hash32,
    group: &str,
    sequence: u64,
    event_id: &str,
    body: &[u8],
) -> Hash32 {
    let body_hash = Sha256::digest(body);
    let mut hasher = Sha256::new();
    hasher.update(EVENT_DOMAIN);
    hasher.update(previous);
    hasher.update(sequence.to_be_bytes());
    put_text(&mut hasher, group);
    put_text(&mut hasher, event_id);
    hasher.update(body_hash);
    hasher.finalize().into()
}

/// The checksum of an aggregate row.
pub fn aggregate_checksum(kind: &str, id: &str, revision: u64, value: &[u8]) -> Hash32 {
    let mut hasher = Sha256::new();
    hasher.update(AGGREGATE_DOMAIN);
    put_text(&mut hasher, kind);
    put_text(&mut hasher, id);
    hasher.update(revision.to_be_bytes());
    hasher.update(value);
    hasher.finalize().into()
}

/// A stored hash column read back: exactly 32 bytes, or the row is corrupt.
pub fn hash_from_slice(
    what: &'static str,
    locator: impl FnOnce() -> String,
    bytes: &[u8],
) -> Result<Hash32, StoreError> {
    Hash32::try_from(bytes).map_err(|_| StoreError::Corrupt {
        what,
        locator: locator(),
        detail: format!("a stored hash of {} bytes, not 32", bytes.len()),
    })
}

/// Verifies Events read in sequence order, starting from the chain hash stored before the
/// first of them. Feed every row a read returns, in order; the first mismatch is the error.
#[derive(Debug, Clone)]
pub struct ChainVerifier<'g> {
    group: &'g str,
    previous: Hash32,
    next_sequence: u64,
}

impl<'g> ChainVerifier<'g> {
    /// A verifier for `group` whose next row must be `first_sequence`, chained after
    /// `previous` (the stored chain hash of `first_sequence - 1`).
    pub fn new(group: &'g str, first_sequence: u64, previous: Hash32) -> Self {
        Self {
            group,
            previous,
            next_sequence: first_sequence,
        }
    }

    /// Checks one row: its sequence is the next one and `stored` is the chain hash recomputed
    /// over its contents.
    pub fn check(
        &mut self,
        sequence: u64,
        event_id: &str,
        body: &[u8],
        stored: &Hash32,
    ) -> Result<(), StoreError> {
        let locator = || format!("{} #{sequence}", self.group);
        if sequence != self.next_sequence {
            return Err(StoreError::Corrupt {
                what: "event",
                locator: locator(),
                detail: format!("sequence {} is missing", self.next_sequence),
            });
        }
        let expected = event_chain(&self.previous, self.group, sequence, event_id, body);
        if &expected != stored {
            return Err(StoreError::Corrupt {
                what: "event",
                locator: locator(),
                detail: "the Event's bytes or ID do not match its hash chain".to_owned(),
            });
        }
        self.previous = expected;
        self.next_sequence = sequence + 1;
        Ok(())
    }

    /// The chain hash of the last row checked (or the starting one).
    pub fn last(&self) -> Hash32 {
        self.previous
    }
}

/// Checks an aggregate row's stored checksum.
pub fn check_aggregate(
    kind: &str,
    id: &str,
    revision: u64,
    value: &[u8],
    stored: &Hash32,
) -> Result<(), StoreError> {
    if &aggregate_checksum(kind, id, revision, value) == stored {
        Ok(())
    } else {
        Err(StoreError::Corrupt {
            what: "aggregate",
            locator: format!("{kind} {id}"),
            detail: format!("revision {revision} or its value does not match the row checksum"),
        })
    }
}

/// An aggregate row read back (`revision`, `value` and the `stored` checksum column), served
/// only if the checksum covers exactly that revision and value of that key.
pub fn verified_aggregate(
    kind: &str,
    id: &str,
    revision: u64,
    value: &[u8],
    stored: &[u8],
) -> Result<Aggregate, StoreError> {
    let stored = hash_from_slice("aggregate", || format!("{kind} {id}"), stored)?;
    check_aggregate(kind, id, revision, value, &stored)?;
    Ok(Aggregate {
        revision,
        value: value.into(),
    })
}

/// The Event at `sequence` of `group` that the log should hold but does not (§15.2: the
/// online log has no gap): the head promises it, or a read or an archive needs its chain hash.
pub fn missing_event(group: &str, sequence: u64) -> StoreError {
    StoreError::Corrupt {
        what: "event",
        locator: format!("{group} #{sequence}"),
        detail: format!("sequence {sequence} is missing"),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use missionweaveprotocol::{DescribeError, WireCode};

    fn chain(rows: &[(&str, &[u8])]) -> Vec<Hash32> {
        let mut previous = GENESIS;
        rows.iter()
            .enumerate()
            .map(|(i, (id, body))| {
                previous = event_chain(&previous, "g", i as u64 + 1, id, body);
                previous
            })
            .collect()
    }

    #[test]
    fn an_untouched_log_verifies() {
        let rows: [(&str, &[u8]); 3] = [("e1", b"{}"), ("e2", b"{\"a\":1}"), ("e3", b"[]")];
        let hashes = chain(&rows);
        let mut verifier = ChainVerifier::new("g", 1, GENESIS);
        for (i, (id, body)) in rows.iter().enumerate() {
            verifier.check(i as u64 + 1, id, body, &hashes[i]).unwrap();
        }
        assert_eq!(verifier.last(), hashes[2]);
        // A reader starting mid-log from the stored hash of the row before verifies too.
        let mut verifier = ChainVerifier::new("g", 3, hashes[1]);
        verifier.check(3, "e3", b"[]", &hashes[2]).unwrap();
    }

    #[test]
    fn a_changed_body_id_group_or_gap_is_corrupt() {
        let rows: [(&str, &[u8]); 3] = [("e1", b"{}"), ("e2", b"{\"a\":1}"), ("e3", b"[]")];
        let hashes = chain(&rows);
        let corrupt = |r: Result<(), StoreError>| {
            let e = r.unwrap_err();
            assert_eq!(e.wire_code(), WireCode::InternalError);
            assert_eq!(e.reason(), "store_corrupt");
            assert!(!e.retryable(), "damage at rest is not transient");
            e
        };
        corrupt(ChainVerifier::new("g", 1, GENESIS).check(1, "e1", b"{ }", &hashes[0]));
        corrupt(ChainVerifier::new("g", 1, GENESIS).check(1, "eX", b"{}", &hashes[0]));
        corrupt(ChainVerifier::new("h", 1, GENESIS).check(1, "e1", b"{}", &hashes[0]));
        let mut verifier = ChainVerifier::new("g", 1, GENESIS);
        verifier.check(1, "e1", b"{}", &hashes[0]).unwrap();
        let e = corrupt(verifier.check(3, "e3", b"[]", &hashes[2]));
        assert!(e.to_string().contains("sequence 2 is missing"), "{e}");
        // Swapping two rows' hashes breaks the chain as well.
        let mut verifier = ChainVerifier::new("g", 1, GENESIS);
        corrupt(verifier.check(1, "e1", b"{}", &hashes[1]));
    }

    #[test]
    fn an_aggregate_checksum_binds_revision_and_value() {
        let sum = aggregate_checksum("work_item", "w", 3, b"{}");
        check_aggregate("work_item", "w", 3, b"{}", &sum).unwrap();
        assert!(check_aggregate("work_item", "w", 4, b"{}", &sum).is_err());
        assert!(check_aggregate("work_item", "w", 3, b"{ }", &sum).is_err());
        assert!(check_aggregate("work_item", "v", 3, b"{}", &sum).is_err());
        assert!(hash_from_slice("event", || "g #1".into(), &[0; 31]).is_err());
        assert_eq!(
            hash_from_slice("event", || "g #1".into(), &sum).unwrap(),
            sum
        );
    }

    #[test]
    fn a_verified_aggregate_is_served_only_with_its_checksum() {
        let sum = aggregate_checksum("work_item", "w", 3, b"{}");
        let aggregate = verified_aggregate("work_item", "w", 3, b"{}", &sum).unwrap();
        assert_eq!((aggregate.revision, &*aggregate.value), (3, &b"{}"[..]));
        for (revision, value, stored) in [
            (4, &b"{}"[..], &sum[..]),
            (3, &b"{ }"[..], &sum[..]),
            (3, &b"{}"[..], &sum[..31]),
        ] {
            let e = verified_aggregate("work_item", "w", revision, value, stored).unwrap_err();
            assert!(
                matches!(&e, StoreError::Corrupt { what: "aggregate", locator, .. } if locator == "work_item w"),
                "{e:?}"
            );
        }
    }

    #[test]
    fn a_missing_event_names_its_group_and_sequence() {
        let e = missing_event("g", 3);
        assert_eq!(e.wire_code(), WireCode::InternalError);
        assert_eq!(
            e.to_string(),
            "stored event g #3 failed its integrity check: sequence 3 is missing"
        );
    }
}
