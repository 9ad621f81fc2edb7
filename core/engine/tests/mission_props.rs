//! Random Mission Command sequences against a model of the §7.1 table (digest 2.1, 2.4): every
//! outcome (applied or its §19 code) matches the model, every Event verifies, the Group log
//! stays contiguous, the Mission revision counts its Events, replaying the log rebuilds the
//! same Mission, and a second engine fed the same sequence ends byte-identical.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_fixture.rs"]
mod fixture;

use fixture::*;
use missionweaveprotocol::{DescribeError, WireCode};
use missionweaveprotocol_engine::ingress::VerifiedCommand;
use missionweaveprotocol_engine::mission;
use proptest::prelude::*;

#[derive(Debug, Clone, Copy)]
enum Op {
    Create,
    Submit { stale: bool },
    Approve { bound: bool },
    RequestChanges { bound: bool },
    Cancel { by: u8 },
    Terminate { by_service: bool, stale: bool },
    Assign { by_service: bool },
    Renew { stale: bool },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        Just(Op::Create),
        any::<bool>().prop_map(|stale| Op::Submit { stale }),
        any::<bool>().prop_map(|bound| Op::Approve { bound }),
        any::<bool>().prop_map(|bound| Op::RequestChanges { bound }),
        (0u8..3).prop_map(|by| Op::Cancel { by }),
        (any::<bool>(), any::<bool>())
            .prop_map(|(by_service, stale)| Op::Terminate { by_service, stale }),
        any::<bool>().prop_map(|by_service| Op::Assign { by_service }),
        any::<bool>().prop_map(|stale| Op::Renew { stale }),
    ]
}

/// The model: the Mission row state, revision, Coordinator and submitted revision.
#[derive(Debug, Clone)]
struct Model {
    state: Option<&'static str>,
    revision: u64,
    epoch: u64,
    coordinator: &'static str,
    submitted: u64,
    leases: u64,
}

impl Model {
    fn terminal(&self) -> bool {
        matches!(self.state, Some("approved" | "failed" | "cancelled"))
    }
}

fn stale_epoch(epoch: u64) -> u64 {
    if epoch > 1 { epoch - 1 } else { epoch + 1 }
}

