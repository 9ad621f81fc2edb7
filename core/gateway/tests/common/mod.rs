//! Shared fixture of the gateway tests: a Registry (a human MissionOwner, three Agents, the
//! Group Authority), a real `service::Core` built with `CoreConfig` over an `InMemoryStore`,
//! a `Gateway` over it (`CoreGateway`), and the two machines wired back to back — no sockets:
//! the "network" is moving byte vectors between `Connection` and `Session`.
//! Included as a module; it holds no tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol::registry::RegistryBuilder;
use missionweaveprotocol::{
    KeyRegistrySnapshot, Principal, PrincipalType, SignedDocumentCodec, SignedDocumentKind,
};
use missionweaveprotocol_agent::auth::{SessionAuthority, SessionConfig};
use missionweaveprotocol_engine::Performed;
use missionweaveprotocol_engine::config::CoreConfig;
use missionweaveprotocol_engine::service::Core;
use missionweaveprotocol_engine::store::InMemoryStore;
use missionweaveprotocol_gateway::client::{ClientConfig, Session, SessionEvent};
use missionweaveprotocol_gateway::frames::SubscribeGroup;
use missionweaveprotocol_gateway::server::{
    Connection, CoreGateway, DurableCursors, Gateway, Limits, Output,
};
use missionweaveprotocol_kernel::random::{RandomSource, RandomUnavailable};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

pub const ORG: &str = "urn:missionweaveprotocol:organization:acme";
pub const OWNER: &str = "urn:missionweaveprotocol:human:alice";
pub const COORDINATOR: &str = "urn:missionweaveprotocol:agent:planner";
pub const WORKER: &str = "urn:missionweaveprotocol:agent:reviewer";
pub const OUTSIDER: &str = "urn:missionweaveprotocol:agent:stranger";
pub const AUTHORITY: &str = "urn:missionweaveprotocol:service:group-authority";
pub const GROUP: &str = "urn:missionweaveprotocol:group:finance";
pub const OTHER_GROUP: &str = "urn:missionweaveprotocol:group:payroll";
pub const ABSENT_GROUP: &str = "urn:missionweaveprotocol:group:nowhere";
pub const MISSION: &str = "urn:missionweaveprotocol:mission:close-books";
pub const OTHER_MISSION: &str = "urn:missionweaveprotocol:mission:run-payroll";
pub const MAIN: &str = "urn:missionweaveprotocol:conversation:finance-main";
pub const OTHER_MAIN: &str = "urn:missionweaveprotocol:conversation:payroll-main";
/// 2026-07-15T09:30:00Z.
pub const NOW: UnixMillis = UnixMillis(1_784_107_800_000);
pub const NOW_TEXT: &str = "2026-07-15T09:30:00Z";

/// Deterministic bytes (tests only; deployments pass `missionweaveprotocol_host::OsRandom`).
#[derive(Debug)]
pub struct Counter(pub u64);

impl RandomSource for Counter {
    fn fill(&mut self, out: &mut [u8]) -> Result<(), RandomUnavailable> {
        self.0 += 1;
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = self.0.to_le_bytes()[i % 8] ^ (i as u8).wrapping_mul(31);
        }
        Ok(())
    }
}

/// A source that has nothing to give.
#[derive(Debug)]
pub struct NoRandom;

impl RandomSource for NoRandom {
    fn fill(&mut self, _out: &mut [u8]) -> Result<(), RandomUnavailable> {
        Err(RandomUnavailable)
    }
}

pub fn key_of(seed: u8) -> SigningKey {
    SigningKey::from_seed(format!("urn:missionweaveprotocol:key:{seed}"), &[seed; 32])
}

pub fn authority() -> Principal {
    Principal::new(PrincipalType::Service, AUTHORITY)
}

pub fn agent(id: &str) -> Principal {
    Principal::new(PrincipalType::Agent, id)
}

