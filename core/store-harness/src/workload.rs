//! Deterministic workloads: the setup Commands, a stream where Command `i` is a pure function
//! of `(seed, i)`, race rounds (one WorkItem offered to several Agents, many acceptances), and
//! Commands that many submitters send to one shared Group. Everything is returned as signed
//! WIRE BYTES ([`WireCommand`]), performed through [`HarnessCore::perform_bytes`] at
//! [`NOW`](crate::command::NOW).
//!
//! IDs carry `h<seed>-`, so workloads with different seeds share one store without colliding.
//! The Sessions are the exception: an Agent has one Session per Organization (§6.3), so the
//! session-opening Commands are the same for every seed (re-sending them is answered from the
//! receipt, §15.1), and every Agent Command carries Session Epoch 1.

use std::sync::Arc;

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol_engine::events::RandomEventIds;
use missionweaveprotocol_engine::organization::SESSION_OPEN;
use missionweaveprotocol_engine::service::{Core, default_authorizer};
use missionweaveprotocol_engine::store::{ReceiptKey, Store};
use missionweaveprotocol_host::OsRandom;

use crate::command::{CommandSigner, WireCommand};
use crate::error::HarnessError;
use crate::keys::{self, COORDINATOR, IDENTITY, Keys, OWNER, POLICY, WORKERS};
use crate::payloads;

/// The core the harness drives: any store, Events signed by the harness Group Authority.
pub type HarnessCore<S> = Core<S, SigningKey>;

/// How many Groups the stream's membership and renewal Commands spread over.
pub const STREAM_GROUPS: u64 = 4;

/// The prefix of every harness URN.
const URN: &str = "urn:missionweaveprotocol";

/// What a stream Command does, and so where its effect is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEffect {
    /// `mission.create`: creates this Mission (and its Group, the Command's Group).
    CreateMission {
        /// The new Mission.
        mission: String,
    },
    /// `membership.change`: creates this Agent's Membership in the Command's Group.
    AddMember {
        /// The new member (an Agent ID).
        member: String,
    },
    /// `mission.renew_coordinator`: a new revision of the stream Group's Mission.
    RenewCoordinator {
        /// The Mission renewed.
        mission: String,
    },
}

/// Command `index` of the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamCommand {
    /// Its index in the stream.
    pub index: u64,
    /// Its Group.
    pub group: String,
    /// What it does.
    pub effect: StreamEffect,
    /// The signed Command.
    pub command: WireCommand,
}

/// One race round: a Mission in its own Group whose WorkItem is offered to every Agent of
/// [`WORKERS`]; then many `work.accept_offer` race for it ([`Workload::race_accept`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RaceRound {
    /// The round.
    pub round: u64,
    /// The round's Group.
    pub group: String,
    /// The round's Mission.
    pub mission: String,
    /// The WorkItem offered.
    pub item: String,
    /// `mission.create`, `work.authorize`, `work.offer`, in this order.
    pub setup: Vec<WireCommand>,
}

/// A deterministic workload of seed `seed` over the harness keys.
#[derive(Debug, Clone)]
pub struct Workload {
    keys: Keys,
    seed: u64,
}

impl Workload {
    /// The workload of `seed`.
    pub fn new(seed: u64) -> Result<Self, HarnessError> {
        Ok(Self {
            keys: Keys::new()?,
            seed,
        })
    }

    /// Its seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The harness keys and Registry.
    pub fn keys(&self) -> &Keys {
        &self.keys
    }

