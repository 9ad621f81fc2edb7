//! A small end-to-end story on a durable store (what `./scripts/run.sh` shows): a Mission is
//! created, members join, a WorkItem is authorized, offered, accepted, started, its Artifact
//! published and its result submitted and accepted, the Mission submitted and approved; then
//! the store is closed, reopened from its spec, and the Group replayed and verified.

use std::fmt;

use missionweaveprotocol::SignedDocumentKind;
use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol_engine::mission::MissionState;
use missionweaveprotocol_engine::service::CoreError;
use missionweaveprotocol_engine::store::{AggregateKey, Store};
use missionweaveprotocol_engine::work::{AGGREGATE_KIND, WorkItem};

use crate::check::{group_log, verify_store};
use crate::command::WireCommand;
use crate::error::HarnessError;
use crate::keys::{COORDINATOR, OWNER, WORKERS};
use crate::payloads;
use crate::perform::{apply, apply_all};
use crate::store_spec::open_store;
use crate::workload::{HarnessCore, Workload};

/// One Command of the story and what it produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The Command kind.
    pub kind: String,
    /// Its Events: `(sequence, kind)`; sequence 0 for an Organization-scoped Event.
    pub events: Vec<(u64, String)>,
    /// Whether the store already held it (a re-run of the scenario on the same store).
    pub duplicate: bool,
}

/// What [`run`] did and found after reopening.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioReport {
    /// The store spec.
    pub spec: String,
    /// The story's Group.
    pub group: String,
    /// Each Command, in order.
    pub steps: Vec<Step>,
    /// The Group log after reopening: `(sequence, kind)`, every Event verified (§6.4).
    pub replayed: Vec<(u64, String)>,
    /// The Mission's state after reopening.
    pub mission_state: String,
    /// The WorkItem's state after reopening.
    pub item_state: String,
    /// Groups and Events in the whole store, all verified.
    pub store_groups: usize,
    /// Group Events in the whole store.
    pub store_events: u64,
}

impl fmt::Display for ScenarioReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "scenario on {}", self.spec)?;
        for step in &self.steps {
            let events: Vec<String> = step
                .events
                .iter()
                .map(|(seq, kind)| match seq {
                    0 => format!("{kind} (Organization)"),
                    _ => format!("#{seq} {kind}"),
                })
                .collect();
            let again = if step.duplicate {
                " (already applied)"
            } else {
                ""
            };
            writeln!(f, "  {:<46} -> {}{again}", step.kind, events.join(", "))?;
        }
        writeln!(
            f,
            "reopened: {} Events replayed from {}, all verified:",
            self.replayed.len(),
            self.group
        )?;
        for (seq, kind) in &self.replayed {
            writeln!(f, "  #{seq} {kind}")?;
        }
        writeln!(
            f,
            "Mission {}, WorkItem {}; store: {} Groups, {} Events, all verified",
            self.mission_state, self.item_state, self.store_groups, self.store_events
        )
    }
}