/// Everything a test needs: the Core, the gateway, keys.
pub struct World {
    pub store: Arc<InMemoryStore>,
    pub core: Arc<Core<Arc<InMemoryStore>, SigningKey>>,
    pub gateway: Arc<Gateway>,
    pub registry: Arc<KeyRegistrySnapshot>,
    keys: Vec<(Principal, SigningKey)>,
    next: AtomicU64,
    seeds: AtomicU64,
}

impl World {
    /// A world with the default limits, except connections per Agent (tests sharing one world
    /// across threads open many sessions of one Agent at once).
    pub fn new() -> Self {
        Self::with_limits(Limits {
            max_connections_per_agent: 64,
            ..Limits::default()
        })
    }

    pub fn with_limits(limits: Limits) -> Self {
        Self::build(limits, DurableCursors::Core, None)
    }

    /// A world whose gateway resumes from `cursors` (`DurableCursors::Host`: the host's store).
    pub fn with_cursors(limits: Limits, cursors: DurableCursors) -> Self {
        Self::build(limits, cursors, None)
    }

    /// A world whose Core admits `policy` as Organization policy services (`CoreConfig`'s
    /// `with_services`; the bootstrap service stays the Group Authority).
    pub fn with_policy_services(policy: &[&str]) -> Self {
        Self::build(
            Limits {
                max_connections_per_agent: 64,
                ..Limits::default()
            },
            DurableCursors::Core,
            Some(policy.iter().map(|p| (*p).to_owned()).collect()),
        )
    }

    fn build(limits: Limits, cursors: DurableCursors, policy: Option<Vec<String>>) -> Self {
        let principals = [
            (PrincipalType::Human, OWNER, 21u8),
            (PrincipalType::Agent, COORDINATOR, 23),
            (PrincipalType::Agent, WORKER, 24),
            (PrincipalType::Agent, OUTSIDER, 26),
        ];
        let mut builder = RegistryBuilder::new(ORG);
        let mut keys = Vec::new();
        for (kind, id, seed) in principals {
            let key = key_of(seed);
            let principal = Principal::new(kind, id);
            builder
                .add_key(
                    key.key_id(),
                    principal.clone(),
                    &key.public_key_bytes(),
                    "2026-01-01T00:00:00Z",
                )
                .unwrap();
            keys.push((principal, key));
        }
        // A second key of the worker (a Command signed with it is not the session's key).
        let spare = key_of(27);
        builder
            .add_key(
                spare.key_id(),
                agent(WORKER),
                &spare.public_key_bytes(),
                "2026-01-01T00:00:00Z",
            )
            .unwrap();
        keys.push((
            agent("urn:missionweaveprotocol:agent:reviewer#spare"),
            spare,
        ));
        let authority_key = key_of(30);
        builder
            .add_key(
                authority_key.key_id(),
                authority(),
                &authority_key.public_key_bytes(),
                "2026-01-01T00:00:00Z",
            )
            .unwrap();
        let (_, registry) = builder.build().unwrap();
        let registry = Arc::new(registry);
        let store = Arc::new(InMemoryStore::new());
        let mut config =
            CoreConfig::new(&authority()).with_event_id_prefix("urn:missionweaveprotocol:event:");
        if let Some(policy) = policy {
            config = config.with_services(vec![AUTHORITY.to_owned()], policy);
        }
        let core = Arc::new(
            config
                .build(
                    Arc::clone(&store),
                    Arc::clone(&registry),
                    authority_key,
                    Box::new(Counter(1 << 40)),
                )
                .unwrap(),
        );
        let sessions = SessionAuthority::new(
            b"gateway-test-secret-0123456789abcdef".to_vec(),
            SessionConfig::default(),
            Box::new(Counter(1 << 50)),
        )
        .unwrap();
        let gateway = Gateway::with_durable_cursors(
            Arc::new(CoreGateway::new(Arc::clone(&core))),
            sessions,
            limits,
            cursors,
        )
        .unwrap();
        Self {
            store,
            core,
            gateway,
            registry,
            keys,
            next: AtomicU64::new(1),
            seeds: AtomicU64::new(1),
        }
    }

