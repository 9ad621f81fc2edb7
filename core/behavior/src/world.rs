//! The world a scenario runs in: an Organization Registry with test keys, the Group Authority's
//! key, the real engine over an `InMemoryStore`, a clock, and signed Commands passed through
//! `CommandIngress` (§6.4 six stages and the deployment `OrganizationAuthorizer`, §15.1
//! freshness) before the engine sees them.
//!
//! [`World::setup`] is the ONE place that builds a world: keys, Registry, engine, the Agents'
//! Sessions (`ext.missionweaveprotocol.identity.session_open`, §6.3: every Agent Command is
//! fenced by its Session Epoch), and the Mission most scenarios start from.

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol::registry::RegistryBuilder;
use missionweaveprotocol::schema::SchemaCatalog;
use missionweaveprotocol::{
    DescribeError, KeyRegistrySnapshot, Principal, PrincipalType, SignedDocumentCodec,
    SignedDocumentKind, WireCode,
};
use missionweaveprotocol_engine::engine::{Engine, Performed};
use missionweaveprotocol_engine::error::EngineError;
use missionweaveprotocol_engine::events::{EventIssuer, SequentialEventIds};
use missionweaveprotocol_engine::ingress::{
    CommandIngress, OrganizationAuthorizer, VerifiedCommand,
};
use missionweaveprotocol_engine::organization::{ORGANIZATION_EVENT_KIND, SESSION_OPEN};
use missionweaveprotocol_engine::store::{EventRecord, InMemoryStore, Store};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

use crate::payloads;

pub const ORG: &str = "urn:missionweaveprotocol:organization:behavior";
pub const OWNER: &str = "urn:missionweaveprotocol:human:alice";
pub const OTHER_HUMAN: &str = "urn:missionweaveprotocol:human:bob";
pub const COORDINATOR: &str = "urn:missionweaveprotocol:agent:planner";
pub const WORKER: &str = "urn:missionweaveprotocol:agent:worker";
/// An Agent with a Registry key that never opens a Session (§6.3: its Commands are refused
/// `AUTH_REQUIRED`).
pub const SESSIONLESS: &str = "urn:missionweaveprotocol:agent:reviewer";
/// The Organization policy service (`OrganizationAuthorizer` policy service: it may sign the
/// kinds the spec lets Organization policy sign, e.g. `mission.terminate`).
pub const SERVICE: &str = "urn:missionweaveprotocol:service:control-plane";
/// The identity and registry service (`OrganizationAuthorizer` bootstrap service: it opens
/// Sessions and registers Agent Cards, §6.3, §15.1).
pub const IDENTITY: &str = "urn:missionweaveprotocol:service:identity";
pub const AUTHORITY: &str = "urn:missionweaveprotocol:service:group-authority";
pub const GROUP: &str = "urn:missionweaveprotocol:group:finance";
pub const MISSION: &str = "urn:missionweaveprotocol:mission:close-books";
pub const FOLLOW_UP_GROUP: &str = "urn:missionweaveprotocol:group:finance-fix";
pub const FOLLOW_UP: &str = "urn:missionweaveprotocol:mission:close-books-fix";
/// Every Group a scenario may touch: a refusal must leave all their heads unchanged.
pub const GROUPS: [&str; 2] = [GROUP, FOLLOW_UP_GROUP];
/// 2026-07-15T09:30:00Z, the clock at the start of every scenario.
pub const START: UnixMillis = UnixMillis(1_784_107_800_000);
/// The Session Epoch [`World::setup`] opens for every Agent of [`AGENTS`] (§6.3: the first
/// `identity.session_open` of an Agent issues 1). Agent Commands carry the Agent's current
/// epoch, read from the engine when they are built.
pub const SESSION_EPOCH: u64 = 1;
/// The Agents whose Sessions [`World::setup`] opens, by [`IDENTITY`] ([`SESSIONLESS`] has none).
pub const AGENTS: [&str; 2] = [COORDINATOR, WORKER];

