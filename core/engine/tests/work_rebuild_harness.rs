//! The harness of `work_rebuild_props.rs`: an engine and its twin fed the same WorkItem
//! Commands, built from the stored state (`Run::resolve`), with every check of a step
//! (`Run::step`): the §4 invariants, the replica-side fold against the stored aggregates, and the
//! twin's Events. `WORK_REBUILD_STATS=1 … -- --nocapture` prints each step and its outcome.
//! Included with `#[path]`; as its own test target it holds no tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_work_fixture.rs"]
mod fixture;

pub use fixture::*;
use std::collections::BTreeMap;

use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol::{DescribeError, SignedDocumentCodec, SignedDocumentKind};
use missionweaveprotocol_engine::artifact::{ARTIFACT_KIND, published_key};
use missionweaveprotocol_engine::budget::account::{BudgetAccount, account_key};
use missionweaveprotocol_engine::engine::Performed;
use missionweaveprotocol_engine::error::EngineError;
use missionweaveprotocol_engine::ingress::VerifiedCommand;
use missionweaveprotocol_engine::store::{AggregateKey, Store};
use missionweaveprotocol_engine::work::projection::{WorkItemProjection, WorkProjection};
use missionweaveprotocol_engine::work::{AGGREGATE_KIND, OfferStatus, WorkItem, WorkItemState};
use missionweaveprotocol_kernel::budget::AccountKind;
use missionweaveprotocol_kernel::lease::LeaseState;
use missionweaveprotocol_kernel::snapshot_json::resources_to_value;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use proptest::prelude::*;

pub const W3: &str = "urn:missionweaveprotocol:work:audit";
pub const ITEMS: [&str; 3] = [W1, W2, W3];
pub const AGENTS: [&str; 2] = [WORKER, COORDINATOR];
pub const NO_LEASE: &str = "urn:missionweaveprotocol:lease:none";

#[derive(Debug, Clone, Copy)]
pub enum Op {
    /// A Command that fits the item's stored state (`Run::resolve`), `choice` picking among
    /// the fitting ones; the other variants are sent whatever the state.
    Progress {
        item: usize,
        choice: u8,
    },
    Authorize {
        item: usize,
        deps: u8,
    },
    Offer {
        item: usize,
        who: u8,
    },
    Accept {
        item: usize,
        agent: usize,
    },
    Start {
        item: usize,
        other: bool,
    },
    Renew {
        item: usize,
    },
    Checkpoint {
        item: usize,
    },
    Block {
        item: usize,
    },
    Unblock {
        item: usize,
    },
    Publish {
        item: usize,
        hash_b: bool,
    },
    Submit {
        item: usize,
        hash_b: bool,
        other: bool,
    },
    AcceptResult {
        item: usize,
    },
    Fail {
        item: usize,
        by_worker: bool,
    },
    Cancel {
        item: usize,
    },
    AddDependency {
        item: usize,
        dep: usize,
    },
    Usage {
        item: usize,
        calls: u8,
    },
    MissionCancel,
    Advance {
        seconds: u16,
    },
    ReplaceSession {
        agent: usize,
    },
}

/// How a Command is performed (the publish needs the Registry to verify its manifest).
#[derive(Clone, Debug)]
struct Step {
    command: VerifiedCommand,
    now: UnixMillis,
    resolver: bool,
}

#[derive(Debug)]
pub struct Run {
    pub f: Fixture,
    pub engine: TestEngine,
    pub twin: TestEngine,
    pub now: UnixMillis,
    pub sessions: BTreeMap<&'static str, u64>,
    pub rounds: u64,
    pub artifacts: u64,
    /// The replica: Events folded as they are appended.
    pub replica: WorkProjection,
    /// Every verified Group Event so far.
    pub log: Vec<Value>,
    /// Per WorkItem: the highest Ownership Epoch seen and the stored bytes when terminal.
    pub epochs: BTreeMap<&'static str, u64>,
    pub terminal: BTreeMap<&'static str, Vec<u8>>,
    pub applied: usize,
}

