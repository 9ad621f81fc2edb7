//! The verified Command: the only form in which the engine receives a Command.
//!
//! Fields are private and the only constructor is crate-private ([`CommandIngress`] calls it
//! after six-stage verification, the freshness window and signer authorization), so holding a
//! `VerifiedCommand` proves all three happened (architecture: "a typed `Verified…` value is the
//! sole input of the authoritative core").
//!
//! [`CommandIngress`]: super::CommandIngress

use missionweaveprotocol::json::Value;
use missionweaveprotocol::schema_formats::Timestamp;
use missionweaveprotocol::{Principal, Stage, VerificationError, VerifiedSignedDocument};

use crate::store::ReceiptKey;

/// A Command that passed ingress. Accessors borrow from the verified document.
#[derive(Debug, Clone)]
pub struct VerifiedCommand {
    kind: String,
    actor: Principal,
    action_id: String,
    correlation_id: String,
    group_id: Option<String>,
    conversation_id: Option<String>,
    work_item_id: Option<String>,
    caused_by_event_id: Option<String>,
    cooperation_override_grant_id: Option<String>,
    expected_revision: Option<u64>,
    session_epoch: Option<u64>,
    membership_epoch: Option<u64>,
    coordinator_epoch: Option<u64>,
    issued_at: Timestamp,
    signing_hash: String,
    key_id: String,
    organization_id: String,
    document: Value,
    bytes: Vec<u8>,
}

impl VerifiedCommand {
    /// Reads the envelope of a document the Command profile accepted. The schema guarantees
    /// every member read here, so a mismatch cannot happen with the embedded schemas; were it
    /// to (a changed schema), it is a stage-2 failure, never a panic.
    pub(super) fn from_verified(
        verified: VerifiedSignedDocument,
        bytes: &[u8],
    ) -> Result<Self, VerificationError> {
        // The envelope is read in place (the received tape); the owned tree is built once,
        // at the end, for the decisions that read the payload.
        let mut verified = verified;
        let document = verified.view();
        let text = |name: &str| -> Result<String, VerificationError> {
            document
                .get(name)
                .and_then(|v| v.as_str())
                .map(str::to_owned)
                .ok_or_else(|| shape(name))
        };
        let opt_text = |name: &str| -> Result<Option<String>, VerificationError> {
            match document.get(name) {
                None => Ok(None),
                Some(v) => v
                    .as_str()
                    .map(|s| Some(s.to_owned()))
                    .ok_or_else(|| shape(name)),
            }
        };
        let opt_int = |name: &str| -> Result<Option<u64>, VerificationError> {
            match document.get(name) {
                None => Ok(None),
                Some(v) => v
                    .as_number()
                    .and_then(|n| n.as_u64())
                    .map(Some)
                    .ok_or_else(|| shape(name)),
            }
        };
        if document
            .get("payload")
            .and_then(|v| v.as_object())
            .is_none()
        {
            return Err(shape("payload"));
        }
        let mut command = Self {
            kind: text("kind")?,
            actor: verified.principal.clone(),
            action_id: text("actionId")?,
            correlation_id: text("correlationId")?,
            group_id: opt_text("groupId")?,
            conversation_id: opt_text("conversationId")?,
            work_item_id: opt_text("workItemId")?,
            caused_by_event_id: opt_text("causedByEventId")?,
            cooperation_override_grant_id: opt_text("cooperationOverrideGrantId")?,
            expected_revision: opt_int("expectedRevision")?,
            session_epoch: opt_int("sessionEpoch")?,
            membership_epoch: opt_int("membershipEpoch")?,
            coordinator_epoch: opt_int("coordinatorEpoch")?,
            // The protected time of the Command profile is `/issuedAt` (§6.4 profile table).
            issued_at: verified.protected_time.clone(),
            signing_hash: String::new(),
            key_id: String::new(),
            organization_id: String::new(),
            bytes: bytes.to_vec(),
            document: Value::Null,
        };
        command.signing_hash = std::mem::take(&mut verified.signing_hash);
        command.key_id = std::mem::take(&mut verified.key_id);
        command.organization_id = std::mem::take(&mut verified.organization_id);
        command.document = verified.into_document();
        Ok(command)
    }