    /// A signer over the harness keys.
    pub fn signer(&self) -> CommandSigner<'_> {
        CommandSigner::new(&self.keys)
    }

    /// A core over `store`: the harness Registry, the deployment authorizer
    /// (`OrganizationAuthorizer`: [`IDENTITY`] opens Sessions, [`POLICY`] is Organization
    /// policy), Events signed by the harness Group Authority with random Event IDs (unique
    /// across processes and restarts, §16).
    pub fn core<S: Store>(&self, store: S) -> Result<HarnessCore<S>, HarnessError> {
        Ok(Core::new(
            store,
            Arc::clone(self.keys.registry()),
            self.keys.issuer()?,
            default_authorizer(vec![IDENTITY.to_owned()], vec![POLICY.to_owned()]),
            Box::new(RandomEventIds::new(OsRandom)),
        ))
    }

    /// A harness ID: `urn:missionweaveprotocol:<kind>:h<seed>-<name>`.
    pub fn id(&self, kind: &str, name: &str) -> String {
        format!("{URN}:{kind}:h{}-{name}", self.seed)
    }

    /// The Commands opening Session Epoch 1 of every harness Agent (§6.3), by [`IDENTITY`].
    /// The same for every seed.
    pub fn sessions(&self) -> Result<Vec<WireCommand>, HarnessError> {
        keys::agents()
            .map(|agent| {
                let name = agent.rsplit(':').next().unwrap_or(agent);
                self.signer().organization_command(
                    SESSION_OPEN,
                    IDENTITY,
                    &format!("{URN}:action:harness-session-{name}"),
                    &payloads::session_open(agent),
                )
            })
            .collect()
    }

    /// `mission.create` of Mission `name` in its own Group `name` (both with this seed).
    pub fn create_mission(&self, name: &str) -> Result<WireCommand, HarnessError> {
        let group = self.id("group", name);
        self.signer().group_command(
            &group,
            "mission.create",
            OWNER,
            &self.id("action", &format!("create-{name}")),
            "",
            &payloads::create_mission(&self.id("mission", name)),
        )
    }

    /// `membership.change` by the MissionOwner adding Agent `member` as a Worker to `group`.
    pub fn add_member(
        &self,
        group: &str,
        member: &str,
        action: &str,
    ) -> Result<WireCommand, HarnessError> {
        self.signer().group_command(
            group,
            "membership.change",
            OWNER,
            &self.id("action", action),
            "",
            &payloads::add_worker(member),
        )
    }

    /// `mission.renew_coordinator` of `group`'s Mission by its Coordinator (Coordinator
    /// Epoch 1).
    pub fn renew(&self, group: &str, action: &str) -> Result<WireCommand, HarnessError> {
        self.signer().group_command(
            group,
            "mission.renew_coordinator",
            COORDINATOR,
            &self.id("action", action),
            r#""coordinatorEpoch": 1"#,
            payloads::RENEW,
        )
    }

    /// The stream Group `n` (`n < STREAM_GROUPS`) and its Mission.
    pub fn stream_group(&self, n: u64) -> (String, String) {
        let name = format!("stream-{n}");
        (self.id("group", &name), self.id("mission", &name))
    }

    /// The Group every submitter of [`shared_group_command`](Self::shared_group_command)
    /// writes to, and its Mission.
    pub fn shared_group(&self) -> (String, String) {
        (self.id("group", "shared"), self.id("mission", "shared"))
    }

    /// Everything before the stream and the shared-Group Commands, in order: the Sessions,
    /// the Missions of the stream Groups and of the shared Group, and every Worker Agent's
    /// Membership in each of them. Idempotent: performing it again is answered from the
    /// receipts (§15.1).
    pub fn setup(&self) -> Result<Vec<WireCommand>, HarnessError> {
        let mut commands = self.sessions()?;
        let groups = (0..STREAM_GROUPS)
            .map(|n| format!("stream-{n}"))
            .chain(std::iter::once("shared".to_owned()));
        for name in groups {
            commands.push(self.create_mission(&name)?);
            let group = self.id("group", &name);
            for (w, worker) in WORKERS.iter().enumerate() {
                commands.push(self.add_member(&group, worker, &format!("member-{name}-{w}"))?);
            }
        }
        Ok(commands)
    }

    /// Stream Command `index`: a pure function of `(seed, index)`. Half are `mission.create`
    /// of a new Mission in its own Group; a quarter add a new Worker Membership to one of the
    /// [`STREAM_GROUPS`] stream Groups; a quarter renew the Coordinator lease of one (each a new
    /// revision of that Mission). Needs [`setup`](Self::setup) first.
    pub fn stream(&self, index: u64) -> Result<StreamCommand, HarnessError> {
        let draw = splitmix64(self.seed ^ splitmix64(index));
        let (group, mission) = self.stream_group((draw >> 8) % STREAM_GROUPS);
        let action = format!("stream-{index}");
        let (group, effect, command) = match draw % 4 {
            0 | 1 => {
                let name = format!("s{index}");
                let command = self.create_mission(&name)?;
                let mission = self.id("mission", &name);
                let group = self.id("group", &name);
                (group, StreamEffect::CreateMission { mission }, command)
            }
            2 => {
                let member = self.id("agent", &format!("member-{index}"));
                let command = self.add_member(&group, &member, &action)?;
                (group, StreamEffect::AddMember { member }, command)
            }
            _ => {
                let command = self.renew(&group, &action)?;
                (group, StreamEffect::RenewCoordinator { mission }, command)
            }
        };
        Ok(StreamCommand {
            index,
            group,
            effect,
            command,
        })
    }

    /// Race round `round`: its Mission (own Group, a budget covering the contract), the
    /// WorkItem authorized and offered to every Agent of [`WORKERS`].
    pub fn race_round(&self, round: u64) -> Result<RaceRound, HarnessError> {
        let name = format!("race-{round}");
        let group = self.id("group", &name);
        let item = self.id("work", &name);
        let coordinator = |kind: &str, step: &str, payload: &str| {
            self.signer().group_command(
                &group,
                kind,
                COORDINATOR,
                &self.id("action", &format!("{name}-{step}")),
                r#""coordinatorEpoch": 1"#,
                payload,
            )
        };
        let setup = vec![
            self.create_mission(&name)?,
            coordinator("work.authorize", "authorize", &payloads::authorize(&item))?,
            coordinator(
                "work.offer",
                "offer",
                &payloads::offer(&item, &format!("h{}-{name}", self.seed)),
            )?,
        ];
        Ok(RaceRound {
            round,
            group: group.clone(),
            mission: self.id("mission", &name),
            item,
            setup,
        })
    }

    /// Submitter `submitter`'s `work.accept_offer` of round `round`: by Agent
    /// `WORKERS[submitter % 4]` (every one a candidate), with its own Action ID. Exactly one
    /// acceptance wins (§10.3); a loser whose Agent's offer lost gets `WORK_ALREADY_OWNED`, a
    /// loser sharing the winner's Agent `INVALID_STATE_TRANSITION` (the item is `queued`).
    pub fn race_accept(&self, round: u64, submitter: u64) -> Result<WireCommand, HarnessError> {
        let name = format!("race-{round}");
        let key = self.race_accept_key(round, submitter);
        self.signer().group_command(
            &self.id("group", &name),
            "work.accept_offer",
            &key.actor_id,
            &key.action_id,
            "",
            &payloads::accept_offer(&self.id("work", &name)),
        )
    }

    /// The receipt key of [`race_accept`](Self::race_accept)`(round, submitter)`, without
    /// signing it (checks look up every submitter's receipt).
    pub fn race_accept_key(&self, round: u64, submitter: u64) -> ReceiptKey {
        let agent = WORKERS[(submitter % WORKERS.len() as u64) as usize];
        ReceiptKey::new(
            "agent",
            agent,
            self.id("action", &format!("race-{round}-accept-{submitter}")),
        )
    }

    /// Command `k` of thread `thread` of process `process` on the shared Group: one in four
    /// renews the Coordinator lease (a new Mission revision: contends with every other
    /// Command of the Group, which all check the Mission), the others add a new Worker
    /// Membership. Distinct Action IDs for distinct `(process, thread, k)`.
    pub fn shared_group_command(
        &self,
        process: u64,
        thread: u64,
        k: u64,
    ) -> Result<WireCommand, HarnessError> {
        let (group, _) = self.shared_group();
        let name = format!("shared-p{process}-t{thread}-k{k}");
        if (process + thread + k).is_multiple_of(4) {
            self.renew(&group, &name)
        } else {
            self.add_member(&group, &self.id("agent", &name), &name)
        }
    }
}

/// SplitMix64: the stream's kind and Group draw (fixed, documented, no dependency).
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
