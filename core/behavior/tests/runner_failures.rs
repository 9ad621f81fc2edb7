#![allow(clippy::unwrap_used, clippy::panic)]
//! The runner reports what went wrong: a scenario expecting the wrong code, an act that applies
//! where a refusal was expected, a refusal where Events were expected, a setup step that fails,
//! a scenario that does not match its row, and a missing scenario. Each makes its rows failing
//! (never "not covered") and the report not ok.

use missionweaveprotocol::WireCode;
use missionweaveprotocol_behavior::matrix::{Evidence, Matrix};
use missionweaveprotocol_behavior::payloads::{self, W1};
use missionweaveprotocol_behavior::scenario::{Scenario, Watch};
use missionweaveprotocol_behavior::steps::{self, Lease, coordinator, worker};
use missionweaveprotocol_behavior::world::WORKER;
use missionweaveprotocol_behavior::{BehaviorReport, Status, run_matrix, run_scenario};

const STALE_START: &str = "work.start: a stale Ownership Epoch is fenced";

/// The standard matrix with scenario `name` replaced by `scenario` (renamed to `name`).
fn with_replaced(name: &'static str, mut scenario: Scenario) -> BehaviorReport {
    let mut matrix = Matrix::standard().unwrap();
    let slot = matrix
        .scenarios
        .iter_mut()
        .find(|s| s.name == name)
        .unwrap();
    scenario.name = name;
    *slot = scenario;
    run_matrix(&matrix)
}

fn status(report: &BehaviorReport, id: &str) -> (Status, String) {
    let row = report.rows.iter().find(|r| r.id == id).unwrap();
    (row.status, row.detail.clone().unwrap_or_default())
}

#[test]
fn a_scenario_expecting_the_wrong_code_fails_its_rows() {
    let broken = Scenario::new(STALE_START)
        .given(steps::queued(W1))
        .when(worker("work.start", W1, Lease::Ownership, 1, ""))
        .watch(Watch::WorkItem(W1))
        .refused(WireCode::WorkLeaseExpired);
    let outcome = run_scenario(&broken);
    assert!(!outcome.passed);
    assert_eq!(outcome.refused, Some(WireCode::WorkStaleOwnership));
    assert!(
        outcome
            .failure
            .as_deref()
            .unwrap()
            .starts_with("expected WORK_LEASE_EXPIRED, refused WORK_STALE_OWNERSHIP")
    );
    let report = with_replaced(STALE_START, broken);
    assert!(!report.ok());
    for id in [
        "command work.start",
        "event work.started",
        "work item §10.2 row 7: queued --work.start--> active",
    ] {
        let (status, detail) = status(&report, id);
        assert_eq!(status, Status::Failing, "{id}");
        assert!(detail.contains("WORK_LEASE_EXPIRED"), "{detail}");
    }
    assert_eq!(report.failing(), 3);
    let lines = report.lines();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("FAIL [behavior] command work.start: "))
    );
    // The scenario is also a rule's negative evidence: that rule fails too, and the summary
    // counts failing rows and rules together.
    assert_eq!(report.rules_failing(), 1);
    let rule = report
        .rules
        .iter()
        .find(|r| r.status == Status::Failing)
        .unwrap();
    assert_eq!(rule.id, "§10.3 an older Ownership Epoch is fenced");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("FAIL [behavior] rule §10.3 an older Ownership Epoch"))
    );
    // The not-covered count shrinks as families land: read it from the report.
    let summary = format!("(4 failing, {} not covered", report.not_covered());
    assert!(lines.last().unwrap().contains(&summary), "{lines:?}");
    let value = report.to_value();
    assert_eq!(value.get("ok").and_then(|v| v.as_bool()), Some(false));
}

#[test]
fn an_applied_act_where_a_refusal_was_expected_fails() {
    // The current epoch: the engine applies it, so the "negative" is no evidence.
    let broken = Scenario::new(STALE_START)
        .given(steps::queued(W1))
        .when(worker("work.start", W1, Lease::Ownership, 0, ""))
        .watch(Watch::WorkItem(W1))
        .refused(WireCode::WorkStaleOwnership);
    let outcome = run_scenario(&broken);
    assert!(!outcome.passed);
    assert_eq!(outcome.emitted, ["work.started"]);
    assert!(outcome.failure.unwrap().contains("applied"));
}

