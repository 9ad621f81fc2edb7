//! Two engines fed the same verified Commands (same Event ID source, same `now`) emit
//! byte-identical Events and end with identical Group logs and Missions (issue 10).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_fixture.rs"]
mod fixture;

use fixture::*;
use missionweaveprotocol_engine::error::EngineError;
use missionweaveprotocol_engine::ingress::VerifiedCommand;
use missionweaveprotocol_engine::store::EventRecord;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

fn script(f: &Fixture) -> Vec<(VerifiedCommand, UnixMillis)> {
    let at = |s: i64| UnixMillis(NOW.0 + s * 1000);
    let mut commands = vec![
        (f.create(), at(0)),
        (
            f.by_coordinator("mission.renew_coordinator", 1, "{}"),
            at(10),
        ),
        (f.submit(1), at(20)),
        // Refused (wrong revision): both engines must refuse it identically.
        (f.approve(1), at(30)),
        (
            f.command(
                "mission.request_changes",
                OWNER,
                "",
                r#"{"missionRevision": 3, "feedback": "more"}"#,
            ),
            at(40),
        ),
        (f.submit(1), at(50)),
        (f.approve(5), at(60)),
    ];
    // A duplicate delivery of the first Command.
    commands.push((commands[0].0.clone(), at(70)));
    commands
}

type Outcome = Result<(Vec<EventRecord>, bool), EngineError>;

#[test]
fn two_engines_emit_byte_identical_events() {
    let f = fixture();
    let commands = script(&f);
    let run = || -> Vec<Outcome> {
        let engine = f.engine();
        commands
            .iter()
            .map(|(c, now)| engine.perform(c, *now).map(|p| (p.events, p.duplicate)))
            .collect()
    };
    let (a, b) = (run(), run());
    assert_eq!(a, b);
    let applied: Vec<&(Vec<EventRecord>, bool)> =
        a.iter().filter_map(|o| o.as_ref().ok()).collect();
    assert_eq!(applied.len(), 7, "one refusal among eight deliveries");
    for (events, _) in &applied {
        for e in events {
            f.check_event(e);
        }
    }
    assert!(applied[6].1, "the redelivered create is a duplicate");
}

#[test]
fn replayed_logs_and_missions_are_identical() {
    let f = fixture();
    let commands = script(&f);
    let finish = || {
        let engine = f.engine();
        for (c, now) in &commands {
            let _ = engine.perform(c, *now);
        }
        let log = engine.replay(GROUP, 0, 1000).unwrap().events;
        let mission = engine.mission(MISSION).unwrap().unwrap().to_blob().unwrap();
        (log, mission)
    };
    let (a, b) = (finish(), finish());
    assert_eq!(a, b);
    assert_eq!(a.0.len(), 6);
}
