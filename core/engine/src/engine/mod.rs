//! The authoritative engine: verified Commands in, signed ordered Events out (§15, §16).
//!
//! [`Engine::perform`] runs, for one [`VerifiedCommand`](crate::ingress::VerifiedCommand):
//!
//! 1. idempotency through the store receipt (§15.1): the same signing hash answers with the
//!    original Event and appends nothing; another hash is `ACTION_ID_COLLISION`;
//! 2. refusal of unknown critical extensions (§18, `UNKNOWN_CRITICAL_EXTENSION`), then Session
//!    Epoch fencing of Agent Commands (§6.3: `AUTH_STALE_SESSION`, `AUTH_REQUIRED` without a
//!    session) and Membership Epoch fencing (§8);
//! 3. reads of the aggregates the kind needs, then a pure decision
//!    `(state read, command, now) → Decision { events, writes }` or a typed §19 error
//!    (`mission::decide` for the Mission rows); a rebased offline `work.checkpoint` (the one
//!    critical extension the engine interprets, §11.5) is then reconciled into the same
//!    decision: binding checks, the usage charge and its Event before the checkpoint
//!    (`work/offline/`);
//! 4. signing each Event at its Group's next sequence with the Group Authority's
//!    [`EventIssuer`](crate::events::EventIssuer) and committing one store transaction: the
//!    appends, the aggregate writes and checks with the revisions read, and the receipt;
//! 5. on store contention (another Command of the Group committed first) steps 3–4 run again
//!    on fresh state, a bounded number of times; nothing is ever half-applied.
//!
//! The Organization-scoped bootstrap service Commands (`…identity.session_open`,
//! `…registry.agent_card_register`) answer with Events that have no Group position; the engine
//! keeps them as aggregates under their Event IDs (`docs/engine.md`).
//!
//! Deterministic: with the same Event ID source and the same `now`, two engines fed the same
//! Commands emit byte-identical Events (Ed25519 signatures are deterministic).
//!
//! ```
//! use std::sync::Arc;
//! use missionweaveprotocol::crypto::SigningKey;
//! use missionweaveprotocol::registry::RegistryBuilder;
//! use missionweaveprotocol::{json, Principal, PrincipalType, SignedDocumentCodec, SignedDocumentKind};
//! use missionweaveprotocol_engine::engine::Engine;
//! use missionweaveprotocol_engine::events::{EventIssuer, SequentialEventIds};
//! use missionweaveprotocol_engine::ingress::{AllowAllAuthorizerForTests, CommandIngress};
//! use missionweaveprotocol_engine::store::InMemoryStore;
//! use missionweaveprotocol_kernel::unix_millis::UnixMillis;
//!
//! let owner = SigningKey::from_seed("urn:missionweaveprotocol:key:alice-1", &[8; 32]);
//! let authority = SigningKey::from_seed("urn:missionweaveprotocol:key:authority-1", &[10; 32]);
//! let authority_principal =
//!     Principal::new(PrincipalType::Service, "urn:missionweaveprotocol:service:group-authority");
//! let mut builder = RegistryBuilder::new("urn:missionweaveprotocol:organization:acme");
//! let alice = Principal::new(PrincipalType::Human, "urn:missionweaveprotocol:human:alice");
//! builder.add_key(owner.key_id(), alice, &owner.public_key_bytes(), "2026-01-01T00:00:00Z")?;
//! builder.add_key(authority.key_id(), authority_principal.clone(),
//!     &authority.public_key_bytes(), "2026-01-01T00:00:00Z")?;
//! let registry = Arc::new(builder.build()?.1);
//!
//! let create = json::parse_state(br#"{"protocolVersion": "0.1",
//!     "actionId": "urn:uuid:0b6d1c1e-6f0a-4b7e-9a53-2f1f0c9e7d11",
//!     "actor": {"type": "human", "id": "urn:missionweaveprotocol:human:alice"},
//!     "groupId": "urn:missionweaveprotocol:group:finance", "kind": "mission.create",
//!     "correlationId": "urn:uuid:5e0c2a4b-1d3f-4e6a-8b7c-9d0e1f2a3b4c",
//!     "issuedAt": "2026-07-15T09:30:00Z",
//!     "payload": {"missionId": "urn:missionweaveprotocol:mission:close-books",
//!       "objective": "Close the July books",
//!       "definitionOfDone": [{"criterionId": "balanced", "description": "The ledger balances",
//!                             "evidenceRequired": ["human_review"]}],
//!       "budget": {"modelTokenLimit": 100000}, "deadline": "2026-08-01T00:00:00Z",
//!       "approvalPolicy": {"finalHumanApproval": true, "highRiskExecutionApproval": true},
//!       "coordinator": {"agentId": "urn:missionweaveprotocol:agent:planner",
//!                       "agentCardVersion": 1, "leaseId": "urn:missionweaveprotocol:lease:c1"},
//!       "mainConversationId": "urn:missionweaveprotocol:conversation:main"}}"#)?;
//! let bytes = SignedDocumentCodec::new().sign(SignedDocumentKind::Command, &create, &owner)?.bytes;
//! let now = UnixMillis(1_784_107_800_000); // 2026-07-15T09:30:00Z
//! let command = CommandIngress::new(AllowAllAuthorizerForTests).verify(&bytes, &registry, now)?;
//!
//! let engine = Engine::new(
//!     InMemoryStore::new(),
//!     EventIssuer::new(authority_principal, authority),
//!     SequentialEventIds::new("urn:missionweaveprotocol:event:demo-"),
//! );
//! let performed = engine.perform(&command, now)?;
//! assert_eq!(performed.events[0].sequence, 1);
//! // The Event is a normative signed document: our own six-stage verifier accepts it.
//! SignedDocumentCodec::new().verify(SignedDocumentKind::Event, &performed.events[0].body, &registry)?;
//! // The same signed Command again: the original Event, nothing appended (§15.1).
//! assert!(engine.perform(&command, now)?.duplicate);
//! // The Mission projection.
//! let mission = engine.mission("urn:missionweaveprotocol:mission:close-books")?.unwrap();
//! assert_eq!(mission.state().as_str(), "active");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod archive;
pub mod controls;
mod core;
mod dispatch;
mod messages;
mod prefetch;
mod query;
mod signed_payloads;

pub use self::core::{DEFAULT_MAX_ATTEMPTS, Engine, Performed};

pub use query::{Query, QueryKind};
