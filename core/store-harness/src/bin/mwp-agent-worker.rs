//! `mwp-agent-worker`: one Agent process over a `SqliteAgentStore`, for the Agent-side crash
//! tests (`tests/crash_agent_sqlite.rs`). Deterministic: every Event ID, offer and action is a
//! function of its index, so the test can check the store against what must be there.
//!
//! ```text
//! mwp-agent-worker replay --db PATH --groups G --events N [--batch B] [--page P]
//!     reconciles G Groups of N Events each (every 20th Event offers one WorkItem); prints
//!     `commit <group> <cursor>` after every durable batch, then per Group
//!     `result <group> <start> <end> <applied> <not-accepted admissions>`, then `done`
//! mwp-agent-worker outbox --db PATH --from I --to J
//!     sends what is pending, then for i in I..J: enqueue `act-i` (`enqueued i`), and every
//!     4th i sends everything pending: `send <id>` before, `sent <id>` after its mark; `done`
//! ```
//!
//! Exit status: 0 done, 1 a failure (on stderr), 2 a usage error.

use std::collections::HashMap;
use std::io::Write;
use std::process::ExitCode;

use missionweaveprotocol::json::{Number, Object, Value};
use missionweaveprotocol_agent::replay::{
    AgentLocalStore, AgentReplay, EventPosition, EventProjection, LocalStoreError, ReplayBatch,
    ReplayEvent, SourceError, SourcePage,
};
use missionweaveprotocol_kernel::scheduler::{SchedulerPolicy, SchedulerSnapshot, WorkOffer};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use missionweaveprotocol_store_sqlite::SqliteAgentStore;

/// The Agent every run acts as.
pub const AGENT: &str = "urn:missionweaveprotocol:agent:crash-worker";
const NOW: UnixMillis = UnixMillis(1_784_107_800_000);

/// The Group `g` of a run.
fn group(g: u64) -> String {
    format!("urn:missionweaveprotocol:group:crash-{g}")
}

/// The Event ID at `sequence` of Group `g`.
fn event_id(g: u64, sequence: u64) -> String {
    format!("urn:uuid:00000000-{g:04x}-4000-8000-{sequence:012x}")
}

/// Prints one line and flushes it (the parent reads lines as they come).
fn say(line: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    // A closed pipe (the parent stopped reading) ends the process quietly.
    if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
        std::process::exit(0);
    }
}

/// The store, reporting each durable batch.
struct Reporting<'a>(&'a SqliteAgentStore);

impl AgentLocalStore for Reporting<'_> {
    fn cursor(&self, agent_id: &str, group_id: &str) -> Result<u64, LocalStoreError> {
        self.0.cursor(agent_id, group_id)
    }
    fn event_position(
        &self,
        agent_id: &str,
        event_id: &str,
    ) -> Result<Option<EventPosition>, LocalStoreError> {
        self.0.event_position(agent_id, event_id)
    }
    fn remember_event(
        &self,
        agent_id: &str,
        event_id: &str,
        position: Option<(&str, u64)>,
    ) -> Result<bool, LocalStoreError> {
        self.0.remember_event(agent_id, event_id, position)
    }
    fn load_scheduler(&self, agent_id: &str) -> Result<Option<SchedulerSnapshot>, LocalStoreError> {
        self.0.load_scheduler(agent_id)
    }
    fn save_scheduler(
        &self,
        agent_id: &str,
        snapshot: &SchedulerSnapshot,
    ) -> Result<(), LocalStoreError> {
        self.0.save_scheduler(agent_id, snapshot)
    }
    fn commit_replay(&self, batch: &ReplayBatch<'_>) -> Result<(), LocalStoreError> {
        self.0.commit_replay(batch)?;
        say(format_args!(
            "commit {} {}",
            batch.group_id, batch.to_cursor
        ));
        Ok(())
    }
}

/// A policy with room for every offer of a run (so a re-applied Event would show up as a
/// `duplicate` admission, never hide behind a capacity refusal).
fn policy() -> SchedulerPolicy {
    SchedulerPolicy {
        max_work_items: 1_000_000,
        max_work_items_per_group: 1_000_000,
        ..SchedulerPolicy::default()
    }
}

