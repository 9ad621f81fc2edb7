//! `RetryPolicy::from_contract`: the Work Contract's `retryPolicy` object (§10.1).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::json::parse;
use missionweaveprotocol_kernel::retry::{Backoff, RetryPolicy};

fn read(text: &str) -> Option<RetryPolicy> {
    RetryPolicy::from_contract(&parse(text.as_bytes()).unwrap())
}

#[test]
fn reads_the_schema_shape() {
    let p = read(
        r#"{"maxAttempts":3,"backoff":"exponential","maxDelay":"PT30S","retryableFailures":["TIMEOUT","RATE_LIMITED"]}"#,
    )
    .unwrap();
    assert_eq!(p.max_attempts, 3);
    assert_eq!(p.backoff, Backoff::Exponential);
    assert_eq!(p.max_delay_ms, 30_000);
    assert_eq!(p.initial_delay_ms, 1_000);
    assert_eq!(p.retryable_failures, ["TIMEOUT", "RATE_LIMITED"]);
    let short =
        read(r#"{"maxAttempts":1,"backoff":"fixed","maxDelay":"PT0.25S","retryableFailures":[]}"#)
            .unwrap();
    assert_eq!((short.initial_delay_ms, short.max_delay_ms), (250, 250));
}

#[test]
fn rejects_other_shapes() {
    for bad in [
        r#"{"maxAttempts":0,"backoff":"none","maxDelay":"PT1S","retryableFailures":[]}"#,
        r#"{"maxAttempts":1.5,"backoff":"none","maxDelay":"PT1S","retryableFailures":[]}"#,
        r#"{"maxAttempts":1,"backoff":"linear","maxDelay":"PT1S","retryableFailures":[]}"#,
        r#"{"maxAttempts":1,"backoff":"none","maxDelay":"1S","retryableFailures":[]}"#,
        r#"{"maxAttempts":1,"backoff":"none","maxDelay":"PT1S","retryableFailures":["timeout"]}"#,
        r#"{"maxAttempts":1,"backoff":"none","maxDelay":"PT1S","retryableFailures":["A_B","A_B"]}"#,
        r#"{"maxAttempts":1,"backoff":"none","maxDelay":"PT1S"}"#,
        r#"{"maxAttempts":1,"backoff":"none","maxDelay":"PT1S","retryableFailures":[],"x":1}"#,
        r#"[]"#,
    ] {
        assert!(read(bad).is_none(), "{bad}");
    }
}
