//! The check of every Event the Core serves from its store (`docs/store.md`, "Data at rest";
//! issue 11: "the Event's signature and hash chain are checked on load").
//!
//! A backend's hash chain (`store::integrity`) detects damage, but anyone who rewrites a row
//! can also recompute the chain; the Group Authority's Ed25519 signature over the Event
//! (§4.6, §6.4 event profile) is what they cannot recompute. So before
//! [`Core::replay`](super::Core::replay) serves a page, each Event it has not already checked
//! (`verified_events.rs`: same bytes at the same position, recognized by digest) must:
//!
//! - parse strictly and name the log position it was read from (`eventId`, `groupId`,
//!   `sequence` equal to the log record's: a valid Event moved to another position is refused);
//! - carry a signature by the Group Authority: under the issuer's own key, the signature
//!   equation over the §6.4 signing bytes with the issuer's public key (no Registry lookup, no
//!   schema pass: one Ed25519 verification per Event); under another key ID (an Event signed
//!   before a key rotation), the six-stage verifier against the Core's Registry, whose signer
//!   must be the issuer's Principal (`acceptedBy` alone names no one: a key of another
//!   registered Principal with `acceptedBy` rewritten to match it is refused).
//!
//! The first Event that fails refuses the whole page: `INTERNAL_ERROR` (`store_corrupt`, as
//! the store reports its own integrity failures), naming the Event ID and sequence; nothing is
//! served.
//!
//! ## When the store's key is enough (issue 27, item 3)
//!
//! The check above exists for one adversary: whoever can write the database but holds neither
//! the Group Authority's signing key nor the store's integrity key. Against an unkeyed store
//! (SHA-256 chain) that adversary can rewrite a row and recompute the chain, so the signature
//! is the only thing left they cannot produce (§15.2: every Group Event carries the Group
//! Authority signature). A keyed store (`StoreOptions::integrity_key`, HMAC-SHA256 chain over
//! group, sequence, Event ID and body, `store::integrity`) closes the same gap: a row edited,
//! moved to another position or planted fails its MAC on the read that would serve it, and the
//! read refuses it as `store_corrupt` before the Core sees it. The only writers holding the key
//! are the Group Authority's own processes, whose commits append the Events they issued and
//! signed (§4.6, §15.2; the key's holders are trusted to write rows, `IntegrityKey`). Serving
//! such a row needs no second proof of the same origin: trust changes hands at the client,
//! which verifies the Group Authority signature of every Event it receives (§6.4 event profile,
//! §16 "verifies its hash and signature"), not between the Core and its own keyed store.
//!
//! So a store that reports [`Store::authenticates_events`](crate::store::Store) is served
//! without this check. That holds only when every Event was authenticated under the key when
//! it was written: a key *adopted* over stored Events (`StoreOptions::adopt_key`) sealed rows
//! that were protected by the recomputable unkeyed chain until then, so a forgery planted
//! before the adoption would now carry a valid MAC. Such a store records a distinct key check
//! (`Integrity::adopted_key_check`, a MAC as well: it cannot be turned back into the other
//! without the key) and keeps the once-per-process signature check below, as does every
//! unkeyed store and the in-memory store. Not detected by either check, as before: the whole
//! store (or a Group's log with its head) rolled back to an earlier genuine state.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use missionweaveprotocol::crypto::{PublicKey, Signer, split_signature};
use missionweaveprotocol::json::{Document, View};
use missionweaveprotocol::schema_formats::decode_base64url;
use missionweaveprotocol::signed_documents::signing_bytes_of;
use missionweaveprotocol::{KeyRegistrySnapshot, SignedDocumentCodec, SignedDocumentKind};

use crate::events::EventIssuer;
use crate::service::error::CoreError;
use crate::store::{EventRecord, StoreError};

/// What every served Event of one page is checked against.
pub(super) struct ServedEventCheck<'a, G> {
    issuer: &'a EventIssuer<G>,
    registry: &'a Arc<KeyRegistrySnapshot>,
    codec: SignedDocumentCodec<'static>,
    /// The issuer's decoded public key (`None`: the signer's key does not decode, so nothing
    /// verifies on the fast path and every Event goes to the Registry).
    key: Option<PublicKey>,
}

impl<'a, G: Signer> ServedEventCheck<'a, G> {
    pub(super) fn new(issuer: &'a EventIssuer<G>, registry: &'a Arc<KeyRegistrySnapshot>) -> Self {
        Self {
            issuer,
            registry,
            codec: SignedDocumentCodec::new(),
            key: issuer.signer().public_key().ok(),
        }
    }

