//! A RetryController's state survives a Worker restart (§11.4: retries stay bounded; an attempt
//! in flight keeps its idempotency key). Snapshots are versioned, strict and checked: tampered,
//! malformed or unreachable states are refused with typed errors.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::WireCode;
use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol_kernel::resources::{Dimension, Resources};
use missionweaveprotocol_kernel::retry::{
    AttemptOutcome, Backoff, RETRY_SNAPSHOT_VERSION, RetryController, RetryError, RetryPolicy,
    RetryReason, RetrySnapshot, RetrySnapshotError,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

const FAIL: AttemptOutcome<'static> = AttemptOutcome::Failed {
    code: Some("TIMEOUT"),
    retryable: true,
};

fn controller() -> RetryController {
    RetryController::new(
        RetryPolicy {
            max_attempts: 3,
            backoff: Backoff::Exponential,
            initial_delay_ms: 1_000,
            max_delay_ms: 5_000,
            retryable_failures: vec!["TIMEOUT".into()],
        },
        Some(UnixMillis(100_000)),
        Resources::ZERO.with(Dimension::ToolCalls, 10),
        "urn:uuid:m1",
        "urn:uuid:w1",
        3,
    )
    .unwrap()
}

/// Through bytes, as a store would keep it.
fn reload(c: &RetryController) -> RetryController {
    let bytes = c.snapshot().to_json_bytes();
    RetryController::restore(&RetrySnapshot::from_json_bytes(&bytes).unwrap()).unwrap()
}

fn edited(c: &RetryController, edit: impl FnOnce(&mut json::Object)) -> Value {
    let mut value = c.snapshot().to_value();
    if let Value::Object(o) = &mut value {
        edit(o);
    }
    value
}

fn recompute_integrity(value: &mut Value) {
    let Value::Object(o) = value else { panic!() };
    o.remove("integrity");
    let hash = json::sha256_prefixed(&json::canonical_bytes(&Value::Object(o.clone())).unwrap());
    o.insert("integrity", Value::string(hash));
}

#[test]
fn attempts_usage_backoff_and_the_attempt_in_flight_survive_a_restart() {
    let mut c = controller();
    let first = c.begin("send-invoice", UnixMillis(0)).unwrap();
    c.consume(&Resources::ZERO.with(Dimension::ToolCalls, 2))
        .unwrap();
    let schedule = c.finish(FAIL, UnixMillis(10)).unwrap();
    assert_eq!(schedule.retry_at, Some(UnixMillis(1_010)));
    // Restart between attempts: the backoff still holds.
    let mut c = reload(&c);
    assert_eq!((c.attempts(), c.usage().get(Dimension::ToolCalls)), (1, 2));
    assert!(matches!(
        c.begin("send-invoice", UnixMillis(500)),
        Err(RetryError::BackoffPending(UnixMillis(1_010)))
    ));
    let second = c.begin("send-invoice", UnixMillis(1_010)).unwrap();
    assert_eq!(second.attempt_number, 2);
    assert_eq!(second.idempotency_key, first.idempotency_key);
    // Restart with the attempt in flight: it is still the current one, and a new one cannot
    // start before it is finished.
    let mut c = reload(&c);
    assert_eq!(
        c.current_attempt(),
        Some(("send-invoice", UnixMillis(1_010)))
    );
    assert_eq!(
        c.begin("send-invoice", UnixMillis(1_020)).unwrap_err(),
        RetryError::AttemptInFlight
    );
    c.finish(FAIL, UnixMillis(1_100)).unwrap();
    assert_eq!(c.current_attempt(), None);
    c.begin("send-invoice", UnixMillis(3_100)).unwrap();
    c.finish(FAIL, UnixMillis(3_200)).unwrap();
    // The final reason survives: the loop stays over.
    let mut c = reload(&c);
    assert_eq!(c.finished(), Some(RetryReason::AttemptsExhausted));
    assert!(c.begin("send-invoice", UnixMillis(9_000)).is_err());
    // The usage bound survives too.
    assert_eq!(
        reload(&controller())
            .consume(&Resources::ZERO.with(Dimension::ToolCalls, 11))
            .unwrap_err(),
        RetryError::BudgetExceeded(Dimension::ToolCalls)
    );
}

