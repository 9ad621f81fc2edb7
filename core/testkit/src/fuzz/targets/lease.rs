//! Target `lease`: an Execution/Ownership/Coordinator Lease read from its document
//! (`Lease::from_json`, the bindings' `ExecutionLease.fromJSON`).
//!
//! Oracles: no panic; errors are typed with a §19 code; an accepted lease round-trips (written
//! with `to_json_string`, read back, written again: the same text); `state_at` does not panic.

use missionweaveprotocol::{DescribeError, WireCode};
use missionweaveprotocol_kernel::lease::{Lease, LeaseDocumentError};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

use super::super::{OracleFailure, Outcome, Rng, Target, Verdict, typed_error};
use super::{bundle_file, mutate_json_or_bytes};

const CODES: &[WireCode] = &[
    WireCode::ProtocolViolation,
    WireCode::SchemaValidationFailed,
    WireCode::InternalError,
    WireCode::InvalidCommand,
    WireCode::InvalidStateTransition,
    WireCode::WorkLeaseExpired,
    WireCode::WorkStaleOwnership,
    WireCode::AuthStaleSession,
    WireCode::AuthStaleCoordinator,
    WireCode::AuthForbidden,
];

/// The lease target.
#[derive(Debug, Clone, Copy, Default)]
pub struct LeaseTarget;

impl Target for LeaseTarget {
    fn name(&self) -> &'static str {
        "lease"
    }

    fn memory_factor(&self) -> f64 {
        // a lease document is read into an owned tree, then into the lease.
        32.0
    }

    fn buckets(&self) -> &'static [&'static str] {
        &["1-parse", "2-schema", "3-rules", "accepted"]
    }

    fn seeds(&self) -> Vec<Vec<u8>> {
        let released = bundle_file("conformance/vectors/valid/lease.json");
        let active = String::from_utf8_lossy(&released)
            .replace("\"released\"", "\"active\"")
            .replace(",\n  \"closedAt\": \"2026-07-15T00:45:00Z\",\n  \"closureReason\": \"work checkpointed\"", "")
            .into_bytes();
        vec![released, active]
    }

    fn mutate(&self, rng: &mut Rng, base: &[u8]) -> Vec<u8> {
        mutate_json_or_bytes(rng, base, 85)
    }

    fn execute(&self, input: &[u8]) -> Verdict {
        let lease = match Lease::from_json(input) {
            Ok(lease) => lease,
            Err(error) => {
                let reason = typed_error("lease", &error, CODES)?;
                let bucket = match error {
                    LeaseDocumentError::Parse(_) => 0,
                    LeaseDocumentError::Schema(_) => 1,
                    _ => 2,
                };
                return Ok(Outcome {
                    bucket,
                    signal: format!("{bucket}:{reason}"),
                });
            }
        };
        let text = match lease.to_json_string() {
            Ok(text) => text,
            Err(error) => {
                return Err(OracleFailure(format!(
                    "an accepted lease cannot be written back: {} ({error:?})",
                    error.wire_code().as_str()
                )));
            }
        };
        let back = Lease::from_json(text.as_bytes())
            .map_err(|e| OracleFailure(format!("a written lease does not read back: {e:?}")))?;
        let again = back
            .to_json_string()
            .map_err(|e| OracleFailure(format!("a re-read lease cannot be written: {e:?}")))?;
        if again != text {
            return Err(OracleFailure(
                "lease round trip changed the document".into(),
            ));
        }
        let _ = lease.state_at(UnixMillis(1_784_075_400_000));
        Ok(Outcome {
            bucket: 3,
            signal: format!("accepted:{:?}", lease.state()),
        })
    }
}
