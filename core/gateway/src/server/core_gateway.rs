//! [`CoreGateway`]: the [`GatewayCore`] seam over the authoritative `service::Core`, so a host
//! only builds its `Core` (with `CoreConfig`), wraps it in an `Arc` and hands it here.

use std::sync::Arc;

use missionweaveprotocol::crypto::Signer;
use missionweaveprotocol::json::{self, Document, Number, Object, ParseLimits, Value};
use missionweaveprotocol::schema_formats::Timestamp;
use missionweaveprotocol::{
    FieldValue, Principal, PrincipalType, SignedDocumentCodec, SignedDocumentKind, WireCode,
};
use missionweaveprotocol_agent::auth::{AgentKeyRegistry, KeyValidity};
use missionweaveprotocol_engine::Performed;
use missionweaveprotocol_engine::ingress::VerifiedCommand;
use missionweaveprotocol_engine::membership::{Membership, MembershipState};
use missionweaveprotocol_engine::service::{Core, CoreError};
use missionweaveprotocol_engine::store::{
    AggregateKey, Blob, EventRecord, ReplayPage, Store, StoreError, Transaction,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

use super::command::group_of;
use super::core_seam::{GatewayCore, GroupPage, OpenedSession, Visibility};
use super::event_tail::EventTail;

/// The bootstrap Command that opens an Agent's Session Epoch (§6.3, §15.1).
pub const SESSION_OPEN: &str = "ext.missionweaveprotocol.identity.session_open";

/// The store kind of durable delivery Cursors (`{agentId, groupId, sequence}`, one per
/// (Agent, Group); ID `<agentId> <groupId>`: a space is in no protocol ID). Delivery
/// bookkeeping, not protocol state: no Event, never part of a Group's history (§16).
pub const DELIVERY_CURSOR_KIND: &str = "gateway_delivery_cursor";

/// Compare-and-set attempts of one acknowledgement before it reports contention.
const ACK_ATTEMPTS: usize = 8;

/// The [`GatewayCore`] of a `Core<S, G>`.
pub struct CoreGateway<S, G> {
    core: Arc<Core<S, G>>,
    /// The recent Events of every Group, served to subscribers without a store read.
    tail: EventTail,
}

impl<S, G> core::fmt::Debug for CoreGateway<S, G> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CoreGateway").finish_non_exhaustive()
    }
}

impl<S, G> CoreGateway<S, G> {
    /// The seam over `core`.
    pub fn new(core: Arc<Core<S, G>>) -> Self {
        Self::with_tail(core, EventTail::default())
    }

    /// The seam over `core`, delivering recent Events from `tail` (`EventTail::new(0)`: every
    /// read goes to the Core).
    pub fn with_tail(core: Arc<Core<S, G>>, tail: EventTail) -> Self {
        Self { core, tail }
    }

    /// The Event tail.
    pub fn tail(&self) -> &EventTail {
        &self.tail
    }

    /// Hands the Events of a Command this Core performed to the tail, Group by Group
    /// (Organization-scoped Events, sequence 0, have no Group log).
    fn remember(&self, performed: &Performed) {
        let mut run: Vec<EventRecord> = Vec::new();
        let mut run_group: Option<String> = None;
        for record in performed.events.iter().filter(|r| r.sequence > 0) {
            let group = group_of(&record.body);
            if group != run_group {
                if let Some(g) = &run_group {
                    self.tail.extend(g, &run);
                }
                run.clear();
                run_group = group;
            }
            if run_group.is_some() {
                run.push(record.clone());
            }
        }
        if let Some(g) = &run_group {
            self.tail.extend(g, &run);
        }
    }

    /// The Core.
    pub fn core(&self) -> &Arc<Core<S, G>> {
        &self.core
    }
}

fn describe(error: &dyn missionweaveprotocol::DescribeError) -> CoreError {
    CoreError::describe(error)
}

fn internal(reason: &str, message: &str) -> CoreError {
    let mut error = CoreError::invalid(reason, message, missionweaveprotocol::Fields::new());
    error.wire_code = WireCode::InternalError;
    error.family =
        missionweaveprotocol_engine::service::ErrorFamily::of_code(WireCode::InternalError);
    error.retryable = false;
    error
}

fn millis(timestamp: &Timestamp) -> UnixMillis {
    UnixMillis(timestamp.instant().unix_millis())
}

