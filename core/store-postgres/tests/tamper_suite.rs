//! The shared tamper cases (`store::suite::tampering`) on PostgreSQL, keyed and unkeyed: a raw
//! connection deletes or edits rows of the store's schema as someone with write access to the
//! database would, recomputing the unkeyed checksums; and a version-1 schema built by hand
//! migrates with every row sealed anew and its receipt bound (`docs/store-postgres.md`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::TestStore;
use missionweaveprotocol_engine::store::integrity::{GENESIS, v1};
use missionweaveprotocol_engine::store::suite::tampering::{
    Tamper, assert_corrupt, unkeyed_aggregate_checksum, unkeyed_head_checksum,
};
use missionweaveprotocol_engine::store::{
    AggregateKey, EventRecord, IntegrityKey, ReceiptKey, Store, StoreOptions, Transaction,
};
use missionweaveprotocol_store_postgres::{PostgresOptions, PostgresStore, SCHEMA_VERSION};

/// Raw access to one store's schema.
struct RawSchema {
    schema: String,
}

impl RawSchema {
    fn client(&self) -> postgres::Client {
        common::raw(&self.schema)
    }
}

impl Tamper for RawSchema {
    fn delete_receipt(&self, key: &ReceiptKey) {
        let deleted = self
            .client()
            .execute(
                "DELETE FROM receipts WHERE actor_type = $1 AND actor_id = $2 AND action_id = $3",
                &[&key.actor_type, &key.actor_id, &key.action_id],
            )
            .unwrap();
        assert_eq!(deleted, 1);
    }

    fn set_signing_hash(&self, key: &ReceiptKey, hash: &str) {
        let changed = self
            .client()
            .execute(
                "UPDATE receipts SET signing_hash = $4 \
                 WHERE actor_type = $1 AND actor_id = $2 AND action_id = $3",
                &[&key.actor_type, &key.actor_id, &key.action_id, &hash],
            )
            .unwrap();
        assert_eq!(changed, 1);
    }

    fn forge_aggregate(&self, key: &AggregateKey, value: &[u8]) {
        let mut client = self.client();
        let revision: i64 = client
            .query_one(
                "SELECT revision FROM aggregates WHERE kind = $1 AND id = $2",
                &[&key.kind, &key.id],
            )
            .unwrap()
            .get(0);
        let checksum = unkeyed_aggregate_checksum(key, revision as u64, value).to_vec();
        client
            .execute(
                "UPDATE aggregates SET value = $3, checksum = $4, action_key = NULL \
                 WHERE kind = $1 AND id = $2",
                &[&key.kind, &key.id, &value, &checksum],
            )
            .unwrap();
    }

    fn truncate_log(&self, group: &str, from: u64) {
        let mut client = self.client();
        let from = from as i64;
        client
            .execute(
                "DELETE FROM events WHERE group_id = $1 AND sequence >= $2",
                &[&group, &from],
            )
            .unwrap();
        let checksum = unkeyed_head_checksum(group, from as u64).to_vec();
        client
            .execute(
                "UPDATE groups SET next_sequence = $2, checksum = $3 WHERE group_id = $1",
                &[&group, &from, &checksum],
            )
            .unwrap();
    }

    fn set_event_body(&self, group: &str, sequence: u64, body: &[u8]) {
        let changed = self
            .client()
            .execute(
                "UPDATE events SET body = $3 WHERE group_id = $1 AND sequence = $2",
                &[&group, &(sequence as i64), &body],
            )
            .unwrap();
        assert_eq!(changed, 1);
    }
}

fn store_with(options: PostgresOptions) -> (TestStore, RawSchema) {
    let store = TestStore::with(options);
    let schema = store.store.schema().to_owned();
    (store, RawSchema { schema })
}

fn key() -> IntegrityKey {
    IntegrityKey::new(*b"an integrity key of 32 bytes....").unwrap()
}

fn keyed() -> (TestStore, RawSchema) {
    let (store, raw) = store_with(PostgresOptions::default().integrity_key(key()));
    assert!(store.store.is_keyed());
    (store, raw)
}

fn unkeyed() -> (TestStore, RawSchema) {
    store_with(PostgresOptions::default())
}

missionweaveprotocol_engine::store_tamper_suite!(keyed, unkeyed);

/// A keyed store passes the whole shared suite unchanged.
mod keyed_suite {
    use super::*;

    fn make() -> TestStore {
        TestStore::with(
            PostgresOptions::default().integrity_key(IntegrityKey::new([9u8; 32]).unwrap()),
        )
    }

    missionweaveprotocol_engine::store_test_suite!(make);
}

/// A keyed store opens again (another process) with its key only.
#[test]
fn a_keyed_schema_opens_with_its_key_only() {
    let (store, _) = keyed();
    let schema = store.store.schema().to_owned();
    for refused in [
        PostgresOptions::default(),
        PostgresOptions::default().integrity_key(IntegrityKey::new([1u8; 32]).unwrap()),
    ] {
        let e = PostgresStore::connect_with(common::url(), refused.schema(&schema)).unwrap_err();
        assert_eq!(e.reason(), "integrity_key_refused", "{e}");
    }
    let again = PostgresStore::connect_with(
        common::url(),
        PostgresOptions::default()
            .integrity_key(key())
            .schema(&schema),
    )
    .unwrap();
    assert!(again.is_keyed());
}

