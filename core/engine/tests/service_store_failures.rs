//! The store's own failures through `service::Core`: damaged data at rest, a failing backend and
//! a closed store are the `store_failure` family (Python `core.StoreError`, JavaScript
//! `StoreError`), never `revision_conflict`, with `retryable` true only where an unchanged retry
//! can succeed (a failing backend); conflicts between concurrent Commands stay
//! `revision_conflict`. A store whose calls fail on demand (`Faulty`) stands in for a broken
//! database; nothing is applied by a refused Command.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_work_fixture.rs"]
mod fixture;

use std::sync::{Arc, Mutex};

use fixture::*;
use missionweaveprotocol::json::Value;
use missionweaveprotocol::{
    DescribeError, FieldValue, SignedDocumentCodec, SignedDocumentKind, WireCode,
};
use missionweaveprotocol_engine::engine::QueryKind;
use missionweaveprotocol_engine::events::{EventIssuer, SequentialEventIds};
use missionweaveprotocol_engine::service::{
    Core, CoreError, ErrorFamily, STORE_FAILURE_REASONS, default_authorizer,
};
use missionweaveprotocol_engine::store::{
    Aggregate, AggregateKey, GroupHead, InMemoryStore, Receipt, ReceiptKey, ReplayPage,
    SnapshotPointer, Store, StoreError, Transaction,
};

/// When the injected fault applies.
#[derive(Clone, Copy, PartialEq, Eq)]
enum On {
    /// Every call.
    Every,
    /// Commits only (reads succeed).
    Commit,
}

/// An in-memory store whose calls fail with `fault` while one is set.
#[derive(Default)]
struct Faulty {
    inner: InMemoryStore,
    fault: Mutex<Option<(On, StoreError)>>,
}

impl Faulty {
    fn fail(&self, on: On, error: StoreError) {
        *self.fault.lock().unwrap() = Some((on, error));
    }

    fn heal(&self) {
        *self.fault.lock().unwrap() = None;
    }

    fn check(&self, commit: bool) -> Result<(), StoreError> {
        match &*self.fault.lock().unwrap() {
            Some((On::Every, e)) => Err(e.clone()),
            Some((On::Commit, e)) if commit => Err(e.clone()),
            _ => Ok(()),
        }
    }
}

impl Store for Faulty {
    fn commit(&self, tx: Transaction) -> Result<(), StoreError> {
        self.check(true)?;
        self.inner.commit(tx)
    }
    fn aggregate(&self, key: &AggregateKey) -> Result<Option<Aggregate>, StoreError> {
        self.check(false)?;
        self.inner.aggregate(key)
    }
    fn list(&self, kind: &str, prefix: &str) -> Result<Vec<(String, Aggregate)>, StoreError> {
        self.check(false)?;
        self.inner.list(kind, prefix)
    }
    fn receipt(&self, key: &ReceiptKey) -> Result<Option<Receipt>, StoreError> {
        self.check(false)?;
        self.inner.receipt(key)
    }
    fn head(&self, group: &str) -> Result<GroupHead, StoreError> {
        self.check(false)?;
        self.inner.head(group)
    }
    fn replay(&self, group: &str, after: u64, limit: usize) -> Result<ReplayPage, StoreError> {
        self.check(false)?;
        self.inner.replay(group, after, limit)
    }
    fn archive_before(
        &self,
        group: &str,
        before: u64,
        snapshot: SnapshotPointer,
    ) -> Result<(), StoreError> {
        self.check(true)?;
        self.inner.archive_before(group, before, snapshot)
    }
}

type FaultyCore = Core<Arc<Faulty>>;