/// The seed byte of the Group Authority's signing key (its key ID is [`key_id`] of it).
pub const AUTHORITY_KEY_SEED: u8 = 46;
/// The prefix of the engine's sequential Event IDs (`<prefix>1`, `<prefix>2`, …).
pub const EVENT_ID_PREFIX: &str = "urn:missionweaveprotocol:event:behavior-";

/// The Registry key ID of the principal whose seed byte is `seed`.
pub fn key_id(seed: u8) -> String {
    format!("urn:missionweaveprotocol:key:behavior-{seed}")
}

/// The engine every scenario drives: the real one, over the in-memory store.
pub type BehaviorEngine = Engine<InMemoryStore, SigningKey, SequentialEventIds>;

/// Where a scenario starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// Keys and an empty engine: nothing exists yet (creation rows).
    Empty,
    /// As `Empty`, then `mission.create` applied: `MISSION` is `active` in `GROUP`, Coordinator
    /// `COORDINATOR` at Coordinator Epoch 1, MissionOwner `OWNER`.
    ActiveMission,
}

/// A scenario's world. Not shared between scenarios: each one starts from [`World::setup`].
#[derive(Debug)]
pub struct World {
    keys: Vec<(Principal, SigningKey)>,
    registry: Arc<KeyRegistrySnapshot>,
    registry_bytes: Vec<u8>,
    engine: BehaviorEngine,
    next_action: Cell<u64>,
    now: Cell<UnixMillis>,
    setup_events: usize,
    /// Each setup Command: when it was performed, its wire bytes, and its Events.
    setup_log: Vec<(UnixMillis, Vec<u8>, Performed)>,
    /// The kind and code of the last Command ingress refused (§6.4 stages, authorizer).
    ingress_refusal: RefCell<Option<(String, WireCode)>>,
    /// The signing hash of every Command signed here, by Action ID, as the *signer* computed
    /// it (§6.4): each Event must carry its Command's as `commandHash` (§15.2, §16).
    signed_hashes: RefCell<Vec<(String, String)>>,
}

impl World {
    /// The one world setup: Registry with two humans, three Agents, the control-plane policy
    /// service, the identity service and the Group Authority; ingress with the deployment
    /// authorizer (`OrganizationAuthorizer`: `IDENTITY` bootstraps, `SERVICE` is policy); the
    /// engine signing Events as that Authority (with the default §20 cooperation limits); a
    /// Session opened for each Agent of [`AGENTS`] by the identity service; then, for
    /// [`Start::ActiveMission`], the root Mission (all Events verified like every other).
    pub fn setup(start: Start) -> Result<World, String> {
        let principals = [
            (PrincipalType::Human, OWNER, 41u8),
            (PrincipalType::Human, OTHER_HUMAN, 42),
            (PrincipalType::Agent, COORDINATOR, 43),
            (PrincipalType::Agent, WORKER, 44),
            (PrincipalType::Agent, SESSIONLESS, 47),
            (PrincipalType::Service, SERVICE, 45),
            (PrincipalType::Service, IDENTITY, 48),
            (PrincipalType::Service, AUTHORITY, AUTHORITY_KEY_SEED),
        ];
        let mut builder = RegistryBuilder::new(ORG);
        let mut keys = Vec::new();
        for (kind, id, seed) in principals {
            let key = SigningKey::from_seed(key_id(seed), &[seed; 32]);
            let principal = Principal::new(kind, id);
            builder
                .add_key(
                    key.key_id(),
                    principal.clone(),
                    &key.public_key_bytes(),
                    "2026-01-01T00:00:00Z",
                )
                .map_err(|e| format!("registry: {e}"))?;
            keys.push((principal, key));
        }
        let (registry_bytes, registry) = builder.build().map_err(|e| format!("registry: {e}"))?;
        let authority_key = keys
            .iter()
            .find(|(p, _)| p.id == AUTHORITY)
            .map(|(_, k)| k.clone())
            .ok_or("no Group Authority key")?;
        let engine = Engine::new(
            InMemoryStore::new(),
            EventIssuer::new(
                Principal::new(PrincipalType::Service, AUTHORITY),
                authority_key,
            ),
            SequentialEventIds::new(EVENT_ID_PREFIX),
        );
        let mut world = World {
            keys,
            registry: Arc::new(registry),
            registry_bytes,
            engine,
            next_action: Cell::new(1),
            now: Cell::new(START),
            setup_events: 0,
            setup_log: Vec::new(),
            ingress_refusal: RefCell::new(None),
            signed_hashes: RefCell::new(Vec::new()),
        };
        // §6.3: every Agent Command is fenced by the Agent's Session Epoch, so the Sessions are
        // opened before any Agent Command (the engine answers `AUTH_REQUIRED` otherwise).
        for agent in AGENTS {
            let open = world.organization_command(
                SESSION_OPEN,
                IDENTITY,
                "",
                &payloads::session_open(agent),
            )?;
            world.setup_events += world.apply_setup(&open)?;
            let epoch = world.session_epoch(agent)?;
            if epoch != Some(SESSION_EPOCH) {
                return Err(format!(
                    "setup: {agent} has Session Epoch {epoch:?}, not {SESSION_EPOCH}"
                ));
            }
        }
        if start == Start::ActiveMission {
            let create = world.command(
                "mission.create",
                OWNER,
                "",
                &payloads::create_mission(MISSION, ""),
            )?;
            world.setup_events += world.apply_setup(&create)?;
        }
        Ok(world)
    }

