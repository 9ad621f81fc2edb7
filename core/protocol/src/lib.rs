//! MissionWeaveProtocol 0.1 — the sans-IO verification core.
//!
//! Everything else builds on this crate and never the other way round: the kernel
//! (`missionweaveprotocol-kernel`: leases, budgets, delegation, retries, the scheduler), the
//! engine (`missionweaveprotocol-engine`) and the Agent side (`missionweaveprotocol-agent`).
//!
//! No sockets, no clocks, no filesystem: time is always an argument and bytes come in from the
//! caller. Module names follow the Python reference runtime's module map, so a reader can go
//! from a reference name to its Rust home:
//!
//! | module | spec | what |
//! | --- | --- | --- |
//! | [`json`] | §2, §6.4 stages 1 and 5 | strict lossless parsing, RFC 8785 canonical form |
//! | [`schema_formats`] | §2 | timestamps, base64url, protocol identifiers |
//! | [`schema`] | §2, §21 | the 22 schemas, compiled once |
//! | [`crypto`] | §6.4 | strict Ed25519 |
//! | [`registry`] | §6.4 stage 4 | Registry evidence, key resolution |
//! | [`signed_documents`] | §6.4 | the six-stage verifier and strict signer |
//! | [`admission`] | §6.4 | First Admission and historical trust |
//! | [`bundle`] | §22 | the pinned, embedded protocol bundle |
//! | [`conformance`] | §22 | the three bundle runners |
//! | [`wire`] | §17 | frames |

pub mod admission;
pub mod bundle;
pub mod conformance;
pub mod crypto;
pub mod error;
pub mod json;
pub mod principal;
pub mod registry;
pub mod schema;
pub mod schema_formats;
pub mod signed_documents;
pub mod spelling;
pub mod wire;
mod work_count;

pub use error::{ArgumentError, DescribeError, ErrorClass, FieldValue, Fields, Stage, WireCode};
pub use principal::{Principal, PrincipalType};
pub use registry::{AgentRegistryKeyResolver, KeyRegistrySnapshot, KeyResolver};
pub use signed_documents::{
    SignedDocumentCodec, SignedDocumentKind, VerificationError, VerifiedSignedDocument,
};

/// The protocol version this crate implements.
pub const PROTOCOL_VERSION: &str = "0.1";