/// The Command for `op` in model state `m`, and the expected outcome (`None`: applied, with
/// the model updated).
fn step(f: &Fixture, m: &mut Model, op: Op) -> (VerifiedCommand, Option<WireCode>) {
    use WireCode::*;
    let exists = m.state.is_some();
    let coord = |kind: &str, stale: bool, payload: &str| {
        let epoch = if stale { stale_epoch(m.epoch) } else { m.epoch };
        f.command(
            kind,
            m.coordinator,
            &format!(r#""coordinatorEpoch": {epoch}"#),
            payload,
        )
    };
    let hashes = format!(r#"{{"artifactHashes": ["{HASH_A}", "{HASH_B}"]}}"#);
    let (command, expected, next): (VerifiedCommand, Option<WireCode>, Option<&'static str>) =
        match op {
            Op::Create => {
                let c = f.create();
                if exists {
                    (c, Some(InvalidStateTransition), None)
                } else {
                    (c, None, Some("active"))
                }
            }
            Op::Submit { stale } => {
                let c = coord("mission.submit_for_approval", stale, &hashes);
                let e = if !exists {
                    Some(GroupNotFound)
                } else if stale {
                    Some(AuthStaleCoordinator)
                } else if m.state != Some("active") {
                    Some(InvalidStateTransition)
                } else {
                    None
                };
                (c, e, Some("awaiting_approval"))
            }
            Op::Approve { bound } => {
                let c = f.approve(if bound {
                    m.submitted
                } else {
                    m.submitted + 100
                });
                let e = if !exists {
                    Some(GroupNotFound)
                } else if m.state != Some("awaiting_approval") {
                    Some(InvalidStateTransition)
                } else if !bound {
                    Some(RevisionConflict)
                } else {
                    None
                };
                (c, e, Some("approved"))
            }
            Op::RequestChanges { bound } => {
                let rev = if bound {
                    m.submitted
                } else {
                    m.submitted + 100
                };
                let c = f.command(
                    "mission.request_changes",
                    OWNER,
                    "",
                    &format!(r#"{{"missionRevision": {rev}, "feedback": "f"}}"#),
                );
                let e = if !exists {
                    Some(GroupNotFound)
                } else if m.state != Some("awaiting_approval") {
                    Some(InvalidStateTransition)
                } else if !bound {
                    Some(RevisionConflict)
                } else {
                    None
                };
                (c, e, Some("active"))
            }
            Op::Cancel { by } => {
                let payload = r#"{"reason": "r"}"#;
                let (c, forbidden) = match by {
                    0 => (f.command("mission.cancel", OWNER, "", payload), false),
                    1 => (f.command("mission.cancel", SERVICE, "", payload), false),
                    _ => (
                        f.command("mission.cancel", m.coordinator, "", payload),
                        true,
                    ),
                };
                let e = if !exists {
                    Some(GroupNotFound)
                } else if forbidden {
                    Some(AuthForbidden)
                } else if m.terminal() {
                    Some(InvalidStateTransition)
                } else {
                    None
                };
                (c, e, Some("cancelled"))
            }
            Op::Terminate { by_service, stale } => {
                let payload = r#"{"reason": "r"}"#;
                let c = if by_service {
                    f.command("mission.terminate", SERVICE, "", payload)
                } else {
                    coord("mission.terminate", stale, payload)
                };
                let e = if !exists {
                    Some(GroupNotFound)
                } else if !by_service && stale {
                    Some(AuthStaleCoordinator)
                } else if m.terminal() {
                    Some(InvalidStateTransition)
                } else {
                    None
                };
                (c, e, Some("failed"))
            }
            Op::Assign { by_service } => {
                let next_agent = if m.coordinator == COORDINATOR {
                    OTHER_AGENT
                } else {
                    COORDINATOR
                };
                let lease = format!("urn:missionweaveprotocol:lease:p{}", m.leases + 2);
                let payload = format!(
                    r#"{{"agentId": "{next_agent}", "agentCardVersion": 1, "leaseId": "{lease}"}}"#
                );
                let c = f.command(
                    "mission.assign_coordinator",
                    if by_service { SERVICE } else { OWNER },
                    "",
                    &payload,
                );
                let e = if !exists {
                    Some(GroupNotFound)
                } else if m.terminal() {
                    Some(InvalidStateTransition)
                } else {
                    None
                };
                if e.is_none() {
                    m.coordinator = next_agent;
                    m.epoch += 1;
                    m.leases += 1;
                }
                (c, e, m.state)
            }
            Op::Renew { stale } => {
                let c = coord("mission.renew_coordinator", stale, "{}");
                let e = if !exists {
                    Some(GroupNotFound)
                } else if stale {
                    Some(AuthStaleCoordinator)
                } else if m.terminal() {
                    Some(InvalidStateTransition)
                } else {
                    None
                };
                (c, e, m.state)
            }
        };
    if expected.is_none() {
        m.state = next;
        m.revision += 1;
        if matches!(op, Op::Submit { .. }) {
            m.submitted = m.revision;
        }
    }
    (command, expected)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_sequences_follow_the_table(first_create in proptest::bool::weighted(0.9), rest in proptest::collection::vec(op(), 1..16)) {
        // Mostly start from a created Mission, so that the rows (not GROUP_NOT_FOUND) are hit.
        let ops: Vec<Op> = first_create.then_some(Op::Create).into_iter().chain(rest).collect();
        let f = fixture();
        let engine = f.engine();
        let mut m = Model { state: None, revision: 0, epoch: 1, coordinator: COORDINATOR, submitted: 0, leases: 0 };
        let mut commands = Vec::new();
        for op in ops {
            let (command, expected) = step(&f, &mut m, op);
            match (engine.perform(&command, NOW), expected) {
                (Ok(p), None) => { f.checked(&p); }
                (Err(e), Some(code)) => prop_assert_eq!(e.wire_code(), code, "{:?}: {}", op, e),
                (outcome, expected) => prop_assert!(false, "{:?}: got {:?}, model says {:?}", op, outcome.map(|p| p.events.len()), expected),
            }
            commands.push(command);
            // Invariants after every step.
            prop_assert_eq!(last_sequence(&engine), m.revision, "one Event per applied Command");
            match engine.mission(MISSION).unwrap() {
                None => prop_assert!(m.state.is_none()),
                Some(mission) => {
                    prop_assert_eq!(Some(mission.state().as_str()), m.state);
                    prop_assert_eq!(mission.revision(), m.revision);
                    prop_assert_eq!(mission.coordinator().coordinator_epoch, m.epoch);
                }
            }
        }
        let log = engine.replay(GROUP, 0, 1000).map(|p| p.events).unwrap_or_default();
        let mut documents = Vec::new();
        for (i, record) in log.iter().enumerate() {
            prop_assert_eq!(record.sequence, i as u64 + 1);
            documents.push(f.check_event(record));
        }
        // Replaying the Group's Events rebuilds the same Mission, byte for byte.
        let rebuilt = mission::rebuild(&documents).unwrap().map(|m| m.to_blob().unwrap());
        let stored = engine.mission(MISSION).unwrap().map(|m| m.to_blob().unwrap());
        prop_assert_eq!(rebuilt, stored);
        // Determinism: a second engine fed the same Commands ends byte-identical.
        let twin = f.engine();
        for c in &commands {
            let _ = twin.perform(c, NOW);
        }
        prop_assert_eq!(twin.replay(GROUP, 0, 1000).map(|p| p.events).unwrap_or_default(), log);
    }
}
