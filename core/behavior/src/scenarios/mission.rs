//! Mission scenarios (§7.1 rows, §7.2 Coordinator lease, digest §2.1 and §2.4).

use missionweaveprotocol::WireCode;

use crate::payloads::{self, COORDINATOR_LEASE};
use crate::scenario::{Scenario, Watch};
use crate::steps::{self, by, coordinator, coordinator_at};
use crate::world::{FOLLOW_UP, MISSION, OTHER_HUMAN, OWNER, SERVICE, Start, WORKER, World};

const REASON: &str = r#"{"reason": "The quarter was restated"}"#;

fn assign(actor: &'static str) -> crate::scenario::Build {
    by(
        actor,
        "mission.assign_coordinator",
        "",
        format!(
            r#"{{"agentId": "{WORKER}", "agentCardVersion": 2, "leaseId": "{COORDINATOR_LEASE}-2", "leaseSeconds": 600}}"#
        ),
    )
}

fn coordinator_epoch(w: &World) -> Result<u64, String> {
    w.engine()
        .mission(MISSION)
        .map_err(|e| e.to_string())?
        .map(|m| m.coordinator().coordinator_epoch)
        .ok_or_else(|| "no Mission".to_owned())
}

pub fn scenarios() -> Vec<Scenario> {
    let m = Watch::Mission(MISSION);
    vec![
        Scenario::new("mission.create: none → active")
            .from(Start::Empty)
            .when(by(
                OWNER,
                "mission.create",
                "",
                payloads::create_mission(MISSION, ""),
            ))
            .watch(m)
            .emits(&["mission.created"])
            .moves("none", "active"),
        Scenario::new("mission.create: an existing Mission ID is refused")
            .when(by(
                OWNER,
                "mission.create",
                "",
                payloads::create_mission(MISSION, ""),
            ))
            .watch(m)
            .refused(WireCode::InvalidStateTransition)
            .moves("active", "active"),
        Scenario::new("mission.create_follow_up: none → active, following the approved Mission")
            .given(steps::approved())
            .when(steps::follow_up(OWNER))
            .watch(Watch::Mission(FOLLOW_UP))
            .emits(&["mission.follow_up.created"])
            .moves("none", "active"),
        Scenario::new("mission.create_follow_up: the followed Mission is not approved")
            .when(steps::follow_up(OWNER))
            .watch(Watch::Mission(FOLLOW_UP))
            .refused(WireCode::InvalidStateTransition)
            .moves("none", "none"),
        Scenario::new("mission.assign_coordinator: the MissionOwner appoints a new Coordinator")
            .when(assign(OWNER))
            .watch(m)
            .emits(&["mission.coordinator.assigned"])
            .moves("active", "active")
            .check(
                "the Coordinator Epoch is raised to 2",
                |w| match coordinator_epoch(w)? {
                    2 => Ok(()),
                    e => Err(format!("Coordinator Epoch {e}")),
                },
            ),
        Scenario::new("mission.assign_coordinator: another human is refused")
            .when(assign(OTHER_HUMAN))
            .watch(m)
            .refused(WireCode::AuthForbidden)
            .check(
                "the Coordinator Epoch stays 1",
                |w| match coordinator_epoch(w)? {
                    1 => Ok(()),
                    e => Err(format!("Coordinator Epoch {e}")),
                },
            ),
        Scenario::new("mission.renew_coordinator: the current Coordinator renews its lease")
            .when(coordinator(
                "mission.renew_coordinator",
                r#"{"leaseSeconds": 120}"#,
            ))
            .watch(m)
            .emits(&["mission.coordinator.renewed"])
            .moves("active", "active"),
        // §7.2: an older epoch (1, after the re-appointment raised it to 2) and a newer one.
        Scenario::new("mission.renew_coordinator: a stale Coordinator Epoch is fenced")
            .given(steps::coordinator_epoch_2())
            .when(coordinator_at(
                1,
                "mission.renew_coordinator",
                r#"{"leaseSeconds": 120}"#,
            ))
            .watch(m)
            .refused(WireCode::AuthStaleCoordinator),
        Scenario::new("mission.renew_coordinator: a future Coordinator Epoch is fenced")
            .when(coordinator_at(
                2,
                "mission.renew_coordinator",
                r#"{"leaseSeconds": 120}"#,
            ))
            .watch(m)
            .refused(WireCode::AuthStaleCoordinator),
        Scenario::new("mission.submit_for_approval: active → awaiting_approval")
            .when(coordinator(
                "mission.submit_for_approval",
                payloads::submission(),
            ))
            .watch(m)
            .emits(&["mission.submitted_for_approval"])
            .moves("active", "awaiting_approval"),
        Scenario::new("mission.submit_for_approval: already awaiting approval")
            .given(steps::awaiting())
            .when(coordinator(
                "mission.submit_for_approval",
                payloads::submission(),
            ))
            .watch(m)
            .refused(WireCode::InvalidStateTransition)
            .moves("awaiting_approval", "awaiting_approval"),
        Scenario::new("mission.request_changes: awaiting_approval → active")
            .given(steps::awaiting())
            .when(by(
                OWNER,
                "mission.request_changes",
                "",
                r#"{"missionRevision": 2, "feedback": "Reconcile the FX line"}"#,
            ))
            .watch(m)
            .emits(&["mission.changes_requested"])
            .moves("awaiting_approval", "active"),
        Scenario::new("mission.request_changes: an active Mission has nothing to review")
            .when(by(
                OWNER,
                "mission.request_changes",
                "",
                r#"{"missionRevision": 1, "feedback": "Reconcile the FX line"}"#,
            ))
            .watch(m)
            .refused(WireCode::InvalidStateTransition)
            .moves("active", "active"),
        Scenario::new("mission.approve: awaiting_approval → approved")
            .given(steps::awaiting())
            .when(by(OWNER, "mission.approve", "", payloads::approval(2)))
            .watch(m)
            .emits(&["mission.approved"])
            .moves("awaiting_approval", "approved"),
        Scenario::new("mission.approve: another revision than the submitted one")
            .given(steps::awaiting())
            .when(by(OWNER, "mission.approve", "", payloads::approval(7)))
            .watch(m)
            .refused(WireCode::RevisionConflict)
            .moves("awaiting_approval", "awaiting_approval"),
        Scenario::new("mission.cancel: active → cancelled by the MissionOwner")
            .when(by(OWNER, "mission.cancel", "", REASON))
            .watch(m)
            .emits(&["mission.cancelled"])
            .moves("active", "cancelled"),
        Scenario::new("mission.cancel: the Coordinator must not cancel")
            .when(coordinator("mission.cancel", REASON))
            .watch(m)
            .refused(WireCode::AuthForbidden)
            .moves("active", "active"),
        Scenario::new("mission.cancel: an approved Mission is not reopened")
            .given(steps::approved())
            .when(by(OWNER, "mission.cancel", "", REASON))
            .watch(m)
            .refused(WireCode::InvalidStateTransition)
            .moves("approved", "approved"),
        Scenario::new("mission.terminate: active → failed by the Coordinator")
            .when(coordinator("mission.terminate", REASON))
            .watch(m)
            .emits(&["mission.terminated"])
            .moves("active", "failed"),
        Scenario::new("mission.terminate: a stale Coordinator Epoch is fenced")
            .given(steps::coordinator_epoch_2())
            .when(coordinator_at(1, "mission.terminate", REASON))
            .watch(m)
            .refused(WireCode::AuthStaleCoordinator)
            .moves("active", "active"),
        Scenario::new("mission.terminate: a future Coordinator Epoch is fenced")
            .when(coordinator_at(2, "mission.terminate", REASON))
            .watch(m)
            .refused(WireCode::AuthStaleCoordinator)
            .moves("active", "active"),
        Scenario::new("mission.terminate: an approved Mission stays approved")
            .given(steps::approved())
            .when(by(SERVICE, "mission.terminate", "", REASON))
            .watch(m)
            .refused(WireCode::InvalidStateTransition)
            .moves("approved", "approved"),
    ]
}