#[test]
fn a_refusal_where_events_were_expected_fails() {
    let outcome = run_scenario(
        &Scenario::new("offer with a stale epoch, expected to apply")
            .given(steps::authorized(W1))
            .when(steps::coordinator_at(
                2,
                "work.offer",
                payloads::offer(W1, "r1"),
            ))
            .watch(Watch::WorkItem(W1))
            .emits(&["work.offer.created"]),
    );
    assert!(!outcome.passed);
    assert_eq!(outcome.refused, Some(WireCode::AuthStaleCoordinator));
}

#[test]
fn wrong_events_or_states_fail() {
    let wrong_kind = run_scenario(
        &Scenario::new("offer emitting another kind")
            .given(steps::authorized(W1))
            .when(coordinator("work.offer", payloads::offer(W1, "r1")))
            .emits(&["work.offer.accepted"]),
    );
    assert!(!wrong_kind.passed);
    assert_eq!(wrong_kind.emitted, ["work.offer.created"]);
    let wrong_state = run_scenario(
        &Scenario::new("offer to the wrong state")
            .given(steps::authorized(W1))
            .when(coordinator("work.offer", payloads::offer(W1, "r1")))
            .watch(Watch::WorkItem(W1))
            .emits(&["work.offer.created"])
            .moves("open", "queued"),
    );
    assert!(!wrong_state.passed);
    assert!(
        wrong_state
            .failure
            .unwrap()
            .contains("observed open → offered")
    );
}

#[test]
fn a_failing_setup_step_fails_the_scenario() {
    let outcome = run_scenario(
        &Scenario::new("accept before any offer, as setup")
            .given(vec![
                missionweaveprotocol_behavior::scenario::Step::Perform(steps::by(
                    missionweaveprotocol_behavior::world::WORKER,
                    "work.accept_offer",
                    "",
                    payloads::accept_offer(W1),
                )),
            ])
            .when(coordinator("work.authorize", payloads::authorize(W1, &[])))
            .emits(&["work.authorized"]),
    );
    assert!(!outcome.passed);
    assert!(outcome.failure.unwrap().starts_with("setup step 1"));
}

#[test]
fn a_scenario_that_does_not_match_its_row_fails_the_row() {
    // A passing scenario, but of another kind than the row's.
    let other_kind = Scenario::new(STALE_START)
        .given(steps::authorized(W1))
        .when(steps::coordinator_at(
            2,
            "work.offer",
            payloads::offer(W1, "r1"),
        ))
        .watch(Watch::WorkItem(W1))
        .refused(WireCode::AuthStaleCoordinator);
    let report = with_replaced(STALE_START, other_kind);
    assert!(report.scenarios.iter().all(|s| s.passed));
    let (status, detail) = status(&report, "command work.start");
    assert_eq!(status, Status::Failing);
    assert!(detail.contains("work.offer"), "{detail}");
    assert!(!report.ok());
}

#[test]
fn a_row_naming_a_missing_scenario_is_failing_not_uncovered() {
    let mut matrix = Matrix::standard().unwrap();
    let row = matrix
        .rows
        .iter_mut()
        .find(|r| r.id == "command work.block")
        .unwrap();
    row.evidence = Evidence::Scenarios {
        positive: "work.block: active → blocked",
        negative: "no such scenario",
    };
    let report = run_matrix(&matrix);
    let (status, detail) = status(&report, "command work.block");
    assert_eq!(status, Status::Failing);
    assert!(detail.contains("does not exist"));
    // Two scenarios with one name are a matrix problem.
    let mut matrix = Matrix::standard().unwrap();
    matrix.scenarios.push(Scenario::new(STALE_START));
    let report = run_matrix(&matrix);
    assert!(!report.ok());
    assert!(report.lines()[0].starts_with("FAIL [behavior] matrix: two scenarios"));
}

