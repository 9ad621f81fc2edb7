//! MissionWeaveProtocol 0.1 — bounded authority and scheduling, sans-IO.
//!
//! Everything here builds on the verification crate [`missionweaveprotocol`] and never the other
//! way round: the compiler enforces that verification does not depend on the authority layer.
//! No sockets, no clocks, no filesystem (except `artifact::local_store`, the one filesystem
//! Artifact store the bindings wrap): time is always an argument ([`unix_millis::UnixMillis`]).
//!
//! | module | spec | what |
//! | --- | --- | --- |
//! | [`agent`] | §6.3, §11.3, §12 | the Agent runtime: one active session, increasing Session Epochs, Group-isolated contexts and credentials |
//! | [`artifact`] | §13.1 | the Artifact aggregate and `artifact.publish` (signed manifest, content-addressed); the content rules and the local filesystem store the bindings wrap |
//! | [`control`] | §7.1–7.3, §12 | the human control interface: the MissionOwner's operations as unsigned wire Commands (`reference-python.md` §1.6) |
//! | [`auth`] | §6.3 | Agent keys, one-use HELLO challenges, HMAC session tokens and Session Epochs (`AuthError`, class `authentication`) |
//! | [`resources`] | §12 | the six budget dimensions |
//! | [`lease`] | §11.3 | Execution, ownership and coordinator leases, and their schema documents |
//! | [`budget`] | §12 | the six-dimensional hierarchical budget ledger and its snapshot |
//! | [`delegation`] | §9.1 | Delegation Grants |
//! | [`execution`] | §11.4 | retries and idempotency keys |
//! | [`scheduler`] | §11.1–11.4 | the Worker's weighted-fair scheduler and its snapshot |
//! | [`capability_version`] | §9.1, §10.3 | SemVer precedence for capability requirements |
//! | [`ingress`] | §6.4, §15.1 | wire Command → verified, fresh, authorized [`ingress::VerifiedCommand`] |
//! | [`events`] | §15.2, §16 | building and signing Group Events with the authority's key |
//! | [`engine`] | §15.1–15.3, §16 | the authoritative engine: dedup, decide, sign, commit, replay |
//! | [`membership`] | §8, digest 2.7 | the Membership aggregate, `membership.change`/`end`, Membership Epoch fencing |
//! | [`message`] | §9, §4 invariant 2 | the Message aggregate, `message.post`/`correct`/`retract`/`redact`, and the rule that a Message never authorizes an action |
//! | [`mission`] | §7.1–7.3 | the Mission aggregate and its lifecycle decisions |
//! | [`policy`] | §8, §12, §20 | membership tokens, capability grants, execution authorization, budget meters, the local runaway guard |
//! | [`offline`] | §11.5 | bounded offline execution: the binding, the Worker's policy and outbox, rebase; the Core's reconciliation checks |
//! | [`replay`] | §16 | Agent-side replay: cursor + 1, fixed Event positions, projection into the Scheduler, atomic batches of inbox, cursor and snapshot; `CURSOR_TOO_OLD` from a snapshot |
//! | [`service`] | §15, §16, §19 | `AuthorityCore`: the facade bindings serve (verify + perform, query, replay, error families) |
//! | [`work`] | §10, §11.3, §13.2 | the WorkItem aggregate: pure decisions for the 14 part-1 rows of §10.2 |

pub mod agent;
pub mod approval;
pub mod archive;
pub mod artifact;
pub mod auth;
pub mod budget;
pub mod capability_version;
pub mod context;
pub mod control;
pub mod delegation;
pub mod engine;
pub mod events;
pub mod execution;
pub mod ingress;
pub mod lease;
pub mod membership;
pub mod message;
pub mod mission;
pub mod offline;
pub mod policy;
pub mod replay;
pub mod resources;
pub mod scheduler;
pub(crate) mod sealed_token;
pub mod service;
pub mod snapshot_json;
pub mod store;
pub mod work;

mod error_descriptions;
pub mod unix_millis;

/// Every wire vocabulary of the verification and authority layers, by name: the one spelling
/// list each binding's host enums are tested against (no binding re-spells an enum).
pub fn vocabularies() -> Vec<(&'static str, Vec<&'static str>)> {
    use missionweaveprotocol::{ErrorClass, Stage, WireCode};
    fn names<T: Copy, const N: usize>(all: [T; N], f: fn(T) -> &'static str) -> Vec<&'static str> {
        all.into_iter().map(f).collect()
    }
    let mut all = vec![
        ("wire_code", names(WireCode::ALL, WireCode::as_str)),
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
        (
            "dimension",
            names(resources::Dimension::ALL, resources::Dimension::as_str),
        ),
        (
            "lease_state",
            names(lease::LeaseState::ALL, lease::LeaseState::as_str),
        ),
        (
            "lease_type",
            names(lease::LeaseType::ALL, lease::LeaseType::as_str),
        ),
        (
            "account_kind",
            names(budget::AccountKind::ALL, budget::AccountKind::as_str),
        ),
        (
            "delegation_violation_kind",
            names(
                delegation::DelegationViolationKind::ALL,
                delegation::DelegationViolationKind::as_str,
            ),
        ),
        (
            "retry_reason",
            names(execution::RetryReason::ALL, execution::RetryReason::as_str),
        ),
        (
            "work_state",
            names(scheduler::WorkState::ALL, scheduler::WorkState::as_str),
        ),
        (
            "scheduler_admission_reason",
            names(
                scheduler::AdmissionReason::ALL,
                scheduler::AdmissionReason::as_str,
            ),
        ),
    ];
    all.extend(service::vocabularies());
    all
}
