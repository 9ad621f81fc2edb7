//! The two-Missions scenario (issue 13; `tests/vectors/two-missions.jsonl`, written by
//! `core/testkit/src/vectors/two_missions`): the committed Commands performed in order on
//! `Core` — the core every binding serves — over the in-memory store and over SQLite,
//! must give the vector's Events byte for byte, its refusals with their wire codes, each
//! Group's replayed log and the digest of the whole log. The Python
//! (`python/tests/test_two_missions.py`) and Node (`js/test/two-missions.test.mjs`) tests
//! perform the same file.
//!
//! Also checked on the committed log: the stages ran as a graph — no WorkItem started before
//! the WorkItem it depends on was verified (§10.4) — and the gates held.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use std::collections::BTreeMap;
use std::sync::Arc;

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json::{Value, canonical_bytes, parse, sha256_prefixed};
use missionweaveprotocol::{DescribeError, KeyRegistrySnapshot, Principal, PrincipalType};
use missionweaveprotocol_engine::events::{EventIssuer, SequentialEventIds};
use missionweaveprotocol_engine::service::{Core, default_authorizer};
use missionweaveprotocol_engine::store::{InMemoryStore, Store};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use missionweaveprotocol_store_sqlite::SqliteStore;
use missionweaveprotocol_testkit::vectors::default_dir;

fn records() -> Vec<Value> {
    let bytes = std::fs::read(default_dir().join("two-missions.jsonl")).unwrap();
    bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| parse(l).unwrap())
        .collect()
}

fn text<'v>(v: &'v Value, pointer: &str) -> &'v str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no text at {pointer}"))
}

fn number(v: &Value, pointer: &str) -> u64 {
    v.pointer(pointer)
        .and_then(Value::as_number)
        .and_then(|n| n.as_u64())
        .unwrap_or_else(|| panic!("no number at {pointer}"))
}

fn array<'v>(v: &'v Value, pointer: &str) -> &'v [Value] {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("no array at {pointer}"))
}

fn of(records: &[Value], kind: &str) -> Vec<Value> {
    records
        .iter()
        .filter(|r| text(r, "/record") == kind)
        .cloned()
        .collect()
}

fn seed(hex: &str) -> [u8; 32] {
    let mut seed = [0u8; 32];
    for (i, byte) in seed.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap();
    }
    seed
}

/// The core the vector's setup record describes, over `store`.
fn core<S: Store>(setup: &Value, store: S) -> Core<S, SigningKey> {
    let registry = KeyRegistrySnapshot::from_bytes(text(setup, "/registry").as_bytes()).unwrap();
    let key = SigningKey::from_seed(
        text(setup, "/authorityKeyId"),
        &seed(text(setup, "/authorityKeySeed")),
    );
    let strings = |p: &str| -> Vec<String> {
        array(setup, p)
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect()
    };
    Core::new(
        store,
        Arc::new(registry),
        EventIssuer::new(
            Principal::new(PrincipalType::Service, text(setup, "/authority/id")),
            key,
        ),
        default_authorizer(strings("/bootstrapServices"), strings("/policyServices")),
        Box::new(SequentialEventIds::new(text(setup, "/eventIdPrefix"))),
    )
}