#[test]
fn a_variant_that_does_not_match_its_row_fails_the_row() {
    let name = "work.fail: submitted → failed";
    let cancel = Scenario::new(name)
        .given(steps::submitted(W1))
        .when(steps::by(
            missionweaveprotocol_behavior::world::OWNER,
            "work.cancel",
            "",
            format!(r#"{{"workItemId":"{W1}","reason":"no"}}"#),
        ))
        .watch(Watch::WorkItem(W1))
        .emits(&["work.cancelled"])
        .moves("submitted", "cancelled");
    let report = with_replaced(name, cancel);
    assert!(report.scenarios.iter().all(|s| s.passed));
    let (status, detail) = status(
        &report,
        "work item §10.2 row 13: open|offered|queued|active|blocked|submitted --work.fail--> failed",
    );
    assert_eq!(status, Status::Failing);
    assert!(
        detail.contains("variant") && detail.contains("work.cancel"),
        "{detail}"
    );
    assert_eq!(report.failing(), 1);
}

#[test]
fn a_session_replacement_that_revokes_a_lease_must_expect_the_revocation() {
    // The Worker holds W1's Execution Lease: replacing its Session also emits the revocation
    // (§11.3), in W1's Group, after the Organization-scoped `session_opened` (§15.2).
    let opened = "ext.missionweaveprotocol.identity.session_opened";
    let revoked = "ext.missionweaveprotocol.core.work_execution_lease_revoked";
    let incomplete = Scenario::new("Session replacement: only the Session Event expected")
        .given(steps::active(W1))
        .when(steps::session_open(WORKER, ""))
        .watch(Watch::WorkItem(W1))
        .emits(&[opened]);
    let outcome = run_scenario(&incomplete);
    assert!(!outcome.passed);
    assert_eq!(outcome.emitted, [opened, revoked]);
    assert!(
        outcome
            .failure
            .as_deref()
            .unwrap()
            .starts_with("expected Events"),
        "{outcome:?}"
    );
    // Without a lease to revoke, the same act emits the Organization-scoped Event alone, and
    // the runner counts it although no Group head moved.
    let alone = Scenario::new("Session replacement: nothing to revoke")
        .when(steps::session_open(WORKER, ""))
        .watch(Watch::Session(WORKER))
        .emits(&[opened])
        .moves("epoch 1", "epoch 2");
    let outcome = run_scenario(&alone);
    assert!(outcome.passed, "{outcome:?}");
}

#[test]
fn an_ingress_refusal_is_a_refusal_with_its_code_and_stage() {
    // The deployment authorizer refuses a bootstrap kind from the policy service (§6.4).
    let by_policy =
        || steps::register_card_by(missionweaveprotocol_behavior::world::SERVICE, 1, "Worker");
    let expected = Scenario::new("ingress: the policy service registers a card")
        .when(by_policy())
        .watch(Watch::AgentCard(WORKER))
        .refused(WireCode::AuthForbidden);
    let outcome = run_scenario(&expected);
    assert!(outcome.passed, "{outcome:?}");
    assert_eq!(outcome.refused_at, Some("ingress"));
    assert_eq!(
        outcome.act_kind.as_deref(),
        Some("ext.missionweaveprotocol.registry.agent_card_register")
    );
    // Another code expected: the scenario fails and names both.
    let wrong = Scenario::new("ingress: the wrong code")
        .when(by_policy())
        .refused(WireCode::InvalidCommand);
    let outcome = run_scenario(&wrong);
    assert!(!outcome.passed);
    assert!(
        outcome
            .failure
            .as_deref()
            .unwrap()
            .starts_with("expected INVALID_COMMAND, refused at ingress AUTH_FORBIDDEN"),
        "{outcome:?}"
    );
    // Events expected: an ingress refusal fails it.
    let applied = Scenario::new("ingress: Events expected")
        .when(by_policy())
        .emits(&["ext.missionweaveprotocol.registry.agent_card_registered"]);
    let outcome = run_scenario(&applied);
    assert!(!outcome.passed);
    assert!(
        outcome
            .failure
            .as_deref()
            .unwrap()
            .contains("ingress refused"),
        "{outcome:?}"
    );
}

/// §15.2: the Event check compares each Event's `commandHash` with the signing hash of the
/// Command that produced it (as its signer computed it): an Event offered as another Command's
/// answer fails the check.
#[test]
fn an_event_checked_against_another_command_fails_on_its_command_hash() {
    use missionweaveprotocol_behavior::world::{COORDINATOR, Start, World};
    let world = World::setup(Start::ActiveMission).unwrap();
    let renew = |seconds: u64| {
        world
            .command(
                "mission.renew_coordinator",
                COORDINATOR,
                r#""coordinatorEpoch": 1"#,
                &format!(r#"{{"leaseSeconds": {seconds}}}"#),
            )
            .unwrap()
    };
    let first = renew(120);
    let other = renew(240);
    let performed = world.perform(&first).unwrap();
    assert_eq!(
        world.verify_events(&performed, &first).unwrap(),
        vec!["mission.coordinator.renewed".to_owned()]
    );
    let e = world.verify_events(&performed, &other).unwrap_err();
    assert!(e.contains("commandHash"), "{e}");
}