    pub fn key(&self, id: &str) -> &SigningKey {
        &self.keys.iter().find(|(p, _)| p.id == id).unwrap().1
    }

    pub fn action(&self) -> String {
        format!(
            "urn:missionweaveprotocol:action:t{}",
            self.next.fetch_add(1, Ordering::Relaxed)
        )
    }

    /// A signed Command by `actor` (the envelope members its type needs, §15.1): humans carry
    /// a Membership Epoch (except `mission.create`), Agents a Session Epoch and Membership
    /// Epoch 1. Returns the wire bytes and the Action ID.
    pub fn command_in(
        &self,
        group: &str,
        kind: &str,
        actor: &str,
        session_epoch: u64,
        payload: &str,
    ) -> (Vec<u8>, String) {
        self.command_signed_by(group, kind, actor, actor, session_epoch, payload)
    }

    pub fn command_signed_by(
        &self,
        group: &str,
        kind: &str,
        actor: &str,
        signer: &str,
        session_epoch: u64,
        payload: &str,
    ) -> (Vec<u8>, String) {
        let action = self.action();
        let (kind_text, epochs) = if actor.contains(":agent:") {
            (
                "agent",
                format!(r#""sessionEpoch": {session_epoch}, "membershipEpoch": 1,"#),
            )
        } else if kind == "mission.create" {
            ("human", String::new())
        } else {
            ("human", r#""membershipEpoch": 1,"#.to_owned())
        };
        let unsigned = json::parse(
            format!(
                r#"{{"protocolVersion": "0.1", "actionId": "{action}",
                "actor": {{"type": "{kind_text}", "id": "{actor}"}}, {epochs}
                "groupId": "{group}", "kind": "{kind}",
                "correlationId": "urn:missionweaveprotocol:correlation:1",
                "issuedAt": "{NOW_TEXT}", "payload": {payload}}}"#
            )
            .as_bytes(),
        )
        .unwrap();
        let bytes = SignedDocumentCodec::new()
            .sign(SignedDocumentKind::Command, &unsigned, self.key(signer))
            .unwrap()
            .bytes;
        (bytes, action)
    }

    /// Performs a Command directly on the Core (a human's, or an Agent's in a test that does
    /// not go through a connection).
    pub fn perform(&self, bytes: &[u8]) -> Performed {
        self.core
            .perform_bytes(bytes, NOW)
            .unwrap_or_else(|e| panic!("refused: {} {}", e.wire_code, e.message))
    }

