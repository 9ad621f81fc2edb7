//! Every authority error describes itself (§19): class, wire code, stable reason, a readable
//! message (never a `Debug` dump) and structured fields. The bindings show exactly this.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::{DescribeError, ErrorClass, FieldValue, WireCode};
use missionweaveprotocol_kernel::budget::{AccountId, AccountKind, BudgetError, BudgetLedger};
use missionweaveprotocol_kernel::delegation::{DelegationViolation, DelegationViolationKind};
use missionweaveprotocol_kernel::lease::{LeaseError, LeaseState};
use missionweaveprotocol_kernel::resources::{Currency, Dimension, Resources};
use missionweaveprotocol_kernel::retry::{RetryError, RetryReason};
use missionweaveprotocol_kernel::scheduler::{self, SchedulerError, WorkState};
use missionweaveprotocol_kernel::snapshot_json::SnapshotFormatError;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// A readable message: no Rust `Debug` syntax, no wire-code prefix (the code is a separate
/// member of every binding's error).
fn assert_readable(e: &dyn DescribeError) {
    let message = e.to_string();
    assert!(!message.is_empty());
    for debug in ["{ ", " }", "Some(", "None", "AccountId", "Dimension::"] {
        assert!(
            !message.contains(debug),
            "{message:?} looks like a Debug dump"
        );
    }
    assert!(
        !message.starts_with(e.wire_code().as_str()),
        "{message:?} repeats the code"
    );
    assert!(!e.reason().is_empty());
}

fn account(kind: AccountKind, id: &str) -> AccountId {
    AccountId {
        kind,
        id: id.to_owned(),
    }
}

#[test]
fn a_budget_overflow_names_dimension_and_account_in_one_spelling() {
    let mut ledger = BudgetLedger::new();
    ledger
        .register_mission("m", Currency::parse("USD"), Resources::splat(5))
        .unwrap();
    ledger
        .register_work_item("w", "m", None, Resources::splat(5))
        .unwrap();
    let mut delta = Resources::ZERO;
    delta.set(Dimension::ToolCalls, 6);
    let e = ledger.consume("w", &delta).unwrap_err();
    assert_readable(&e);
    assert_eq!(e.class(), ErrorClass::BudgetExceeded);
    assert_eq!(e.wire_code(), WireCode::BudgetExceeded);
    assert_eq!(DescribeError::reason(&e), "exceeded");
    let fields = e.fields();
    assert_eq!(
        fields.get("dimension"),
        Some(&FieldValue::Text("tool_calls".into()))
    );
    assert_eq!(
        fields.get("account"),
        Some(&FieldValue::Account {
            kind: "work_item",
            id: "w".into()
        })
    );
    // The financial dimension is spelled as the reference's ResourceUsage field.
    let e = BudgetError::UnsafeInteger(Dimension::Financial);
    assert_eq!(
        e.fields().get("dimension"),
        Some(&FieldValue::Text("financial_microunits".into()))
    );
    assert_eq!(
        Dimension::parse("financial_microunits"),
        Some(Dimension::Financial)
    );
    assert_eq!(Dimension::parse("financial"), None);
    for d in Dimension::ALL {
        assert_eq!(Dimension::parse(d.as_str()), Some(d));
    }
}

#[test]
fn every_budget_error_describes_itself() {
    let m = account(AccountKind::Mission, "m");
    let errors = [
        BudgetError::AllocationExceeded {
            parent: m.clone(),
            dimension: Dimension::ModelTokens,
        },
        BudgetError::UnknownAccount(m.clone()),
        BudgetError::Duplicate(m.clone()),
        BudgetError::CrossMissionParent(m.clone()),
        BudgetError::Currency(m.clone()),
        BudgetError::UnsafeInteger(Dimension::ComputeSeconds),
        BudgetError::ZeroDelta,
        BudgetError::Cycle(m.clone()),
        BudgetError::CorruptTotals(m),
    ];
    let mut reasons = std::collections::HashSet::new();
    for e in &errors {
        assert_readable(e);
        assert!(reasons.insert(DescribeError::reason(e).to_owned()));
    }
    assert_eq!(errors[0].class(), ErrorClass::BudgetExceeded);
    assert_eq!(errors[1].class(), ErrorClass::Budget);
    assert_eq!(errors[7].wire_code(), WireCode::InternalError);
    assert_eq!(errors[6].fields().iter().len(), 0);
}

#[test]
fn lease_errors_name_the_rule_and_its_field() {
    let e = LeaseError::InvalidField("leaseId");
    assert_readable(&e);
    assert_eq!(e.class(), ErrorClass::Lease);
    assert_eq!(e.wire_code(), WireCode::InvalidCommand);
    assert_eq!(
        e.fields().get("field"),
        Some(&FieldValue::Text("leaseId".into()))
    );
    let e = LeaseError::Closed(LeaseState::Revoked);
    assert_eq!(e.wire_code(), WireCode::WorkLeaseExpired);
    assert_eq!(e.to_string(), "the lease is already revoked");
    assert_eq!(
        e.fields().get("state"),
        Some(&FieldValue::Text("revoked".into()))
    );
    for e in [
        LeaseError::InvalidWindow,
        LeaseError::Expired,
        LeaseError::ClosureConflict,
        LeaseError::NonMonotonicRenewal,
        LeaseError::NotExtending,
        LeaseError::StaleLease,
        LeaseError::StaleOwnership,
        LeaseError::StaleSession,
        LeaseError::StaleCoordinator,
        LeaseError::WrongHolder,
        LeaseError::UnrenderableTimestamp,
    ] {
        assert_readable(&e);
        assert!(e.fields().is_empty());
    }
    assert_eq!(
        LeaseError::StaleOwnership.wire_code(),
        WireCode::WorkStaleOwnership
    );
}

