//! MissionWeaveProtocol 0.1 — the sans-IO core.
//!
//! No sockets, no clocks, no threads, no filesystem: time is always an argument and bytes come
//! in from the caller. Module names follow the Python reference runtime's module map.

pub mod budget;
pub mod capability_version;
pub mod delegation;
pub mod execution;
pub mod lease;
pub mod resources;
pub mod scheduler;
pub mod unix_millis;

mod json_text;
