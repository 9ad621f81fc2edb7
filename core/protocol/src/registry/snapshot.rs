//! Validation of one complete Registry snapshot, in the declared order of §6.4 stage 4, and O(1)
//! key selection afterwards.

use std::collections::HashMap;

use super::ExpectedSigner;
use super::error::{RegistryError, RegistryErrorReason as R};
use crate::crypto::PublicKey;
use crate::json::{Object, Value, parse_state, sha256_prefixed};
use crate::principal::{Principal, PrincipalType};
use crate::schema_formats::{
    Instant, MAX_SAFE_INTEGER, Timestamp, decode_base64url, is_protocol_uri,
};

/// One validated key binding with its effective validity interval.
#[derive(Debug, Clone)]
pub struct KeyBinding {
    pub key_id: String,
    pub principal: Principal,
    pub public_key: PublicKey,
    /// The `publicKey` text exactly as registered.
    pub public_key_text: String,
    pub valid_from: Timestamp,
    /// Effective (earliest) `validUntil`, if any.
    pub valid_until: Option<Timestamp>,
    /// Effective (earliest) `revokedAt`, if any.
    pub revoked_at: Option<Timestamp>,
}

impl KeyBinding {
    /// `validFrom ≤ t`, `t < validUntil` and `t < revokedAt` (half-open intervals, §6.4).
    pub fn check_interval(&self, t: &Instant) -> Result<(), RegistryError> {
        if t < self.valid_from.instant() {
            return Err(RegistryError::new(
                R::NotYetValid,
                format!("key {} is valid from {}", self.key_id, self.valid_from),
            ));
        }
        if let Some(until) = &self.valid_until
            && t >= until.instant()
        {
            return Err(RegistryError::new(
                R::Expired,
                format!("key {} is valid until {until}", self.key_id),
            ));
        }
        if let Some(revoked) = &self.revoked_at
            && t >= revoked.instant()
        {
            return Err(RegistryError::new(
                R::Revoked,
                format!("key {} was revoked at {revoked}", self.key_id),
            ));
        }
        Ok(())
    }
}

/// A validated, complete, Organization-scoped Registry snapshot.
#[derive(Debug, Clone)]
pub struct KeyRegistrySnapshot {
    organization_id: String,
    digest: String,
    bindings: HashMap<String, KeyBinding>,
}

#[derive(Clone, PartialEq)]
struct HistoryRecord {
    recorded_at: Instant,
    valid_until: Option<Instant>,
    revoked_at: Option<Instant>,
    texts: (Timestamp, Option<Timestamp>, Option<Timestamp>),
}

fn exact_members(object: &Object, required: &[&str], optional: &[&str]) -> bool {
    required.iter().all(|name| object.contains(name))
        && object.iter().all(|(key, _)| {
            key.as_str()
                .is_some_and(|k| required.contains(&k) || optional.contains(&k))
        })
}

fn uri_member<'v>(
    object: &'v Object,
    name: &str,
    reason: R,
    context: &str,
) -> Result<&'v str, RegistryError> {
    object
        .get(name)
        .and_then(Value::as_str)
        .filter(|text| is_protocol_uri(text))
        .ok_or_else(|| {
            RegistryError::new(
                reason,
                format!("{context}: {name} is not a protocol identifier"),
            )
        })
}

fn timestamp_member(
    object: &Object,
    name: &str,
    reason: R,
    context: &str,
) -> Result<Timestamp, RegistryError> {
    let text = object
        .get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| RegistryError::new(reason, format!("{context}: {name} is not a string")))?;
    Timestamp::parse(text)
        .map_err(|error| RegistryError::new(reason, format!("{context}: {name} {text:?}: {error}")))
}