    /// Applies a setup Command (its Events verified) and logs it; how many Events it appended.
    fn apply_setup(&mut self, command: &VerifiedCommand) -> Result<usize, String> {
        let performed = self
            .perform(command)
            .map_err(|e| format!("setup: {} refused: {e}", command.kind()))?;
        let events = self.verify_events(&performed, command)?.len();
        self.setup_log
            .push((self.now(), command.bytes().to_vec(), performed));
        Ok(events)
    }

    /// The setup's Commands in order: when each was performed, its wire bytes and its Events
    /// (another core given the same Registry, keys and Event IDs replays them identically).
    pub fn setup_log(&self) -> &[(UnixMillis, Vec<u8>, Performed)] {
        &self.setup_log
    }

    /// How many Events the setup appended (each verified).
    pub fn setup_events(&self) -> usize {
        self.setup_events
    }

    pub fn engine(&self) -> &BehaviorEngine {
        &self.engine
    }

    pub fn registry(&self) -> &Arc<KeyRegistrySnapshot> {
        &self.registry
    }

    /// The Registry evidence bytes the world's snapshot was built from (what another core
    /// needs to verify the same Commands).
    pub fn registry_bytes(&self) -> &[u8] {
        &self.registry_bytes
    }

    /// `agent`'s current Session Epoch (`None`: no Session was ever opened).
    pub fn session_epoch(&self, agent: &str) -> Result<Option<u64>, String> {
        self.engine
            .session_epoch(agent)
            .map_err(|e| format!("Session Epoch of {agent}: {e}"))
    }

    /// How many Organization-scoped Events the engine holds (§15.2: they have no Group, so no
    /// Group head shows them).
    pub fn organization_events(&self) -> Result<usize, String> {
        self.engine
            .store()
            .list(ORGANIZATION_EVENT_KIND, "")
            .map(|events| events.len())
            .map_err(|e| format!("Organization Events: {e}"))
    }

    /// The scenario clock.
    pub fn now(&self) -> UnixMillis {
        self.now.get()
    }

    /// Lets `ms` milliseconds pass.
    pub fn elapse(&self, ms: u64) {
        self.now.set(self.now.get().saturating_add_ms(ms));
    }

    /// The last sequence of each Group in [`GROUPS`] and of `also` (the act's Group).
    pub fn heads(&self, also: Option<&str>) -> Result<Vec<u64>, String> {
        GROUPS
            .iter()
            .copied()
            .chain(also.filter(|g| !GROUPS.contains(g)))
            .map(|g| {
                self.engine
                    .store()
                    .head(g)
                    .map(|h| h.last_sequence())
                    .map_err(|e| format!("head of {g}: {e}"))
            })
            .collect()
    }

