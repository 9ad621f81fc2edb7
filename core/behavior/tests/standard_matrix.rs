#![allow(clippy::unwrap_used, clippy::panic)]
//! The standard matrix: every row of the four parts, no failing row, none not covered.

use missionweaveprotocol_behavior::matrix::Category;
use missionweaveprotocol_behavior::{Status, run};

#[test]
fn the_standard_matrix_covers_every_row() {
    let report = run();
    assert!(report.ok(), "{:#?}", report.lines());
    let count = |c: Category| report.rows.iter().filter(|r| r.category == c).count();
    assert_eq!(count(Category::Command), 38);
    assert_eq!(count(Category::Event), 40);
    assert_eq!(count(Category::MissionTransition), 8);
    assert_eq!(count(Category::WorkItemTransition), 18);
    assert_eq!(report.total(), 104);
    assert_eq!(report.failing(), 0);
    assert_eq!(report.covered() + report.not_covered(), 104);
    let uncovered: Vec<&str> = report
        .rows
        .iter()
        .filter(|r| r.status == Status::NotCovered)
        .map(|r| r.id.as_str())
        .collect();
    // Parts 1 and 2: every row has positive and negative evidence.
    assert!(uncovered.is_empty(), "not covered: {uncovered:#?}");
    // Every part-1 kind of the issue is covered.
    for kind in [
        "mission.create",
        "mission.create_follow_up",
        "mission.assign_coordinator",
        "mission.renew_coordinator",
        "mission.submit_for_approval",
        "mission.approve",
        "mission.request_changes",
        "mission.cancel",
        "mission.terminate",
        "membership.change",
        "membership.end",
        "work.propose",
        "work.authorize",
        "work.offer",
        "work.accept_offer",
        "work.start",
        "work.checkpoint",
        "work.block",
        "work.unblock",
        "work.submit",
        "work.accept_result",
        "work.fail",
        "work.cancel",
        "artifact.publish",
        "ext.missionweaveprotocol.core.work_execution_lease_renew",
        "ext.missionweaveprotocol.core.work_dependency_add",
    ] {
        let row = report
            .rows
            .iter()
            .find(|r| r.id == format!("command {kind}"))
            .unwrap();
        assert_eq!(row.status, Status::Covered, "{kind}");
    }
    // The service Commands (§6.3, §15.1), the usage record (§12) and every Event kind the
    // engine emits, including its lease revocation on Session replacement (§11.3).
    for id in [
        "command ext.missionweaveprotocol.identity.session_open",
        "event ext.missionweaveprotocol.identity.session_opened",
        "command ext.missionweaveprotocol.registry.agent_card_register",
        "event ext.missionweaveprotocol.registry.agent_card_registered",
        "command ext.missionweaveprotocol.core.resource_usage_record",
        "event ext.missionweaveprotocol.core.resource_usage_recorded",
        "event ext.missionweaveprotocol.core.work_execution_lease_revoked",
        // §7.4 archival.
        "command ext.missionweaveprotocol.core.group_archive",
        "event group.snapshot.created",
        "event group.archived",
        // §9.1, §20: Delegation Grants and Cooperation Override Grants.
        "command membership.grant_delegation",
        "event membership.delegation.granted",
        "command policy.grant_cooperation_override",
        "event policy.cooperation_override.granted",
        // Execution Approvals (§12, §10.2 row 6).
        "command approval.grant_execution",
        "event approval.execution.granted",
        "work item §10.2 row 6: queued --approval.grant_execution--> queued",
        // Conversations and Messages (§9).
        "command message.post",
        "event message.posted",
        "command message.correct",
        "event message.corrected",
        "command message.retract",
        "event message.retracted",
        "command message.redact",
        "event message.redacted",
    ] {
        let row = report.rows.iter().find(|r| r.id == id).unwrap();
        assert_eq!(row.status, Status::Covered, "{id}");
    }
    // Child Missions (§14): both kinds and the four rows.
    for id in [
        "command mission.create_child",
        "event mission.child.created",
        "mission §7.1 row 3: none --mission.create_child--> active",
    ] {
        let row = report.rows.iter().find(|r| r.id == id).unwrap();
        assert_eq!(row.status, Status::Covered, "{id}");
    }
    for number in [15, 16, 17] {
        let prefix = format!("work item §10.2 row {number}:");
        let row = report
            .rows
            .iter()
            .find(|r| r.id.starts_with(&prefix))
            .unwrap();
        assert_eq!(row.status, Status::Covered, "{}", row.id);
    }
    assert_eq!(report.covered(), 104, "{:#?}", report.lines());
    // Every scenario ran and verified Events (at least the setup's mission.create).
    assert!(
        report
            .scenarios
            .iter()
            .all(|s| s.passed && s.events_verified > 0)
    );
    assert_eq!(
        report
            .lines()
            .last()
            .map(String::as_str)
            .unwrap()
            .split(" (")
            .next(),
        Some(
            format!(
                "{}/104 rows with positive and negative evidence; {}/{} rules with negative evidence",
                report.covered(),
                report.rules_covered(),
                report.rules.len()
            )
            .as_str()
        )
    );
}