impl KeyRegistrySnapshot {
    /// Strictly parses and fully validates Registry evidence bytes (every binding, before any
    /// selection).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, RegistryError> {
        let value = parse_state(bytes)
            .map_err(|e| RegistryError::new(R::MalformedEvidence, e.to_string()))?;
        let mut snapshot = Self::from_value(&value)?;
        snapshot.digest = sha256_prefixed(bytes);
        Ok(snapshot)
    }

    /// Validates parsed Registry evidence.
    pub fn from_value(value: &Value) -> Result<Self, RegistryError> {
        let root = value
            .as_object()
            .filter(|o| exact_members(o, &["organizationId", "bindings"], &[]))
            .ok_or_else(|| {
                RegistryError::new(
                    R::MalformedEvidence,
                    "evidence must be exactly {organizationId, bindings}",
                )
            })?;
        let organization_id =
            uri_member(root, "organizationId", R::OrganizationId, "registry")?.to_owned();
        let entries = root
            .get("bindings")
            .and_then(Value::as_array)
            .filter(|items| !items.is_empty())
            .ok_or_else(|| {
                RegistryError::new(R::NoBindings, "bindings must be a non-empty array")
            })?;

        // Grown as bindings validate, never sized from the untrusted entry count: reserving
        // four maps for `[null, null, …]` cost ≈ 1.3 KiB per 5-byte entry (270× the evidence;
        // found by the `registry` fuzz target, issue 9 item 1).
        let mut bindings: HashMap<String, KeyBinding> = HashMap::new();
        let mut by_key_bytes: HashMap<[u8; 32], (String, Principal)> = HashMap::new();
        let mut by_material: HashMap<(Principal, [u8; 32]), String> = HashMap::new();
        let mut histories: HashMap<String, HashMap<i64, HistoryRecord>> = HashMap::new();

        for (index, entry) in entries.iter().enumerate() {
            let context = format!("binding {index}");
            let binding = entry
                .as_object()
                .filter(|o| {
                    exact_members(
                        o,
                        &[
                            "keyId",
                            "principal",
                            "algorithm",
                            "publicKey",
                            "validFrom",
                            "validityHistory",
                        ],
                        &[],
                    )
                })
                .ok_or_else(|| {
                    RegistryError::new(R::BindingShape, format!("{context}: unexpected member set"))
                })?;
            let key_id = uri_member(binding, "keyId", R::KeyIdNotUri, &context)?.to_owned();
            let principal = binding
                .get("principal")
                .and_then(Principal::from_value)
                .filter(|p| is_protocol_uri(&p.id))
                .ok_or_else(|| RegistryError::new(R::PrincipalShape, format!("{context}: principal must be exactly {{type, id}} with a protocol identifier")))?;
            if binding.get("algorithm").and_then(Value::as_str) != Some("Ed25519") {
                return Err(RegistryError::new(
                    R::Algorithm,
                    format!("{context}: algorithm is not Ed25519"),
                ));
            }
            let public_key_text = binding
                .get("publicKey")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    RegistryError::new(
                        R::PublicKeyEncoding,
                        format!("{context}: publicKey is not a string"),
                    )
                })?;
            let key_bytes = decode_base64url(public_key_text).ok_or_else(|| {
                RegistryError::new(
                    R::PublicKeyEncoding,
                    format!("{context}: publicKey is not canonical unpadded base64url"),
                )
            })?;
            let public_key = PublicKey::from_bytes(&key_bytes).map_err(|e| {
                RegistryError::new(R::PublicKeyPoint, format!("{context}: publicKey: {e}"))
            })?;
            let key_array = *public_key.as_bytes();
            let valid_from = timestamp_member(binding, "validFrom", R::ValidFrom, &context)?;
            let history = binding
                .get("validityHistory")
                .and_then(Value::as_array)
                .ok_or_else(|| {
                    RegistryError::new(
                        R::HistoryShape,
                        format!("{context}: validityHistory is not an array"),
                    )
                })?;

            // Immutable binding: a repeated key ID must repeat the same material exactly.
            if let Some(existing) = bindings.get(&key_id)
                && (existing.principal != principal
                    || existing.public_key.as_bytes() != &key_array
                    || existing.valid_from.as_str() != valid_from.as_str())
            {
                return Err(RegistryError::new(
                    R::KeyIdReused,
                    format!("{context}: key ID {key_id} reused with different material"),
                ));
            }
            // No public-key reuse under another Principal or key ID.
            match by_key_bytes.get(&key_array) {
                Some((other_key_id, other_principal))
                    if other_key_id != &key_id || other_principal != &principal =>
                {
                    return Err(RegistryError::new(
                        R::PublicKeyReused,
                        format!(
                            "{context}: the same public key is registered under another Principal or key ID"
                        ),
                    ));
                }
                _ => {}
            }
            // No key-ID alias: one (Principal, algorithm, key) has one key ID.
            match by_material.get(&(principal.clone(), key_array)) {
                Some(other_key_id) if other_key_id != &key_id => {
                    return Err(RegistryError::new(
                        R::KeyIdAlias,
                        format!("{context}: key ID {key_id} aliases {other_key_id}"),
                    ));
                }
                _ => {}
            }
            let records = histories.entry(key_id.clone()).or_default();
            for (position, record) in history.iter().enumerate() {
                let record_context = format!("{context} history {position}");
                let object = record
                    .as_object()
                    .filter(|o| {
                        exact_members(o, &["sequence", "recordedAt"], &["validUntil", "revokedAt"])
                    })
                    .ok_or_else(|| {
                        RegistryError::new(
                            R::HistoryShape,
                            format!("{record_context}: unexpected member set"),
                        )
                    })?;
                let sequence = object
                    .get("sequence")
                    .and_then(Value::as_number)
                    .and_then(|n| n.as_i64())
                    .filter(|n| (1..=MAX_SAFE_INTEGER).contains(n))
                    .ok_or_else(|| {
                        RegistryError::new(
                            R::HistoryShape,
                            format!("{record_context}: sequence is not a positive safe integer"),
                        )
                    })?;
                let recorded_at =
                    timestamp_member(object, "recordedAt", R::HistoryTimestamp, &record_context)?;
                let valid_until = object
                    .contains("validUntil")
                    .then(|| {
                        timestamp_member(object, "validUntil", R::HistoryTimestamp, &record_context)
                    })
                    .transpose()?;
                let revoked_at = object
                    .contains("revokedAt")
                    .then(|| {
                        timestamp_member(object, "revokedAt", R::HistoryTimestamp, &record_context)
                    })
                    .transpose()?;
                let parsed = HistoryRecord {
                    recorded_at: recorded_at.instant().clone(),
                    valid_until: valid_until.as_ref().map(|t| t.instant().clone()),
                    revoked_at: revoked_at.as_ref().map(|t| t.instant().clone()),
                    texts: (recorded_at, valid_until, revoked_at),
                };
                match records.get(&sequence) {
                    Some(existing)
                        if existing.recorded_at != parsed.recorded_at
                            || existing.valid_until != parsed.valid_until
                            || existing.revoked_at != parsed.revoked_at =>
                    {
                        return Err(RegistryError::new(
                            R::HistorySequence,
                            format!(
                                "{record_context}: sequence {sequence} repeated with different values"
                            ),
                        ));
                    }
                    Some(_) => {}
                    None => {
                        records.insert(sequence, parsed);
                    }
                }
            }
            by_key_bytes.insert(key_array, (key_id.clone(), principal.clone()));
            by_material.insert((principal.clone(), key_array), key_id.clone());
            bindings.entry(key_id.clone()).or_insert(KeyBinding {
                key_id,
                principal,
                public_key,
                public_key_text: public_key_text.to_owned(),
                valid_from,
                valid_until: None,
                revoked_at: None,
            });
        }

        for (key_id, records) in histories {
            let mut previous: Option<&HistoryRecord> = None;
            let mut valid_until: Option<&HistoryRecord> = None;
            let mut revoked_at: Option<&HistoryRecord> = None;
            for sequence in 1..=records.len() as i64 {
                let record = records.get(&sequence).ok_or_else(|| {
                    RegistryError::new(
                        R::HistorySequence,
                        format!("key {key_id}: validity history is not contiguous from 1"),
                    )
                })?;
                if let Some(previous) = previous
                    && record.recorded_at < previous.recorded_at
                {
                    return Err(RegistryError::new(
                        R::HistoryOrder,
                        format!("key {key_id}: recordedAt decreases at sequence {sequence}"),
                    ));
                }
                if let Some(until) = &record.valid_until {
                    if valid_until
                        .and_then(|r| r.valid_until.as_ref())
                        .is_some_and(|earlier| until > earlier)
                    {
                        return Err(RegistryError::new(
                            R::HistoryMovedLater,
                            format!("key {key_id}: validUntil moved later at sequence {sequence}"),
                        ));
                    }
                    valid_until = Some(record);
                }
                if let Some(revoked) = &record.revoked_at {
                    if revoked_at
                        .and_then(|r| r.revoked_at.as_ref())
                        .is_some_and(|earlier| revoked > earlier)
                    {
                        return Err(RegistryError::new(
                            R::HistoryMovedLater,
                            format!("key {key_id}: revokedAt moved later at sequence {sequence}"),
                        ));
                    }
                    revoked_at = Some(record);
                }
                previous = Some(record);
            }
            if let Some(binding) = bindings.get_mut(&key_id) {
                binding.valid_until = valid_until.and_then(|r| r.texts.1.clone());
                binding.revoked_at = revoked_at.and_then(|r| r.texts.2.clone());
            }
        }

        Ok(Self {
            organization_id,
            digest: String::new(),
            bindings,
        })
    }

    /// The Organization the evidence covers.
    pub fn organization_id(&self) -> &str {
        &self.organization_id
    }

    /// `sha256:` digest of the evidence bytes (empty when built from a value).
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// Number of distinct key IDs.
    pub fn len(&self) -> usize {
        self.bindings.len()
    }

    /// Whether there are no bindings (never true for a validated snapshot).
    pub fn is_empty(&self) -> bool {
        self.bindings.is_empty()
    }

    /// The binding for `key_id` (byte-equal), if any.
    pub fn binding(&self, key_id: &str) -> Option<&KeyBinding> {
        self.bindings.get(key_id)
    }

    /// Selects the key, applies the signer rule and the protected-time interval (§6.4 stage 4).
    pub fn select(
        &self,
        key_id: &str,
        signer: &ExpectedSigner,
        protected: &Instant,
    ) -> Result<&KeyBinding, RegistryError> {
        let binding = self.bindings.get(key_id).ok_or_else(|| {
            RegistryError::new(R::UnknownKey, format!("no binding for key ID {key_id}"))
        })?;
        let signer_ok = match signer {
            ExpectedSigner::ServicePrincipal => binding.principal.kind == PrincipalType::Service,
            ExpectedSigner::Principal(principal) => &binding.principal == principal,
        };
        if !signer_ok {
            return Err(RegistryError::new(
                R::SignerMismatch,
                format!(
                    "key {key_id} is bound to {}, not the expected signer",
                    binding.principal
                ),
            ));
        }
        binding.check_interval(protected)?;
        Ok(binding)
    }
}
