//! Shared fixture of the engine and mission tests: a Registry with two humans, two Agents, a
//! control-plane service and the Group Authority key; signed Commands passed through
//! `CommandIngress`; an engine over an `InMemoryStore`; and `checked`, which runs every Event
//! the engine returns through the six-stage verifier (Event profile) and `event.schema.json`.
//! Included with `#[path]`; as its own test target it holds no tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use missionweaveprotocol::crypto::{Signer, SigningKey};
use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol::registry::RegistryBuilder;
use missionweaveprotocol::schema::SchemaCatalog;
use missionweaveprotocol::{
    DescribeError, KeyRegistrySnapshot, Principal, PrincipalType, SignedDocumentCodec,
    SignedDocumentKind, WireCode,
};
use missionweaveprotocol_engine::engine::{Engine, Performed};
use missionweaveprotocol_engine::error::EngineError;
use missionweaveprotocol_engine::events::{EventIdSource, EventIssuer, SequentialEventIds};
use missionweaveprotocol_engine::ingress::{
    AllowAllAuthorizerForTests, CommandIngress, VerifiedCommand,
};
use missionweaveprotocol_engine::store::{EventRecord, InMemoryStore, Store};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

pub const ORG: &str = "urn:missionweaveprotocol:organization:acme";
pub const OWNER: &str = "urn:missionweaveprotocol:human:alice";
pub const OTHER_HUMAN: &str = "urn:missionweaveprotocol:human:bob";
pub const COORDINATOR: &str = "urn:missionweaveprotocol:agent:planner";
pub const OTHER_AGENT: &str = "urn:missionweaveprotocol:agent:reviewer";
pub const SERVICE: &str = "urn:missionweaveprotocol:service:control-plane";
pub const AUTHORITY: &str = "urn:missionweaveprotocol:service:group-authority";
pub const GROUP: &str = "urn:missionweaveprotocol:group:finance";
pub const MISSION: &str = "urn:missionweaveprotocol:mission:close-books";
pub const LEASE: &str = "urn:missionweaveprotocol:lease:coordinator-1";
/// 2026-07-15T09:30:00Z.
pub const NOW: UnixMillis = UnixMillis(1_784_107_800_000);
pub const NOW_TEXT: &str = "2026-07-15T09:30:00Z";
pub const HASH_A: &str = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
pub const HASH_B: &str = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

pub type TestEngine = Engine<InMemoryStore, SigningKey, SequentialEventIds>;

#[derive(Debug)]
pub struct Fixture {
    pub keys: Vec<(Principal, SigningKey)>,
    pub authority_key: SigningKey,
    pub registry: Arc<KeyRegistrySnapshot>,
    next_action: AtomicU64,
    /// The Session Epoch Agent Commands carry (1 unless a test replaced the sessions).
    session_epoch: AtomicU64,
}

