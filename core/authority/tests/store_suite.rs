//! The store test suite (`store::suite`) on the in-memory store.
use missionweaveprotocol_authority::store::InMemoryStore;

missionweaveprotocol_authority::store_test_suite!(InMemoryStore::new);

#[test]
fn the_in_memory_store_is_shareable_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<InMemoryStore>();
}