/// The version-1 tables (as `PostgresStore` 0.1 created them) with rows chained and
/// checksummed by the version-1 formulas, a receipt for `g` #1 and one Group archived.
fn version_1_schema(schema: &str) {
    let mut raw = common::raw(schema);
    raw.batch_execute(&format!("CREATE SCHEMA \"{schema}\""))
        .unwrap();
    raw.batch_execute(
        "CREATE TABLE aggregates (kind TEXT COLLATE \"C\" NOT NULL, id TEXT COLLATE \"C\" NOT NULL,
           revision BIGINT NOT NULL, value BYTEA NOT NULL, checksum BYTEA NOT NULL,
           PRIMARY KEY (kind, id));
         CREATE TABLE groups (group_id TEXT COLLATE \"C\" NOT NULL PRIMARY KEY,
           next_sequence BIGINT NOT NULL, first_online BIGINT NOT NULL, snapshot_hash TEXT,
           chain_before BYTEA NOT NULL);
         CREATE TABLE events (group_id TEXT COLLATE \"C\" NOT NULL, sequence BIGINT NOT NULL,
           event_id TEXT NOT NULL, body BYTEA NOT NULL, chain_hash BYTEA NOT NULL,
           PRIMARY KEY (group_id, sequence));
         CREATE TABLE receipts (actor_type TEXT COLLATE \"C\" NOT NULL,
           actor_id TEXT COLLATE \"C\" NOT NULL, action_id TEXT COLLATE \"C\" NOT NULL,
           signing_hash TEXT NOT NULL, event_id TEXT NOT NULL, group_id TEXT, sequence BIGINT,
           PRIMARY KEY (actor_type, actor_id, action_id));
         CREATE TABLE schema_version (version BIGINT NOT NULL);
         INSERT INTO schema_version VALUES (1);",
    )
    .unwrap();
    let mut previous = GENESIS;
    for sequence in 1..=3i64 {
        let id = format!("g-e{sequence}");
        let body = format!("{{\"n\":{sequence}}}").into_bytes();
        previous = v1::event_chain(&previous, "g", sequence as u64, &id, &body);
        raw.execute(
            "INSERT INTO events VALUES ('g', $1, $2, $3, $4)",
            &[&sequence, &id, &body, &previous.to_vec()],
        )
        .unwrap();
    }
    raw.execute(
        "INSERT INTO groups VALUES ('g', 4, 1, NULL, $1)",
        &[&GENESIS.to_vec()],
    )
    .unwrap();
    let checksum = v1::aggregate_checksum("mission", "m", 2, b"{}").to_vec();
    raw.execute(
        "INSERT INTO aggregates VALUES ('mission', 'm', 2, '\\x7b7d', $1)",
        &[&checksum],
    )
    .unwrap();
    raw.batch_execute(
        "INSERT INTO receipts VALUES ('agent', 'a', 'act-1', 'sha256:aa', 'g-e1', 'g', 1)",
    )
    .unwrap();
}

#[test]
fn a_version_1_schema_migrates_sealed_and_bound() {
    let schema = common::fresh_schema();
    version_1_schema(&schema);
    // Under a key only when told to adopt it.
    let e = PostgresStore::connect_with(
        common::url(),
        PostgresOptions::default()
            .integrity_key(key())
            .schema(&schema),
    )
    .unwrap_err();
    assert_eq!(e.reason(), "integrity_key_refused", "{e}");
    let store = PostgresStore::connect_with(
        common::url(),
        PostgresOptions::default()
            .store_options(StoreOptions::keyed(key()).adopting_key())
            .schema(&schema),
    )
    .unwrap();
    let version: i64 = common::raw(&schema)
        .query_one("SELECT max(version) FROM schema_version", &[])
        .unwrap()
        .get(0);
    assert_eq!((version, SCHEMA_VERSION), (2, 2));
    assert_eq!(store.replay("g", 0, 10).unwrap().events.len(), 3);
    assert_eq!(
        store
            .aggregate(&AggregateKey::new("mission", "m"))
            .unwrap()
            .unwrap()
            .revision,
        2
    );
    let receipt = ReceiptKey::new("agent", "a", "act-1");
    assert!(store.dedup(&receipt, "sha256:aa").unwrap().is_some());
    // The log grows on the resealed chain.
    let mut tx = Transaction::new();
    tx.append("g", EventRecord::new(4, "g-e4", &b"{}"[..]));
    store.commit(tx).unwrap();
    assert_eq!(store.replay("g", 2, 10).unwrap().events.len(), 2);
    // The migrated receipt is bound to its Event: removing it is detected.
    common::raw(&schema)
        .execute("DELETE FROM receipts", &[])
        .unwrap();
    assert_corrupt(
        store.dedup(&receipt, "sha256:aa"),
        "receipt",
        "agent a act-1",
    );
    // A row damaged before the migration stays damaged after it.
    drop(store);
    let schema2 = common::fresh_schema();
    version_1_schema(&schema2);
    common::raw(&schema2)
        .execute("UPDATE events SET body = '\\x7b7d' WHERE sequence = 2", &[])
        .unwrap();
    let store2 =
        PostgresStore::connect_with(common::url(), PostgresOptions::default().schema(&schema2))
            .unwrap();
    assert_corrupt(store2.replay("g", 0, 10), "event", "g #2");
    assert_eq!(store2.replay("g", 2, 10).unwrap().events.len(), 1);
    store2.drop_schema().unwrap();
    PostgresStore::connect_with(
        common::url(),
        PostgresOptions::default()
            .integrity_key(key())
            .schema(&schema),
    )
    .unwrap()
    .drop_schema()
    .unwrap();
}
