//! The budget ledger in the engine (§12): Mission accounts open with the Mission, WorkItems
//! reserve their contract's limits against what the Mission has left unreserved, and
//! `ext.missionweaveprotocol.core.resource_usage_record` charges the WorkItem and its ancestry
//! atomically with its Event. Every refusal is `BUDGET_EXCEEDED` (or `INVALID_COMMAND`) with
//! nothing appended and nothing charged.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_work_fixture.rs"]
mod fixture;

use fixture::*;
use missionweaveprotocol::json::Value;
use missionweaveprotocol::{DescribeError, FieldValue, WireCode};
use missionweaveprotocol_engine::budget::account::{BudgetAccount, account_key};
use missionweaveprotocol_engine::ingress::VerifiedCommand;
use missionweaveprotocol_engine::store::Store;
use missionweaveprotocol_kernel::budget::AccountKind;
use missionweaveprotocol_kernel::resources::Dimension;

const RECORD: &str = "ext.missionweaveprotocol.core.resource_usage_record";
const W3: &str = "urn:missionweaveprotocol:work:audit";

fn account(engine: &TestEngine, kind: AccountKind, id: &str) -> BudgetAccount {
    let stored = engine
        .store()
        .aggregate(&account_key(kind, id))
        .unwrap()
        .unwrap_or_else(|| panic!("no account for {id}"));
    BudgetAccount::from_stored(&stored.value).unwrap()
}