    /// Checks every Event of a page of `group` whose `known` flag is `false` (the Events not
    /// already checked by this Core, `verified_events.rs`); the first failure is the error.
    /// Adds each Event checked in full, refused or not, to `checked`.
    pub(super) fn check_page(
        &self,
        group: &str,
        events: &[EventRecord],
        known: &[bool],
        checked: &AtomicU64,
    ) -> Result<(), CoreError> {
        for (record, _) in events.iter().zip(known).filter(|(_, known)| !**known) {
            checked.fetch_add(1, Ordering::Relaxed);
            self.check(group, record)
                .map_err(|why| refusal(group, record, why))?;
        }
        Ok(())
    }

    fn check(&self, group: &str, record: &EventRecord) -> Result<(), String> {
        let document = Document::parse(&record.body, self.codec.limits())
            .map_err(|e| format!("the stored bytes are not strict JSON: {e}"))?;
        let root = document.root();
        let Some(object) = root.as_object() else {
            return Err("the stored bytes are not a JSON object".to_owned());
        };
        let text = |name: &str| object.get(name).and_then(|v| v.as_str());
        if text("eventId") != Some(&*record.event_id) {
            return Err(format!(
                "its eventId {:?} is not the log record's",
                text("eventId")
            ));
        }
        if text("groupId") != Some(group) {
            return Err(format!(
                "its groupId {:?} is not the log's Group",
                text("groupId")
            ));
        }
        let sequence = object
            .get("sequence")
            .and_then(|v| v.as_number())
            .and_then(|n| n.as_u64());
        if sequence != Some(record.sequence) {
            return Err(format!("its sequence {sequence:?} is not the log position"));
        }
        let key_id = object
            .get("signature")
            .and_then(|s| s.get("keyId"))
            .and_then(|v| v.as_str());
        match (&self.key, key_id) {
            (Some(key), Some(id)) if id == self.issuer.signer().key_id() => {
                signed_by(root, key, id)
            }
            _ => self.signed_by_authority_in_registry(record),
        }
    }

    /// An Event under a key ID other than the issuer's current one: the six stages against the
    /// Registry, and the verified signer must be this Group Authority.
    fn signed_by_authority_in_registry(&self, record: &EventRecord) -> Result<(), String> {
        let verified = self
            .codec
            .verify(SignedDocumentKind::Event, &record.body, self.registry)
            .map_err(|e| format!("its signature does not verify: {}", e.protected()))?;
        if &verified.principal != self.issuer.accepted_by() {
            return Err(format!(
                "it is signed by {} (key {}), not by the Group Authority {}",
                verified.principal,
                verified.key_id,
                self.issuer.accepted_by()
            ));
        }
        Ok(())
    }
}

/// The signature equation of `document`'s envelope over its §6.4 signing bytes with `key`.
fn signed_by(document: View<'_>, key: &PublicKey, key_id: &str) -> Result<(), String> {
    let value = document
        .get("signature")
        .and_then(|s| s.get("value"))
        .and_then(|v| v.as_str())
        .ok_or("its signature envelope has no value")?;
    let bytes = decode_base64url(value).ok_or("its signature value is not base64url")?;
    let parts = split_signature(&bytes).map_err(|e| format!("its signature: {e}"))?;
    let message =
        signing_bytes_of(document).map_err(|e| format!("its signing bytes: {}", e.protected()))?;
    if key.verify_equation(&parts.r, &parts.s, &message) {
        Ok(())
    } else {
        Err(format!(
            "its signature does not verify with the Group Authority's key {key_id}"
        ))
    }
}

/// The refusal of a page holding `record`: the store's integrity error for the Event, with its
/// ID and sequence as fields; never retryable (the stored bytes will not change by retrying).
fn refusal(group: &str, record: &EventRecord, why: String) -> CoreError {
    let corrupt = StoreError::Corrupt {
        what: "event",
        locator: format!("{group} #{}", record.sequence),
        detail: format!("Event {}: {why}", record.event_id),
    };
    let mut error = CoreError::describe(&corrupt);
    error.fields = error.fields.text("event_id", &*record.event_id).integer(
        "sequence",
        i64::try_from(record.sequence).unwrap_or(i64::MAX),
    );
    error.retryable = false;
    error
}
