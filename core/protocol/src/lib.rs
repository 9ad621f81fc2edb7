//! MissionWeaveProtocol 0.1 — the sans-IO core.
//!
//! No sockets, no clocks, no threads, no filesystem: time is always an argument and bytes come
//! in from the caller. Module names follow the Python reference runtime's module map.

pub mod error;
pub mod json;

pub use error::{Stage, WireCode};
pub mod schema_formats;
pub mod bundle;
pub mod schema;
pub mod crypto;
pub mod principal;
pub mod registry;
pub mod signed_documents;
pub mod admission;
pub mod conformance;
