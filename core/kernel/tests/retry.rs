//! Retries and idempotency keys (§11.4).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::WireCode;
use missionweaveprotocol_kernel::resources::{Dimension, Resources};
use missionweaveprotocol_kernel::retry::{
    AttemptOutcome, Backoff, RetryController, RetryError, RetryPolicy, RetryReason,
    derived_attempt_key, idempotency_key, parse_duration_ms,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

fn policy(max_attempts: u32, backoff: Backoff) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        backoff,
        initial_delay_ms: 1_000,
        max_delay_ms: 5_000,
        retryable_failures: vec!["TIMEOUT".into()],
    }
}

fn controller(p: RetryPolicy, deadline: Option<i64>, budget: Resources) -> RetryController {
    RetryController::new(
        p,
        deadline.map(UnixMillis),
        budget,
        "urn:uuid:m1",
        "urn:uuid:w1",
        3,
    )
    .unwrap()
}

const FAIL: AttemptOutcome<'static> = AttemptOutcome::Failed {
    code: Some("TIMEOUT"),
    retryable: true,
};

#[test]
fn idempotency_key_matches_rfc8785_sha256() {
    // Expected values computed independently from the canonical JSON text.
    assert_eq!(
        idempotency_key("urn:uuid:m1", "urn:uuid:w1", 3, "send-email\"\n\u{e9}\u{1}").unwrap(),
        "sha256:6109f58e4535c7c40b8573f921413d507c0613ad04677fdca5b95e5f960ab4a6"
    );
    assert_eq!(
        derived_attempt_key("sha256:abc", 2),
        "sha256:ac2feb231743d38a061ef753cff108ac5f45ec51b37eec5e1555b47ea2ed0fde"
    );
    assert_eq!(idempotency_key("m", "w", 0, "op"), None);
    let a = idempotency_key("m", "w", 1, "op").unwrap();
    assert_ne!(
        a,
        idempotency_key("m", "w", 2, "op").unwrap(),
        "a new Ownership Epoch gets a new key"
    );
    assert_ne!(a, idempotency_key("m", "w", 1, "op2").unwrap());
}

#[test]
fn retries_reuse_the_key_and_back_off_exponentially() {
    let mut c = controller(policy(4, Backoff::Exponential), None, Resources::splat(100));
    let a1 = c.begin("charge-card", UnixMillis(0)).unwrap();
    assert_eq!(
        c.begin("charge-card", UnixMillis(0)),
        Err(RetryError::AttemptInFlight)
    );
    let s1 = c.finish(FAIL, UnixMillis(10)).unwrap();
    assert_eq!(
        (s1.retry, s1.retry_at, s1.reason),
        (true, Some(UnixMillis(1_010)), RetryReason::RetryableFailure)
    );
    assert_eq!(
        c.begin("charge-card", UnixMillis(1_009)),
        Err(RetryError::BackoffPending(UnixMillis(1_010)))
    );
    let a2 = c.begin("charge-card", UnixMillis(1_010)).unwrap();
    assert_eq!(a1.idempotency_key, a2.idempotency_key);
    assert_ne!(a1.attempt_key, a2.attempt_key);
    assert_eq!(a2.attempt_number, 2);
    assert_eq!(
        c.finish(FAIL, UnixMillis(1_010)).unwrap().retry_at,
        Some(UnixMillis(3_010))
    );
    c.begin("charge-card", UnixMillis(3_010)).unwrap();
    assert_eq!(
        c.finish(FAIL, UnixMillis(3_010)).unwrap().retry_at,
        Some(UnixMillis(7_010))
    );
    c.begin("charge-card", UnixMillis(7_010)).unwrap();
    let last = c.finish(FAIL, UnixMillis(7_010)).unwrap();
    assert_eq!(
        (last.retry, last.reason),
        (false, RetryReason::AttemptsExhausted)
    );
    assert!(last.reason.is_failure());
    assert_eq!(
        c.begin("charge-card", UnixMillis(99_999)),
        Err(RetryError::Finished(RetryReason::AttemptsExhausted))
    );
    assert_eq!(
        policy(9, Backoff::Exponential).delay_after(9),
        5_000,
        "capped at maxDelay"
    );
    assert_eq!(policy(9, Backoff::Fixed).delay_after(1), 5_000);
    assert_eq!(policy(9, Backoff::None).delay_after(3), 0);
}