pub fn fixture() -> Fixture {
    let principals = [
        (PrincipalType::Human, OWNER, 21u8),
        (PrincipalType::Human, OTHER_HUMAN, 22),
        (PrincipalType::Agent, COORDINATOR, 23),
        (PrincipalType::Agent, OTHER_AGENT, 24),
        (PrincipalType::Service, SERVICE, 25),
    ];
    let mut builder = RegistryBuilder::new(ORG);
    let mut keys = Vec::new();
    for (kind, id, seed) in principals {
        let key =
            SigningKey::from_seed(format!("urn:missionweaveprotocol:key:{seed}"), &[seed; 32]);
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
    let authority_key = SigningKey::from_seed("urn:missionweaveprotocol:key:authority", &[30; 32]);
    builder
        .add_key(
            authority_key.key_id(),
            authority(),
            &authority_key.public_key_bytes(),
            "2026-01-01T00:00:00Z",
        )
        .unwrap();
    let (_, registry) = builder.build().unwrap();
    Fixture {
        keys,
        authority_key,
        registry: Arc::new(registry),
        next_action: AtomicU64::new(1),
        session_epoch: AtomicU64::new(1),
    }
}

pub fn authority() -> Principal {
    Principal::new(PrincipalType::Service, AUTHORITY)
}

impl Fixture {
    pub fn engine(&self) -> TestEngine {
        self.engine_over(InMemoryStore::new())
    }

    /// An engine over `store` in which both Agents have opened Session Epoch 1 (§6.3: every
    /// Agent Command is fenced by its Session Epoch; the Commands of [`unsigned`] carry 1).
    pub fn engine_over(&self, store: InMemoryStore) -> TestEngine {
        let engine = Engine::new(
            store,
            EventIssuer::new(authority(), self.authority_key.clone()),
            SequentialEventIds::new("urn:missionweaveprotocol:event:test-"),
        );
        self.open_sessions(&engine);
        engine
    }

    /// An engine over a fresh store in which no session was opened.
    pub fn engine_without_sessions(&self) -> TestEngine {
        Engine::new(
            InMemoryStore::new(),
            EventIssuer::new(authority(), self.authority_key.clone()),
            SequentialEventIds::new("urn:missionweaveprotocol:event:test-"),
        )
    }

    /// Opens a session for both Agents through `session_open` (signed by `SERVICE`); every
    /// Event is verified.
    pub fn open_sessions<S: Store, G: Signer, I: EventIdSource>(&self, engine: &Engine<S, G, I>) {
        for agent in [COORDINATOR, OTHER_AGENT] {
            let performed = engine.perform(&self.session_open(agent), NOW).unwrap();
            self.checked(&performed);
        }
    }

    /// The unsigned Organization-scoped service Command `kind` by `SERVICE`: no `groupId`, no
    /// epochs (§15.1, digest A.1).
    pub fn unsigned_service(&self, kind: &str, action: &str, payload: &str) -> Value {
        json::parse(
            format!(
                r#"{{"protocolVersion": "0.1", "actionId": "{action}",
                "actor": {{"type": "service", "id": "{SERVICE}"}}, "kind": "{kind}",
                "correlationId": "urn:missionweaveprotocol:correlation:1",
                "issuedAt": "{NOW_TEXT}", "payload": {payload}}}"#
            )
            .as_bytes(),
        )
        .unwrap()
    }

    /// `ext.missionweaveprotocol.identity.session_open` for `agent`.
    pub fn session_open(&self, agent: &str) -> VerifiedCommand {
        self.verified(
            SERVICE,
            &self.unsigned_service(
                "ext.missionweaveprotocol.identity.session_open",
                &self.action(),
                &format!(r#"{{"agentId": "{agent}"}}"#),
            ),
        )
    }

    fn key(&self, id: &str) -> (&Principal, &SigningKey) {
        let (p, k) = self.keys.iter().find(|(p, _)| p.id == id).unwrap();
        (p, k)
    }

    /// From now on, Agent Commands carry Session Epoch `epoch`.
    pub fn use_session_epoch(&self, epoch: u64) {
        self.session_epoch.store(epoch, Ordering::Relaxed);
    }

    /// A fresh Action ID.
    pub fn action(&self) -> String {
        format!(
            "urn:missionweaveprotocol:action:{}",
            self.next_action.fetch_add(1, Ordering::Relaxed)
        )
    }

    /// The unsigned Command `kind` by `actor` in `GROUP` with `payload` (JSON object text) and
    /// the envelope members each actor type needs (§15.1): Agents carry Session and Membership
    /// Epochs, humans a Membership Epoch except for the creation kinds.
    pub fn unsigned(
        &self,
        kind: &str,
        actor: &str,
        action: &str,
        extra: &str,
        payload: &str,
    ) -> Value {
        let (principal, _) = self.key(actor);
        let creation = kind == "mission.create" || kind == "mission.create_follow_up";
        let epochs = match principal.kind {
            PrincipalType::Agent => format!(
                r#""sessionEpoch": {}, "membershipEpoch": 1,"#,
                self.session_epoch.load(Ordering::Relaxed)
            ),
            PrincipalType::Human if !creation => r#""membershipEpoch": 1,"#.to_owned(),
            _ => String::new(),
        };
        let extra = if extra.is_empty() {
            String::new()
        } else {
            format!("{extra},")
        };
        json::parse(
            format!(
                r#"{{"protocolVersion": "0.1", "actionId": "{action}",
                "actor": {{"type": "{}", "id": "{actor}"}}, {epochs} {extra}
                "groupId": "{GROUP}", "kind": "{kind}",
                "correlationId": "urn:missionweaveprotocol:correlation:1",
                "issuedAt": "{NOW_TEXT}", "payload": {payload}}}"#,
                principal.kind.as_str()
            )
            .as_bytes(),
        )
        .unwrap()
    }

    /// Signs `unsigned` with `actor`'s key and passes it through ingress.
    pub fn verified(&self, actor: &str, unsigned: &Value) -> VerifiedCommand {
        let (_, key) = self.key(actor);
        let bytes = SignedDocumentCodec::new()
            .sign(SignedDocumentKind::Command, unsigned, key)
            .unwrap()
            .bytes;
        CommandIngress::new(AllowAllAuthorizerForTests)
            .verify(&bytes, &self.registry, NOW)
            .unwrap()
    }

    /// A verified Command with a fresh Action ID; `extra` are further envelope members.
    pub fn command(&self, kind: &str, actor: &str, extra: &str, payload: &str) -> VerifiedCommand {
        self.verified(
            actor,
            &self.unsigned(kind, actor, &self.action(), extra, payload),
        )
    }

    /// Runs every Event of `performed` through the six-stage verifier (Event profile) and
    /// `event.schema.json`; returns the parsed Events.
    pub fn checked(&self, performed: &Performed) -> Vec<Value> {
        assert!(
            !performed.events.is_empty(),
            "a performed Command returns its Event(s)"
        );
        performed
            .events
            .iter()
            .map(|e| self.check_event(e))
            .collect()
    }

    /// Verifies one Event (six-stage verifier, Event profile, and `event.schema.json`). A Group
    /// Event carries its record's sequence; an Organization-scoped one none (its record's
    /// sequence is 0, §15.2).
    pub fn check_event(&self, record: &EventRecord) -> Value {
        let verified = SignedDocumentCodec::new()
            .verify(SignedDocumentKind::Event, &record.body, &self.registry)
            .unwrap_or_else(|e| panic!("Event {} fails verification: {e:?}", record.event_id));
        SchemaCatalog::embedded()
            .validate("event", verified.document())
            .unwrap_or_else(|e| panic!("Event {} fails event.schema.json: {e}", record.event_id));
        let document = verified.into_document();
        assert_eq!(
            document.get("eventId").and_then(Value::as_str),
            Some(&*record.event_id)
        );
        let sequence = document
            .get("sequence")
            .and_then(Value::as_number)
            .and_then(|n| n.as_u64());
        if record.sequence == 0 {
            assert_eq!(
                sequence, None,
                "an Organization-scoped Event has no sequence"
            );
            assert!(document.get("groupId").is_none());
            assert!(document.get("aggregateRevision").is_none());
        } else {
            assert_eq!(sequence, Some(record.sequence));
        }
        assert_eq!(
            document.get("acceptedBy").and_then(Principal::from_value),
            Some(authority())
        );
        document
    }

    /// Performs and checks every Event; panics on refusal.
    pub fn ok(
        &self,
        engine: &TestEngine,
        command: &VerifiedCommand,
        now: UnixMillis,
    ) -> Vec<Value> {
        let performed = engine
            .perform(command, now)
            .unwrap_or_else(|e| panic!("{} refused: {e} ({})", command.kind(), e.wire_code()));
        assert!(!performed.duplicate);
        self.checked(&performed)
    }

    /// Performs, expects a refusal with `code`, and checks that nothing was appended.
    pub fn refused(
        &self,
        engine: &TestEngine,
        command: &VerifiedCommand,
        now: UnixMillis,
        code: WireCode,
    ) -> EngineError {
        let before = last_sequence(engine);
        let error = match engine.perform(command, now) {
            Ok(p) => panic!("{} was applied: {:?}", command.kind(), p.events.len()),
            Err(e) => e,
        };
        assert_eq!(
            error.wire_code(),
            code,
            "{} refused with {error}",
            command.kind()
        );
        assert_eq!(
            last_sequence(engine),
            before,
            "a refused Command appends nothing"
        );
        error
    }

    // ---- Mission Commands with valid payloads -------------------------------------------

    pub fn create_payload(&self, mission: &str, extra: &str) -> String {
        format!(
            r#"{{"missionId": "{mission}", "objective": "Close the July books",
            "definitionOfDone": [{{"criterionId": "ledger-balanced", "description": "The ledger balances",
              "evidenceRequired": ["deterministic_test", "human_review"]}}],
            "budget": {{"modelTokenLimit": 100000, "toolCallLimit": 1000, "currency": "EUR", "financialLimit": 50}},
            "deadline": "2026-08-01T00:00:00Z",
            "approvalPolicy": {{"finalHumanApproval": true, "highRiskExecutionApproval": true}},
            "coordinator": {{"agentId": "{COORDINATOR}", "agentCardVersion": 1, "leaseId": "{LEASE}"}},
            "mainConversationId": "urn:missionweaveprotocol:conversation:finance-main"{extra}}}"#
        )
    }

    pub fn create(&self) -> VerifiedCommand {
        self.command(
            "mission.create",
            OWNER,
            "",
            &self.create_payload(MISSION, ""),
        )
    }

    /// Coordinator Command with its Coordinator Epoch.
    pub fn by_coordinator(&self, kind: &str, epoch: u64, payload: &str) -> VerifiedCommand {
        self.command(
            kind,
            COORDINATOR,
            &format!(r#""coordinatorEpoch": {epoch}"#),
            payload,
        )
    }

    pub fn submit(&self, epoch: u64) -> VerifiedCommand {
        self.by_coordinator(
            "mission.submit_for_approval",
            epoch,
            &format!(r#"{{"artifactHashes": ["{HASH_A}", "{HASH_B}"]}}"#),
        )
    }

    pub fn approve(&self, revision: u64) -> VerifiedCommand {
        self.command(
            "mission.approve",
            OWNER,
            "",
            &format!(
                r#"{{"approvalId": "urn:missionweaveprotocol:approval:1", "missionRevision": {revision},
                "artifactHashes": ["{HASH_B}", "{HASH_A}"], "acceptancePolicyVersion": "1.0.0"}}"#
            ),
        )
    }

    /// An engine holding an active Mission (revision 1).
    pub fn active(&self) -> TestEngine {
        let engine = self.engine();
        self.ok(&engine, &self.create(), NOW);
        engine
    }

    /// An engine holding a Mission awaiting approval (revision 2, submitted revision 2).
    pub fn awaiting(&self) -> TestEngine {
        let engine = self.active();
        self.ok(&engine, &self.submit(1), NOW);
        engine
    }
}

pub fn last_sequence(engine: &TestEngine) -> u64 {
    engine.store().head(GROUP).unwrap().last_sequence()
}

pub fn state(engine: &TestEngine, mission: &str) -> (String, u64) {
    let m = engine.mission(mission).unwrap().unwrap();
    (m.state().as_str().to_owned(), m.revision())
}

pub fn payload_of(event: &Value) -> &Value {
    event.get("payload").unwrap()
}

pub fn text<'a>(event: &'a Value, pointer: &str) -> &'a str {
    event
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no {pointer}"))
}
