//! `BudgetMeter` (§12) and `PolicyGuard` (§20): every limit positive and negative, rate limits
//! per principal and Group with `retryAfterMs`, and the rate tracker's memory bound.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::{DescribeError, WireCode};
use missionweaveprotocol_agent::policy::{
    ActionClass, BudgetMeter, CooperationLimits, PolicyError, PolicyGuard, RateKind, WINDOW_MS,
};
use missionweaveprotocol_kernel::resources::{Dimension, MAX_SAFE_INTEGER, Resources};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use proptest::prelude::*;

const T0: UnixMillis = UnixMillis(1_784_107_800_000);
const ALICE: &str = "urn:missionweaveprotocol:agent:alice";
const BOB: &str = "urn:missionweaveprotocol:agent:bob";
const G1: &str = "urn:missionweaveprotocol:group:one";
const G2: &str = "urn:missionweaveprotocol:group:two";

fn at(ms: i64) -> UnixMillis {
    UnixMillis(T0.0 + ms)
}

fn refused(
    result: Result<impl core::fmt::Debug, PolicyError>,
    code: WireCode,
    reason: &str,
) -> PolicyError {
    let error = result.expect_err("expected a refusal");
    assert_eq!((error.code(), error.reason()), (code, reason), "{error}");
    error
}

// ---- BudgetMeter ---------------------------------------------------------------------------

#[test]
fn budget_meter_accumulates_up_to_the_limit_and_refuses_overruns_whole() {
    let limit = Resources::ZERO
        .with(Dimension::ToolCalls, 3)
        .with(Dimension::ModelTokens, 100);
    let mut meter = BudgetMeter::new(limit).unwrap();
    let used = meter
        .consume(
            &Resources::ZERO
                .with(Dimension::ToolCalls, 2)
                .with(Dimension::ModelTokens, 50),
        )
        .unwrap();
    assert_eq!(used.get(Dimension::ToolCalls), 2);
    // One dimension over: the whole delta is refused and nothing changes.
    let error = refused(
        meter.consume(
            &Resources::ZERO
                .with(Dimension::ToolCalls, 2)
                .with(Dimension::ModelTokens, 1),
        ),
        WireCode::BudgetExceeded,
        "budget_exceeded",
    );
    assert!(error.to_string().contains("tool_calls"));
    assert_eq!(meter.usage(), used);
    // Exactly the limit is fine.
    assert!(
        meter
            .consume(&Resources::ZERO.with(Dimension::ToolCalls, 1))
            .is_ok()
    );
    assert_eq!(meter.remaining().get(Dimension::ToolCalls), 0);
}

#[test]
fn budget_meter_refuses_unallocated_dimensions_and_unsafe_values() {
    let mut meter = BudgetMeter::new(Resources::ZERO.with(Dimension::ToolCalls, 3)).unwrap();
    refused(
        meter.consume(&Resources::ZERO.with(Dimension::Financial, 1)),
        WireCode::BudgetExceeded,
        "budget_exceeded",
    );
    assert!(meter.consume(&Resources::ZERO).is_ok());
    refused(
        meter.consume(&Resources::ZERO.with(Dimension::ToolCalls, MAX_SAFE_INTEGER + 1)),
        WireCode::BudgetExceeded,
        "budget_exceeded",
    );
    assert!(
        BudgetMeter::new(Resources::ZERO.with(Dimension::ToolCalls, MAX_SAFE_INTEGER + 1)).is_err()
    );
}

// ---- PolicyGuard thresholds ------------------------------------------------------------------

#[test]
fn default_limits_are_the_references() {
    let l = CooperationLimits::default();
    assert_eq!(
        (
            l.maximum_delegation_depth,
            l.maximum_queued_work_items,
            l.maximum_active_work_items,
            l.maximum_unresolved_clarifications,
            l.maximum_message_rate_per_minute,
            l.maximum_proposal_rate_per_minute,
            l.maximum_clarification_rate_per_minute,
        ),
        (
            Some(3),
            Some(100),
            Some(4),
            Some(5),
            Some(120),
            Some(30),
            Some(30)
        )
    );
}

