//! The per-Mission WorkItem index and the closure-based dependency checks (§10.4): a Command
//! reads its Mission's own WorkItems (index rows), never every WorkItem of the store, and the
//! checks over the dependency closure refuse exactly what the whole-Mission graph refused.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_work_fixture.rs"]
mod fixture;

use fixture::*;
use missionweaveprotocol::WireCode;
use missionweaveprotocol_engine::ingress::VerifiedCommand;
use missionweaveprotocol_engine::store::Store;

const W3: &str = "urn:missionweaveprotocol:work:audit";
const W4: &str = "urn:missionweaveprotocol:work:archive";

fn add_dependency(f: &Fixture, item: &str, dependency: &str) -> VerifiedCommand {
    f.by_coordinator(
        "ext.missionweaveprotocol.core.work_dependency_add",
        1,
        &format!(r#"{{"workItemId":"{item}","dependencyId":"{dependency}"}}"#),
    )
}

#[test]
fn authorization_writes_one_index_row_per_work_item() {
    let f = fixture();
    let engine = f.active();
    f.ok(&engine, &f.authorize(W1, &[]), NOW);
    f.ok(&engine, &f.authorize(W2, &[W1]), NOW);
    let rows = engine.store().list("mission_work_item", "").unwrap();
    let ids: Vec<&str> = rows.iter().map(|(id, _)| id.as_str()).collect();
    let mission = MISSION;
    let mut expected = vec![format!("{mission} {W1}"), format!("{mission} {W2}")];
    expected.sort();
    assert_eq!(ids, expected);
    // A refused authorization writes no row.
    f.refused(
        &engine,
        &f.authorize(W3, &["urn:missionweaveprotocol:work:nowhere"]),
        NOW,
        WireCode::InvalidCommand,
    );
    assert_eq!(
        engine.store().list("mission_work_item", "").unwrap().len(),
        2
    );
}

#[test]
fn a_long_chain_still_refuses_the_closing_edge() {
    let f = fixture();
    let engine = f.active();
    // W1 ← W2 ← W3: W3 depends on W2, W2 on W1.
    f.ok(&engine, &f.authorize(W1, &[]), NOW);
    f.ok(&engine, &f.authorize(W2, &[W1]), NOW);
    f.ok(&engine, &f.authorize(W3, &[W2]), NOW);
    f.ok(&engine, &f.authorize(W4, &[]), NOW);
    // W1 → W3 would close W1 → W3 → W2 → W1.
    f.refused(
        &engine,
        &add_dependency(&f, W1, W3),
        NOW,
        WireCode::InvalidCommand,
    );
    // An edge to an independent WorkItem is fine…
    f.ok(&engine, &add_dependency(&f, W1, W4), NOW);
    // …and then W4 → W3 closes W4 → W3 → W2 → W1 → W4 through it;
    f.refused(
        &engine,
        &add_dependency(&f, W4, W3),
        NOW,
        WireCode::InvalidCommand,
    );
    // W3 → W4 does not (no path W4 ⇝ W3).
    f.ok(&engine, &add_dependency(&f, W3, W4), NOW);
}

#[test]
fn unknown_dependencies_are_refused_at_authorization_and_insertion() {
    let f = fixture();
    let engine = f.active();
    f.ok(&engine, &f.authorize(W1, &[]), NOW);
    let nowhere = "urn:missionweaveprotocol:work:nowhere";
    f.refused(
        &engine,
        &f.authorize(W2, &[nowhere]),
        NOW,
        WireCode::InvalidCommand,
    );
    f.refused(
        &engine,
        &add_dependency(&f, W1, nowhere),
        NOW,
        WireCode::InvalidCommand,
    );
    // A self-dependency is a cycle of one.
    f.refused(
        &engine,
        &add_dependency(&f, W1, W1),
        NOW,
        WireCode::InvalidCommand,
    );
}

#[test]
fn mission_cancellation_closes_exactly_the_indexed_work_items() {
    let f = fixture();
    let engine = f.active();
    for item in [W1, W2, W3] {
        f.ok(&engine, &f.authorize(item, &[]), NOW);
    }
    let cancel = f.command(
        "mission.cancel",
        OWNER,
        "",
        r#"{"reason":"the books were closed by hand"}"#,
    );
    let events = f.ok(&engine, &cancel, NOW);
    let cancelled = kinds(&events)
        .iter()
        .filter(|k| k.as_str() == "work.cancelled")
        .count();
    assert_eq!(cancelled, 3);
    for item in [W1, W2, W3] {
        assert_eq!(item_state(&engine, item), "cancelled");
    }
}