    /// `kind` by `actor` in `GROUP`, issued now, signed and passed through ingress.
    /// `extra`: further envelope members (JSON members text, may be empty).
    pub fn command(
        &self,
        kind: &str,
        actor: &str,
        extra: &str,
        payload: &str,
    ) -> Result<VerifiedCommand, String> {
        self.command_in(GROUP, kind, actor, extra, payload)
    }

    /// As [`command`](Self::command), addressed to `group`. Agents carry their current Session
    /// Epoch and Membership Epoch 1, humans a Membership Epoch except for the creation kinds
    /// (§15.1, `command.schema.json` conditionals).
    pub fn command_in(
        &self,
        group: &str,
        kind: &str,
        actor: &str,
        extra: &str,
        payload: &str,
    ) -> Result<VerifiedCommand, String> {
        let session = self.session_epoch(actor)?.unwrap_or(SESSION_EPOCH);
        self.group_command(group, kind, actor, session, extra, payload)
    }

    /// As [`command`](Self::command), but an Agent presents Session Epoch `session` whatever
    /// its current one is (a runtime of a replaced Session, §6.3).
    pub fn command_at_session(
        &self,
        kind: &str,
        actor: &str,
        session: u64,
        extra: &str,
        payload: &str,
    ) -> Result<VerifiedCommand, String> {
        self.group_command(GROUP, kind, actor, session, extra, payload)
    }

    /// As [`command`](Self::command), but presenting Membership Epoch `membership` (§8).
    pub fn command_at_membership(
        &self,
        kind: &str,
        actor: &str,
        membership: u64,
        payload: &str,
    ) -> Result<VerifiedCommand, String> {
        let session = self.session_epoch(actor)?.unwrap_or(SESSION_EPOCH);
        self.epochs_command(GROUP, kind, actor, session, membership, "", payload)
    }

    fn group_command(
        &self,
        group: &str,
        kind: &str,
        actor: &str,
        session: u64,
        extra: &str,
        payload: &str,
    ) -> Result<VerifiedCommand, String> {
        self.epochs_command(group, kind, actor, session, 1, extra, payload)
    }

