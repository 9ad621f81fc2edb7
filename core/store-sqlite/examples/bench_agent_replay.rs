//! Agent-side replay figures (issue 12), printed as JSON lines (wall clock on a shared machine:
//! indications, not guarantees):
//!
//! - `agent_replay_durable`: N distinct signed Group Events (each a `work.progressed` Event
//!   signed by the Group Authority, ≈ 0.9 KB, signed before the clock starts) replayed into a
//!   `SqliteAgentStore` file (WAL, `synchronous=FULL`), every 100th Event offering a WorkItem
//!   to the Scheduler; inbox rows, cursor and Scheduler snapshot commit atomically per batch.
//!   Target ≥ 100,000 Events/s.
//! - `agent_reconcile_groups`: one reconcile of G Groups × M Events (the source hands out
//!   pages of 1,000, bodies drawn from a pool of signed Events as a server reads its log), with
//!   the process's peak resident memory (`VmHWM`) before and after.
//!
//! Run: `cargo run --release -p missionweaveprotocol-store-sqlite --example bench_agent_replay
//! [N [G M [BATCH]]]` (defaults 100000, 10 100000, 4096). Not a test.

use std::sync::Arc;
use std::time::Instant;

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json::{Number, Object, Value};
use missionweaveprotocol::{Principal, PrincipalType};
use missionweaveprotocol_agent::replay::{
    AgentReplay, EventProjection, ReplayEvent, SourceError, SourcePage,
};
use missionweaveprotocol_engine::events::{
    Cause, CauseType, EventDraft, EventIssuer, SequentialEventIds,
};
use missionweaveprotocol_kernel::scheduler::{SchedulerPolicy, WorkOffer};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use missionweaveprotocol_store_sqlite::SqliteAgentStore;

const AGENT: &str = "urn:missionweaveprotocol:agent:bench-worker";
const AUTHORITY: &str = "urn:missionweaveprotocol:service:group-authority";
const NOW: UnixMillis = UnixMillis(1_784_107_800_000);
const PAGE: u64 = 1_000;

fn fail(what: &str, e: &dyn std::fmt::Display) -> ! {
    eprintln!("benchmark failed: {what}: {e}");
    std::process::exit(1)
}

fn group(g: u64) -> String {
    format!("urn:missionweaveprotocol:group:bench-{g}")
}

/// Signed `work.progressed` Events 1..=n of `group`.
fn signed_events(group_id: &str, n: u64) -> Vec<ReplayEvent> {
    let key = SigningKey::from_seed("urn:missionweaveprotocol:key:authority-1", &[10; 32]);
    let issuer = EventIssuer::new(Principal::new(PrincipalType::Service, AUTHORITY), key);
    let mut ids = SequentialEventIds::new(format!("urn:missionweaveprotocol:event:{group_id}:"));
    (1..=n)
        .map(|sequence| {
            let mut payload = Object::new();
            payload.insert("percent", Value::Number(Number::from_u64(sequence % 100)));
            payload.insert("summary", Value::string("x".repeat(400)));
            let draft = EventDraft {
                kind: "work.progressed".into(),
                actor: Principal::new(PrincipalType::Agent, AGENT),
                cause: Cause {
                    kind: CauseType::Command,
                    id: format!("urn:uuid:00000000-0000-4000-8000-{sequence:012}"),
                },
                correlation_id: "urn:uuid:11111111-1111-4111-8111-111111111111".into(),
                position: None,
                conversation_id: Some("urn:missionweaveprotocol:conversation:bench".into()),
                work_item_id: Some(format!(
                    "urn:missionweaveprotocol:work-item:w{}",
                    sequence / 100
                )),
                payload,
                command_hash: None,
                extensions: None,
            }
            .at(group_id, sequence, sequence);
            let event = issuer
                .issue(&draft, &mut ids, UnixMillis(NOW.0 + sequence as i64))
                .unwrap_or_else(|e| fail("sign", &e));
            ReplayEvent::new(event.event_id(), group_id, sequence, event.bytes().to_vec())
        })
        .collect()
}

/// Every 100th Event offers its WorkItem.
fn projector(e: &ReplayEvent) -> Result<Option<EventProjection>, String> {
    Ok(e.sequence.is_multiple_of(100).then(|| EventProjection {
        work_offers: vec![WorkOffer::new(&format!("{}/work", e.event_id), &e.group_id)],
    }))
}

