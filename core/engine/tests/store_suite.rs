//! The store test suite (`store::suite`) on the in-memory store.
use missionweaveprotocol_engine::store::InMemoryStore;

missionweaveprotocol_engine::store_test_suite!(InMemoryStore::new);

#[test]
fn the_in_memory_store_is_shareable_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<InMemoryStore>();
}

/// §19: store errors describe themselves; argument errors are API misuse, a backend failure and
/// a raced duplicate are transient (`INTERNAL_ERROR`, retryable), conflicts are not retryable
/// unchanged.
#[test]
fn store_errors_describe_their_class_and_retry_rule() {
    use missionweaveprotocol::{DescribeError, ErrorClass, WireCode};
    use missionweaveprotocol_engine::store::{AggregateKey, StoreError};

    let backend = StoreError::Backend {
        detail: "disk full".into(),
    };
    assert_eq!(backend.wire_code(), WireCode::InternalError);
    assert!(backend.retryable());
    assert!(!backend.is_contention());
    assert_eq!(backend.to_string(), "the store failed: disk full");

    let argument = StoreError::InvalidArgument {
        argument: "limit",
        detail: "a replay page holds at least one Event".into(),
    };
    assert_eq!(argument.class(), ErrorClass::Argument);
    assert_eq!(
        argument.to_string(),
        "limit: a replay page holds at least one Event"
    );

    let conflict = StoreError::RevisionConflict {
        key: AggregateKey::new("mission", "m"),
        expected: 1,
        current: 2,
    };
    assert_ne!(conflict.class(), ErrorClass::Argument);
    assert!(!conflict.retryable());
    assert_eq!(
        conflict.to_string(),
        "mission m is at revision 2, the write expected 1"
    );
}
