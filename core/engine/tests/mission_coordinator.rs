//! The Coordinator lease (§7.2, digest 2.4): assignment fences the old epoch with a higher
//! one (`AUTH_STALE_COORDINATOR` afterwards), renewal extends the current lease, an expired
//! lease authorizes nothing (`WORK_LEASE_EXPIRED`). Every Event is verified by the fixture.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_fixture.rs"]
mod fixture;

use fixture::*;
use missionweaveprotocol::{DescribeError, FieldValue, WireCode};
use missionweaveprotocol_engine::ingress::VerifiedCommand;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

const NEW_LEASE: &str = "urn:missionweaveprotocol:lease:coordinator-2";

fn assign(f: &Fixture, actor: &str, agent: &str, lease: &str, extra: &str) -> VerifiedCommand {
    f.command(
        "mission.assign_coordinator",
        actor,
        extra,
        &format!(r#"{{"agentId": "{agent}", "agentCardVersion": 2, "leaseId": "{lease}", "leaseSeconds": 600}}"#),
    )
}

fn renew(f: &Fixture, actor: &str, epoch: u64) -> VerifiedCommand {
    f.command(
        "mission.renew_coordinator",
        actor,
        &format!(r#""coordinatorEpoch": {epoch}"#),
        r#"{"leaseSeconds": 120}"#,
    )
}

fn at_seconds(s: i64) -> UnixMillis {
    UnixMillis(NOW.0 + s * 1000)
}

#[test]
fn assignment_fences_the_old_epoch() {
    let f = fixture();
    let engine = f.active();
    let e = &f.ok(&engine, &assign(&f, OWNER, OTHER_AGENT, NEW_LEASE, ""), NOW)[0];
    assert_eq!(text(e, "/kind"), "mission.coordinator.assigned");
    assert_eq!(text(e, "/payload/coordinator/agentId"), OTHER_AGENT);
    assert_eq!(
        e.pointer("/payload/coordinator/coordinatorEpoch")
            .unwrap()
            .as_number()
            .unwrap()
            .as_u64(),
        Some(2)
    );
    assert_eq!(
        e.pointer("/payload/previousCoordinatorEpoch")
            .unwrap()
            .as_number()
            .unwrap()
            .as_u64(),
        Some(1)
    );
    let m = engine.mission(MISSION).unwrap().unwrap();
    assert_eq!(m.coordinator().coordinator_epoch, 2);
    assert_eq!(m.state().as_str(), "active");
    assert_eq!(m.revision(), 2);
    // The replaced Coordinator's coordination Commands are stale from now on.
    let e = f.refused(&engine, &f.submit(1), NOW, WireCode::AuthStaleCoordinator);
    assert_eq!(
        e.fields().get("current_coordinator_epoch"),
        Some(&FieldValue::Integer(2))
    );
    f.refused(
        &engine,
        &renew(&f, COORDINATOR, 1),
        NOW,
        WireCode::AuthStaleCoordinator,
    );
    // Even with the new epoch number it is not the Coordinator.
    f.refused(
        &engine,
        &renew(&f, COORDINATOR, 2),
        NOW,
        WireCode::AuthForbidden,
    );
    // The new Coordinator acts with epoch 2.
    let c = f.command(
        "mission.submit_for_approval",
        OTHER_AGENT,
        r#""coordinatorEpoch": 2"#,
        &format!(r#"{{"artifactHashes": ["{HASH_A}"]}}"#),
    );
    f.ok(&engine, &c, NOW);
}

#[test]
fn the_control_plane_may_assign() {
    let f = fixture();
    let engine = f.active();
    f.ok(
        &engine,
        &assign(&f, SERVICE, OTHER_AGENT, NEW_LEASE, ""),
        NOW,
    );
    assert_eq!(
        engine
            .mission(MISSION)
            .unwrap()
            .unwrap()
            .coordinator()
            .coordinator_epoch,
        2
    );
}

#[test]
fn assignment_is_refused_for_agents_strangers_terminal_missions_and_reused_leases() {
    let f = fixture();
    let engine = f.active();
    let by_agent = assign(&f, COORDINATOR, OTHER_AGENT, NEW_LEASE, "");
    f.refused(&engine, &by_agent, NOW, WireCode::AuthForbidden);
    f.refused(
        &engine,
        &assign(&f, OTHER_HUMAN, OTHER_AGENT, NEW_LEASE, ""),
        NOW,
        WireCode::AuthForbidden,
    );
    let reused = f.refused(
        &engine,
        &assign(&f, OWNER, OTHER_AGENT, LEASE, ""),
        NOW,
        WireCode::InvalidCommand,
    );
    assert_eq!(reused.reason(), "lease_id_reused");
    let stale = assign(
        &f,
        OWNER,
        OTHER_AGENT,
        NEW_LEASE,
        r#""expectedRevision": 7"#,
    );
    f.refused(&engine, &stale, NOW, WireCode::RevisionConflict);
    let c = f.command("mission.cancel", OWNER, "", r#"{"reason": "done"}"#);
    f.ok(&engine, &c, NOW);
    f.refused(
        &engine,
        &assign(&f, OWNER, OTHER_AGENT, NEW_LEASE, ""),
        NOW,
        WireCode::InvalidStateTransition,
    );
    assert_eq!(
        engine
            .mission(MISSION)
            .unwrap()
            .unwrap()
            .coordinator()
            .coordinator_epoch,
        1
    );
}

#[test]
fn renewal_extends_the_current_lease() {
    let f = fixture();
    let engine = f.active();
    // Created with the default 300 s lease; renew at 200 s for 120 s → expires at 320 s.
    let e = &f.ok(&engine, &renew(&f, COORDINATOR, 1), at_seconds(200))[0];
    assert_eq!(text(e, "/kind"), "mission.coordinator.renewed");
    assert_eq!(
        e.pointer("/payload/renewalCount")
            .unwrap()
            .as_number()
            .unwrap()
            .as_u64(),
        Some(1)
    );
    let m = engine.mission(MISSION).unwrap().unwrap();
    assert_eq!(m.lease.expires_at, at_seconds(320));
    assert_eq!(m.lease.renewal_count, 1);
    assert_eq!(m.revision(), 2);
    // At 310 s the original lease would have lapsed; the renewed one still holds.
    f.ok(&engine, &f.submit(1), at_seconds(310));
}

#[test]
fn an_expired_lease_authorizes_nothing() {
    let f = fixture();
    let engine = f.active();
    let e = f.refused(
        &engine,
        &renew(&f, COORDINATOR, 1),
        at_seconds(300),
        WireCode::WorkLeaseExpired,
    );
    assert_eq!(e.reason(), "lease_expired");
    f.refused(
        &engine,
        &f.submit(1),
        at_seconds(301),
        WireCode::WorkLeaseExpired,
    );
    // The MissionOwner appoints a replacement (digest 2.4: lapsed → replacement).
    f.ok(
        &engine,
        &assign(&f, OWNER, OTHER_AGENT, NEW_LEASE, ""),
        at_seconds(302),
    );
    f.ok(&engine, &renew(&f, OTHER_AGENT, 2), at_seconds(303));
}

#[test]
fn renewal_is_refused_when_stale_foreign_or_terminal() {
    let f = fixture();
    let engine = f.active();
    f.refused(
        &engine,
        &renew(&f, COORDINATOR, 2),
        NOW,
        WireCode::AuthStaleCoordinator,
    );
    f.refused(
        &engine,
        &renew(&f, OTHER_AGENT, 1),
        NOW,
        WireCode::AuthForbidden,
    );
    let c = f.command(
        "mission.renew_coordinator",
        COORDINATOR,
        r#""coordinatorEpoch": 1"#,
        r#"{"leaseSeconds": 100000}"#,
    );
    f.refused(&engine, &c, NOW, WireCode::InvalidCommand);
    let c = f.by_coordinator("mission.terminate", 1, r#"{"reason": "x"}"#);
    f.ok(&engine, &c, NOW);
    f.refused(
        &engine,
        &renew(&f, COORDINATOR, 1),
        NOW,
        WireCode::InvalidStateTransition,
    );
}
