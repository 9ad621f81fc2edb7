//! The store test suite (`store::suite`) through this crate: a store opened by URL (the
//! `SharedStore` a binding's core runs over) and an initialized `ManagedStore` (whose `Store`
//! impl forwards every call, the overridden `commit_many` and `dedup` included), on private
//! in-memory SQLite databases, and on PostgreSQL (`open(postgresql://…)`, the server of
//! `MWP_POSTGRES_URL` or a private cluster), each case on a fresh store: on PostgreSQL a database
//! of its own.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod pg;

mod opened_by_url {
    use missionweaveprotocol_store_open::{StoreUrl, open};

    missionweaveprotocol_engine::store_test_suite!(|| open(
        &StoreUrl::parse("sqlite:///:memory:").unwrap()
    )
    .unwrap());
}

mod managed {
    use missionweaveprotocol_store_open::{ManagedStore, StoreUrl};

    fn opened() -> ManagedStore {
        let store = ManagedStore::new(StoreUrl::sqlite_path(":memory:").unwrap());
        store.initialize().unwrap();
        store
    }

    missionweaveprotocol_engine::store_test_suite!(opened);
}

mod postgresql_opened_by_url {
    use super::pg::FreshStore;

    missionweaveprotocol_engine::store_test_suite!(FreshStore::new);
}