    /// The Command kind (`work.start`, `ext.…`).
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// The signed actor; the Registry binds the signing key to exactly this Principal (§6.4
    /// expected-signer rule `principal-object /actor`).
    pub fn actor(&self) -> &Principal {
        &self.actor
    }

    /// The Action ID: with the actor, the idempotency key (§15.1).
    pub fn action_id(&self) -> &str {
        &self.action_id
    }

    /// The correlation ID.
    pub fn correlation_id(&self) -> &str {
        &self.correlation_id
    }

    /// The Group ID (absent only for Organization-scoped Commands).
    pub fn group_id(&self) -> Option<&str> {
        self.group_id.as_deref()
    }

    /// The Conversation ID, if any.
    pub fn conversation_id(&self) -> Option<&str> {
        self.conversation_id.as_deref()
    }

    /// The WorkItem ID, if any.
    pub fn work_item_id(&self) -> Option<&str> {
        self.work_item_id.as_deref()
    }

    /// The Event that caused this Command, if any.
    pub fn caused_by_event_id(&self) -> Option<&str> {
        self.caused_by_event_id.as_deref()
    }

    /// The one-shot Cooperation Override Grant the Command cites (§20), if any.
    pub fn cooperation_override_grant_id(&self) -> Option<&str> {
        self.cooperation_override_grant_id.as_deref()
    }

    /// The expected aggregate revision (§15.3), if given.
    pub fn expected_revision(&self) -> Option<u64> {
        self.expected_revision
    }

    /// The Agent Session Epoch (§6.3), present exactly for Agent actors.
    pub fn session_epoch(&self) -> Option<u64> {
        self.session_epoch
    }

    /// The Membership Epoch (§8, §15.1), if present.
    pub fn membership_epoch(&self) -> Option<u64> {
        self.membership_epoch
    }

    /// The Coordinator Epoch (§7.2, §15.1), if present.
    pub fn coordinator_epoch(&self) -> Option<u64> {
        self.coordinator_epoch
    }

    /// `issuedAt`, exact text and instant; it passed the freshness window.
    pub fn issued_at(&self) -> &Timestamp {
        &self.issued_at
    }

    /// The payload object.
    pub fn payload(&self) -> &Value {
        // Checked to be an object at construction.
        static NULL: Value = Value::Null;
        self.document.get("payload").unwrap_or(&NULL)
    }

    /// The `extensions` map as signed, if present (§18, §21).
    pub fn extensions(&self) -> Option<&Value> {
        self.document.get("extensions")
    }

    /// The IDs of the extensions marked `critical: true`, in signed order. The engine refuses
    /// the Command with `UNKNOWN_CRITICAL_EXTENSION` if it does not implement one of them
    /// (§18: "refuse to take part in a transition that depends on an unknown critical profile").
    pub fn critical_extension_ids(&self) -> Vec<&str> {
        let Some(extensions) = self.extensions().and_then(Value::as_object) else {
            return Vec::new();
        };
        extensions
            .iter()
            .filter(|(_, value)| value.get("critical").and_then(Value::as_bool) == Some(true))
            .filter_map(|(name, _)| name.as_str())
            .collect()
    }

    /// The idempotency key `(actor type, actor ID, Action ID)` (§15.1).
    pub fn receipt_key(&self) -> ReceiptKey {
        ReceiptKey::new(self.actor.kind.as_str(), &self.actor.id, &self.action_id)
    }

    /// The signing hash: `sha256:` of the JCS signing input (§6.4). Idempotency compares it
    /// (§15.1) and Events carry it as `commandHash`.
    pub fn signing_hash(&self) -> &str {
        &self.signing_hash
    }

    /// The Registry key ID that signed the Command.
    pub fn key_id(&self) -> &str {
        &self.key_id
    }

    /// The Organization whose Registry resolved the key.
    pub fn organization_id(&self) -> &str {
        &self.organization_id
    }

    /// The whole verified document.
    pub fn document(&self) -> &Value {
        &self.document
    }

    /// The exact bytes received.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

fn shape(member: &str) -> VerificationError {
    VerificationError {
        stage: Stage::Schema,
        reason: "schema-invalid",
        detail: format!("the verified Command has no usable {member:?} member"),
    }
}
