//! A small signed world for backend tests that run the real engine over a store (SQLite,
//! PostgreSQL, stores opened by URL): an Organization Registry with the owner's and the Group
//! Authority's keys, the Event issuer, and signed, verified `mission.create` Commands. One
//! definition, so every backend's engine test signs the same bytes.

use std::sync::Arc;

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::registry::RegistryBuilder;
use missionweaveprotocol::{
    KeyRegistrySnapshot, Principal, PrincipalType, SignedDocumentCodec, SignedDocumentKind, json,
};

use crate::engine::Engine;
use crate::events::{EventIssuer, SequentialEventIds};
use crate::ingress::{AllowAllAuthorizerForTests, CommandIngress, VerifiedCommand};
use crate::store::Store;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The Organization.
pub const ORG: &str = "urn:missionweaveprotocol:organization:acme";
/// The human owner who signs every Command.
pub const OWNER: &str = "urn:missionweaveprotocol:human:alice";
/// The Group Authority that signs every Event.
pub const AUTHORITY: &str = "urn:missionweaveprotocol:service:group-authority";
/// The Group of [`create`].
pub const GROUP: &str = "urn:missionweaveprotocol:group:finance";
/// The Mission of [`create`].
pub const MISSION: &str = "urn:missionweaveprotocol:mission:close-books";
/// 2026-07-15T09:30:00Z, the instant every Command is issued and verified at.
pub const NOW: UnixMillis = UnixMillis(1_784_107_800_000);

/// The owner's and the Group Authority's keys and the Registry binding them.
#[allow(missing_debug_implementations)] // keys: nothing to print
pub struct Keys {
    /// The owner's key (signs Commands).
    pub owner: SigningKey,
    /// The Group Authority's key (signs Events).
    pub authority: SigningKey,
    /// The Organization Registry.
    pub registry: Arc<KeyRegistrySnapshot>,
}

/// The keys, from fixed seeds.
pub fn keys() -> Keys {
    let owner = SigningKey::from_seed("urn:missionweaveprotocol:key:alice-1", &[8; 32]);
    let authority = SigningKey::from_seed("urn:missionweaveprotocol:key:authority-1", &[10; 32]);
    let mut builder = RegistryBuilder::new(ORG);
    for (key, kind, id) in [
        (&owner, PrincipalType::Human, OWNER),
        (&authority, PrincipalType::Service, AUTHORITY),
    ] {
        builder
            .add_key(
                key.key_id(),
                Principal::new(kind, id),
                &key.public_key_bytes(),
                "2026-01-01T00:00:00Z",
            )
            .unwrap();
    }
    let registry = Arc::new(builder.build().unwrap().1);
    Keys {
        owner,
        authority,
        registry,
    }
}

/// An engine over `store`, signing as the Group Authority, Event IDs `<prefix><n>`.
pub fn engine<S: Store>(
    keys: &Keys,
    store: S,
    event_id_prefix: &str,
) -> Engine<S, SigningKey, SequentialEventIds> {
    Engine::new(
        store,
        EventIssuer::new(
            Principal::new(PrincipalType::Service, AUTHORITY),
            keys.authority.clone(),
        ),
        SequentialEventIds::new(event_id_prefix),
    )
}

/// `mission.create` of [`MISSION`] in [`GROUP`].
pub fn create(keys: &Keys) -> VerifiedCommand {
    create_in(keys, GROUP, MISSION, "0b6d1c1e-6f0a-4b7e-9a53-2f1f0c9e7d11")
}

/// `mission.create` of `mission` in `group`, Action ID `urn:uuid:<action>`, signed by the
/// owner and verified (six stages) at [`NOW`].
pub fn create_in(keys: &Keys, group: &str, mission: &str, action: &str) -> VerifiedCommand {
    let text = format!(
        r#"{{"protocolVersion": "0.1",
        "actionId": "urn:uuid:{action}",
        "actor": {{"type": "human", "id": "{OWNER}"}}, "groupId": "{group}",
        "kind": "mission.create", "correlationId": "urn:uuid:5e0c2a4b-1d3f-4e6a-8b7c-9d0e1f2a3b4c",
        "issuedAt": "2026-07-15T09:30:00Z",
        "payload": {{"missionId": "{mission}", "objective": "Close the July books",
          "definitionOfDone": [{{"criterionId": "balanced", "description": "The ledger balances",
                                "evidenceRequired": ["human_review"]}}],
          "budget": {{"modelTokenLimit": 100000}}, "deadline": "2026-08-01T00:00:00Z",
          "approvalPolicy": {{"finalHumanApproval": true, "highRiskExecutionApproval": true}},
          "coordinator": {{"agentId": "urn:missionweaveprotocol:agent:planner",
                          "agentCardVersion": 1, "leaseId": "urn:missionweaveprotocol:lease:c1"}},
          "mainConversationId": "urn:missionweaveprotocol:conversation:main"}}}}"#
    );
    let unsigned = json::parse_state(text.as_bytes()).unwrap();
    let bytes = SignedDocumentCodec::new()
        .sign(SignedDocumentKind::Command, &unsigned, &keys.owner)
        .unwrap()
        .bytes;
    CommandIngress::new(AllowAllAuthorizerForTests)
        .verify(&bytes, &keys.registry, NOW)
        .unwrap()
}