/// Runs the story on the store `spec` names, closes it, reopens it and replays.
pub fn run(spec: &str, seed: u64) -> Result<ScenarioReport, HarnessError> {
    let workload = Workload::new(seed)?;
    let name = "scenario";
    let group = workload.id("group", name);
    let mission = workload.id("mission", name);
    let item = workload.id("work", name);
    let worker = WORKERS[0];
    let mut steps = Vec::new();
    {
        let core = workload.core(open_store(spec)?)?;
        // Each step's Events (the original ones when the store already held the Command), so
        // a re-run on the same store derives the same claims and sends the same bytes.
        let mut step = |command: WireCommand| -> Result<Vec<Value>, HarnessError> {
            let performed = apply(&core, &command)?;
            let events = performed
                .events
                .iter()
                .map(|e| parse(&e.body))
                .collect::<Result<Vec<_>, _>>()?;
            steps.push(Step {
                kind: command.kind.clone(),
                events: performed
                    .events
                    .iter()
                    .zip(&events)
                    .map(|(record, event)| {
                        let kind = event.get("kind").and_then(Value::as_str).unwrap_or("?");
                        (record.sequence, kind.to_owned())
                    })
                    .collect(),
                duplicate: performed.duplicate,
            });
            Ok(events)
        };
        let signer = workload.signer();
        let action = |what: &str| workload.id("action", &format!("{name}-{what}"));
        let by = |kind: &str, actor: &str, what: &str, extra: &str, payload: &str| {
            signer.group_command(&group, kind, actor, &action(what), extra, payload)
        };
        let coordinator = r#""coordinatorEpoch": 1"#;
        for open in workload.sessions()? {
            step(open)?;
        }
        step(workload.create_mission(name)?)?;
        step(workload.add_member(&group, worker, &format!("{name}-member-worker"))?)?;
        step(by(
            "membership.change",
            OWNER,
            "member-observer",
            "",
            &payloads::add_observer("urn:missionweaveprotocol:human:harness-auditor"),
        )?)?;
        step(by(
            "work.authorize",
            COORDINATOR,
            "authorize",
            coordinator,
            &payloads::authorize(&item),
        )?)?;
        step(by(
            "work.offer",
            COORDINATOR,
            "offer",
            coordinator,
            &payloads::offer(&item, &format!("h{seed}-{name}")),
        )?)?;
        let accepted = step(by(
            "work.accept_offer",
            worker,
            "accept",
            "",
            &payloads::accept_offer(&item),
        )?)?;
        let epoch = number(&accepted, "/payload/ownershipEpoch")?;
        let lease = text(&accepted, "/payload/ownershipLeaseId")?;
        let started = step(by(
            "work.start",
            worker,
            "start",
            "",
            &payloads::claim(&item, epoch, &lease, ""),
        )?)?;
        let execution = text(&started, "/payload/executionLeaseId")?;
        let manifest = signer.signed_document(
            SignedDocumentKind::Artifact,
            &payloads::manifest(
                &workload.id("artifact", name),
                worker,
                &mission,
                &group,
                &item,
            ),
            worker,
        )?;
        step(by(
            "artifact.publish",
            worker,
            "publish",
            "",
            &format!(
                r#"{{"manifest":{manifest},"ownershipEpoch":{epoch},"leaseId":"{execution}"}}"#
            ),
        )?)?;
        step(by(
            "work.submit",
            worker,
            "submit",
            "",
            &payloads::claim(&item, epoch, &execution, &payloads::submit_members(&item)),
        )?)?;
        step(by(
            "work.accept_result",
            COORDINATOR,
            "accept-result",
            coordinator,
            &payloads::accept_result(&item),
        )?)?;
        let submitted = step(by(
            "mission.submit_for_approval",
            COORDINATOR,
            "submit-for-approval",
            coordinator,
            &payloads::submission(),
        )?)?;
        // §7.3: the Approval binds the submitted revision.
        let revision = number(&submitted, "/payload/missionRevision")?;
        step(by(
            "mission.approve",
            OWNER,
            "approve",
            "",
            &payloads::approval(&workload.id("approval", name), revision),
        )?)?;
    }
    // Closed (the store dropped with its core); reopen from the spec and replay.
    let store = open_store(spec)?;
    let core = workload.core(store.clone())?;
    let log = group_log(&*store, &group, Some(workload.keys().registry()))?;
    let report = verify_store(&*store, workload.keys().registry())?;
    let (_, mission_state) = mission_of(&core, &mission)?;
    let item_state = stored_item(&*store, &item)?.state.as_str().to_owned();
    Ok(ScenarioReport {
        spec: spec.to_owned(),
        group,
        steps,
        replayed: log.into_iter().map(|e| (e.sequence, e.kind)).collect(),
        mission_state: mission_state.as_str().to_owned(),
        item_state,
        store_groups: report.groups,
        store_events: report.events,
    })
}

/// Applies `commands` through a fresh core over the store `spec` names (the setup of the
/// worker's subcommands).
pub fn apply_on(
    spec: &str,
    workload: &Workload,
    commands: &[WireCommand],
) -> Result<usize, HarnessError> {
    let core = workload.core(open_store(spec)?)?;
    Ok(apply_all(&core, commands)?
        .iter()
        .filter(|p| !p.duplicate)
        .count())
}

fn parse(body: &[u8]) -> Result<Value, HarnessError> {
    json::parse_state(body)
        .map_err(|e| HarnessError::check(format!("an Event does not parse: {e}")))
}

/// `pointer` in the first of `events`.
fn member<'e>(events: &'e [Value], pointer: &str) -> Result<&'e Value, HarnessError> {
    events
        .first()
        .and_then(|e| e.pointer(pointer))
        .ok_or_else(|| HarnessError::check(format!("the Event has no {pointer}")))
}

fn number(events: &[Value], pointer: &str) -> Result<u64, HarnessError> {
    member(events, pointer)?
        .as_number()
        .and_then(|n| n.as_u64())
        .ok_or_else(|| HarnessError::check(format!("{pointer} is not a count")))
}

fn text(events: &[Value], pointer: &str) -> Result<String, HarnessError> {
    member(events, pointer)?
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| HarnessError::check(format!("{pointer} is not text")))
}

fn stored_item(store: &dyn Store, item: &str) -> Result<WorkItem, HarnessError> {
    let stored = store
        .aggregate(&AggregateKey::new(AGGREGATE_KIND, item))?
        .ok_or_else(|| HarnessError::check(format!("WorkItem {item} is not stored")))?;
    WorkItem::from_json(&stored.value)
        .map_err(|e| HarnessError::check(format!("WorkItem {item} unreadable: {e}")))
}

fn mission_of<S: Store>(
    core: &HarnessCore<S>,
    mission: &str,
) -> Result<(u64, MissionState), HarnessError> {
    let found = core
        .engine()
        .mission(mission)
        .map_err(|e| HarnessError::from(CoreError::from(e)))?
        .ok_or_else(|| HarnessError::check(format!("Mission {mission} is not stored")))?;
    Ok((found.revision(), found.state()))
}