/// A core over a `Faulty` store in which both Agents opened Session Epoch 1.
fn core(f: &Fixture) -> (FaultyCore, Arc<Faulty>) {
    let store = Arc::new(Faulty::default());
    let core = Core::new(
        Arc::clone(&store),
        Arc::clone(&f.registry),
        EventIssuer::new(authority(), f.authority_key.clone()),
        default_authorizer(vec![SERVICE.to_owned()], Vec::new()),
        Box::new(SequentialEventIds::new(
            "urn:missionweaveprotocol:event:faulty-",
        )),
    );
    for agent in [COORDINATOR, OTHER_AGENT] {
        let open = f.unsigned_service(
            "ext.missionweaveprotocol.identity.session_open",
            &f.action(),
            &format!(r#"{{"agentId": "{agent}"}}"#),
        );
        core.perform_bytes(&sign_as(f, SERVICE, &open), NOW)
            .unwrap_or_else(|e| panic!("session_open refused: {e}"));
    }
    (core, store)
}

fn sign_as(f: &Fixture, actor: &str, unsigned: &Value) -> Vec<u8> {
    let (_, key) = f.keys.iter().find(|(p, _)| p.id == actor).unwrap();
    SignedDocumentCodec::new()
        .sign(SignedDocumentKind::Command, unsigned, key)
        .unwrap()
        .bytes
}

fn create(f: &Fixture) -> Vec<u8> {
    let unsigned = f.unsigned(
        "mission.create",
        OWNER,
        &f.action(),
        "",
        &f.create_payload(MISSION, ""),
    );
    sign_as(f, OWNER, &unsigned)
}

fn text<'e>(e: &'e CoreError, name: &str) -> Option<&'e str> {
    match e.fields.get(name) {
        Some(FieldValue::Text(t)) => Some(t),
        _ => None,
    }
}

fn assert_store_failure(e: &CoreError, reason: &str, retryable: bool) {
    assert_eq!(e.family, ErrorFamily::StoreFailure, "{e} ({})", e.reason);
    assert_ne!(e.family, ErrorFamily::RevisionConflict);
    assert_eq!(e.wire_code, WireCode::InternalError);
    assert_eq!(e.reason, reason);
    assert_eq!(e.retryable, retryable, "{reason}");
    assert_eq!(e.family.class_name(), "StoreError");
    assert!(STORE_FAILURE_REASONS.contains(&e.reason.as_str()));
    assert!(!e.message.contains("{ "), "{e}");
}

#[test]
fn a_failing_backend_is_a_retryable_store_failure_and_applies_nothing() {
    let f = fixture();
    let (core, store) = core(&f);
    let bytes = create(&f);
    store.fail(
        On::Commit,
        StoreError::Backend {
            detail: "disk I/O error".to_owned(),
        },
    );
    let e = core.perform_bytes(&bytes, NOW).unwrap_err();
    assert_store_failure(&e, "backend_failure", true);
    assert_eq!(
        store.inner.head(GROUP).unwrap().last_sequence(),
        0,
        "nothing applied"
    );
    // Retryable means it: the same bytes succeed once the backend recovers.
    store.heal();
    let performed = core.perform_bytes(&bytes, NOW).unwrap();
    assert!(!performed.duplicate);
    assert_eq!(store.inner.head(GROUP).unwrap().last_sequence(), 1);
}

#[test]
fn a_closed_store_is_a_store_failure_that_is_not_retryable() {
    let f = fixture();
    let (core, store) = core(&f);
    core.perform_bytes(&create(&f), NOW).unwrap();
    for closed in [true, false] {
        store.fail(On::Every, StoreError::NotOpen { closed });
        let reason = if closed {
            "store_closed"
        } else {
            "store_not_initialized"
        };
        assert_store_failure(&core.replay(GROUP, 0, 10).unwrap_err(), reason, false);
        assert_store_failure(
            &core.perform_bytes(&create(&f), NOW).unwrap_err(),
            reason,
            false,
        );
        let e = core
            .query(QueryKind::Mission, MISSION, None, None, NOW)
            .unwrap_err();
        assert_store_failure(&e, reason, false);
        assert!(e.fields.iter().len() == 0, "no row to name: {:?}", e.fields);
    }
}

