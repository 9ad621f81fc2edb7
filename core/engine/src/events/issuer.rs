//! [`EventIssuer`]: the Group Authority's Event signer.

use missionweaveprotocol::crypto::Signer;
use missionweaveprotocol::json::{Number, Object, Value};
use missionweaveprotocol::signed_documents::SignedDocument;
use missionweaveprotocol::{
    KeyResolver, Principal, SignedDocumentCodec, SignedDocumentKind, VerificationError,
    VerifiedSignedDocument,
};

use super::draft::EventDraft;
use super::error::EventBuildError;
use super::event_id::EventIdSource;
use super::sign_once::{self_check, sign_event, validate};
use crate::store::{EventRecord, EventRef};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The wire protocol version every Event carries (§21).
const PROTOCOL_VERSION: &str = "0.1";

/// Builds and signs Events as `accepted_by` with `signer`, whose Registry binding must name
/// exactly `accepted_by` (§6.4 event profile: expected signer `principal-object /acceptedBy`).
#[derive(Debug, Clone)]
pub struct EventIssuer<S> {
    accepted_by: Principal,
    signer: S,
    codec: SignedDocumentCodec<'static>,
    self_check: bool,
}

impl<S: Signer> EventIssuer<S> {
    /// An issuer over the embedded schemas. Every Event is validated against
    /// `event.schema.json`; the self-check (verification of every Event's signature, see
    /// [`with_self_check`](Self::with_self_check)) is on in debug and test builds and off in
    /// release builds.
    pub fn new(accepted_by: Principal, signer: S) -> Self {
        Self {
            accepted_by,
            signer,
            codec: SignedDocumentCodec::new(),
            self_check: cfg!(debug_assertions),
        }
    }

    /// Turns the self-check on or off: after signing, verify the signature with the signer's
    /// public key, refusing the Event (`EventBuildError::Signing`) if it fails. The release
    /// default (off) signs once and trusts the signer; turn it on for a signer (e.g. an HSM)
    /// whose signatures should not be trusted unverified. It costs one Ed25519 verification
    /// per Event (about 1.6 signatures, `docs/engine.md` "Figures"). Debug builds always check.
    pub fn with_self_check(mut self, on: bool) -> Self {
        self.self_check = on || cfg!(debug_assertions);
        self
    }

    /// Whether the self-check runs.
    pub fn self_checks(&self) -> bool {
        self.self_check
    }

    /// The Group Authority Principal written as `acceptedBy`.
    pub fn accepted_by(&self) -> &Principal {
        &self.accepted_by
    }

    /// The signer.
    pub fn signer(&self) -> &S {
        &self.signer
    }

    /// The unsigned Event document: `draft` with `eventId`, `occurredAt` = `now` (the
    /// protected time of the event profile, millisecond precision) and `acceptedBy`.
    pub fn unsigned(
        &self,
        draft: &EventDraft,
        event_id: &str,
        now: UnixMillis,
    ) -> Result<Value, EventBuildError> {
        self.unsigned_object(
            draft,
            draft.payload.clone(),
            draft.extensions.clone(),
            event_id,
            now,
        )
        .map(Value::Object)
    }

    /// The unsigned Event of `draft` with its `payload` and `extensions` given by value (moved
    /// in by [`issue_owned`](Self::issue_owned), cloned by the borrowing callers).
    fn unsigned_object(
        &self,
        draft: &EventDraft,
        payload: Object,
        extensions: Option<Object>,
        event_id: &str,
        now: UnixMillis,
    ) -> Result<Object, EventBuildError> {
        let occurred_at = now
            .to_rfc3339()
            .ok_or(EventBuildError::UnrenderableTime(now))?;
        let mut o = Object::new();
        o.insert("protocolVersion", Value::string(PROTOCOL_VERSION));
        o.insert("eventId", Value::string(event_id));
        if let Some(position) = &draft.position {
            o.insert("groupId", Value::string(&position.group_id));
            o.insert(
                "sequence",
                Value::Number(Number::from_u64(position.sequence)),
            );
            o.insert(
                "aggregateRevision",
                Value::Number(Number::from_u64(position.aggregate_revision)),
            );
        }
        o.insert("kind", Value::string(&draft.kind));
        o.insert("actor", draft.actor.to_value());
        let mut cause = Object::new();
        cause.insert("type", Value::string(draft.cause.kind.as_str()));
        cause.insert("id", Value::string(&draft.cause.id));
        o.insert("cause", Value::Object(cause));
        o.insert("correlationId", Value::string(&draft.correlation_id));
        if let Some(id) = &draft.conversation_id {
            o.insert("conversationId", Value::string(id));
        }
        if let Some(id) = &draft.work_item_id {
            o.insert("workItemId", Value::string(id));
        }
        o.insert("occurredAt", Value::string(occurred_at));
        o.insert("payload", Value::Object(payload));
        o.insert("acceptedBy", self.accepted_by.to_value());
        if let Some(hash) = &draft.command_hash {
            o.insert("commandHash", Value::string(hash));
        }
        if let Some(extensions) = extensions {
            o.insert("extensions", Value::Object(extensions));
        }
        Ok(o)
    }

