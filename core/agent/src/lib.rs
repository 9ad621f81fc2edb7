//! MissionWeaveProtocol 0.1 — the Agent side, sans-IO.
//!
//! What an Agent (or the host serving it) runs beside the authoritative engine: authentication,
//! policy, the Agent runtime, bounded offline execution, replay and Context Packages. It builds
//! on the engine ([`missionweaveprotocol_engine`]) and the kernel
//! ([`missionweaveprotocol_kernel`]), never the other way round. No sockets, no clocks, no
//! filesystem: time is always an argument; randomness is the host's (`random_*` helpers exist
//! only off wasm32).
//!
//! | module | spec | what |
//! | --- | --- | --- |
//! | [`auth`] | §6.3 | Agent keys, one-use HELLO challenges, HMAC session tokens and Session Epochs (`AuthError`, class `authentication`) |
//! | [`policy`] | §8, §12, §20 | membership tokens, capability grants, execution authorization, budget meters, the local runaway guard |
//! | [`runtime`] | §6.3, §11.3, §12 | the Agent runtime: one active session, increasing Session Epochs, Group-isolated contexts and credentials |
//! | [`offline`] | §11.5 | bounded offline execution, the Worker's side: the policy, the outbox, rebase |
//! | [`replay`] | §16 | Agent-side replay: cursor + 1, fixed Event positions, projection into the Scheduler, atomic batches of inbox, cursor and snapshot; `CURSOR_TOO_OLD` from a snapshot |
//! | [`context`] | §13, §16 | Context Packages, knowledge publications, archived Group Snapshots |

pub mod auth;
pub mod context;
pub mod offline;
pub mod policy;
pub mod replay;
pub mod runtime;

pub(crate) mod sealed_token;