fn replay(args: &HashMap<String, String>) -> Result<(), String> {
    let db = arg(args, "db")?;
    let groups: u64 = num(args, "groups", None)?;
    let events: u64 = num(args, "events", None)?;
    let batch: u64 = num(args, "batch", Some(256))?;
    let page: u64 = num(args, "page", Some(1000))?;
    let store = SqliteAgentStore::open(db).map_err(|e| e.to_string())?;
    let reporting = Reporting(&store);
    let mut replay = AgentReplay::open(AGENT, &reporting, policy(), NOW)
        .map_err(|e| e.to_string())?
        .with_batch_events(batch as usize);
    let names: Vec<String> = (0..groups).map(group).collect();
    let index: HashMap<&str, u64> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i as u64))
        .collect();
    let body: std::sync::Arc<[u8]> = std::sync::Arc::from(&b"{}"[..]);
    let mut source = |group_id: &str, after: u64| -> Result<SourcePage, SourceError> {
        let g = index[group_id];
        let end = (after + page).min(events);
        Ok(SourcePage::Events(
            (after + 1..=end)
                .map(|s| ReplayEvent {
                    event_id: event_id(g, s).into(),
                    group_id: group_id.into(),
                    sequence: s,
                    body: body.clone(),
                })
                .collect(),
        ))
    };
    let mut projector = |e: &ReplayEvent| -> Result<Option<EventProjection>, String> {
        Ok(e.sequence.is_multiple_of(20).then(|| EventProjection {
            work_offers: vec![WorkOffer::new(&format!("work-{}", e.event_id), &e.group_id)],
        }))
    };
    let results = replay
        .reconcile(
            names.iter().map(String::as_str),
            &mut source,
            &mut projector,
            NOW,
        )
        .map_err(|e| e.to_string())?;
    for name in &names {
        let r = &results[name];
        let refused = r
            .admissions
            .iter()
            .filter(|a| a.decision.reason.as_str() != "accepted")
            .count();
        say(format_args!(
            "result {name} {} {} {} {refused}",
            r.start_cursor, r.end_cursor, r.applied_events
        ));
    }
    say(format_args!("done"));
    Ok(())
}

/// The payload of action `i`.
fn action(i: u64) -> (String, Value) {
    let mut o = Object::new();
    o.insert("index", Value::Number(Number::from_u64(i)));
    o.insert("kind", Value::string("message.post"));
    (format!("act-{i:06}"), Value::Object(o))
}

fn drain(store: &SqliteAgentStore) -> Result<(), String> {
    for pending in store.pending_actions(AGENT).map_err(|e| e.to_string())? {
        say(format_args!("send {}", pending.action_id));
        store
            .mark_action_sent(AGENT, &pending.action_id)
            .map_err(|e| e.to_string())?;
        say(format_args!("sent {}", pending.action_id));
    }
    Ok(())
}

fn outbox(args: &HashMap<String, String>) -> Result<(), String> {
    let store = SqliteAgentStore::open(arg(args, "db")?).map_err(|e| e.to_string())?;
    let from: u64 = num(args, "from", None)?;
    let to: u64 = num(args, "to", None)?;
    drain(&store)?;
    for i in from..to {
        let (id, payload) = action(i);
        store
            .enqueue_action(AGENT, &id, &payload)
            .map_err(|e| e.to_string())?;
        say(format_args!("enqueued {i}"));
        if i % 4 == 3 {
            drain(&store)?;
        }
    }
    drain(&store)?;
    say(format_args!("done"));
    Ok(())
}

fn arg<'a>(args: &'a HashMap<String, String>, name: &str) -> Result<&'a str, String> {
    args.get(name)
        .map(String::as_str)
        .ok_or_else(|| format!("--{name} is required"))
}

fn num(args: &HashMap<String, String>, name: &str, default: Option<u64>) -> Result<u64, String> {
    match (args.get(name), default) {
        (Some(text), _) => text
            .parse()
            .map_err(|_| format!("--{name}: not a number: {text}")),
        (None, Some(d)) => Ok(d),
        (None, None) => Err(format!("--{name} is required")),
    }
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, rest)) = argv.split_first() else {
        eprintln!("usage: mwp-agent-worker <replay|outbox> [options]");
        return ExitCode::from(2);
    };
    let mut args = HashMap::new();
    for pair in rest.chunks(2) {
        match pair {
            [name, value] if name.starts_with("--") => {
                args.insert(name[2..].to_owned(), value.clone());
            }
            _ => {
                eprintln!("usage: options are --name value pairs");
                return ExitCode::from(2);
            }
        }
    }
    let result = match command.as_str() {
        "replay" => replay(&args),
        "outbox" => outbox(&args),
        other => {
            eprintln!("unknown command {other:?}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
