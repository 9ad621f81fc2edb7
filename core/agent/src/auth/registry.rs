//! The Organization-registered Agent keys (§6.3: "Each Agent MUST have at least one
//! Organization-registered Ed25519 public key") and their validity (digest §2.18).
//!
//! A key ID names one (Agent, public key) binding for ever: registering it again with other
//! material, another Agent or another `validFrom` is refused. `validUntil` and `revokedAt` may
//! only be added or moved earlier; the effective value is always the earliest one seen.

use std::collections::HashMap;

use missionweaveprotocol::crypto::PublicKey;
use subtle::ConstantTimeEq;

use crate::auth::error::AuthError;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The key ID an Agent's key gets when none is named:
/// `urn:missionweaveprotocol:key:<last segment>`, the segment after the Agent ID's last `/` or
/// `:` (`agent://acme/reviewer` → `urn:missionweaveprotocol:key:reviewer`).
pub fn default_agent_key_id(agent_id: &str) -> Result<String, AuthError> {
    let segment = agent_id.rsplit(['/', ':']).next().unwrap_or_default();
    if segment.trim().is_empty() {
        return Err(AuthError::InvalidArgument(
            "agent_id has no final path or colon segment",
        ));
    }
    Ok(format!("urn:missionweaveprotocol:key:{segment}"))
}

/// The validity of a registered key. `None` means unbounded on that side / not revoked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeyValidity {
    /// The first instant the key is valid.
    pub valid_from: Option<UnixMillis>,
    /// The first instant the key is no longer valid.
    pub valid_until: Option<UnixMillis>,
    /// The first instant the key is revoked.
    pub revoked_at: Option<UnixMillis>,
}

/// One registered key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisteredKey {
    /// The Agent the key belongs to.
    pub agent_id: String,
    /// The key ID.
    pub key_id: String,
    /// The strictly decoded public key.
    pub public_key: PublicKey,
    /// Its validity.
    pub validity: KeyValidity,
}

impl RegisteredKey {
    /// Whether the key may be used at `at`: not revoked, not expired, already valid.
    pub fn check_at(&self, at: UnixMillis) -> Result<(), AuthError> {
        let v = &self.validity;
        if v.revoked_at.is_some_and(|revoked| revoked <= at) {
            return Err(AuthError::KeyRevoked);
        }
        if v.valid_until.is_some_and(|until| until <= at) {
            return Err(AuthError::KeyExpired);
        }
        if v.valid_from.is_some_and(|from| at < from) {
            return Err(AuthError::KeyNotYetValid);
        }
        Ok(())
    }
}

/// The earlier of two optional instants, where `None` is "not set".
fn earliest(a: Option<UnixMillis>, b: Option<UnixMillis>) -> Option<UnixMillis> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The Organization's Agent keys, by key ID (key IDs are unique across Agents).
#[derive(Debug, Clone, Default)]
pub struct AgentKeyRegistry {
    keys: HashMap<String, RegisteredKey>,
}

impl AgentKeyRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `public_key` (32 bytes) for `agent_id` under `key_id` (default:
    /// [`default_agent_key_id`]). Registering the same binding again is idempotent except that
    /// an earlier `valid_until`/`revoked_at` narrows the key (digest §2.18).
    pub fn register(
        &mut self,
        agent_id: &str,
        public_key: &[u8],
        key_id: Option<&str>,
        validity: KeyValidity,
    ) -> Result<(), AuthError> {
        if agent_id.is_empty() {
            return Err(AuthError::InvalidArgument("agent_id is empty"));
        }
        let key_id = match key_id {
            Some("") => return Err(AuthError::InvalidArgument("key_id is empty")),
            Some(id) => id.to_owned(),
            None => default_agent_key_id(agent_id)?,
        };
        if let (Some(from), Some(until)) = (validity.valid_from, validity.valid_until)
            && until <= from
        {
            return Err(AuthError::InvalidArgument(
                "valid_until must be after valid_from",
            ));
        }
        let public_key =
            PublicKey::from_bytes(public_key).map_err(|_| AuthError::InvalidPublicKey)?;
        match self.keys.get_mut(&key_id) {
            Some(existing) => {
                let same = existing.agent_id == agent_id
                    && bool::from(existing.public_key.as_bytes().ct_eq(public_key.as_bytes()))
                    && existing.validity.valid_from == validity.valid_from;
                if !same {
                    return Err(AuthError::KeyIdReused);
                }
                let v = &mut existing.validity;
                v.valid_until = earliest(v.valid_until, validity.valid_until);
                v.revoked_at = earliest(v.revoked_at, validity.revoked_at);
            }
            None => {
                self.keys.insert(
                    key_id.clone(),
                    RegisteredKey {
                        agent_id: agent_id.to_owned(),
                        key_id,
                        public_key,
                        validity,
                    },
                );
            }
        }
        Ok(())
    }

    /// The key of `agent_id` named `key_id` (default: [`default_agent_key_id`]), whatever its
    /// validity. A key of another Agent is [`AuthError::UnknownKey`].
    pub fn get(&self, agent_id: &str, key_id: Option<&str>) -> Result<&RegisteredKey, AuthError> {
        let default;
        let key_id = match key_id {
            Some(id) => id,
            None => {
                default = default_agent_key_id(agent_id)?;
                &default
            }
        };
        self.keys
            .get(key_id)
            .filter(|key| key.agent_id == agent_id)
            .ok_or(AuthError::UnknownKey)
    }

    /// The key of `agent_id` named `key_id`, valid at `at`.
    pub fn resolve(
        &self,
        agent_id: &str,
        key_id: Option<&str>,
        at: UnixMillis,
    ) -> Result<&RegisteredKey, AuthError> {
        let key = self.get(agent_id, key_id)?;
        key.check_at(at)?;
        Ok(key)
    }

    /// Whether `public_key_bytes` is the registered material of (`agent_id`, `key_id`),
    /// compared in constant time; validity is not considered.
    pub fn matches_registered_public_key(
        &self,
        agent_id: &str,
        key_id: &str,
        public_key_bytes: &[u8],
    ) -> bool {
        self.get(agent_id, Some(key_id)).is_ok_and(|key| {
            public_key_bytes.len() == 32
                && bool::from(key.public_key.as_bytes().as_slice().ct_eq(public_key_bytes))
        })
    }

    /// Revokes the key from `revoked_at` on; an earlier existing revocation is kept.
    pub fn revoke(
        &mut self,
        agent_id: &str,
        key_id: &str,
        revoked_at: UnixMillis,
    ) -> Result<(), AuthError> {
        self.get(agent_id, Some(key_id))?;
        if let Some(key) = self.keys.get_mut(key_id) {
            key.validity.revoked_at = earliest(key.validity.revoked_at, Some(revoked_at));
        }
        Ok(())
    }

    /// How many keys are registered.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether no key is registered.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}