impl Run {
    pub fn start() -> Self {
        let f = fixture();
        let engine = f.engine();
        let twin = f.engine();
        Self {
            f,
            engine,
            twin,
            now: NOW,
            sessions: AGENTS.iter().map(|a| (*a, 1)).collect(),
            rounds: 0,
            artifacts: 0,
            replica: WorkProjection::default(),
            log: Vec::new(),
            epochs: BTreeMap::new(),
            terminal: BTreeMap::new(),
            applied: 0,
        }
    }

    fn item(&self, item: &str) -> Option<WorkItem> {
        self.engine
            .store()
            .aggregate(&AggregateKey::new(AGGREGATE_KIND, item))
            .unwrap()
            .map(|a| WorkItem::from_json(&a.value).unwrap())
    }

    /// The owner, its epoch and its execution (or ownership) lease; a made-up claim when the
    /// item has no owner (the Command is then refused).
    fn claim(&self, item: &str, execution: bool) -> (&'static str, u64, String) {
        let Some(w) = self.item(item) else {
            return (WORKER, 1, NO_LEASE.to_owned());
        };
        let Some(owner) = &w.owner else {
            return (WORKER, 1, NO_LEASE.to_owned());
        };
        let agent = AGENTS.into_iter().find(|a| *a == owner.agent_id).unwrap();
        let lease = if execution {
            &w.execution_lease
        } else {
            &w.ownership_lease
        };
        let lease = lease
            .as_ref()
            .map_or(NO_LEASE.to_owned(), |l| l.lease_id().to_owned());
        (agent, owner.ownership_epoch, lease)
    }

    /// A Command that fits `item`'s stored state, `choice` picking among them.
    pub fn resolve(&self, item: usize, choice: u8) -> Op {
        self.resolve_from(item, choice, 0)
    }