#[test]
fn the_snapshot_is_versioned_strict_and_round_trips() {
    let mut c = controller();
    c.begin("op", UnixMillis(5)).unwrap();
    let snapshot = c.snapshot();
    let value = snapshot.to_value();
    assert_eq!(
        value.get("version").unwrap().as_number().unwrap().as_u64(),
        Some(RETRY_SNAPSHOT_VERSION)
    );
    assert_eq!(RetrySnapshot::from_value(&value).unwrap(), snapshot);
    // Another version.
    let mut other = edited(&c, |o| o.insert("version", json::parse(b"2").unwrap()));
    recompute_integrity(&mut other);
    assert_eq!(
        RetrySnapshot::from_value(&other).unwrap_err(),
        RetrySnapshotError::UnsupportedVersion(2)
    );
    // Unknown, missing and mistyped members.
    for value in [
        edited(&c, |o| o.insert("extra", Value::Bool(true))),
        edited(&c, |o| {
            o.remove("usage");
        }),
        edited(&c, |o| o.insert("attempts", Value::string("1"))),
        edited(&c, |o| o.insert("finished", Value::string("gave_up"))),
    ] {
        let mut value = value;
        recompute_integrity(&mut value);
        assert!(matches!(
            RetrySnapshot::from_value(&value),
            Err(RetrySnapshotError::Format(_))
        ));
    }
    assert!(RetrySnapshot::from_json_bytes(b"{not json").is_err());
}

#[test]
fn a_tampered_snapshot_is_refused() {
    let mut c = controller();
    c.begin("op", UnixMillis(5)).unwrap();
    c.finish(FAIL, UnixMillis(6)).unwrap();
    // Rewinding the attempts without recomputing the checksum.
    let value = edited(&c, |o| o.insert("attempts", json::parse(b"0").unwrap()));
    let error = RetrySnapshot::from_value(&value).unwrap_err();
    assert_eq!(error, RetrySnapshotError::IntegrityMismatch);
    assert_eq!(error.code(), WireCode::InternalError);
}

#[test]
fn unreachable_states_are_refused_on_restore() {
    let mut c = controller();
    c.begin("op", UnixMillis(5)).unwrap();
    let base = c.snapshot();
    let refused = |s: RetrySnapshot| {
        // Through the JSON form as well, with a valid checksum: consistency is checked on
        // restore, not by the checksum.
        let reread = RetrySnapshot::from_value(&s.to_value()).unwrap();
        RetryController::restore(&reread).unwrap_err()
    };
    let inconsistent = |e: RetrySnapshotError| {
        assert!(matches!(e, RetrySnapshotError::Inconsistent(_)), "{e}");
    };
    inconsistent(refused(RetrySnapshot {
        attempts: 4,
        ..base.clone()
    }));
    inconsistent(refused(RetrySnapshot {
        usage: Resources::ZERO.with(Dimension::ToolCalls, 11),
        ..base.clone()
    }));
    inconsistent(refused(RetrySnapshot {
        attempts: 0,
        ..base.clone()
    }));
    inconsistent(refused(RetrySnapshot {
        finished: Some(RetryReason::Completed),
        ..base.clone()
    }));
    inconsistent(refused(RetrySnapshot {
        attempts: 0,
        current: None,
        next_start: Some(UnixMillis(9)),
        ..base.clone()
    }));
    // The construction rules apply too.
    assert!(matches!(
        refused(RetrySnapshot {
            ownership_epoch: 0,
            ..base.clone()
        }),
        RetrySnapshotError::Invalid(RetryError::InvalidArgument("ownershipEpoch"))
    ));
    let mut policy = base.policy.clone();
    policy.max_attempts = 0;
    assert!(matches!(
        refused(RetrySnapshot {
            policy,
            ..base.clone()
        }),
        RetrySnapshotError::Invalid(_)
    ));
    // And the base itself restores.
    RetryController::restore(&base).unwrap();
}