#[test]
fn retry_errors_split_policy_from_exhaustion() {
    let e = RetryError::Finished(RetryReason::AttemptsExhausted);
    assert_readable(&e);
    assert_eq!(e.class(), ErrorClass::RetryExhausted);
    assert_eq!(DescribeError::reason(&e), "attempts_exhausted");
    assert_eq!(
        RetryError::DeadlineExhausted.class(),
        ErrorClass::RetryExhausted
    );
    let e = RetryError::Finished(RetryReason::Completed);
    assert_eq!(e.class(), ErrorClass::Policy);
    let e = RetryError::BackoffPending(UnixMillis(42));
    assert_eq!(e.class(), ErrorClass::Policy);
    assert_eq!(e.fields().get("retry_at"), Some(&FieldValue::Integer(42)));
    let e = RetryError::BudgetExceeded(Dimension::ExternalSideEffects);
    assert_eq!(e.wire_code(), WireCode::BudgetExceeded);
    assert_eq!(
        e.fields().get("dimension"),
        Some(&FieldValue::Text("external_actions".into()))
    );
    for e in [
        RetryError::InvalidArgument("policy.maxAttempts"),
        RetryError::AttemptInFlight,
        RetryError::NoAttemptInFlight,
    ] {
        assert_readable(&e);
    }
}

#[test]
fn scheduler_errors_split_state_from_arguments() {
    let e = SchedulerError::StaleRun {
        current: 3,
        reported: 2,
    };
    assert_readable(&e);
    assert_eq!(e.class(), ErrorClass::SchedulerState);
    assert_eq!(e.wire_code(), WireCode::WorkLeaseExpired);
    assert_eq!(
        e.fields().get("current_generation"),
        Some(&FieldValue::Integer(3))
    );
    let e = SchedulerError::InvalidTransition(WorkState::Blocked);
    assert_eq!(e.class(), ErrorClass::SchedulerState);
    assert_eq!(
        e.fields().get("state"),
        Some(&FieldValue::Text("blocked".into()))
    );
    let e = SchedulerError::UnknownWork("w".into());
    assert_eq!(
        e.fields().get("work_id"),
        Some(&FieldValue::Text("w".into()))
    );
    for e in [
        SchedulerError::UnsafeCheckpoint,
        SchedulerError::InvalidArgument("priority"),
    ] {
        assert_readable(&e);
        assert_eq!(e.class(), ErrorClass::Scheduler);
    }
    let e = SchedulerError::OfferDeclined {
        work_id: "w".into(),
        reason: scheduler::AdmissionReason::WorkerFull,
    };
    assert_readable(&e);
    assert_eq!(e.class(), ErrorClass::Scheduler);
    assert_eq!(e.wire_code(), WireCode::InvalidCommand);
    assert_eq!(
        e.fields().get("admission_reason"),
        Some(&FieldValue::Text("worker_full".into()))
    );
    let e = SchedulerError::CorruptSnapshot {
        path: "/records/0/offer/slots".into(),
        problem: "running slots exceed capacity",
    };
    assert_readable(&e);
    assert_eq!(e.class(), ErrorClass::Snapshot);
    assert_eq!(e.wire_code(), WireCode::InternalError);
}

#[test]
fn the_priority_rule_is_the_cores_for_every_caller() {
    assert_eq!(scheduler::priority(-100), Ok(-100));
    assert_eq!(scheduler::priority(100), Ok(100));
    assert_eq!(scheduler::priority(0), Ok(0));
    for bad in [101, -101, 128, -129, i64::MAX, i64::MIN] {
        let e = scheduler::priority(bad).unwrap_err();
        assert_eq!(e, SchedulerError::InvalidArgument("priority"));
        assert_eq!(e.wire_code(), WireCode::InvalidCommand);
    }
}

#[test]
fn delegation_and_snapshot_errors_describe_themselves() {
    let v = DelegationViolation {
        kind: DelegationViolationKind::Budget,
        message: "the cumulative tool_calls ceiling would be exceeded".into(),
        dimension: Some(Dimension::ToolCalls),
    };
    assert_readable(&v);
    assert_eq!(v.class(), ErrorClass::Delegation);
    assert_eq!(DescribeError::reason(&v), "budget");
    assert_eq!(
        v.fields().get("kind"),
        Some(&FieldValue::Text("budget".into()))
    );
    assert_eq!(
        v.fields().get("invalidates"),
        Some(&FieldValue::Bool(false))
    );
    let s = SnapshotFormatError {
        path: "/missions/0".into(),
        message: "expected an object".into(),
    };
    assert_eq!(s.class(), ErrorClass::Snapshot);
    assert_eq!(s.wire_code(), WireCode::InternalError);
    assert_eq!(
        s.fields().get("path"),
        Some(&FieldValue::Text("/missions/0".into()))
    );
}