#[test]
fn thresholds_refuse_above_their_limits_only() {
    let guard = PolicyGuard::new(CooperationLimits::default()).unwrap();
    assert!(guard.check_delegation_depth(3).is_ok());
    let e = refused(
        guard.check_delegation_depth(4),
        WireCode::RateLimited,
        "threshold_reached",
    );
    // A recursion threshold does not clear by waiting: not retryable, no retryAfterMs.
    assert_eq!(e.retry_after_ms(), None);
    assert!(!DescribeError::retryable(&e));
    assert!(guard.check_queue(100, 4).is_ok());
    refused(
        guard.check_queue(101, 0),
        WireCode::RateLimited,
        "threshold_reached",
    );
    refused(
        guard.check_queue(0, 5),
        WireCode::RateLimited,
        "threshold_reached",
    );
    assert!(guard.check_unresolved_clarifications(5).is_ok());
    refused(
        guard.check_unresolved_clarifications(6),
        WireCode::RateLimited,
        "threshold_reached",
    );
    assert!(
        PolicyGuard::new(CooperationLimits {
            maximum_tracked_keys: 0,
            ..CooperationLimits::default()
        })
        .is_err()
    );
}

#[test]
fn classify_action_flags_the_high_risk_prefixes() {
    for op in [
        "production.deploy",
        "payment.refund",
        "external.send",
        "external.send.email",
        "destructive.delete",
    ] {
        assert_eq!(
            PolicyGuard::classify_action(op),
            ActionClass::HumanApprovalRequired,
            "{op}"
        );
    }
    for op in ["repo.read", "external.fetch", "productions", "pay.ment", ""] {
        assert_eq!(
            PolicyGuard::classify_action(op),
            ActionClass::Automatic,
            "{op}"
        );
    }
    assert_eq!(
        ActionClass::HumanApprovalRequired.as_str(),
        "human_approval_required"
    );
    assert_eq!(ActionClass::Automatic.as_str(), "automatic");
}

// ---- rates ---------------------------------------------------------------------------------

fn small_limits() -> CooperationLimits {
    CooperationLimits {
        maximum_message_rate_per_minute: Some(3),
        maximum_proposal_rate_per_minute: Some(2),
        maximum_clarification_rate_per_minute: Some(1),
        ..CooperationLimits::default()
    }
}

#[test]
fn message_rate_is_per_principal_and_group_with_retry_after() {
    let mut guard = PolicyGuard::new(small_limits()).unwrap();
    for i in 0..3 {
        guard.check_message_rate(ALICE, G1, at(i * 1000)).unwrap();
    }
    let e = refused(
        guard.check_message_rate(ALICE, G1, at(10_000)),
        WireCode::RateLimited,
        "rate_limited",
    );
    // The oldest counted Message (at 0) leaves the window at 60,000.
    assert_eq!(e.retry_after_ms(), Some(50_000));
    assert!(DescribeError::retryable(&e));
    assert!(DescribeError::fields(&e).get("retry_after_ms").is_some());
    // Other principal, other Group: independent windows.
    guard.check_message_rate(BOB, G1, at(10_000)).unwrap();
    guard.check_message_rate(ALICE, G2, at(10_000)).unwrap();
    // A refused Message is not counted: after the oldest leaves, one more fits.
    guard.check_message_rate(ALICE, G1, at(WINDOW_MS)).unwrap();
    refused(
        guard.check_message_rate(ALICE, G1, at(WINDOW_MS)),
        WireCode::RateLimited,
        "rate_limited",
    );
}

