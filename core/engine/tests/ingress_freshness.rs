//! The freshness and clock-skew window of `issuedAt` (§6.4: "Organization-defined, bounded";
//! failure → `AUTH_INVALID_SIGNATURE`, indistinguishable on the wire from stages 3, 4 and 6).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "ingress_fixture.rs"]
mod fixture;

use fixture::*;
use missionweaveprotocol::schema_formats::Timestamp;
use missionweaveprotocol::{DescribeError, ErrorClass, WireCode};
use missionweaveprotocol_engine::ingress::{
    AllowAllAuthorizerForTests, CommandIngress, FreshnessViolation, FreshnessWindow, IngressError,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

fn at(ms_from_now: i64) -> String {
    UnixMillis(NOW.0 + ms_from_now).to_rfc3339().unwrap()
}

fn check(window: FreshnessWindow, issued_at: &str) -> Result<(), FreshnessViolation> {
    window
        .check(&Timestamp::parse(issued_at).unwrap(), NOW)
        .map_err(|e| e.violation)
}

#[test]
fn the_defaults_are_thirty_seconds_ahead_and_five_minutes_old() {
    let w = FreshnessWindow::default();
    assert_eq!((w.max_future_skew_ms, w.max_age_ms), (30_000, 300_000));
    assert_eq!(
        *CommandIngress::new(AllowAllAuthorizerForTests).window(),
        FreshnessWindow::default()
    );
}

#[test]
fn both_edges_are_inclusive_and_one_millisecond_beyond_is_refused() {
    let w = FreshnessWindow::default();
    assert_eq!(check(w, &at(0)), Ok(()));
    assert_eq!(check(w, &at(30_000)), Ok(()));
    assert_eq!(check(w, &at(30_001)), Err(FreshnessViolation::InFuture));
    assert_eq!(check(w, &at(-300_000)), Ok(()));
    assert_eq!(check(w, &at(-300_001)), Err(FreshnessViolation::TooOld));
    assert_eq!(
        check(w, "2099-01-01T00:00:00Z"),
        Err(FreshnessViolation::InFuture)
    );
    assert_eq!(
        check(w, "0001-01-01T00:00:00Z"),
        Err(FreshnessViolation::TooOld)
    );
}

#[test]
fn sub_millisecond_digits_count_at_the_edges() {
    let w = FreshnessWindow::default();
    // Latest: 09:30:30.000Z. A microsecond later is outside; exactly the edge with extra
    // zero digits is inside.
    assert_eq!(check(w, "2026-07-15T09:30:30.000000Z"), Ok(()));
    assert_eq!(
        check(w, "2026-07-15T09:30:30.0000001Z"),
        Err(FreshnessViolation::InFuture)
    );
    // Earliest: 09:25:00.000Z. Half a millisecond before is outside, half after inside.
    assert_eq!(
        check(w, "2026-07-15T09:24:59.9995Z"),
        Err(FreshnessViolation::TooOld)
    );
    assert_eq!(check(w, "2026-07-15T09:25:00.0005Z"), Ok(()));
}

#[test]
fn offsets_compare_by_instant() {
    let w = FreshnessWindow::new(0, 0);
    assert_eq!(check(w, "2026-07-15T11:30:00+02:00"), Ok(()));
    assert_eq!(
        check(w, "2026-07-15T11:30:00.001+02:00"),
        Err(FreshnessViolation::InFuture)
    );
    assert_eq!(
        check(w, "2026-07-15T09:29:59.999Z"),
        Err(FreshnessViolation::TooOld)
    );
}

#[test]
fn a_configured_window_replaces_the_default() {
    let w = FreshnessWindow::new(1_000, 2_000);
    assert_eq!(check(w, &at(1_000)), Ok(()));
    assert_eq!(check(w, &at(1_001)), Err(FreshnessViolation::InFuture));
    assert_eq!(check(w, &at(-2_000)), Ok(()));
    assert_eq!(check(w, &at(-2_001)), Err(FreshnessViolation::TooOld));
    // Huge bounds saturate instead of overflowing.
    let wide = FreshnessWindow::new(u64::MAX, u64::MAX);
    assert_eq!(check(wide, "0001-01-01T00:00:00Z"), Ok(()));
    assert_eq!(check(wide, "9999-12-31T23:59:59.999999Z"), Ok(()));
}

fn verify_at(ms_from_now: i64, window: FreshnessWindow) -> Result<(), IngressError> {
    let f = fixture();
    let bytes = sign(&agent_command(&at(ms_from_now), ""), &f.agent_key);
    CommandIngress::new(AllowAllAuthorizerForTests)
        .with_window(window)
        .verify(&bytes, &f.registry, NOW)
        .map(|_| ())
}

#[test]
fn ingress_accepts_signed_commands_at_both_edges() {
    let w = FreshnessWindow::new(5_000, 60_000);
    verify_at(5_000, w).unwrap();
    verify_at(-60_000, w).unwrap();
    verify_at(0, w).unwrap();
}

#[test]
fn ingress_refuses_stale_and_future_commands_like_a_bad_signature() {
    let f = fixture();
    let w = FreshnessWindow::new(5_000, 60_000);
    let future = verify_at(5_001, w).unwrap_err();
    let stale = verify_at(-60_001, w).unwrap_err();
    // A stage-6 failure for comparison.
    let bytes = sign(&agent_command(NOW_TEXT, ""), &f.agent_key);
    let tampered = String::from_utf8(bytes)
        .unwrap()
        .replace("\"step\":1", "\"step\":7");
    let bad_signature = CommandIngress::new(AllowAllAuthorizerForTests)
        .verify(tampered.as_bytes(), &f.registry, NOW)
        .unwrap_err();
    for (e, reason) in [(&future, "command-from-future"), (&stale, "command-stale")] {
        assert!(matches!(e, IngressError::Freshness(_)));
        assert_eq!(e.wire_code(), WireCode::AuthInvalidSignature);
        assert_eq!(e.class(), ErrorClass::Verification);
        assert_eq!(DescribeError::reason(e), reason);
        assert!(!e.retryable());
        // The wire view is the same as a bad signature's.
        assert_eq!(e.to_string(), bad_signature.to_string());
        assert_eq!(e.wire_code(), bad_signature.wire_code());
        assert_eq!(
            e.fields().get("wire_message"),
            bad_signature.fields().get("wire_message")
        );
        // The protected detail names the instants.
        assert!(
            e.detail().contains("issuedAt 2026-07-15T09:"),
            "{}",
            e.detail()
        );
    }
    let IngressError::Freshness(detail) = &future else {
        unreachable!()
    };
    assert_eq!(detail.bound, UnixMillis(NOW.0 + 5_000));
    assert_eq!(detail.now, NOW);
}