    fn resolve_from(&self, item: usize, choice: u8, hops: usize) -> Op {
        use WorkItemState::*;
        let id = ITEMS[item];
        let c = usize::from(choice);
        let Some(w) = self.item(id) else {
            // Dependencies (one time in four) among the authorized items only: an item waits
            // for its dependencies to be verified, so too many stall every sequence.
            let deps = (0..3)
                .filter(|d| *d != item && choice.is_multiple_of(4) && choice & (8 << d) != 0)
                .filter(|d| self.item(ITEMS[*d]).is_some())
                .fold(0u8, |m, d| m | (1 << d));
            return Op::Authorize { item, deps };
        };
        let owner = w
            .owner
            .as_ref()
            .map_or(0, |o| usize::from(o.agent_id != WORKER));
        let who = 1 + (choice % 3);
        let dep = (c / 7) % 3;
        let published = self
            .engine
            .store()
            .aggregate(&published_key(id, HASH_A))
            .unwrap()
            .is_some();
        let pending: Vec<usize> = w
            .offers
            .iter()
            .filter(|o| o.status == OfferStatus::Pending)
            .map(|o| usize::from(o.agent_id != WORKER))
            .collect();
        let accept = Op::Accept {
            item,
            agent: pending
                .get(c % pending.len().max(1))
                .copied()
                .unwrap_or(c % 2),
        };
        let lapse = Op::Advance { seconds: 320 };
        let live = [&w.ownership_lease, &w.execution_lease]
            .into_iter()
            .flatten()
            .any(|l| l.is_live(self.now));
        let options: Vec<Op> = match w.state {
            // The owner's lease lapsed: re-offer (the owner is fenced, §10.2 row 3), mostly.
            Queued | Active if !live => vec![
                Op::Offer { item, who },
                Op::Offer { item, who },
                Op::Offer { item, who },
                Op::Start { item, other: false },
                Op::Cancel { item },
            ],
            Open => vec![
                Op::Offer { item, who },
                Op::Offer { item, who },
                Op::Offer { item, who },
                Op::Offer { item, who },
                Op::Offer { item, who },
                Op::AddDependency { item, dep },
                Op::AddDependency { item, dep },
                Op::Cancel { item },
            ],
            Offered => vec![
                accept,
                accept,
                accept,
                Op::Accept { item, agent: c % 2 },
                accept,
                accept,
                Op::Offer { item, who },
                Op::AddDependency { item, dep },
                Op::Cancel { item },
            ],
            Queued => vec![
                Op::Start { item, other: false },
                Op::Start { item, other: false },
                Op::Start { item, other: false },
                Op::Start { item, other: false },
                Op::Start { item, other: false },
                Op::Start { item, other: true },
                Op::ReplaceSession { agent: owner },
                Op::Cancel { item },
                lapse,
            ],
            Active if published => vec![
                Op::Submit {
                    item,
                    hash_b: false,
                    other: false,
                },
                Op::Submit {
                    item,
                    hash_b: false,
                    other: false,
                },
                Op::Submit {
                    item,
                    hash_b: false,
                    other: false,
                },
                Op::Renew { item },
                Op::Checkpoint { item },
                Op::Block { item },
                Op::Usage {
                    item,
                    calls: 1 + choice % 4,
                },
                Op::Fail {
                    item,
                    by_worker: true,
                },
                Op::ReplaceSession { agent: owner },
                Op::Publish { item, hash_b: true },
            ],
            Active => vec![
                Op::Publish {
                    item,
                    hash_b: false,
                },
                Op::Publish {
                    item,
                    hash_b: false,
                },
                Op::Publish {
                    item,
                    hash_b: false,
                },
                Op::Renew { item },
                Op::Checkpoint { item },
                Op::Block { item },
                Op::Usage {
                    item,
                    calls: 1 + choice % 4,
                },
                Op::Fail {
                    item,
                    by_worker: true,
                },
                Op::ReplaceSession { agent: owner },
                Op::Submit {
                    item,
                    hash_b: false,
                    other: false,
                },
                lapse,
            ],
            Blocked => vec![
                Op::Unblock { item },
                Op::Unblock { item },
                Op::Unblock { item },
                Op::Unblock { item },
                Op::Cancel { item },
                lapse,
            ],
            Submitted => vec![
                Op::AcceptResult { item },
                Op::AcceptResult { item },
                Op::AcceptResult { item },
                Op::AcceptResult { item },
                Op::Fail {
                    item,
                    by_worker: false,
                },
                Op::Cancel { item },
            ],
            Failed => vec![
                Op::Offer { item, who },
                Op::Offer { item, who },
                Op::AddDependency { item, dep },
            ],
            // Terminal: mostly move on to the next item; else a Command that is refused.
            Verified | Cancelled if hops < 2 && c % 3 != 0 => {
                return self.resolve_from((item + 1) % 3, choice / 3, hops + 1);
            }
            Verified | Cancelled => vec![
                Op::Cancel { item },
                Op::Offer { item, who },
                Op::Start { item, other: false },
            ],
        };
        options[c % options.len()]
    }

    /// Builds with `agent`'s current Session Epoch in the envelope.
    fn as_agent(
        &self,
        agent: &str,
        build: impl FnOnce(&Fixture) -> VerifiedCommand,
    ) -> VerifiedCommand {
        self.f.use_session_epoch(self.sessions[agent]);
        build(&self.f)
    }

    fn coordinator(&self, kind: &str, payload: String) -> VerifiedCommand {
        self.as_agent(COORDINATOR, |f| f.by_coordinator(kind, 1, &payload))
    }

    fn worker(
        &self,
        kind: &str,
        agent: &str,
        item: &str,
        epoch: u64,
        lease: &str,
        members: &str,
    ) -> VerifiedCommand {
        self.as_agent(agent, |f| {
            f.by_worker(kind, agent, item, epoch, lease, members)
        })
    }