/// A `work.authorize` whose contract has `budget` (JSON text) instead of the fixture's.
fn authorize_with_budget(f: &Fixture, item: &str, budget: &str) -> VerifiedCommand {
    let contract = contract(&[]).replace(
        r#""budget":{"toolCallLimit":10}"#,
        &format!(r#""budget":{budget}"#),
    );
    assert!(contract.contains(budget), "the fixture contract changed");
    f.by_coordinator(
        "work.authorize",
        1,
        &format!(
            r#"{{"workItemId":"{item}","conversationId":"{CONVERSATION}","contract":{contract}}}"#
        ),
    )
}

fn record(f: &Fixture, engine: &TestEngine, item: &str, delta: &str) -> VerifiedCommand {
    let (epoch, lease) = execution(engine, item);
    f.by_worker(
        RECORD,
        WORKER,
        item,
        epoch,
        &lease,
        &format!(r#""usageDelta":{delta}"#),
    )
}

fn field(error: &dyn DescribeError, name: &str) -> Option<FieldValue> {
    error
        .fields()
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.clone())
}

#[test]
fn the_mission_account_opens_with_the_missions_limits() {
    let f = fixture();
    let engine = f.active();
    let mission = account(&engine, AccountKind::Mission, MISSION);
    assert_eq!(mission.limit.get(Dimension::ModelTokens), 100_000);
    assert_eq!(mission.limit.get(Dimension::ToolCalls), 1_000);
    // `financialLimit: 50` EUR, exactly, in micro-units.
    assert_eq!(mission.limit.get(Dimension::Financial), 50_000_000);
    assert_eq!(
        mission.currency.map(|c| c.as_str().to_owned()).as_deref(),
        Some("EUR")
    );
    // A dimension the budget leaves out has nothing to spend.
    assert_eq!(mission.limit.get(Dimension::ComputeSeconds), 0);
    assert!(mission.usage.is_zero() && mission.reserved.is_zero());
}

#[test]
fn authorization_reserves_the_contract_budget() {
    let f = fixture();
    let engine = f.active();
    f.ok(&engine, &f.authorize(W1, &[]), NOW);
    let mission = account(&engine, AccountKind::Mission, MISSION);
    assert_eq!(mission.reserved.get(Dimension::ToolCalls), 10);
    let item = account(&engine, AccountKind::WorkItem, W1);
    assert_eq!(item.limit.get(Dimension::ToolCalls), 10);
    assert_eq!(
        item.currency, mission.currency,
        "a WorkItem inherits the Mission's currency"
    );
}

#[test]
fn an_allocation_beyond_the_unreserved_remainder_is_refused() {
    let f = fixture();
    let engine = f.active();
    f.ok(
        &engine,
        &authorize_with_budget(&f, W1, r#"{"toolCallLimit":600}"#),
        NOW,
    );
    // 600 + 600 > 1000: refused, naming the Mission and the dimension; nothing stored.
    let error = f.refused(
        &engine,
        &authorize_with_budget(&f, W2, r#"{"toolCallLimit":600}"#),
        NOW,
        WireCode::BudgetExceeded,
    );
    assert_eq!(error.reason(), "allocation_exceeded");
    assert_eq!(
        field(&error, "dimension"),
        Some(FieldValue::Text("tool_calls".into()))
    );
    assert!(
        engine
            .store()
            .aggregate(&account_key(AccountKind::WorkItem, W2))
            .unwrap()
            .is_none()
    );
    assert_eq!(
        account(&engine, AccountKind::Mission, MISSION)
            .reserved
            .get(Dimension::ToolCalls),
        600
    );
    // Exactly the remainder fits.
    f.ok(
        &engine,
        &authorize_with_budget(&f, W2, r#"{"toolCallLimit":400}"#),
        NOW,
    );
    // A dimension the Mission never granted cannot be allocated.
    let error = f.refused(
        &engine,
        &authorize_with_budget(&f, W3, r#"{"computeSecondsLimit":1}"#),
        NOW,
        WireCode::BudgetExceeded,
    );
    assert_eq!(
        field(&error, "dimension"),
        Some(FieldValue::Text("compute_seconds".into()))
    );
}

#[test]
fn financial_limits_are_exact_and_in_the_missions_currency() {
    let f = fixture();
    let engine = f.active();
    f.ok(
        &engine,
        &authorize_with_budget(&f, W1, r#"{"currency":"EUR","financialLimit":12.5}"#),
        NOW,
    );
    assert_eq!(
        account(&engine, AccountKind::WorkItem, W1)
            .limit
            .get(Dimension::Financial),
        12_500_000
    );
    // Another currency than the Mission's.
    let error = f.refused(
        &engine,
        &authorize_with_budget(&f, W2, r#"{"currency":"USD","financialLimit":1}"#),
        NOW,
        WireCode::InvalidCommand,
    );
    assert_eq!(error.reason(), "currency");
    // Finer than a micro-unit.
    let error = f.refused(
        &engine,
        &authorize_with_budget(&f, W2, r#"{"currency":"EUR","financialLimit":0.0000001}"#),
        NOW,
        WireCode::InvalidCommand,
    );
    assert_eq!(error.reason(), "malformed_budget");
}

#[test]
fn usage_is_charged_to_the_work_item_and_its_mission_with_the_event() {
    let f = fixture();
    let engine = f.active();
    f.active_item(&engine, W1);
    let events = f.ok(&engine, &record(&f, &engine, W1, r#"{"toolCalls":3}"#), NOW);
    assert_eq!(
        kinds(&events),
        vec!["ext.missionweaveprotocol.core.resource_usage_recorded"]
    );
    let payload = events[0].get("payload").unwrap();
    let tool_calls = |name: &str| {
        payload
            .get(name)
            .and_then(|v| v.get("toolCalls"))
            .and_then(Value::as_number)
            .and_then(|n| n.as_u64())
    };
    assert_eq!(tool_calls("usageDelta"), Some(3));
    assert_eq!(tool_calls("cumulativeUsage"), Some(3));
    assert_eq!(tool_calls("remainingBudget"), Some(7));
    assert_eq!(tool_calls("missionRemainingBudget"), Some(997));
    assert_eq!(
        account(&engine, AccountKind::WorkItem, W1)
            .usage
            .get(Dimension::ToolCalls),
        3
    );
    assert_eq!(
        account(&engine, AccountKind::Mission, MISSION)
            .usage
            .get(Dimension::ToolCalls),
        3
    );
}

#[test]
fn an_overflow_in_any_dimension_charges_nothing() {
    let f = fixture();
    let engine = f.active();
    f.active_item(&engine, W1);
    f.ok(&engine, &record(&f, &engine, W1, r#"{"toolCalls":3}"#), NOW);
    // 3 + 8 > 10, with a model-token charge that would fit the Mission but not the item.
    let error = f.refused(
        &engine,
        &record(&f, &engine, W1, r#"{"toolCalls":8}"#),
        NOW,
        WireCode::BudgetExceeded,
    );
    assert_eq!(error.reason(), "exceeded");
    let error = f.refused(
        &engine,
        &record(&f, &engine, W1, r#"{"toolCalls":1,"modelTokens":5}"#),
        NOW,
        WireCode::BudgetExceeded,
    );
    assert_eq!(
        field(&error, "dimension"),
        Some(FieldValue::Text("model_tokens".into()))
    );
    // Nothing of either refusal was charged anywhere.
    assert_eq!(
        account(&engine, AccountKind::WorkItem, W1)
            .usage
            .get(Dimension::ToolCalls),
        3
    );
    assert_eq!(
        account(&engine, AccountKind::Mission, MISSION)
            .usage
            .get(Dimension::ToolCalls),
        3
    );
    assert_eq!(
        account(&engine, AccountKind::Mission, MISSION)
            .usage
            .get(Dimension::ModelTokens),
        0
    );
    // The rest of the item's budget is still spendable.
    f.ok(&engine, &record(&f, &engine, W1, r#"{"toolCalls":7}"#), NOW);
}

#[test]
fn malformed_deltas_are_invalid_commands() {
    let f = fixture();
    let engine = f.active();
    f.active_item(&engine, W1);
    for (delta, reason) in [
        (r#"{}"#, "zero_delta"),
        (r#"{"toolCalls":0}"#, "zero_delta"),
        (r#"{"toolCalls":-1}"#, "invalid_member"),
        (r#"{"toolCalls":1.5}"#, "invalid_member"),
        (r#"{"tokens":1}"#, "invalid_member"),
        (r#"{"toolCalls":9007199254740992}"#, "invalid_member"),
        (r#"3"#, "missing_member"),
    ] {
        let error = f.refused(
            &engine,
            &record(&f, &engine, W1, delta),
            NOW,
            WireCode::InvalidCommand,
        );
        assert_eq!(error.reason(), reason, "{delta}");
    }
    assert!(account(&engine, AccountKind::WorkItem, W1).usage.is_zero());
}

#[test]
fn usage_is_bound_to_the_current_ownership_and_execution_lease() {
    let f = fixture();
    let engine = f.active();
    f.active_item(&engine, W1);
    let (epoch, lease) = execution(&engine, W1);
    let delta = r#""usageDelta":{"toolCalls":1}"#;
    // Stale both ways: an older and a newer Ownership Epoch.
    for stale in [epoch - 1, epoch + 1] {
        f.refused(
            &engine,
            &f.by_worker(RECORD, WORKER, W1, stale, &lease, delta),
            NOW,
            WireCode::WorkStaleOwnership,
        );
    }
    let (_, ownership_lease) = ownership(&engine, W1);
    let wrong_lease = f.by_worker(RECORD, WORKER, W1, epoch, &ownership_lease, delta);
    assert!(
        engine.perform(&wrong_lease, NOW).is_err(),
        "the ownership lease is not the Execution Lease"
    );
    // A queued item has no Execution Lease to charge under.
    f.queued(&engine, W2);
    let (epoch2, lease2) = ownership(&engine, W2);
    assert!(
        engine
            .perform(
                &f.by_worker(RECORD, WORKER, W2, epoch2, &lease2, delta),
                NOW
            )
            .is_err()
    );
    assert!(account(&engine, AccountKind::WorkItem, W1).usage.is_zero());
    assert!(account(&engine, AccountKind::WorkItem, W2).usage.is_zero());
}

#[test]
fn a_duplicate_record_is_charged_once() {
    let f = fixture();
    let engine = f.active();
    f.active_item(&engine, W1);
    let command = record(&f, &engine, W1, r#"{"toolCalls":2}"#);
    let first = engine.perform(&command, NOW).unwrap();
    let again = engine.perform(&command, NOW).unwrap();
    assert!(again.duplicate);
    assert_eq!(first.events[0].body, again.events[0].body);
    assert_eq!(
        account(&engine, AccountKind::WorkItem, W1)
            .usage
            .get(Dimension::ToolCalls),
        2
    );
}
