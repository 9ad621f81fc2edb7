//! MissionWeaveProtocol 0.1 — the kernel: bounded authority primitives, sans-IO.
//!
//! The pure rules every layer above reuses: Execution Leases, the six-dimensional budget ledger,
//! Delegation Grants, retries, the Worker's weighted-fair scheduler, resources, the offline
//! bounds and time. It builds on the verification crate [`missionweaveprotocol`] and nothing
//! else of the project: the engine (`missionweaveprotocol-engine`) and the Agent side
//! (`missionweaveprotocol-agent`) depend on it, never the other way round, and Cargo enforces it.
//! No sockets, no clocks, no filesystem, no OS randomness: time is always an argument
//! ([`unix_millis::UnixMillis`]). Builds for `wasm32-unknown-unknown`.
//!
//! | module | spec | what |
//! | --- | --- | --- |
//! | [`resources`] | §12 | the six budget dimensions |
//! | [`lease`] | §11.3 | Execution, ownership and coordinator leases, and their schema documents |
//! | [`budget`] | §12 | the six-dimensional hierarchical budget ledger and its snapshot |
//! | [`delegation`] | §9.1 | Delegation Grants: scope, ceilings, depth |
//! | [`retry`] | §11.4 | retries and idempotency keys, and their snapshot |
//! | [`scheduler`] | §11.1–11.4 | the Worker's weighted-fair scheduler and its snapshot |
//! | [`offline`] | §11.5 | bounded offline execution: the binding, the limits, the reversible kinds |
//! | [`cooperation`] | §20 | the cooperation limits (queues, rates, delegation depth) every layer enforces |
//! | [`capability_version`] | §9.1, §10.3 | SemVer precedence for capability requirements |
//! | [`snapshot_json`] | §11, §12 | the JSON forms of the ledger and scheduler snapshots |
//! | [`random`] | §6.3, §16 | the randomness the host injects (never read from the OS here) |
//! | [`unix_millis`] | §6.4 | instants as integer milliseconds; RFC 3339 rendering |

pub mod budget;
pub mod capability_version;
pub mod cooperation;
pub mod delegation;
pub mod lease;
pub mod offline;
pub mod presence;
pub mod random;
pub mod resources;
pub mod retry;
pub mod scheduler;
pub mod snapshot_json;
pub mod unix_millis;

mod error_descriptions;

/// The wire vocabularies of this layer, by name (each binding's host enums are tested against
/// them: no binding re-spells an enum).
pub fn vocabularies() -> Vec<(&'static str, Vec<&'static str>)> {
    fn names<T: Copy, const N: usize>(all: [T; N], f: fn(T) -> &'static str) -> Vec<&'static str> {
        all.into_iter().map(f).collect()
    }
    vec![
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
            names(retry::RetryReason::ALL, retry::RetryReason::as_str),
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
    ]
}