    pub fn create_payload(mission: &str, main: &str) -> String {
        format!(
            r#"{{"missionId": "{mission}", "objective": "Close the July books",
            "definitionOfDone": [{{"criterionId": "ledger-balanced", "description": "The ledger balances",
              "evidenceRequired": ["deterministic_test", "human_review"]}}],
            "budget": {{"modelTokenLimit": 100000, "toolCallLimit": 1000, "currency": "EUR", "financialLimit": 50}},
            "deadline": "2026-08-01T00:00:00Z",
            "approvalPolicy": {{"finalHumanApproval": true, "highRiskExecutionApproval": true}},
            "coordinator": {{"agentId": "{COORDINATOR}", "agentCardVersion": 1, "leaseId": "urn:missionweaveprotocol:lease:{mission}"}},
            "mainConversationId": "{main}"}}"#
        )
    }

    /// `GROUP` (and `OTHER_GROUP`) with the MissionOwner and `COORDINATOR` as members.
    pub fn missions(&self) {
        let (create, _) = self.command_in(
            GROUP,
            "mission.create",
            OWNER,
            0,
            &Self::create_payload(MISSION, MAIN),
        );
        self.perform(&create);
        let (create, _) = self.command_in(
            OTHER_GROUP,
            "mission.create",
            OWNER,
            0,
            &Self::create_payload(OTHER_MISSION, OTHER_MAIN),
        );
        self.perform(&create);
    }

    /// `membership.change` by the MissionOwner: `member` becomes a worker of `group`.
    pub fn add_worker(&self, group: &str, member: &str, visibility_start: u64) {
        let (bytes, _) = self.command_in(
            group,
            "membership.change",
            OWNER,
            0,
            &format!(
                r#"{{"member": {{"type": "agent", "id": "{member}"}}, "role": "worker",
                "scopes": ["work:execute"], "visibilityStartSequence": {visibility_start}}}"#
            ),
        );
        self.perform(&bytes);
    }

    /// `membership.end` by the MissionOwner.
    pub fn end_membership(&self, group: &str, member: &str) {
        let (bytes, _) = self.command_in(
            group,
            "membership.end",
            OWNER,
            0,
            &format!(r#"{{"member": {{"type": "agent", "id": "{member}"}}}}"#),
        );
        self.perform(&bytes);
    }

    /// A `message.post` payload in `conversation`, mentioning `mentions`.
    pub fn post_payload(id: &str, conversation: &str, mentions: &[&str]) -> String {
        let mentions = if mentions.is_empty() {
            String::new()
        } else {
            let list: Vec<String> = mentions
                .iter()
                .map(|m| format!(r#"{{"type": "agent", "id": "{m}"}}"#))
                .collect();
            format!(r#", "mentions": [{}]"#, list.join(", "))
        };
        format!(
            r#"{{"messageId": "urn:missionweaveprotocol:message:{id}", "conversationId": "{conversation}",
            "content": [{{"type": "text", "text": "note {id}"}}]{mentions}}}"#
        )
    }

    /// The MissionOwner posts message `id` in `group`'s main Conversation.
    pub fn owner_posts(&self, group: &str, id: &str, mentions: &[&str]) -> Performed {
        let main = if group == GROUP { MAIN } else { OTHER_MAIN };
        let (bytes, _) = self.command_in(
            group,
            "message.post",
            OWNER,
            0,
            &Self::post_payload(id, main, mentions),
        );
        self.perform(&bytes)
    }

    /// The stored bytes of `group`'s Event at `sequence`.
    pub fn store_event(&self, group: &str, sequence: u64) -> Vec<u8> {
        use missionweaveprotocol_engine::store::Store;
        self.store.replay(group, sequence - 1, 1).unwrap().events[0]
            .body
            .to_vec()
    }

    pub fn head(&self, group: &str) -> u64 {
        use missionweaveprotocol_engine::store::Store;
        self.store.head(group).unwrap().last_sequence()
    }

    fn random(&self) -> Box<dyn RandomSource> {
        Box::new(Counter(self.seeds.fetch_add(1, Ordering::Relaxed) << 32))
    }

    pub fn connection(&self) -> Connection {
        self.gateway.connect(NOW, self.random()).unwrap()
    }

    pub fn client_config(&self, agent_id: &str) -> ClientConfig {
        ClientConfig::new(agent_id, Arc::clone(&self.registry), authority())
    }

    pub fn client(&self, agent_id: &str) -> Session {
        self.client_with(self.client_config(agent_id))
    }

    pub fn client_with(&self, config: ClientConfig) -> Session {
        let key = self.key(&config.agent_id).clone();
        Session::new(config, Arc::new(key), self.random()).unwrap()
    }

    /// A connection and a client session of `agent_id`, authenticated.
    pub fn pair(&self, agent_id: &str) -> Pair {
        let mut pair = Pair {
            server: self.connection(),
            client: self.client(agent_id),
            now: NOW,
            server_closed: None,
        };
        pair.client.start(NOW).unwrap();
        pair.pump();
        let events = pair.events();
        assert!(
            matches!(events.first(), Some(SessionEvent::Authenticated { .. })),
            "{events:?}"
        );
        pair
    }
}

/// A server connection and a client session, back to back.
pub struct Pair {
    pub server: Connection,
    pub client: Session,
    pub now: UnixMillis,
    pub server_closed: Option<(u16, &'static str)>,
}

impl Pair {
    /// Moves frames both ways until both sides are quiet.
    pub fn pump(&mut self) {
        loop {
            let mut moved = false;
            while let Some(bytes) = self.client.poll_output() {
                self.server.on_text(&bytes, self.now);
                moved = true;
            }
            while let Some(output) = self.server.poll_output(self.now) {
                match output {
                    Output::Frame(bytes) => self.client.on_text(&bytes, self.now).unwrap(),
                    Output::Close(close) => self.server_closed = Some((close.code, close.reason)),
                }
                moved = true;
            }
            if !moved {
                return;
            }
        }
    }

    /// Every event the client reported so far.
    pub fn events(&mut self) -> Vec<SessionEvent> {
        std::iter::from_fn(|| self.client.poll_event()).collect()
    }

    /// The Events delivered (in order and attention), as (group, sequence, in_order, kind).
    pub fn delivered(&mut self) -> Vec<(String, u64, bool, String)> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                SessionEvent::Event(event) => Some((
                    event.group_id.clone().unwrap_or_default(),
                    event.sequence,
                    event.in_order,
                    event
                        .document
                        .get("kind")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                )),
                _ => None,
            })
            .collect()
    }

    pub fn subscribe(&mut self, groups: &[(&str, u64)]) -> String {
        let groups: Vec<SubscribeGroup> = groups
            .iter()
            .map(|(g, after)| SubscribeGroup {
                group_id: (*g).to_owned(),
                after_sequence: *after,
                attention: None,
            })
            .collect();
        let id = self.client.subscribe(&groups, self.now).unwrap();
        self.pump();
        id
    }

    /// The host's wake-up after a commit elsewhere: `group`'s head moved.
    pub fn wake(&mut self, world: &World, group: &str) {
        self.server
            .on_group_moved(group, Some(world.head(group)), self.now);
        self.pump();
    }

    /// Subscribes with attention filters.
    pub fn subscribe_with(&mut self, groups: Vec<SubscribeGroup>) -> String {
        let id = self.client.subscribe(&groups, self.now).unwrap();
        self.pump();
        id
    }

    /// A signed Command of this session's Agent in `group`.
    pub fn command(
        &self,
        world: &World,
        group: &str,
        kind: &str,
        payload: &str,
    ) -> (Vec<u8>, String) {
        let agent = self.server.agent_id().unwrap().to_owned();
        world.command_in(
            group,
            kind,
            &agent,
            self.client.session_epoch().unwrap(),
            payload,
        )
    }
}

/// Every frame the server queued, parsed (closes are returned apart).
pub fn drain(
    connection: &mut Connection,
    now: UnixMillis,
) -> (Vec<Value>, Option<(u16, &'static str)>) {
    let mut frames = Vec::new();
    let mut close = None;
    while let Some(output) = connection.poll_output(now) {
        match output {
            Output::Frame(bytes) => frames.push(
                missionweaveprotocol::wire::parse_frame(&bytes)
                    .unwrap()
                    .value,
            ),
            Output::Close(c) => close = Some((c.code, c.reason)),
        }
    }
    (frames, close)
}

/// Raw frame bytes of the server's outputs.
pub fn drain_bytes(connection: &mut Connection, now: UnixMillis) -> Vec<Vec<u8>> {
    let mut frames = Vec::new();
    while let Some(output) = connection.poll_output(now) {
        if let Output::Frame(bytes) = output {
            frames.push(bytes);
        }
    }
    frames
}

pub fn text<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| {
            panic!(
                "no {pointer} in {}",
                String::from_utf8_lossy(&json::canonical_bytes(value).unwrap())
            )
        })
}

/// The `error.code` of an ERROR frame.
pub fn code(frame: &Value) -> &str {
    text(frame, "/error/code")
}
