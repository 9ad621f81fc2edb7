//! Target `registry`: Registry evidence (`KeyRegistrySnapshot::from_bytes`, and the resolver
//! built from bytes that every binding uses), §6.4 stage 4.
//!
//! Oracles: no panic; every refusal is a `RegistryError` with `AUTH_INVALID_SIGNATURE` (the
//! stage-4 wire code); the resolver accepts exactly what `from_bytes` accepts; accepted evidence
//! gives the same snapshot (Organization, key count, every binding) when re-serialized in
//! another member order and spacing; verifying a document against accepted evidence does not
//! panic and fails, if at all, with a stage code.

use missionweaveprotocol::registry::KeyBinding;
use missionweaveprotocol::{
    AgentRegistryKeyResolver, KeyRegistrySnapshot, SignedDocumentCodec, SignedDocumentKind,
    WireCode,
};

use super::super::mutate_json::J;
use super::super::{OracleFailure, Outcome, Rng, Target, Verdict, typed_error};
use super::{bundle_file, mutate_json_or_bytes};

/// The registry target.
#[derive(Debug)]
pub struct RegistryTarget {
    codec: SignedDocumentCodec<'static>,
    command: Vec<u8>,
}

impl Default for RegistryTarget {
    fn default() -> Self {
        Self::new()
    }
}

impl RegistryTarget {
    /// The codec and the bundle's valid Command.
    pub fn new() -> Self {
        Self {
            codec: SignedDocumentCodec::new(),
            command: bundle_file("cryptography/vectors/signed-documents/valid/command.json"),
        }
    }
}

fn binding_facts(binding: &KeyBinding) -> String {
    format!(
        "{:?} {} {:?} {:?} {:?}",
        binding.principal,
        binding.public_key_text,
        binding.valid_from,
        binding.valid_until,
        binding.revoked_at
    )
}

fn key_ids(value: &J) -> Vec<String> {
    match value.get("bindings") {
        Some(J::Arr(items)) => items
            .iter()
            .filter_map(|b| match b.get("keyId") {
                Some(J::Str(id)) => Some(id.clone()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

impl Target for RegistryTarget {
    fn name(&self) -> &'static str {
        "registry"
    }

    fn memory_factor(&self) -> f64 {
        // Registry evidence is read into an owned tree, then into the snapshot's maps.
        32.0
    }

    fn buckets(&self) -> &'static [&'static str] {
        &["1-parse", "2-validation", "accepted"]
    }

    /// The bundle's valid Registries (the invalid vectors are in the committed corpus: seeds
    /// are where half the mutants start, and valid ones lead to the deeper checks).
    fn seeds(&self) -> Vec<Vec<u8>> {
        missionweaveprotocol::bundle::embedded_files()
            .filter(|(path, _)| {
                path.starts_with("cryptography/keys/registry-")
                    || path.starts_with("admission/registries/")
            })
            .filter(|(_, bytes)| KeyRegistrySnapshot::from_bytes(bytes).is_ok())
            .map(|(_, bytes)| bytes.to_vec())
            .collect()
    }

    fn mutate(&self, rng: &mut Rng, base: &[u8]) -> Vec<u8> {
        mutate_json_or_bytes(rng, base, 75)
    }

    fn execute(&self, input: &[u8]) -> Verdict {
        let direct = KeyRegistrySnapshot::from_bytes(input);
        let resolver = AgentRegistryKeyResolver::new(input);
        if direct.is_ok() != resolver.snapshot().is_ok() {
            return Err(OracleFailure(
                "the resolver and from_bytes disagree on the same evidence".into(),
            ));
        }
        let snapshot = match direct {
            Err(error) => {
                let reason = typed_error("registry", &error, &[WireCode::AuthInvalidSignature])?;
                let bucket = usize::from(reason != "registry-evidence-malformed");
                return Ok(Outcome {
                    bucket,
                    signal: reason,
                });
            }
            Ok(snapshot) => snapshot,
        };
        // The re-serializer keeps numbers as f64 beyond 15 digits: compare only exact inputs.
        let long_number = input
            .split(|b| !b.is_ascii_digit())
            .any(|digits| digits.len() > 15);
        if let Some(value) = J::parse(input).filter(|_| !long_number) {
            let again = KeyRegistrySnapshot::from_bytes(&value.to_bytes()).map_err(|e| {
                OracleFailure(format!(
                    "accepted evidence refused after re-serializing: {e:?}"
                ))
            })?;
            if again.organization_id() != snapshot.organization_id()
                || again.len() != snapshot.len()
            {
                return Err(OracleFailure(
                    "re-serialized evidence gives another snapshot".into(),
                ));
            }
            for key_id in key_ids(&value) {
                let facts = |s: &KeyRegistrySnapshot| s.binding(&key_id).map(binding_facts);
                if facts(&snapshot) != facts(&again) {
                    return Err(OracleFailure(format!(
                        "binding {key_id} changed after re-serializing"
                    )));
                }
            }
        }
        let signal = match self
            .codec
            .verify(SignedDocumentKind::Command, &self.command, &resolver)
        {
            Ok(_) => "accepted:verifies".to_owned(),
            Err(error) => {
                if error.wire_code() != error.stage.wire_code() {
                    return Err(OracleFailure(
                        "verify against evidence: wire code of another stage".into(),
                    ));
                }
                format!("accepted:{}", error.reason)
            }
        };
        Ok(Outcome { bucket: 2, signal })
    }
}