#[test]
fn proposal_and_clarification_rates_have_their_own_limits() {
    let mut guard = PolicyGuard::new(small_limits()).unwrap();
    guard.check_proposal_rate(ALICE, G1, T0).unwrap();
    guard.check_proposal_rate(ALICE, G1, T0).unwrap();
    let e = refused(
        guard.check_proposal_rate(ALICE, G1, T0),
        WireCode::RateLimited,
        "rate_limited",
    );
    assert_eq!(e.retry_after_ms(), Some(WINDOW_MS as u64));
    guard.check_clarification_rate(ALICE, G1, T0).unwrap();
    refused(
        guard.check_clarification_rate(ALICE, G1, at(1)),
        WireCode::RateLimited,
        "rate_limited",
    );
    // Messages are a separate counter.
    guard.check_message_rate(ALICE, G1, T0).unwrap();
    // A zero limit refuses everything.
    let mut closed = PolicyGuard::new(CooperationLimits {
        maximum_message_rate_per_minute: Some(0),
        ..small_limits()
    })
    .unwrap();
    refused(
        closed.check_message_rate(ALICE, G1, T0),
        WireCode::RateLimited,
        "rate_limited",
    );
    refused(
        guard.check_rate(RateKind::Message, "", G1, T0),
        WireCode::InvalidCommand,
        "invalid_argument",
    );
}

#[test]
fn a_clock_that_steps_back_neither_panics_nor_frees_slots() {
    let mut guard = PolicyGuard::new(small_limits()).unwrap();
    guard.check_proposal_rate(ALICE, G1, at(30_000)).unwrap();
    guard.check_proposal_rate(ALICE, G1, at(0)).unwrap();
    let e = refused(
        guard.check_proposal_rate(ALICE, G1, at(-5_000)),
        WireCode::RateLimited,
        "rate_limited",
    );
    assert!(e.retry_after_ms().unwrap() >= 1);
}

#[test]
fn tracked_keys_are_bounded_and_expired_windows_evicted() {
    let limits = CooperationLimits {
        maximum_tracked_keys: 8,
        ..small_limits()
    };
    let mut guard = PolicyGuard::new(limits).unwrap();
    for i in 0..8 {
        guard
            .check_message_rate(&format!("urn:x:agent:{i}"), G1, at(i))
            .unwrap();
    }
    assert_eq!(guard.tracked_keys(), 8);
    // Full, every window still live: a new key is refused rather than evicting a live count.
    let e = refused(
        guard.check_message_rate("urn:x:agent:new", G1, at(1_000)),
        WireCode::RateLimited,
        "rate_tracker_full",
    );
    assert_eq!(e.retry_after_ms(), Some(WINDOW_MS as u64 - 1_000));
    // Known keys keep working at the bound.
    guard
        .check_message_rate("urn:x:agent:0", G1, at(1_000))
        .unwrap();
    assert_eq!(guard.tracked_keys(), 8);
    // Once the windows pass, the expired keys are evicted and the new key fits.
    guard
        .check_message_rate("urn:x:agent:new", G1, at(WINDOW_MS + 7))
        .unwrap();
    assert!(guard.tracked_keys() <= 8);
    assert_eq!(
        guard.tracked_keys(),
        2,
        "only agent:0 (renewed at 1,000) and the new key remain"
    );
}

proptest! {
    /// Whatever the traffic, the tracker never holds more keys than its bound, nor more
    /// timestamps per key than the limit.
    #[test]
    fn memory_stays_bounded(events in proptest::collection::vec((0u8..40, 0u8..3, 0i64..200_000), 0..400)) {
        let limits = CooperationLimits { maximum_tracked_keys: 16, ..small_limits() };
        let mut guard = PolicyGuard::new(limits).unwrap();
        let mut accepted_per_key = std::collections::HashMap::<(u8, u8), Vec<i64>>::new();
        let mut sorted = events.clone();
        sorted.sort_by_key(|e| e.2);
        for (who, kind, t) in sorted {
            let kind = [RateKind::Message, RateKind::Proposal, RateKind::Clarification][kind as usize];
            let principal = format!("urn:x:agent:{who}");
            if guard.check_rate(kind, &principal, G1, at(t)).is_ok() {
                let log = accepted_per_key.entry((who, kind as u8)).or_default();
                log.push(t);
                // Never more than the limit inside any minute.
                let limit = match kind { RateKind::Message => 3, RateKind::Proposal => 2, RateKind::Clarification => 1 };
                let in_window = log.iter().filter(|x| **x > t - WINDOW_MS).count();
                prop_assert!(in_window <= limit);
            }
            prop_assert!(guard.tracked_keys() <= 16);
        }
    }
}