/// Peak resident set (`VmHWM`) of this process, KiB.
fn vm_hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn arg(n: usize, default: u64) -> u64 {
    std::env::args().nth(n).map_or(default, |a| {
        a.parse().unwrap_or_else(|e| fail("argument", &e))
    })
}

fn main() {
    let n = arg(1, 100_000);
    let groups = arg(2, 10);
    let per_group = arg(3, 100_000);
    let batch = arg(4, 4_096) as usize;
    let dir = tempfile::tempdir().unwrap_or_else(|e| fail("tempdir", &e));

    // Reconcile of many Groups first, so its peak memory is not the pre-signed log's below.
    let pool = signed_events(&group(0), PAGE);
    let before = vm_hwm_kib();
    let store = SqliteAgentStore::open(dir.path().join("groups.sqlite"))
        .unwrap_or_else(|e| fail("open", &e));
    let names: Vec<String> = (0..groups).map(group).collect();
    let mut replay = AgentReplay::open(AGENT, &store, SchedulerPolicy::default(), NOW)
        .unwrap_or_else(|e| fail("replay", &e))
        .with_batch_events(batch);
    let mut source = |group_id: &str, after: u64| -> Result<SourcePage, SourceError> {
        let end = (after + PAGE).min(per_group);
        Ok(SourcePage::Events(
            (after + 1..=end)
                .map(|s| ReplayEvent {
                    event_id: Arc::from(format!("{group_id}:event:{s}")),
                    group_id: Arc::from(group_id),
                    sequence: s,
                    body: pool[(s % PAGE) as usize].body.clone(),
                })
                .collect(),
        ))
    };
    let start = Instant::now();
    let results = replay
        .reconcile(
            names.iter().map(String::as_str),
            &mut source,
            &mut projector,
            NOW,
        )
        .unwrap_or_else(|e| fail("reconcile", &e));
    let seconds = start.elapsed().as_secs_f64();
    let applied: u64 = results.values().map(|r| r.applied_events).sum();
    let accepted: usize = results
        .values()
        .flat_map(|r| &r.admissions)
        .filter(|a| a.decision.accepted)
        .count();
    println!(
        "{{\"name\": \"agent_reconcile_groups\", \"groups\": {groups}, \"events_per_group\": {per_group}, \"applied\": {applied}, \"accepted_offers\": {accepted}, \"batch_events\": {batch}, \"seconds\": {seconds:.2}, \"events_per_second\": {:.0}, \"vm_hwm_kib_before\": {before}, \"vm_hwm_kib_after\": {}}}",
        applied as f64 / seconds,
        vm_hwm_kib()
    );
    drop(replay);
    drop(store);

    // Durable replay of N distinct signed Events.
    let sign_start = Instant::now();
    let log = Arc::new(signed_events(&group(99), n));
    let bytes: usize = log.iter().map(|e| e.body.len()).sum();
    let sign_seconds = sign_start.elapsed().as_secs_f64();
    let store = SqliteAgentStore::open(dir.path().join("agent.sqlite"))
        .unwrap_or_else(|e| fail("open", &e));
    let mut replay = AgentReplay::open(AGENT, &store, SchedulerPolicy::default(), NOW)
        .unwrap_or_else(|e| fail("replay", &e))
        .with_batch_events(batch);
    let mut source = |_: &str, after: u64| -> Result<SourcePage, SourceError> {
        let from = after as usize;
        let to = (from + PAGE as usize).min(log.len());
        Ok(SourcePage::Events(log[from..to].to_vec()))
    };
    let name = group(99);
    let start = Instant::now();
    let results = replay
        .reconcile([name.as_str()], &mut source, &mut projector, NOW)
        .unwrap_or_else(|e| fail("reconcile", &e));
    let seconds = start.elapsed().as_secs_f64();
    let applied = results[&name].applied_events;
    println!(
        "{{\"name\": \"agent_replay_durable\", \"store\": \"file_wal_full\", \"events\": {applied}, \"mean_event_bytes\": {}, \"batch_events\": {batch}, \"seconds\": {seconds:.3}, \"events_per_second\": {:.0}, \"signing_seconds_excluded\": {sign_seconds:.1}}}",
        bytes / log.len().max(1),
        applied as f64 / seconds
    );
}