fn cursor_key(agent_id: &str, group: &str) -> AggregateKey {
    AggregateKey::new(DELIVERY_CURSOR_KIND, format!("{agent_id} {group}"))
}

fn stored_sequence(value: &[u8]) -> Option<u64> {
    let document = Document::parse(value, &ParseLimits::DOCUMENT).ok()?;
    document.root().get("sequence")?.as_number()?.as_u64()
}

impl<S, G> CoreGateway<S, G>
where
    S: Store,
    G: Signer,
{
    fn store(&self) -> &dyn Store {
        self.core.store()
    }

    /// The current cursor and its store revision (0: none).
    fn read_cursor(&self, key: &AggregateKey) -> Result<(u64, u64), CoreError> {
        match self.store().aggregate(key).map_err(|e| describe(&e))? {
            None => Ok((0, 0)),
            Some(stored) => {
                let sequence = stored_sequence(&stored.value).ok_or_else(|| {
                    internal("store_corrupt", "a stored delivery cursor is unreadable")
                })?;
                Ok((sequence, stored.revision))
            }
        }
    }
}

impl<S, G> GatewayCore for CoreGateway<S, G>
where
    S: Store + Send + Sync,
    G: Signer + Send + Sync,
{
    fn verify(&self, command: &[u8], now: UnixMillis) -> Result<VerifiedCommand, CoreError> {
        self.core.verify(command, now)
    }

    fn perform(&self, command: &VerifiedCommand, now: UnixMillis) -> Result<Performed, CoreError> {
        let performed = self.core.perform_verified(command, now)?;
        self.remember(&performed);
        Ok(performed)
    }

    fn open_session(
        &self,
        agent_id: &str,
        action_id: &str,
        now: UnixMillis,
    ) -> Result<OpenedSession, CoreError> {
        let issuer = self.core.engine().issuer();
        let authority = issuer.accepted_by();
        let issued_at = now
            .to_rfc3339()
            .ok_or_else(|| internal("clock_out_of_range", "now is outside years 0001-9999"))?;
        let mut actor = Object::new();
        actor.insert("type", Value::string(authority.kind.as_str()));
        actor.insert("id", Value::string(authority.id.as_str()));
        let mut payload = Object::new();
        payload.insert("agentId", Value::string(agent_id));
        let mut command = Object::new();
        command.insert(
            "protocolVersion",
            Value::string(crate::frames::PROTOCOL_VERSION),
        );
        command.insert("actionId", Value::string(action_id));
        command.insert("actor", Value::Object(actor));
        command.insert("kind", Value::string(SESSION_OPEN));
        command.insert("correlationId", Value::string(action_id));
        command.insert("issuedAt", Value::string(issued_at));
        command.insert("payload", Value::Object(payload));
        // Signed by the Group Authority, the default bootstrap service (`CoreConfig`): the
        // epoch is the authoritative store's, so every process agrees on it (§4 invariant 4).
        let signed = SignedDocumentCodec::new()
            .sign(
                SignedDocumentKind::Command,
                &Value::Object(command),
                issuer.signer(),
            )
            .map_err(|e| describe(&e))?;
        let performed = self.core.perform_bytes(&signed.bytes, now)?;
        self.remember(&performed);
        let epoch = performed
            .events
            .first()
            .and_then(|record| {
                let document = Document::parse(&record.body, &ParseLimits::DOCUMENT).ok()?;
                document
                    .root()
                    .pointer("/payload/sessionEpoch")?
                    .as_number()?
                    .as_u64()
            })
            .ok_or_else(|| {
                internal(
                    "session_epoch_missing",
                    "the session_opened Event carries no sessionEpoch",
                )
            })?;
        Ok(OpenedSession { epoch, performed })
    }

    fn read_page(&self, group: &str, after: u64, limit: usize) -> Result<GroupPage, CoreError> {
        if let Some(page) = self.tail.page(group, after, limit) {
            return Ok(GroupPage::Events(page));
        }
        // One store read per Group at a time: a reader that waited finds the tail filled.
        let _turn = self.tail.read_turn(group);
        if let Some(page) = self.tail.page(group, after, limit) {
            return Ok(GroupPage::Events(page));
        }
        let after = i64::try_from(after).unwrap_or(i64::MAX);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        match self.core.replay(group, after, limit) {
            Ok(page) => {
                // Checked by the Core before it served them (`Core::replay`).
                self.tail.extend(group, &page.events);
                Ok(GroupPage::Events(page))
            }
            Err(e) if e.wire_code == WireCode::CursorTooOld => {
                let snapshot_artifact_hash = match e.fields.get("snapshot_artifact_hash") {
                    Some(FieldValue::Text(hash)) => Some(hash.clone()),
                    _ => None,
                };
                Ok(GroupPage::CursorTooOld {
                    snapshot_artifact_hash,
                })
            }
            Err(e) => Err(e),
        }
    }

    fn recent_page(&self, group: &str, after: u64, limit: usize) -> Option<ReplayPage> {
        self.tail.page(group, after, limit)
    }

    fn head(&self, group: &str) -> Result<u64, CoreError> {
        let head = self.store().head(group).map_err(|e| describe(&e))?;
        Ok(head.last_sequence())
    }

    fn visibility(&self, member: &Principal, group: &str) -> Result<Option<Visibility>, CoreError> {
        let membership = Membership::read(self.store(), group, member).map_err(|e| describe(&e))?;
        Ok(membership.and_then(|m| {
            // An ended Membership sees nothing (§8: a revoked Membership is fenced); a
            // provisional Worker sees its offer's Group (JIT step 2).
            if m.state() == MembershipState::Ended {
                return None;
            }
            let start_sequence = m
                .to_value()
                .get("visibilityStartSequence")
                .and_then(Value::as_number)
                .and_then(Number::as_u64)
                .unwrap_or(0);
            Some(Visibility { start_sequence })
        }))
    }

    fn acknowledge(&self, agent_id: &str, group: &str, sequence: u64) -> Result<(), CoreError> {
        let key = cursor_key(agent_id, group);
        for _ in 0..ACK_ATTEMPTS {
            let (current, revision) = self.read_cursor(&key)?;
            if sequence <= current {
                return Ok(());
            }
            let mut value = Object::new();
            value.insert("agentId", Value::string(agent_id));
            value.insert("groupId", Value::string(group));
            value.insert("sequence", Value::Number(Number::from_u64(sequence)));
            let bytes = json::canonical_bytes(&Value::Object(value)).map_err(|e| describe(&e))?;
            let mut tx = Transaction::new();
            tx.put(key.clone(), revision, Blob::from(bytes));
            match self.store().commit(tx) {
                Ok(()) => return Ok(()),
                // Another acknowledgement won the race: read again (the cursor only grows).
                Err(StoreError::RevisionConflict { .. }) => continue,
                Err(e) => return Err(describe(&e)),
            }
        }
        let mut error = internal("contended", "the delivery cursor kept changing");
        error.retryable = true;
        Err(error)
    }

    fn acknowledged(&self, agent_id: &str, group: &str) -> Result<u64, CoreError> {
        Ok(self.read_cursor(&cursor_key(agent_id, group))?.0)
    }

    fn session_principal(&self, id: &str, key_id: &str) -> Option<Principal> {
        let binding = self.core.registry().binding(key_id)?;
        // Agents (§6.3) and humans — the MissionOwner's page (§5 "a human interface for …
        // Approval"; docs/network.md "Human sessions"); never a service key.
        let sessions = matches!(
            binding.principal.kind,
            PrincipalType::Agent | PrincipalType::Human
        );
        (sessions && binding.principal.id == id).then(|| binding.principal.clone())
    }

    fn agent_keys(&self, agent_id: &str, key_id: &str) -> AgentKeyRegistry {
        let mut keys = AgentKeyRegistry::new();
        if self.session_principal(agent_id, key_id).is_none() {
            return keys;
        }
        let Some(binding) = self.core.registry().binding(key_id) else {
            return keys;
        };
        // The Registry that verifies Commands is the one HELLO uses: a key is usable for the
        // handshake exactly when the Agent's Commands signed with it would verify (§6.3, §6.4).
        let validity = KeyValidity {
            valid_from: Some(millis(&binding.valid_from)),
            valid_until: binding.valid_until.as_ref().map(millis),
            revoked_at: binding.revoked_at.as_ref().map(millis),
        };
        // A binding the Registry validated cannot fail here (its key decoded strictly); if it
        // did, the Agent simply has no usable key.
        let _ = keys.register(
            agent_id,
            binding.public_key.as_bytes(),
            Some(key_id),
            validity,
        );
        keys
    }
}