#[test]
fn permanent_failures_and_success_stop() {
    let mut c = controller(policy(5, Backoff::None), None, Resources::splat(100));
    c.begin("op", UnixMillis(0)).unwrap();
    let s = c
        .finish(
            AttemptOutcome::Failed {
                code: Some("INVALID_INPUT"),
                retryable: true,
            },
            UnixMillis(1),
        )
        .unwrap();
    assert_eq!(
        s.reason,
        RetryReason::PermanentFailure,
        "code not in retryableFailures"
    );
    let mut c = controller(policy(5, Backoff::None), None, Resources::splat(100));
    c.begin("op", UnixMillis(0)).unwrap();
    assert_eq!(
        c.finish(
            AttemptOutcome::Failed {
                code: None,
                retryable: false
            },
            UnixMillis(1)
        )
        .unwrap()
        .reason,
        RetryReason::PermanentFailure
    );
    let mut c = controller(policy(5, Backoff::None), None, Resources::splat(100));
    c.begin("op", UnixMillis(0)).unwrap();
    assert_eq!(
        c.finish(AttemptOutcome::Succeeded, UnixMillis(1))
            .unwrap()
            .reason,
        RetryReason::Completed
    );
    assert_eq!(
        c.finish(AttemptOutcome::Succeeded, UnixMillis(1)),
        Err(RetryError::NoAttemptInFlight)
    );
}

#[test]
fn deadline_and_cost_budgets_bound_retries() {
    let mut c = controller(
        policy(5, Backoff::Fixed),
        Some(4_000),
        Resources::splat(100),
    );
    c.begin("op", UnixMillis(0)).unwrap();
    assert_eq!(
        c.finish(FAIL, UnixMillis(0)).unwrap().reason,
        RetryReason::DeadlineExhausted,
        "retry at 5000 ≥ deadline"
    );
    let mut c = controller(policy(5, Backoff::None), Some(10), Resources::splat(100));
    assert_eq!(
        c.begin("op", UnixMillis(10)),
        Err(RetryError::DeadlineExhausted)
    );

    let budget = Resources::ZERO.with(Dimension::Financial, 100);
    let mut c = controller(policy(5, Backoff::None), None, budget);
    c.begin("op", UnixMillis(0)).unwrap();
    c.consume(&Resources::ZERO.with(Dimension::Financial, 60))
        .unwrap();
    let err = c
        .consume(&Resources::ZERO.with(Dimension::Financial, 41))
        .unwrap_err();
    assert_eq!(err.code(), WireCode::BudgetExceeded);
    assert_eq!(
        c.usage().get(Dimension::Financial),
        60,
        "atomic: nothing charged"
    );
    assert_eq!(
        c.consume(&Resources::ZERO.with(Dimension::ToolCalls, 1)),
        Err(RetryError::BudgetExceeded(Dimension::ToolCalls))
    );
    c.consume(&Resources::ZERO.with(Dimension::Financial, 40))
        .unwrap();
    assert_eq!(
        c.finish(FAIL, UnixMillis(1)).unwrap().reason,
        RetryReason::BudgetExhausted
    );
}

#[test]
fn construction_and_durations() {
    let p = policy(0, Backoff::None);
    assert!(RetryController::new(p, None, Resources::ZERO, "m", "w", 1).is_err());
    assert!(
        RetryController::new(policy(1, Backoff::None), None, Resources::ZERO, "m", "w", 0).is_err()
    );
    for (text, ms) in [
        ("PT5S", Some(5_000)),
        ("P1D", Some(86_400_000)),
        ("PT1H30M", Some(5_400_000)),
        ("PT0.25S", Some(250)),
        ("PT0.0001S", Some(1)),
        ("P1DT1S", Some(86_401_000)),
        ("P", None),
        ("PT", None),
        ("5S", None),
        ("PT1.S", None),
        ("PTS", None),
    ] {
        assert_eq!(parse_duration_ms(text), ms, "{text}");
    }
}