    /// Takes the next Event ID from `ids`, builds and signs the Event once (JCS → Ed25519 →
    /// envelope → JCS, `events/sign_once.rs`) and validates it against `event.schema.json`. With
    /// the self-check (always in debug and test builds) its signature is also verified;
    /// whether the Registry binds the key to `acceptedBy` is the deployment's Registry (the
    /// tests verify every Event against one with the six-stage verifier).
    pub fn issue(
        &self,
        draft: &EventDraft,
        ids: &mut dyn EventIdSource,
        now: UnixMillis,
    ) -> Result<SignedEvent, EventBuildError> {
        let payload = draft.payload.clone();
        let extensions = draft.extensions.clone();
        self.issue_parts(draft, payload, extensions, ids, now)
    }

    /// [`issue`](Self::issue) of a draft the caller no longer needs: its payload and extensions
    /// move into the Event instead of being copied (the engine's path).
    pub fn issue_owned(
        &self,
        mut draft: EventDraft,
        ids: &mut dyn EventIdSource,
        now: UnixMillis,
    ) -> Result<SignedEvent, EventBuildError> {
        let payload = std::mem::take(&mut draft.payload);
        let extensions = draft.extensions.take();
        self.issue_parts(&draft, payload, extensions, ids, now)
    }

    fn issue_parts(
        &self,
        draft: &EventDraft,
        payload: Object,
        extensions: Option<Object>,
        ids: &mut dyn EventIdSource,
        now: UnixMillis,
    ) -> Result<SignedEvent, EventBuildError> {
        let event_id = ids.next_event_id();
        let unsigned = self.unsigned_object(draft, payload, extensions, &event_id, now)?;
        let signed = sign_event(unsigned, &self.signer).map_err(EventBuildError::Signing)?;
        validate(self.codec.catalog(), &signed).map_err(EventBuildError::Signing)?;
        if self.self_check {
            self_check(&signed, &self.signer).map_err(EventBuildError::Signing)?;
        }
        Ok(SignedEvent {
            event_id,
            sequence: draft.position.as_ref().map(|p| p.sequence),
            signed,
        })
    }
}

/// A signed Event ready to append.
#[derive(Debug, Clone)]
pub struct SignedEvent {
    event_id: String,
    sequence: Option<u64>,
    signed: SignedDocument,
}

impl SignedEvent {
    /// The Event ID.
    pub fn event_id(&self) -> &str {
        &self.event_id
    }

    /// The Group sequence (`None` for Organization-scoped Events).
    pub fn sequence(&self) -> Option<u64> {
        self.sequence
    }

    /// The canonical (JCS) bytes of the signed Event: what is stored and sent.
    pub fn bytes(&self) -> &[u8] {
        &self.signed.bytes
    }

    /// The signed document as built. [`bytes`](Self::bytes) are its JCS form, which writes
    /// numbers in ECMAScript form (RFC 8785): keep payload integers within ±(2^53−1) (I-JSON),
    /// or receivers read a different number than this value holds.
    pub fn document(&self) -> &Value {
        &self.signed.document
    }

    /// `sha256:` of the Event's signing input.
    pub fn signing_hash(&self) -> &str {
        &self.signed.signing_hash
    }

    /// Everything the signer produced.
    pub fn signed_document(&self) -> &SignedDocument {
        &self.signed
    }

    /// Runs the six-stage verifier (Event profile) on the signed bytes against `resolver`: the
    /// check the engine's tests apply to every Event they see (issue 10), and a receiver's view.
    pub fn verify(
        &self,
        resolver: &dyn KeyResolver,
    ) -> Result<VerifiedSignedDocument, VerificationError> {
        SignedDocumentCodec::new().verify(SignedDocumentKind::Event, &self.signed.bytes, resolver)
    }

    /// Where this Event is, for a deduplication receipt (§15.1).
    pub fn event_ref(&self) -> EventRef {
        let group = self
            .signed
            .document
            .get("groupId")
            .and_then(Value::as_str)
            .map(str::to_owned);
        EventRef {
            event_id: self.event_id.clone(),
            position: group.zip(self.sequence),
        }
    }

    /// The Event-log record (`None` for Organization-scoped Events, which have no sequence).
    pub fn to_record(&self) -> Option<EventRecord> {
        let sequence = self.sequence?;
        Some(EventRecord::new(
            sequence,
            &self.event_id,
            self.signed.bytes.as_slice(),
        ))
    }
}
