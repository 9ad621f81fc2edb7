//! Building Registry evidence for one's own Agents: the first thing a new user needs after
//! making keys (own keys → Registry → sign → verify).
//!
//! The builder writes the cryptography bundle's fixture format (`registry-fixture.schema.json`:
//! `{organizationId, bindings: [{keyId, principal, algorithm, publicKey, validFrom,
//! validityHistory}]}`) and then validates the result with the same stage-4 rules the verifier
//! applies (§6.4), so a builder can never hand out evidence the verifier would refuse.

use crate::crypto::PublicKey;
use crate::json::{Number, Object, Value, canonical_bytes};
use crate::principal::Principal;
use crate::schema_formats::{Timestamp, encode_base64url};

use super::error::{RegistryError, RegistryErrorReason as R};
use super::snapshot::KeyRegistrySnapshot;

/// One validity-history record of a binding (§6.4 stage 4: append-only, contiguous sequences
/// from 1; each record may only move `validUntil`/`revokedAt` earlier).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidityRecord {
    /// When the record was appended (RFC 3339, §2 profile).
    pub recorded_at: String,
    /// End of validity (exclusive), if set by this record.
    pub valid_until: Option<String>,
    /// Revocation instant, if set by this record.
    pub revoked_at: Option<String>,
}

/// Builds Organization-wide Registry evidence. Every call checks its own inputs; [`build`]
/// runs the full stage-4 validation over the whole result.
///
/// ```
/// use missionweaveprotocol::crypto::SigningKey;
/// use missionweaveprotocol::registry::RegistryBuilder;
/// use missionweaveprotocol::{Principal, PrincipalType};
///
/// let key = SigningKey::from_seed("urn:missionweaveprotocol:key:alice-1", &[7; 32]);
/// let mut builder = RegistryBuilder::new("urn:missionweaveprotocol:organization:acme");
/// builder.add_key(
///     key.key_id(),
///     Principal::new(PrincipalType::Agent, "urn:missionweaveprotocol:agent:alice"),
///     &key.public_key_bytes(),
///     "2026-01-01T00:00:00Z",
/// )?;
/// let (bytes, snapshot) = builder.build()?;
/// assert_eq!(snapshot.len(), 1);
/// assert!(bytes.starts_with(b"{\"bindings\":["));
/// # Ok::<(), missionweaveprotocol::registry::RegistryError>(())
/// ```
///
/// [`build`]: RegistryBuilder::build
#[derive(Debug, Clone)]
pub struct RegistryBuilder {
    organization_id: String,
    bindings: Vec<Value>,
}

impl RegistryBuilder {
    /// An empty Registry of `organization_id` (an absolute URI).
    pub fn new(organization_id: impl Into<String>) -> Self {
        Self {
            organization_id: organization_id.into(),
            bindings: Vec::new(),
        }
    }

    /// Binds `key_id` to `principal` with an Ed25519 public key, valid from `valid_from`.
    pub fn add_key(
        &mut self,
        key_id: &str,
        principal: Principal,
        public_key: &[u8],
        valid_from: &str,
    ) -> Result<&mut Self, RegistryError> {
        self.add_key_with_history(key_id, principal, public_key, valid_from, &[])
    }

    /// Like [`add_key`](Self::add_key), with a validity history (rotation or revocation).
    pub fn add_key_with_history(
        &mut self,
        key_id: &str,
        principal: Principal,
        public_key: &[u8],
        valid_from: &str,
        history: &[ValidityRecord],
    ) -> Result<&mut Self, RegistryError> {
        // The point checks of stage 4 (canonical, on the curve, torsion-free, not the identity),
        // reported now rather than at `build`.
        PublicKey::from_bytes(public_key).map_err(|e| {
            RegistryError::new(R::PublicKeyPoint, format!("{key_id}: public key: {e}"))
        })?;
        check_time(valid_from, key_id, "validFrom")?;
        let mut records = Vec::with_capacity(history.len());
        for (i, record) in history.iter().enumerate() {
            let mut o = Object::new();
            o.insert("sequence", Value::Number(Number::from_u64(i as u64 + 1)));
            check_time(&record.recorded_at, key_id, "recordedAt")?;
            o.insert("recordedAt", Value::string(&record.recorded_at));
            if let Some(until) = &record.valid_until {
                check_time(until, key_id, "validUntil")?;
                o.insert("validUntil", Value::string(until));
            }
            if let Some(revoked) = &record.revoked_at {
                check_time(revoked, key_id, "revokedAt")?;
                o.insert("revokedAt", Value::string(revoked));
            }
            records.push(Value::Object(o));
        }
        let mut binding = Object::new();
        binding.insert("keyId", Value::string(key_id));
        binding.insert("principal", principal.to_value());
        binding.insert("algorithm", Value::string("Ed25519"));
        binding.insert("publicKey", Value::string(encode_base64url(public_key)));
        binding.insert("validFrom", Value::string(valid_from));
        binding.insert("validityHistory", Value::Array(records));
        self.bindings.push(Value::Object(binding));
        Ok(self)
    }

    /// The evidence as a JSON value (fixture format), not yet validated.
    pub fn to_value(&self) -> Value {
        let mut root = Object::new();
        root.insert("organizationId", Value::string(&self.organization_id));
        root.insert("bindings", Value::Array(self.bindings.clone()));
        Value::Object(root)
    }

    /// The canonical (RFC 8785) evidence bytes and their validated snapshot. Fails with the
    /// stage-4 rule a verifier would apply (key ID reuse, public key reuse, …).
    pub fn build(&self) -> Result<(Vec<u8>, KeyRegistrySnapshot), RegistryError> {
        let bytes = canonical_bytes(&self.to_value())
            .map_err(|e| RegistryError::new(R::MalformedEvidence, e.to_string()))?;
        let snapshot = KeyRegistrySnapshot::from_bytes(&bytes)?;
        Ok((bytes, snapshot))
    }
}

fn check_time(text: &str, key_id: &str, member: &str) -> Result<(), RegistryError> {
    Timestamp::parse(text).map(|_| ()).map_err(|e| {
        let reason = if member == "validFrom" {
            R::ValidFrom
        } else {
            R::HistoryTimestamp
        };
        RegistryError::new(reason, format!("{key_id}: {member} {text:?}: {e}"))
    })
}