/// Performs every step on `core` (each at its `now`, shifted by `skew_ms`) and returns what
/// differs from the vector (empty: byte-identical).
fn perform_all<S: Store>(
    core: &Core<S, SigningKey>,
    records: &[Value],
    skew_ms: i64,
) -> Vec<String> {
    let mut problems = Vec::new();
    let mut log = Vec::new();
    for step in of(records, "step") {
        let label = text(&step, "/label");
        let now = UnixMillis(i64::try_from(number(&step, "/now")).unwrap() + skew_ms);
        match (
            core.perform_bytes(text(&step, "/command").as_bytes(), now),
            step.get("refused"),
        ) {
            (Ok(performed), None) => {
                let expected = array(&step, "/events");
                let got: Vec<&[u8]> = performed.events.iter().map(|e| &e.body[..]).collect();
                let want: Vec<&[u8]> = expected
                    .iter()
                    .map(|e| text(e, "/body").as_bytes())
                    .collect();
                if got != want {
                    problems.push(format!("{label}: Events differ"));
                }
                for e in &performed.events {
                    log.extend_from_slice(&e.body);
                    log.push(b'\n');
                }
            }
            (Err(e), Some(code)) if Some(e.wire_code().as_str()) == code.as_str() => {}
            (Ok(_), Some(code)) => problems.push(format!("{label}: applied, expected {code:?}")),
            (Err(e), _) => problems.push(format!("{label}: refused {}", e.wire_code().as_str())),
        }
    }
    for group in of(records, "log") {
        let id = text(&group, "/groupId");
        let after = i64::try_from(number(&group, "/after")).unwrap();
        match core.replay(id, after, 10_000) {
            Ok(page) => {
                let mut bytes = Vec::new();
                for e in &page.events {
                    bytes.extend_from_slice(&e.body);
                    bytes.push(b'\n');
                }
                if sha256_prefixed(&bytes) != text(&group, "/sha256") {
                    problems.push(format!("replay of {id} differs"));
                }
            }
            Err(e) => problems.push(format!("replay of {id}: {e}")),
        }
    }
    let digest = &of(records, "digest")[0];
    if sha256_prefixed(&log) != text(digest, "/sha256") {
        problems.push("the log digest differs".into());
    }
    problems
}

#[test]
fn the_generator_runs_the_whole_scenario() {
    let generated = missionweaveprotocol_testkit::vectors::two_missions::records();
    assert_eq!(
        text(&generated[0], "/record"),
        "setup",
        "{:?}",
        generated[0]
    );
    let canonical = |records: &[Value]| -> Vec<Vec<u8>> {
        records
            .iter()
            .map(|r| canonical_bytes(r).unwrap())
            .collect()
    };
    assert!(
        canonical(&generated) == canonical(&records()),
        "regenerate with scripts/write-vectors.sh"
    );
}

