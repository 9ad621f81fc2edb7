//! The store test suite (`store::suite`) on SQLite: a private in-memory database and a
//! temporary file (WAL, `synchronous=FULL`), each case on a fresh store.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::TempFileStore;
use missionweaveprotocol_store_sqlite::SqliteStore;

mod in_memory {
    use super::SqliteStore;

    missionweaveprotocol_engine::store_test_suite!(|| SqliteStore::in_memory().unwrap());
}

mod temp_file {
    use super::TempFileStore;

    missionweaveprotocol_engine::store_test_suite!(TempFileStore::new);
}

#[test]
fn the_sqlite_store_is_shareable_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<SqliteStore>();
}
