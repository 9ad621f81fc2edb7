//! `two-missions.jsonl`: the two-Missions scenario ([`script`]) as a golden vector every
//! binding replays (issue 13): the Registry, the Group Authority's key and Principal, the
//! Event ID prefix and the ingress services a core needs; then every Command in order with the
//! instant it is performed at, its exact signed bytes, and its Events' canonical bytes or the
//! wire code of its refusal; then each Group's replayed log and one digest of the whole log.
//!
//! The Commands are performed here by the behavior world's engine (`Engine` over an
//! `InMemoryStore`); `core/testkit/tests/two_missions.rs` performs the committed file on
//! `Core` (in memory and SQLite), `python/tests/test_two_missions.py` on `core.Core`
//! and `js/test/two-missions.test.mjs` on the Node and WebAssembly `Core`s; all must produce
//! these bytes.

pub mod script;

use missionweaveprotocol::DescribeError;
use missionweaveprotocol::json::{self, Value, sha256_prefixed};
use missionweaveprotocol_behavior::world::{
    AUTHORITY, AUTHORITY_KEY_SEED, EVENT_ID_PREFIX, IDENTITY, SERVICE, Start, World, key_id,
};
use missionweaveprotocol_engine::engine::Performed;
use missionweaveprotocol_engine::store::{EventRecord, Store};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

use super::Rec;

/// Milliseconds between two Commands of the scenario.
pub const STEP_MS: u64 = 1_000;

/// The vector's records: `setup`, one `step` per Command, one `log` per Group, `digest`. If
/// the scenario does not run as scripted (a generator bug) the file is one `error` record,
/// which the drift check and `tests/two_missions.rs` refuse.
pub fn records() -> Vec<Value> {
    run().unwrap_or_else(|e| {
        vec![
            Rec::new()
                .str("record", "error")
                .str("error", format!("two-missions scenario: {e}"))
                .build(),
        ]
    })
}

fn text(bytes: &[u8]) -> Result<String, String> {
    String::from_utf8(bytes.to_vec()).map_err(|e| e.to_string())
}

fn events(records: &[EventRecord]) -> Result<Value, String> {
    records
        .iter()
        .map(|e| {
            let body = json::parse_state(&e.body).map_err(|e| e.to_string())?;
            let kind = body.get("kind").and_then(Value::as_str).unwrap_or("");
            Ok(Rec::new()
                .str("eventId", &*e.event_id)
                .num("sequence", e.sequence)
                .str("kind", kind)
                .str("body", text(&e.body)?)
                .build())
        })
        .collect::<Result<Vec<_>, String>>()
        .map(Value::Array)
}

/// The replayed Events by position (their bytes are the steps'; `sha256` covers them).
fn positions(records: &[EventRecord]) -> Result<Value, String> {
    let Value::Array(mut items) = events(records)? else {
        return Err("events are an array".into());
    };
    for item in &mut items {
        if let Value::Object(members) = item {
            members.remove("body");
        }
    }
    Ok(Value::Array(items))
}

fn step(
    index: usize,
    label: &str,
    now: UnixMillis,
    command: &[u8],
    outcome: Result<&Performed, &str>,
) -> Result<Value, String> {
    let rec = Rec::new()
        .str("record", "step")
        .num("index", index as u64)
        .str("label", label)
        .num("now", u64::try_from(now.0).map_err(|e| e.to_string())?)
        .str("at", now.to_rfc3339().ok_or("clock out of range")?)
        .str("command", text(command)?);
    Ok(match outcome {
        Ok(performed) => rec.value("events", events(&performed.events)?),
        Err(code) => rec.str("refused", code),
    }
    .build())
}

fn run() -> Result<Vec<Value>, String> {
    let w = World::setup(Start::Empty)?;
    let mut records = vec![
        Rec::new()
            .str("record", "setup")
            .str("registry", text(w.registry_bytes())?)
            .value(
                "authority",
                Rec::new()
                    .str("type", "service")
                    .str("id", AUTHORITY)
                    .build(),
            )
            .str("authorityKeyId", key_id(AUTHORITY_KEY_SEED))
            .str("authorityKeySeed", hex(&[AUTHORITY_KEY_SEED; 32]))
            .str("eventIdPrefix", EVENT_ID_PREFIX)
            .value("bootstrapServices", strings(&[IDENTITY]))
            .value("policyServices", strings(&[SERVICE]))
            .value("groups", strings(&script::GROUPS))
            .value("stages", strings(&script::STAGES))
            .build(),
    ];
    let mut log: Vec<u8> = Vec::new();
    let mut index = 0;
    for (now, bytes, performed) in w.setup_log() {
        index += 1;
        records.push(step(
            index,
            "setup: session_open",
            *now,
            bytes,
            Ok(performed),
        )?);
        append(&mut log, &performed.events);
    }
    for act in script::interleaved() {
        index += 1;
        w.elapse(STEP_MS);
        let command = (act.build)(&w).map_err(|e| format!("{}: {e}", act.label))?;
        let now = w.now();
        match (w.perform(&command), act.refused) {
            (Ok(performed), None) => {
                w.verify_events(&performed, &command)
                    .map_err(|e| format!("{}: {e}", act.label))?;
                records.push(step(
                    index,
                    &act.label,
                    now,
                    command.bytes(),
                    Ok(&performed),
                )?);
                append(&mut log, &performed.events);
            }
            (Err(e), Some(code)) if e.wire_code() == code => {
                records.push(step(
                    index,
                    &act.label,
                    now,
                    command.bytes(),
                    Err(code.as_str()),
                )?);
            }
            (Ok(_), Some(code)) => {
                return Err(format!(
                    "{}: applied, expected {}",
                    act.label,
                    code.as_str()
                ));
            }
            (Err(e), _) => {
                return Err(format!(
                    "{}: refused {} ({e})",
                    act.label,
                    e.wire_code().as_str()
                ));
            }
        }
    }
    for group in script::GROUPS {
        let (after, replayed) = replay(&w, group)?;
        let mut bytes = Vec::new();
        append(&mut bytes, &replayed);
        records.push(
            Rec::new()
                .str("record", "log")
                .str("groupId", group)
                .num("after", after)
                .num("events", replayed.len() as u64)
                .str("sha256", sha256_prefixed(&bytes))
                .value("replay", positions(&replayed)?)
                .build(),
        );
    }
    records.push(
        Rec::new()
            .str("record", "digest")
            .num("steps", index as u64)
            .str("sha256", sha256_prefixed(&log))
            .build(),
    );
    Ok(records)
}

/// Where a Group's online log starts (§16: after an archive, replay resumes after the
/// snapshot's last sequence), and every Event it replays from there.
fn replay(w: &World, group: &str) -> Result<(u64, Vec<EventRecord>), String> {
    let store = w.engine().store();
    let head = store
        .head(group)
        .map_err(|e| format!("head of {group}: {e}"))?;
    let from = head.first_online.saturating_sub(1);
    let mut out = Vec::new();
    let mut after = from;
    loop {
        let page = store
            .replay(group, after, 1000)
            .map_err(|e| format!("replay {group}: {e}"))?;
        out.extend(page.events);
        match page.continuation {
            Some(next) => after = next,
            None => return Ok((from, out)),
        }
    }
}

/// The digest input: each Event's canonical bytes followed by a line feed.
fn append(log: &mut Vec<u8>, events: &[EventRecord]) {
    for e in events {
        log.extend_from_slice(&e.body);
        log.push(b'\n');
    }
}

fn strings(items: &[&str]) -> Value {
    Value::Array(items.iter().map(|s| Value::string(*s)).collect())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
