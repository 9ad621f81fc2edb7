//! MissionWeaveProtocol 0.1 — bounded authority and scheduling, sans-IO.
//!
//! Everything here builds on the verification crate [`missionweaveprotocol`] and never the other
//! way round: the compiler enforces that verification does not depend on the authority layer.
//! No sockets, no clocks, no filesystem: time is always an argument ([`unix_millis::UnixMillis`]).
//!
//! | module | spec | what |
//! | --- | --- | --- |
//! | [`resources`] | §12 | the six budget dimensions |
//! | [`lease`] | §11.3 | Execution, ownership and coordinator leases, and their schema documents |
//! | [`budget`] | §12 | the six-dimensional hierarchical budget ledger and its snapshot |
//! | [`delegation`] | §9.1 | Delegation Grants |
//! | [`execution`] | §11.4 | retries and idempotency keys |
//! | [`scheduler`] | §11.1–11.4 | the Worker's weighted-fair scheduler and its snapshot |
//! | [`capability_version`] | §9.1, §10.3 | SemVer precedence for capability requirements |

pub mod budget;
pub mod capability_version;
pub mod delegation;
pub mod execution;
pub mod lease;
pub mod resources;
pub mod scheduler;
pub mod snapshot_json;

mod error_descriptions;
pub mod unix_millis;
