//! The store test suite (`store::suite`) through this crate: a store opened by URL (the
//! `SharedStore` a binding's core runs over) and an initialized `ManagedStore` (whose `Store`
//! impl forwards every call, the overridden `commit_many` and `dedup` included), on private
//! in-memory SQLite databases, each case on a fresh store.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod opened_by_url {
    use missionweaveprotocol_stores::{StoreUrl, open};

    missionweaveprotocol_authority::store_test_suite!(|| open(
        &StoreUrl::parse("sqlite:///:memory:").unwrap()
    )
    .unwrap());
}

mod managed {
    use missionweaveprotocol_stores::{ManagedStore, StoreUrl};

    fn opened() -> ManagedStore {
        let store = ManagedStore::new(StoreUrl::sqlite_path(":memory:").unwrap());
        store.initialize().unwrap();
        store
    }

    missionweaveprotocol_authority::store_test_suite!(opened);
}