    #[allow(clippy::too_many_arguments)]
    fn epochs_command(
        &self,
        group: &str,
        kind: &str,
        actor: &str,
        session: u64,
        membership: u64,
        extra: &str,
        payload: &str,
    ) -> Result<VerifiedCommand, String> {
        let principal = self.principal(actor)?;
        let creation = kind == "mission.create" || kind == "mission.create_follow_up";
        let epochs = match principal.kind {
            PrincipalType::Agent => {
                format!(r#""sessionEpoch": {session}, "membershipEpoch": {membership},"#)
            }
            PrincipalType::Human if !creation => format!(r#""membershipEpoch": {membership},"#),
            _ => String::new(),
        };
        self.signed(
            kind,
            actor,
            &format!(r#"{epochs} {} "groupId": "{group}","#, members(extra)),
            payload,
        )
    }

    /// An Organization-scoped service Command (§15.1, digest A.1): no `groupId` and no epochs.
    pub fn organization_command(
        &self,
        kind: &str,
        actor: &str,
        extra: &str,
        payload: &str,
    ) -> Result<VerifiedCommand, String> {
        self.signed(kind, actor, &members(extra), payload)
    }

    fn principal(&self, actor: &str) -> Result<&Principal, String> {
        self.keys
            .iter()
            .find(|(p, _)| p.id == actor)
            .map(|(p, _)| p)
            .ok_or_else(|| format!("no key for {actor}"))
    }

    /// `kind` by `actor` with further envelope `members` (JSON members text ending in a comma,
    /// or empty), issued now, signed with the actor's key and passed through ingress.
    fn signed(
        &self,
        kind: &str,
        actor: &str,
        members: &str,
        payload: &str,
    ) -> Result<VerifiedCommand, String> {
        let action = self.next_action.get();
        self.next_action.set(action + 1);
        self.signed_as(kind, actor, members, payload, action, self.now())
    }

    /// The Action ID number of the last Command signed here (§15.1: a retry keeps it).
    pub fn last_action(&self) -> u64 {
        self.next_action.get().saturating_sub(1)
    }

    /// `kind` by `actor` in `GROUP` (envelope as [`command`](Self::command)) under Action ID
    /// number `action` and issued at `issued_at` rather than a fresh ID issued now: a reused
    /// Action ID (§15.1) or a Command outside the freshness window (§6.4).
    pub fn command_as(
        &self,
        action: u64,
        issued_at: UnixMillis,
        kind: &str,
        actor: &str,
        extra: &str,
        payload: &str,
    ) -> Result<VerifiedCommand, String> {
        let principal = self.principal(actor)?;
        let session = self.session_epoch(actor)?.unwrap_or(SESSION_EPOCH);
        let epochs = match principal.kind {
            PrincipalType::Agent => {
                format!(r#""sessionEpoch": {session}, "membershipEpoch": 1,"#)
            }
            PrincipalType::Human => r#""membershipEpoch": 1,"#.to_owned(),
            PrincipalType::Service => String::new(),
        };
        self.signed_as(
            kind,
            actor,
            &format!(r#"{epochs} {} "groupId": "{GROUP}","#, members(extra)),
            payload,
            action,
            issued_at,
        )
    }

    fn signed_as(
        &self,
        kind: &str,
        actor: &str,
        members: &str,
        payload: &str,
        action: u64,
        issued_at: UnixMillis,
    ) -> Result<VerifiedCommand, String> {
        let (principal, key) = self
            .keys
            .iter()
            .find(|(p, _)| p.id == actor)
            .ok_or_else(|| format!("no key for {actor}"))?;
        let issued_at = issued_at.to_rfc3339().ok_or("clock out of range")?;
        let text = format!(
            r#"{{"protocolVersion": "0.1", "actionId": "urn:missionweaveprotocol:action:{action}",
            "actor": {{"type": "{}", "id": "{actor}"}}, {members}
            "kind": "{kind}",
            "correlationId": "urn:missionweaveprotocol:correlation:behavior",
            "issuedAt": "{issued_at}", "payload": {payload}}}"#,
            principal.kind.as_str()
        );
        let unsigned = json::parse_state(text.as_bytes())
            .map_err(|e| format!("{kind}: unsigned JSON: {e}"))?;
        let signed = SignedDocumentCodec::new()
            .sign(SignedDocumentKind::Command, &unsigned, key)
            .map_err(|e| format!("{kind}: signing refused: {e}"))?;
        self.signed_hashes.borrow_mut().push((
            format!("urn:missionweaveprotocol:action:{action}"),
            signed.signing_hash,
        ));
        let bytes = signed.bytes;
        CommandIngress::new(OrganizationAuthorizer::new([IDENTITY], [SERVICE]))
            .verify(&bytes, &self.registry, self.now())
            .map_err(|e| {
                self.ingress_refusal
                    .replace(Some((kind.to_owned(), e.wire_code())));
                format!("{kind}: ingress refused: {} ({e})", e.wire_code().as_str())
            })
    }

    /// The kind and code of the last Command ingress refused since the last call, if any.
    pub fn take_ingress_refusal(&self) -> Option<(String, WireCode)> {
        self.ingress_refusal.take()
    }

    /// Signs `document` (Artifact manifest) with `signer`'s Registry key; the signed document.
    pub fn sign_artifact(&self, document: &Value, signer: &str) -> Result<Value, String> {
        self.sign_document(SignedDocumentKind::Artifact, document, signer)
    }

    /// Signs `document` as a `kind` signed document with `signer`'s Registry key.
    pub fn sign_document(
        &self,
        kind: SignedDocumentKind,
        document: &Value,
        signer: &str,
    ) -> Result<Value, String> {
        let (_, key) = self
            .keys
            .iter()
            .find(|(p, _)| p.id == signer)
            .ok_or_else(|| format!("no key for {signer}"))?;
        SignedDocumentCodec::new()
            .sign(kind, document, key)
            .map(|s| s.document)
            .map_err(|e| format!("{kind:?} signing refused: {e}"))
    }

    /// `signer`'s Registry key: its ID and public key bytes (an Agent Card names them).
    pub fn public_key(&self, signer: &str) -> Result<(String, Vec<u8>), String> {
        self.keys
            .iter()
            .find(|(p, _)| p.id == signer)
            .map(|(_, k)| (k.key_id().to_owned(), k.public_key_bytes().to_vec()))
            .ok_or_else(|| format!("no key for {signer}"))
    }

    /// Performs `command` now (with the Registry, so `artifact.publish` manifests are verified).
    pub fn perform(&self, command: &VerifiedCommand) -> Result<Performed, EngineError> {
        self.engine
            .perform_with_resolver(command, self.now(), &self.registry)
    }

    /// Performs `command`, which must apply; verifies its Events; returns their kinds.
    pub fn apply(&self, command: &VerifiedCommand) -> Result<Vec<String>, String> {
        let performed = self.perform(command).map_err(|e| {
            format!(
                "{} refused: {} ({e})",
                command.kind(),
                e.wire_code().as_str()
            )
        })?;
        if performed.duplicate {
            return Err(format!("{} answered as a duplicate", command.kind()));
        }
        self.verify_events(&performed, command)
    }

    /// Every Event of `performed` through the six-stage verifier (Event profile, against the
    /// Registry) and `event.schema.json`, with its `eventId`, `sequence` and `acceptedBy`
    /// matching the record and its `commandHash` the signing hash of `command` as its signer
    /// computed it (§15.2: the Event answers exactly that Command); the Events' kinds in order.
    pub fn verify_events(
        &self,
        performed: &Performed,
        command: &VerifiedCommand,
    ) -> Result<Vec<String>, String> {
        if performed.events.is_empty() {
            return Err("an applied Command returned no Event".into());
        }
        let hash = self
            .signed_hashes
            .borrow()
            .iter()
            .find(|(action, _)| action == command.action_id())
            .map(|(_, hash)| hash.clone())
            .ok_or_else(|| format!("{} was not signed in this world", command.action_id()))?;
        performed
            .events
            .iter()
            .map(|record| self.verify_event(record, &hash))
            .collect()
    }

    fn verify_event(&self, record: &EventRecord, command_hash: &str) -> Result<String, String> {
        let id = &record.event_id;
        let verified = SignedDocumentCodec::new()
            .verify(SignedDocumentKind::Event, &record.body, &self.registry)
            .map_err(|e| format!("Event {id} fails the six-stage verifier: {e}"))?;
        let document = verified.into_document();
        SchemaCatalog::embedded()
            .validate("event", &document)
            .map_err(|e| format!("Event {id} fails event.schema.json: {e}"))?;
        let text = |name: &str| document.get(name).and_then(Value::as_str);
        if text("eventId") != Some(&**id) {
            return Err(format!("Event {id}: eventId differs from the log record"));
        }
        let sequence = document
            .get("sequence")
            .and_then(Value::as_number)
            .and_then(|n| n.as_u64());
        if record.sequence == 0 {
            // §15.2: an Organization-scoped Event has no Group, sequence or aggregate revision;
            // its log record's sequence is 0.
            let scoped = ["sequence", "groupId", "aggregateRevision"]
                .iter()
                .find(|name| document.get(name).is_some());
            if let Some(name) = scoped {
                return Err(format!("Organization-scoped Event {id} carries {name}"));
            }
        } else if sequence != Some(record.sequence) {
            return Err(format!("Event {id}: sequence differs from the log record"));
        }
        if text("commandHash") != Some(command_hash) {
            return Err(format!(
                "Event {id}: commandHash {:?} is not its Command's signing hash {command_hash}",
                text("commandHash")
            ));
        }
        let accepted_by = document.get("acceptedBy").and_then(Principal::from_value);
        if accepted_by != Some(Principal::new(PrincipalType::Service, AUTHORITY)) {
            return Err(format!("Event {id}: acceptedBy is not the Group Authority"));
        }
        text("kind")
            .map(str::to_owned)
            .ok_or_else(|| format!("Event {id} has no kind"))
    }
}

/// `extra` envelope members followed by a comma, or nothing.
fn members(extra: &str) -> String {
    if extra.is_empty() {
        String::new()
    } else {
        format!("{extra},")
    }
}
