//! The store test suite (`store::suite`) on PostgreSQL, unchanged: each case on a fresh store
//! in a schema of its own, with the default pool and with a single connection.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::TestStore;
use missionweaveprotocol_store_postgres::{PostgresOptions, PostgresStore};

mod pooled {
    use super::TestStore;

    missionweaveprotocol_engine::store_test_suite!(TestStore::new);
}

mod one_connection {
    use super::{PostgresOptions, TestStore};

    missionweaveprotocol_engine::store_test_suite!(|| TestStore::with(
        PostgresOptions::default().pool_size(1)
    ));
}

#[test]
fn the_postgres_store_is_shareable_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<PostgresStore>();
    send_sync::<std::sync::Arc<PostgresStore>>();
}