    fn other(agent: &str) -> &'static str {
        if agent == WORKER { COORDINATOR } else { WORKER }
    }

    /// The signed `artifact.publish` of new content `hash` for `item` by `agent`.
    fn publish(&mut self, item: &str, hash: &str) -> VerifiedCommand {
        let (agent, epoch, lease) = self.claim(item, true);
        self.artifacts += 1;
        let manifest = json::parse(
            format!(
                r#"{{"artifactId":"urn:missionweaveprotocol:artifact:a{}","contentHash":"{hash}",
                "uri":"https://store.example.org/objects/report","sizeBytes":1234,
                "mediaType":"application/json","schemaUri":"https://example.org/report.json",
                "producer":{{"agentId":"{agent}","agentCardVersion":1,
                  "capabilities":[{{"id":"text.summarise","version":"1.2.0"}}]}},
                "missionId":"{MISSION}","groupId":"{GROUP}","workItemId":"{item}",
                "sourceArtifactHashes":[],"toolVersions":[],"modelVersions":[],
                "classification":"internal","createdAt":"{NOW_TEXT}"}}"#,
                self.artifacts
            )
            .as_bytes(),
        )
        .unwrap();
        let (_, key) = self.f.keys.iter().find(|(p, _)| p.id == agent).unwrap();
        let signed = SignedDocumentCodec::new()
            .sign(SignedDocumentKind::Artifact, &manifest, key)
            .unwrap()
            .document;
        let text = String::from_utf8(json::canonical_bytes(&signed).unwrap()).unwrap();
        self.as_agent(agent, |f| {
            f.command(
                "artifact.publish",
                agent,
                "",
                &format!(r#"{{"manifest":{text},"ownershipEpoch":{epoch},"leaseId":"{lease}"}}"#),
            )
        })
    }

    /// The Command of `op` in the current state (`None`: no Command, only time passes).
    fn command(&mut self, op: Op) -> Option<Step> {
        let op = match op {
            Op::Progress { item, choice } => self.resolve(item, choice),
            other => other,
        };
        let mut resolver = false;
        let command = match op {
            Op::Authorize { item, deps } => {
                let deps: Vec<&str> = (0..3)
                    .filter(|d| *d != item && deps & (1 << d) != 0)
                    .map(|d| ITEMS[d])
                    .collect();
                let payload = format!(
                    r#"{{"workItemId":"{}","conversationId":"{CONVERSATION}","contract":{}}}"#,
                    ITEMS[item],
                    contract(&deps)
                );
                self.coordinator("work.authorize", payload)
            }
            Op::Offer { item, who } => {
                self.rounds += 1;
                let agents: Vec<&str> = match who {
                    1 => vec![WORKER],
                    2 => vec![COORDINATOR],
                    _ => vec![WORKER, COORDINATOR],
                };
                let round = format!("r{}", self.rounds);
                self.as_agent(COORDINATOR, |f| f.offer(ITEMS[item], &agents, &round))
            }
            Op::Accept { item, agent } => {
                let agent = AGENTS[agent];
                self.as_agent(agent, |f| f.accept(agent, ITEMS[item]))
            }
            Op::Start { item, other } => {
                let (agent, epoch, lease) = self.claim(ITEMS[item], false);
                let agent = if other { Self::other(agent) } else { agent };
                self.worker("work.start", agent, ITEMS[item], epoch, &lease, "")
            }
            Op::Renew { item } => {
                let (agent, epoch, lease) = self.claim(ITEMS[item], true);
                self.worker(
                    "ext.missionweaveprotocol.core.work_execution_lease_renew",
                    agent,
                    ITEMS[item],
                    epoch,
                    &lease,
                    r#""leaseSeconds":600"#,
                )
            }
            Op::Checkpoint { item } => {
                let (agent, epoch, lease) = self.claim(ITEMS[item], true);
                self.worker("work.checkpoint", agent, ITEMS[item], epoch, &lease, Fixture::checkpoint_members())
            }
            Op::Block { item } => {
                let (agent, epoch, lease) = self.claim(ITEMS[item], true);
                let members = format!(r#""reason":"needs input",{}"#, Fixture::checkpoint_members());
                self.worker("work.block", agent, ITEMS[item], epoch, &lease, &members)
            }
            Op::Unblock { item } => self.coordinator(
                "work.unblock",
                format!(r#"{{"workItemId":"{}"}}"#, ITEMS[item]),
            ),
            Op::Publish { item, hash_b } => {
                resolver = true;
                self.publish(ITEMS[item], if hash_b { HASH_B } else { HASH_A })
            }
            Op::Submit { item, hash_b, other } => {
                let (agent, epoch, lease) = self.claim(ITEMS[item], true);
                let agent = if other { Self::other(agent) } else { agent };
                let hash = if hash_b { HASH_B } else { HASH_A };
                let members = format!(
                    r#""artifactHashes":["{hash}"],"evidence":[{}]"#,
                    evidence(ITEMS[item], "test-1", "deterministic_test")
                );
                self.worker("work.submit", agent, ITEMS[item], epoch, &lease, &members)
            }
            Op::AcceptResult { item } => self.as_agent(COORDINATOR, |f| f.accept_result(ITEMS[item])),
            Op::Fail { item, by_worker: true } => {
                let (agent, epoch, lease) = self.claim(ITEMS[item], true);
                self.worker(
                    "work.fail",
                    agent,
                    ITEMS[item],
                    epoch,
                    &lease,
                    r#""reason":"tool crashed","evidenceIds":["urn:missionweaveprotocol:evidence:f1"]"#,
                )
            }
            Op::Fail { item, by_worker: false } => self.coordinator(
                "work.fail",
                format!(
                    r#"{{"workItemId":"{}","reason":"gave up","evidenceIds":["urn:missionweaveprotocol:evidence:f2"]}}"#,
                    ITEMS[item]
                ),
            ),
            Op::Cancel { item } => self.coordinator(
                "work.cancel",
                format!(r#"{{"workItemId":"{}","reason":"not needed"}}"#, ITEMS[item]),
            ),
            Op::AddDependency { item, dep } => self.coordinator(
                "ext.missionweaveprotocol.core.work_dependency_add",
                format!(
                    r#"{{"workItemId":"{}","dependencyId":"{}"}}"#,
                    ITEMS[item], ITEMS[dep]
                ),
            ),
            Op::Usage { item, calls } => {
                let (agent, epoch, lease) = self.claim(ITEMS[item], true);
                self.worker(
                    "ext.missionweaveprotocol.core.resource_usage_record",
                    agent,
                    ITEMS[item],
                    epoch,
                    &lease,
                    &format!(r#""usageDelta":{{"toolCalls":{calls}}}"#),
                )
            }
            Op::MissionCancel => self.f.command("mission.cancel", OWNER, "", r#"{"reason":"r"}"#),
            Op::Advance { seconds } => {
                self.now = UnixMillis(self.now.0 + i64::from(seconds) * 1000);
                return None;
            }
            Op::Progress { .. } => unreachable!("resolved above"),
            Op::ReplaceSession { agent } => {
                // `session_open` always applies (Organization-scoped, §6.3).
                *self.sessions.get_mut(AGENTS[agent]).unwrap() += 1;
                self.f.session_open(AGENTS[agent])
            }
        };
        Some(Step {
            command,
            now: self.now,
            resolver,
        })
    }

    fn perform(engine: &TestEngine, f: &Fixture, step: &Step) -> Result<Performed, EngineError> {
        if step.resolver {
            engine.perform_with_resolver(&step.command, step.now, &f.registry)
        } else {
            engine.perform(&step.command, step.now)
        }
    }

    fn stored_bytes(&self) -> BTreeMap<&'static str, Vec<u8>> {
        ITEMS
            .iter()
            .filter_map(|id| {
                self.engine
                    .store()
                    .aggregate(&AggregateKey::new(AGGREGATE_KIND, *id))
                    .unwrap()
                    .map(|a| (*id, a.value.to_vec()))
            })
            .collect()
    }

    /// One step and every check; `Err` names the broken property.
    pub fn step(&mut self, op: Op) -> Result<(), TestCaseError> {
        let op = match op {
            Op::Progress { item, choice } => self.resolve(item, choice),
            other => other,
        };
        let Some(step) = self.command(op) else {
            return Ok(());
        };
        let before_seq = last_sequence(&self.engine);
        let before = self.stored_bytes();
        let outcome = Self::perform(&self.engine, &self.f, &step);
        let twin = Self::perform(&self.twin, &self.f, &step);
        // (c) determinism, step by step.
        match (&outcome, &twin) {
            (Ok(a), Ok(b)) => {
                prop_assert_eq!(&a.events, &b.events, "{:?}: the twin's Events differ", op)
            }
            (Err(a), Err(b)) => prop_assert_eq!(a.wire_code(), b.wire_code(), "{:?}", op),
            (a, b) => prop_assert!(
                false,
                "{:?}: engine {:?}, twin {:?}",
                op,
                a.is_ok(),
                b.is_ok()
            ),
        }
        if std::env::var_os("WORK_REBUILD_STATS").is_some() {
            let result = outcome.as_ref().map(|_| ()).map_err(|e| e.to_string());
            eprintln!("{op:?} -> {result:?}");
        }
        let after_seq = last_sequence(&self.engine);
        match &outcome {
            Err(_) => {
                prop_assert_eq!(
                    after_seq,
                    before_seq,
                    "{:?}: a refused Command appended",
                    op
                );
                prop_assert_eq!(
                    &self.stored_bytes(),
                    &before,
                    "{:?}: a refused Command changed a WorkItem",
                    op
                );
            }
            Ok(p) => {
                self.applied += 1;
                prop_assert!(!p.duplicate);
            }
        }
        // (a) the log is contiguous and verifies; fold the new Events into the replica.
        let page = self.engine.replay(GROUP, before_seq, 10_000).unwrap();
        for (i, record) in page.events.iter().enumerate() {
            prop_assert_eq!(
                record.sequence,
                before_seq + i as u64 + 1,
                "the Group log is contiguous"
            );
            let event = self.f.check_event(record);
            self.replica
                .apply(&event)
                .map_err(|e| TestCaseError::fail(format!("{op:?}: replay refused: {e}")))?;
            self.log.push(event);
        }
        prop_assert_eq!(self.log.len() as u64, after_seq);
        // (a) §4 invariants on the stored WorkItems.
        let after = self.stored_bytes();
        for id in ITEMS {
            let Some(item) = self.item(id) else { continue };
            if let Some(bytes) = self.terminal.get(id) {
                prop_assert_eq!(
                    Some(bytes),
                    after.get(id),
                    "{:?}: terminal {} changed",
                    op,
                    id
                );
            }
            if item.state.is_terminal() {
                self.terminal.insert(id, after[id].clone());
            }
            let epoch = item.owner.as_ref().map_or(0, |o| o.ownership_epoch);
            let seen = self.epochs.entry(id).or_insert(0);
            prop_assert!(
                epoch >= *seen,
                "{:?}: {} Ownership Epoch went {} → {}",
                op,
                id,
                seen,
                epoch
            );
            *seen = epoch;
            let accepted = item
                .offers
                .iter()
                .filter(|o| o.status == OfferStatus::Accepted)
                .count();
            prop_assert_eq!(
                accepted as u64,
                epoch,
                "one accepted offer per Ownership Epoch"
            );
            let live: Vec<_> = [&item.ownership_lease, &item.execution_lease]
                .into_iter()
                .flatten()
                .filter(|l| l.is_live(step.now))
                .collect();
            prop_assert!(live.len() <= 1, "{:?}: {} has two live leases", op, id);
            let recorded: Vec<_> = [&item.ownership_lease, &item.execution_lease]
                .into_iter()
                .flatten()
                .filter(|l| l.state() == LeaseState::Active)
                .collect();
            prop_assert!(
                recorded.len() <= 1,
                "{:?}: {} has two active leases",
                op,
                id
            );
            for lease in live {
                let owner = item.owner.as_ref().unwrap();
                prop_assert_eq!(
                    &lease.binding().holder_agent_id,
                    &owner.agent_id,
                    "a lease held by a non-owner"
                );
                prop_assert_eq!(lease.ownership_epoch(), Some(owner.ownership_epoch));
            }
            if item.state.is_terminal() || item.state == WorkItemState::Failed {
                prop_assert!(
                    recorded.is_empty(),
                    "{:?}: a closed item keeps an active lease",
                    op
                );
            }
        }
        // (b) the replica equals the stored aggregates.
        self.compare(&self.replica.items.clone(), op)
    }

    /// The projection of the stored state (WorkItems, their Artifact rows, their budget
    /// accounts) equals `rebuilt`.
    pub fn compare(
        &self,
        rebuilt: &BTreeMap<String, WorkItemProjection>,
        op: Op,
    ) -> Result<(), TestCaseError> {
        let mut expected = BTreeMap::new();
        for id in ITEMS {
            let Some(item) = self.item(id) else { continue };
            let mut view = WorkItemProjection::of(&item);
            let account = self
                .engine
                .store()
                .aggregate(&account_key(AccountKind::WorkItem, id))
                .unwrap()
                .and_then(|a| BudgetAccount::from_stored(&a.value));
            if let Some(account) = account.filter(|a| !a.usage.is_zero()) {
                // Canonical member order, as the Event carries it.
                let bytes = json::canonical_bytes(&resources_to_value(&account.usage)).unwrap();
                view.cumulative_usage = Some(json::parse(&bytes).unwrap());
            }
            if let Some(replayed) = rebuilt.get(id) {
                for (artifact, hash) in &replayed.published_artifacts {
                    let stored = self
                        .engine
                        .store()
                        .aggregate(&AggregateKey::new(ARTIFACT_KIND, artifact))
                        .unwrap();
                    let manifest = json::parse(&stored.unwrap().value).unwrap();
                    prop_assert_eq!(
                        manifest.get("contentHash").and_then(Value::as_str),
                        Some(hash.as_str())
                    );
                    prop_assert_eq!(manifest.get("workItemId").and_then(Value::as_str), Some(id));
                    view.published_artifacts
                        .insert(artifact.clone(), hash.clone());
                }
            }
            expected.insert(id.to_owned(), view);
        }
        let published = rebuilt
            .values()
            .map(|v| v.published_artifacts.len())
            .sum::<usize>();
        let stored_artifacts = (1..=self.artifacts)
            .filter(|n| {
                let id = format!("urn:missionweaveprotocol:artifact:a{n}");
                self.engine
                    .store()
                    .aggregate(&AggregateKey::new(ARTIFACT_KIND, &id))
                    .unwrap()
                    .is_some()
            })
            .count();
        prop_assert_eq!(
            published,
            stored_artifacts,
            "every stored Artifact is replayed"
        );
        prop_assert_eq!(
            rebuilt,
            &expected,
            "{:?}: the replayed WorkItems differ from the stored ones",
            op
        );
        Ok(())
    }
}

impl Run {
    /// Creates the Mission and gives its Coordinator a day-long lease (§7.2; the default 300 s
    /// would lapse as soon as time passes, and every Coordinator Command would be refused).
    pub fn setup(&mut self) -> Result<(), TestCaseError> {
        let create = self.f.create();
        self.step_raw(create)?;
        let renew = self.coordinator(
            "mission.renew_coordinator",
            r#"{"leaseSeconds":86400}"#.to_owned(),
        );
        self.step_raw(renew)
    }

    /// Performs `command` on both engines; it must apply.
    pub fn step_raw(&mut self, command: VerifiedCommand) -> Result<(), TestCaseError> {
        let a = self.engine.perform(&command, self.now).unwrap();
        let b = self.twin.perform(&command, self.now).unwrap();
        prop_assert_eq!(&a.events, &b.events);
        for record in &a.events {
            let event = self.f.check_event(record);
            self.replica.apply(&event).unwrap();
            self.log.push(event);
        }
        Ok(())
    }
}