#[test]
fn authority_core_in_memory_reproduces_the_log_byte_for_byte() {
    let records = records();
    let core = core(&records[0], InMemoryStore::new());
    let problems = perform_all(&core, &records, 0);
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn authority_core_over_sqlite_reproduces_the_log_byte_for_byte() {
    let records = records();
    let core = core(&records[0], SqliteStore::in_memory().unwrap());
    let problems = perform_all(&core, &records, 0);
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn other_instants_give_another_log() {
    // The comparison can fail: performed 1 ms later, every Event's `occurredAt` (and so its
    // signature) moves, and the digest with it.
    let records = records();
    let core = core(&records[0], InMemoryStore::new());
    let problems = perform_all(&core, &records, 1);
    assert!(
        problems.iter().any(|p| p == "the log digest differs"),
        "{problems:#?}"
    );
    assert!(problems.iter().any(|p| p.ends_with("Events differ")));
}

/// Each Event of the vector's steps, in the order performed.
fn events(records: &[Value]) -> Vec<Value> {
    of(records, "step")
        .iter()
        .filter(|s| s.get("events").is_some())
        .flat_map(|s| array(s, "/events").to_vec())
        .map(|e| parse(text(&e, "/body").as_bytes()).unwrap())
        .collect()
}

/// §10.4: no WorkItem starts before the WorkItem it depends on is verified. `items` maps each
/// WorkItem to its dependencies (from the `work.authorized` Events).
fn stage_order(events: &[Value]) -> Result<usize, String> {
    let mut depends: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut verified: Vec<String> = Vec::new();
    let mut started = 0;
    for event in events {
        let item = event.pointer("/payload/workItemId").and_then(Value::as_str);
        match (text(event, "/kind"), item) {
            ("work.authorized", Some(item)) => {
                let deps = event
                    .pointer("/payload/contract/dependencyWorkItemIds")
                    .and_then(Value::as_array)
                    .ok_or_else(|| format!("{item}: no dependencies in work.authorized"))?;
                depends.insert(
                    item.to_owned(),
                    deps.iter()
                        .filter_map(|d| d.as_str().map(str::to_owned))
                        .collect(),
                );
            }
            ("work.result.accepted", Some(item)) => verified.push(item.to_owned()),
            ("work.started", Some(item)) => {
                started += 1;
                for dep in depends.get(item).into_iter().flatten() {
                    if !verified.contains(dep) {
                        return Err(format!("{item} started before {dep} was verified"));
                    }
                }
            }
            _ => {}
        }
    }
    Ok(started)
}

#[test]
fn the_stages_run_as_a_dependency_graph() {
    let records = records();
    let events = events(&records);
    // Both Missions run requirements → implementation → testing → code-review → integration;
    // A's testing is verified by its child Mission, so 9 WorkItems start.
    assert_eq!(stage_order(&events), Ok(9));
    let setup = &records[0];
    let stages: Vec<&str> = array(setup, "/stages")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        stages,
        [
            "requirements",
            "implementation",
            "testing",
            "code-review",
            "integration"
        ]
    );
    // Negative: the same log with B's `implementation` started before `requirements` was
    // accepted is caught.
    let mut reordered = events.clone();
    let started = |e: &Value, item: &str| {
        text(e, "/kind") == "work.started"
            && e.pointer("/payload/workItemId").and_then(Value::as_str) == Some(item)
    };
    let at = reordered
        .iter()
        .position(|e| started(e, "urn:missionweaveprotocol:work:b-implementation"))
        .unwrap();
    let moved = reordered.remove(at);
    let first = reordered
        .iter()
        .position(|e| started(e, "urn:missionweaveprotocol:work:b-requirements"))
        .unwrap();
    reordered.insert(first + 1, moved);
    assert_eq!(
        stage_order(&reordered),
        Err("urn:missionweaveprotocol:work:b-implementation started before urn:missionweaveprotocol:work:b-requirements was verified".into())
    );
}

#[test]
fn the_scenario_holds_its_gates_child_approval_and_archive() {
    let records = records();
    let steps = of(&records, "step");
    let refusals: Vec<(&str, &str)> = steps
        .iter()
        .filter_map(|s| Some((text(s, "/label"), s.get("refused")?.as_str()?)))
        .collect();
    assert_eq!(
        refusals,
        [
            (
                "b: work.start implementation before requirements is verified",
                "INVALID_COMMAND"
            ),
            (
                "a: work.start integration without an Execution Approval",
                "APPROVAL_REQUIRED"
            ),
        ]
    );
    let kinds: Vec<String> = events(&records)
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                text(e, "/kind"),
                e.get("groupId").and_then(Value::as_str).unwrap_or("-")
            )
        })
        .collect();
    let a = "urn:missionweaveprotocol:group:two-missions-a";
    let b = "urn:missionweaveprotocol:group:two-missions-b";
    let child = "urn:missionweaveprotocol:group:two-missions-a-testing";
    for expected in [
        format!("mission.child.created {a}"),
        format!("mission.approved {child}"),
        format!("approval.execution.granted {a}"),
        format!("mission.approved {a}"),
        format!("mission.approved {b}"),
        format!("group.snapshot.created {a}"),
        format!("group.archived {a}"),
    ] {
        assert!(kinds.contains(&expected), "no {expected}");
    }
    // The Missions ran concurrently: their Commands alternate.
    let groups: Vec<&str> = steps
        .iter()
        .skip(2)
        .take(4)
        .map(|s| {
            if text(s, "/label").starts_with("a") {
                "a"
            } else {
                "b"
            }
        })
        .collect();
    assert_eq!(groups, ["a", "b", "a", "b"]);
    // The archive is the last Command of Group A.
    assert_eq!(
        kinds.iter().rev().find(|k| k.ends_with(a)).unwrap(),
        &format!("group.archived {a}")
    );
}