#[test]
fn damaged_data_at_rest_is_a_store_failure_naming_its_row() {
    let f = fixture();
    let (core, store) = core(&f);
    core.perform_bytes(&create(&f), NOW).unwrap();
    store.fail(
        On::Every,
        StoreError::Corrupt {
            what: "event",
            locator: format!("{GROUP} #1"),
            detail: "the Event's bytes or ID do not match its hash chain".to_owned(),
        },
    );
    let e = core.replay(GROUP, 0, 10).unwrap_err();
    assert_store_failure(&e, "store_corrupt", false);
    assert_eq!(text(&e, "stored"), Some("event"));
    assert_eq!(text(&e, "locator"), Some(format!("{GROUP} #1").as_str()));
    // The same for a Command that reads the damaged store: nothing applied, not retryable.
    let e = core.perform_bytes(&create(&f), NOW).unwrap_err();
    assert_store_failure(&e, "store_corrupt", false);
}

#[test]
fn an_unreadable_aggregate_is_a_store_failure_naming_its_key() {
    let f = fixture();
    let (core, store) = core(&f);
    core.perform_bytes(&create(&f), NOW).unwrap();
    // A Mission row whose value is no Mission: the engine cannot read it back.
    let key = AggregateKey::new("mission", MISSION);
    let revision = store.inner.aggregate(&key).unwrap().unwrap().revision;
    let mut tx = Transaction::new();
    tx.put(key, revision, b"{\"not\":\"a mission\"}"[..].into());
    store.inner.commit(tx).unwrap();
    let e = core
        .query(QueryKind::Mission, MISSION, None, None, NOW)
        .unwrap_err();
    assert_store_failure(&e, "corrupt_aggregate", false);
    assert_eq!(text(&e, "stored"), Some("aggregate"));
    assert_eq!(
        text(&e, "locator"),
        Some(format!("mission {MISSION}").as_str())
    );
    assert_eq!(text(&e, "aggregate_id"), Some(MISSION));
}

#[test]
fn conflicts_stay_revision_conflicts_and_are_retryable() {
    let f = fixture();
    let (core, store) = core(&f);
    let bytes = create(&f);
    // Every commit meets a concurrent writer: the engine decides again until it gives up.
    store.fail(
        On::Commit,
        StoreError::RevisionConflict {
            key: AggregateKey::new("mission", MISSION),
            expected: 0,
            current: 1,
        },
    );
    let e = core.perform_bytes(&bytes, NOW).unwrap_err();
    assert_eq!(e.reason, "contended", "{e}");
    assert_eq!(e.family, ErrorFamily::RevisionConflict);
    assert_eq!(e.wire_code, WireCode::InternalError);
    assert!(e.retryable);
    assert!(!STORE_FAILURE_REASONS.contains(&e.reason.as_str()));
    store.heal();
    assert!(!core.perform_bytes(&bytes, NOW).unwrap().duplicate);
}

#[test]
fn every_store_failure_reason_describes_itself() {
    let failures = [
        StoreError::Corrupt {
            what: "receipt",
            locator: "e1".to_owned(),
            detail: "x".to_owned(),
        },
        StoreError::IntegrityKeyRefused {
            detail: "another key".to_owned(),
        },
        StoreError::Backend {
            detail: "busy".to_owned(),
        },
        StoreError::NotOpen { closed: true },
        StoreError::NotOpen { closed: false },
    ];
    let reasons: Vec<&str> = failures.iter().map(StoreError::reason).collect();
    assert_eq!(reasons, StoreError::FAILURE_REASONS);
    for e in &failures {
        assert!(e.is_failure() && !e.is_contention());
        assert_eq!(e.wire_code(), WireCode::InternalError);
        let described = CoreError::describe(e);
        assert_eq!(described.family, ErrorFamily::StoreFailure);
        assert_eq!(described.retryable, matches!(e, StoreError::Backend { .. }));
    }
    // The store's conflicts and refusals of the call are not failures.
    let conflict = StoreError::SequenceConflict {
        group: "g".to_owned(),
        expected: 2,
        next: 3,
    };
    assert!(!conflict.is_failure());
    assert_eq!(
        CoreError::describe(&conflict).family,
        ErrorFamily::RevisionConflict
    );
    let argument = StoreError::InvalidArgument {
        argument: "limit",
        detail: "0".to_owned(),
    };
    assert!(!argument.is_failure());
    assert_eq!(
        CoreError::describe(&argument).family,
        ErrorFamily::InvalidCommand
    );
}
