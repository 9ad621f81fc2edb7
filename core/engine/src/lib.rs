//! MissionWeaveProtocol 0.1 — the authoritative engine, sans-IO.
//!
//! Verified Commands in, signed ordered Group Events out (§15, §16): ingress, the Event issuer,
//! the per-aggregate store seam, the engine, one module per Command family (its state, its
//! decisions and its wiring), human control and the Core every binding serves. It builds on the
//! kernel ([`missionweaveprotocol_kernel`]) and the verification crate; the Agent side
//! (`missionweaveprotocol-agent`) builds on it, never the other way round. No sockets, no
//! clocks, no filesystem: time is always an argument, randomness comes from the host (the
//! Event ID source). Builds for `wasm32-unknown-unknown`.
//!
//! | module | spec | what |
//! | --- | --- | --- |
//! | [`ingress`] | §6.4, §15.1 | wire Command → verified, fresh, authorized [`ingress::VerifiedCommand`] |
//! | [`events`] | §15.2, §16 | building and signing Group Events with the authority's key |
//! | [`store`] | §15.1–15.3, §16 | the per-aggregate store seam, the in-memory store, group commit, integrity |
//! | [`decision`] | §15.1 | what a Command decides: planned Events and aggregate writes |
//! | [`error`] | §19 | [`EngineError`], every refusal with its wire code |
//! | [`input`] | §15.1 | the payload readers every Command family shares |
//! | [`engine`] | §15.1–15.3, §16 | [`Engine`]: dedup, fence, decide, sign, commit, query |
//! | [`mission`] | §7.1–7.4, §14 | the Mission aggregate, its lifecycle, child Missions, cascades |
//! | [`membership`] | §8, digest 2.7 | the Membership aggregate, `membership.change`/`end`, Membership Epoch fencing |
//! | [`work`] | §10, §11.3, §11.5, §13.2 | the WorkItem aggregate: pure decisions for §10.2 and their wiring; offline reconciliation |
//! | [`message`] | §9, §4 invariant 2 | the Message aggregate; a Message never authorizes an action |
//! | [`artifact`] | §13.1 | the Artifact aggregate and `artifact.publish` (signed manifest, content-addressed) |
//! | [`approval`] | §12 | Execution Approvals: the grant and the start gate |
//! | [`delegation`] | §9.1 | `membership.grant_delegation` and the use of a Grant |
//! | [`cooperation_override`] | §20 | Cooperation Override Grants |
//! | [`organization`] | §6.3, §15.2 | the bootstrap service Commands: sessions and Agent Cards |
//! | [`budget`] | §12 | stored budget accounts and their charges |
//! | [`archive`] | §7.4, §16 | Group archival: the signed snapshot, `CURSOR_TOO_OLD` |
//! | [`control`] | §7.1–7.3, §12 | the human control interface: the MissionOwner's operations as unsigned wire Commands |
//! | [`config`] | §6.3, §6.4, §7.4, §11.5, §20 | [`config::CoreConfig`]: every set-up rule of a Core, once |
//! | [`service`] | §15, §16, §19 | [`service::Core`]: the Core bindings serve (verify + perform, query, replay, error families) |

pub mod approval;
pub mod archive;
pub mod artifact;
pub mod budget;
pub mod config;
pub mod control;
pub mod cooperation_override;
pub mod decision;
pub mod delegation;
pub mod engine;
pub mod error;
pub mod events;
pub mod ingress;
pub mod input;
pub mod membership;
pub mod message;
pub mod mission;
pub mod organization;
pub mod service;
pub mod store;
pub(crate) mod stored;
pub mod work;

pub use engine::{Engine, Performed};
pub use error::EngineError;

/// Every wire vocabulary of the verification, kernel and engine layers, by name: the one
/// spelling list each binding's host enums are tested against (no binding re-spells an enum).
pub fn vocabularies() -> Vec<(&'static str, Vec<&'static str>)> {
    use missionweaveprotocol::{ErrorClass, Stage, WireCode};
    fn names<T: Copy, const N: usize>(all: [T; N], f: fn(T) -> &'static str) -> Vec<&'static str> {
        all.into_iter().map(f).collect()
    }
    let mut all = vec![
        ("wire_code", names(WireCode::ALL, WireCode::as_str)),
        // §19: the codes a client may retry unchanged (the same signed Command or frame).
        (
            "retryable_wire_code",
            WireCode::ALL
                .into_iter()
                .filter(|code| code.retryable())
                .map(WireCode::as_str)
                .collect(),
        ),
        ("error_class", names(ErrorClass::ALL, ErrorClass::as_str)),
        ("stage", names(Stage::ALL, Stage::as_str)),
        (
            "signed_document_kind",
            names(
                missionweaveprotocol::SignedDocumentKind::ALL,
                missionweaveprotocol::SignedDocumentKind::as_str,
            ),
        ),
        (
            "admission_reason",
            names(
                missionweaveprotocol::admission::AdmissionReason::ALL,
                missionweaveprotocol::admission::AdmissionReason::as_str,
            ),
        ),
    ];
    // §20: the limits a Cooperation Override Grant may lift (the reference's
    // `CooperationPolicyName`).
    all.push((
        "cooperation_policy_name",
        cooperation_override::POLICY_NAMES.to_vec(),
    ));
    all.extend(missionweaveprotocol_kernel::vocabularies());
    all.extend(service::vocabularies());
    all
}
