//! The harness Organization: fixed principals with keys from fixed seeds, the Registry binding
//! them (§6.4 stage 4), and the Group Authority that signs Events. Every process that builds a
//! [`Keys`] gets the same keys, so Commands signed in one process verify in another and Events
//! written by one worker verify when another process reads them.

use std::sync::Arc;

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::registry::RegistryBuilder;
use missionweaveprotocol::{KeyRegistrySnapshot, Principal, PrincipalType};
use missionweaveprotocol_engine::events::EventIssuer;

use crate::error::HarnessError;

pub const ORG: &str = "urn:missionweaveprotocol:organization:harness";
/// The human MissionOwner of every harness Mission.
pub const OWNER: &str = "urn:missionweaveprotocol:human:harness-owner";
/// The Coordinator Agent of every harness Mission.
pub const COORDINATOR: &str = "urn:missionweaveprotocol:agent:harness-coordinator";
/// Worker Agents: the candidates of race offers, the Worker of the scenario.
pub const WORKERS: [&str; 4] = [
    "urn:missionweaveprotocol:agent:harness-worker-0",
    "urn:missionweaveprotocol:agent:harness-worker-1",
    "urn:missionweaveprotocol:agent:harness-worker-2",
    "urn:missionweaveprotocol:agent:harness-worker-3",
];
/// The identity service: the `OrganizationAuthorizer` bootstrap service that opens Sessions
/// (§6.3, §15.1).
pub const IDENTITY: &str = "urn:missionweaveprotocol:service:harness-identity";
/// The Organization policy service (`OrganizationAuthorizer` policy service).
pub const POLICY: &str = "urn:missionweaveprotocol:service:harness-policy";
/// The Group Authority: signs every Event (its key is in the Registry, so Events verify).
pub const AUTHORITY: &str = "urn:missionweaveprotocol:service:harness-authority";

/// Every principal with a Registry key, and its key seed byte.
const PRINCIPALS: [(PrincipalType, &str, u8); 9] = [
    (PrincipalType::Human, OWNER, 61),
    (PrincipalType::Agent, COORDINATOR, 62),
    (PrincipalType::Agent, WORKERS[0], 63),
    (PrincipalType::Agent, WORKERS[1], 64),
    (PrincipalType::Agent, WORKERS[2], 65),
    (PrincipalType::Agent, WORKERS[3], 66),
    (PrincipalType::Service, IDENTITY, 67),
    (PrincipalType::Service, POLICY, 68),
    (PrincipalType::Service, AUTHORITY, 69),
];

/// The Agents whose Sessions the setup opens (every Agent of the harness).
pub fn agents() -> impl Iterator<Item = &'static str> {
    std::iter::once(COORDINATOR).chain(WORKERS)
}

/// The harness keys and Registry.
#[derive(Debug, Clone)]
pub struct Keys {
    keys: Vec<(Principal, SigningKey)>,
    registry: Arc<KeyRegistrySnapshot>,
}

impl Keys {
    /// Derives every key from its fixed seed and builds the Registry binding them.
    pub fn new() -> Result<Self, HarnessError> {
        let mut builder = RegistryBuilder::new(ORG);
        let mut keys = Vec::with_capacity(PRINCIPALS.len());
        for (kind, id, seed) in PRINCIPALS {
            let key = SigningKey::from_seed(
                format!("urn:missionweaveprotocol:key:harness-{seed}"),
                &[seed; 32],
            );
            let principal = Principal::new(kind, id);
            builder
                .add_key(
                    key.key_id(),
                    principal.clone(),
                    &key.public_key_bytes(),
                    "2026-01-01T00:00:00Z",
                )
                .map_err(|e| HarnessError::workload(format!("registry key of {id}: {e}")))?;
            keys.push((principal, key));
        }
        let (_, registry) = builder
            .build()
            .map_err(|e| HarnessError::workload(format!("registry: {e}")))?;
        Ok(Self {
            keys,
            registry: Arc::new(registry),
        })
    }

    /// The Registry Commands and Events are verified against.
    pub fn registry(&self) -> &Arc<KeyRegistrySnapshot> {
        &self.registry
    }

    /// The principal `id` and its signing key.
    pub fn principal(&self, id: &str) -> Result<(&Principal, &SigningKey), HarnessError> {
        self.keys
            .iter()
            .find(|(p, _)| p.id == id)
            .map(|(p, k)| (p, k))
            .ok_or_else(|| HarnessError::argument("principal", format!("no harness key for {id}")))
    }

    /// The Group Authority's Event issuer.
    pub fn issuer(&self) -> Result<EventIssuer<SigningKey>, HarnessError> {
        let (principal, key) = self.principal(AUTHORITY)?;
        Ok(EventIssuer::new(principal.clone(), key.clone()))
    }
}
