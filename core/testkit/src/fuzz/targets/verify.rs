//! Target `verify`: the six-stage Signed Document Verification Profile (§6.4) on document bytes.
//!
//! Input: a header line `<kind>[ expect=<outcomes>]`, then the document bytes. The mutator starts
//! from the bundle's validly signed documents and, besides byte edits, mutates the JSON value
//! and re-signs it with the right key (most mutants then reach stages 3–6), with a wrong key
//! (same key ID, another registered key, an unregistered key), or edits the signature envelope
//! (flipped signature bits, swapped key IDs). When the harness knows what must happen (e.g. a
//! key that is not in the Registry can only fail at stage 4) it writes `expect=` into the header
//! and the oracle checks it.
//!
//! Oracles: no panic; every rejection is a [`VerificationError`] at one of the six stages with
//! that stage's §19 wire code; bytes the strict parser refuses fail at stage 1; and no forgery:
//! an accepted document's signature is exactly the one the registered key makes over its
//! signing bytes (Ed25519 is deterministic, and the harness holds every fixture key), or it is
//! an unmodified seed, and its Principal is the one the Registry binds the key to.
//!
//! [`VerificationError`]: missionweaveprotocol::VerificationError

use std::collections::HashSet;
use std::sync::Arc;

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json::parse;
use missionweaveprotocol::schema_formats::{decode_base64url, encode_base64url};
use missionweaveprotocol::{KeyRegistrySnapshot, SignedDocumentCodec, SignedDocumentKind, Stage};
use missionweaveprotocol_ffi::RegistryHandle;

use super::super::mutate_json::{self, J};
use super::super::{OracleFailure, Outcome, Rng, Target, Verdict, mutate_bytes, typed_error};
use super::bundle_file;

const BUCKETS: &[&str] = &[
    "1-parse",
    "2-schema",
    "3-envelope",
    "4-key",
    "5-canonical",
    "6-signature",
    "accepted",
];

const KEY_FIXTURES: &[&str] = &[
    "coordinator",
    "developer-one",
    "group-authority",
    "mission-owner",
    "organization-registry",
    "security-owner",
    "test-reviewer",
];

/// A key ID no Registry of the bundle binds.
const UNREGISTERED_KEY_ID: &str = "urn:missionweaveprotocol:key:fuzz-unregistered";

/// The verify target: codec, the bundle's valid Registry and every fixture signing key.
#[derive(Debug)]
pub struct VerifyTarget {
    codec: SignedDocumentCodec<'static>,
    registry: Arc<KeyRegistrySnapshot>,
    /// The same Registry as the bindings hold it (the FFI layer every binding calls).
    handle: RegistryHandle,
    keys: Vec<SigningKey>,
    seed_hashes: HashSet<String>,
}

impl Default for VerifyTarget {
    fn default() -> Self {
        Self::new()
    }
}

fn fixture_key(name: &str) -> Option<SigningKey> {
    let fixture = J::parse(&bundle_file(&format!(
        "cryptography/keys/signing-{name}.json"
    )))?;
    let J::Str(key_id) = fixture.get("keyId")? else {
        return None;
    };
    let J::Str(seed) = fixture.get("seed")? else {
        return None;
    };
    let seed: [u8; 32] = decode_base64url(seed)?.try_into().ok()?;
    Some(SigningKey::from_seed(key_id.clone(), &seed))
}

/// Splits `<header>\n<document>` into the kind, the expected outcomes and the document.
/// A verify input: kind, expected outcomes (from `expect=`), document bytes.
type Parts<'a> = (SignedDocumentKind, Option<Vec<String>>, &'a [u8]);

fn split(input: &[u8]) -> Option<Parts<'_>> {
    let newline = input.iter().position(|&b| b == b'\n')?;
    let header = std::str::from_utf8(&input[..newline]).ok()?;
    let mut words = header.split(' ');
    let kind = SignedDocumentKind::parse(words.next()?)?;
    let expect = words
        .find_map(|w| w.strip_prefix("expect="))
        .map(|list| list.split(',').map(str::to_owned).collect());
    Some((kind, expect, &input[newline + 1..]))
}

fn join(kind: SignedDocumentKind, expect: Option<&str>, document: &[u8]) -> Vec<u8> {
    let mut out = kind.as_str().as_bytes().to_vec();
    if let Some(expect) = expect {
        out.extend_from_slice(format!(" expect={expect}").as_bytes());
    }
    out.push(b'\n');
    out.extend_from_slice(document);
    out
}

/// The signature bytes of a parsed document with bit `bit` flipped.
fn flip_signature(document: &mut J, rng: &mut Rng) -> bool {
    let Some(J::Str(value)) = document.get("signature").and_then(|s| s.get("value")) else {
        return false;
    };
    let Some(mut bytes) = decode_base64url(value) else {
        return false;
    };
    if bytes.is_empty() {
        return false;
    }
    let i = rng.below(bytes.len());
    bytes[i] ^= 1 << rng.below(8);
    let flipped = encode_base64url(&bytes);
    if let Some(signature) = document.get_mut("signature") {
        signature.set("value", J::Str(flipped));
    }
    true
}

fn key_id_of(document: &J) -> Option<String> {
    match document.get("signature")?.get("keyId")? {
        J::Str(id) => Some(id.clone()),
        _ => None,
    }
}

impl VerifyTarget {
    /// Loads the Registry and keys from the embedded bundle.
    pub fn new() -> Self {
        let registry = Arc::new(
            KeyRegistrySnapshot::from_bytes(&bundle_file("cryptography/keys/registry-valid.json"))
                .unwrap_or_else(|e| unreachable!("the bundle's valid Registry is valid: {e}")),
        );
        let keys = KEY_FIXTURES.iter().filter_map(|n| fixture_key(n)).collect();
        let codec = SignedDocumentCodec::new();
        let seed_hashes = SignedDocumentKind::ALL
            .iter()
            .filter_map(|kind| {
                codec
                    .verify(*kind, &Self::seed_document(*kind), &registry)
                    .ok()
                    .map(|v| v.signing_hash)
            })
            .collect();
        Self {
            codec,
            handle: RegistryHandle::new(&bundle_file("cryptography/keys/registry-valid.json")),
            registry,
            keys,
            seed_hashes,
        }
    }

    fn seed_document(kind: SignedDocumentKind) -> Vec<u8> {
        bundle_file(&format!(
            "cryptography/vectors/signed-documents/valid/{}.json",
            kind.as_str()
        ))
    }

    /// Oracle: the FFI call the bindings make (`{"ok":…}` / `{"error":…}` JSON) agrees with the
    /// codec: same verdict, same wire code, stage and reason, and the envelope is JSON.
    fn check_ffi(
        &self,
        kind: SignedDocumentKind,
        document: &[u8],
        outcome: &str,
        signal: &str,
    ) -> Result<(), OracleFailure> {
        let envelope = missionweaveprotocol_ffi::verify(kind.as_str(), document, &self.handle, "");
        // An accepted envelope is followed by a line with the signing bytes (for JavaScript).
        let head = envelope.split('\n').next().unwrap_or_default();
        let value = J::parse(head.as_bytes())
            .ok_or_else(|| OracleFailure(format!("FFI envelope is not JSON: {envelope}")))?;
        let agrees = match (value.get("ok"), value.get("error")) {
            (Some(_), None) => outcome == "ok",
            (None, Some(error)) => {
                let text = |name: &str| match error.get(name) {
                    Some(J::Str(text)) => text.clone(),
                    _ => String::new(),
                };
                outcome != "ok"
                    && text("code")
                        == Stage::ALL[outcome.parse::<usize>().unwrap_or(1) - 1]
                            .wire_code()
                            .as_str()
                    && signal == format!("{}:{}", text("stage"), text("reason"))
            }
            _ => false,
        };
        if agrees {
            Ok(())
        } else {
            Err(OracleFailure(format!(
                "FFI verify disagrees with the codec ({outcome} {signal}): {envelope}"
            )))
        }
    }

    fn key(&self, key_id: &str) -> Option<&SigningKey> {
        self.keys.iter().find(|k| k.key_id() == key_id)
    }

    /// Signs `unsigned` (a document without `signature`) with `key`; the signer refuses what
    /// would not pass the schema.
    fn sign(&self, kind: SignedDocumentKind, unsigned: &J, key: &SigningKey) -> Option<Vec<u8>> {
        let value = parse(&unsigned.to_bytes()).ok()?;
        self.codec.sign(kind, &value, key).ok().map(|s| s.bytes)
    }

    /// Mutates the value, re-signs it with the right key or a wrong one, and sometimes edits
    /// the envelope afterwards. Returns the document and what the verifier must conclude.
    fn resign(
        &self,
        rng: &mut Rng,
        kind: SignedDocumentKind,
        doc: &J,
    ) -> Option<(Vec<u8>, Option<&'static str>)> {
        let right = key_id_of(doc)
            .and_then(|id| self.key(&id))
            .or_else(|| self.keys.first())?;
        let choice = rng.below(100);
        let (key, mut expect) = if choice < 70 {
            // The right key: valid unless the protected time left the key's validity (stage 4).
            (right.clone(), "ok,4")
        } else if choice < 80 {
            let mut seed = [0u8; 32];
            seed.iter_mut().for_each(|b| *b = rng.below(256) as u8);
            (SigningKey::from_seed(right.key_id(), &seed), "4,6")
        } else if choice < 90 {
            let other = rng.pick(&self.keys);
            if other.key_id() == right.key_id() {
                return None;
            }
            // Another registered key: refused at stage 4 unless the Registry binds it to the
            // document's expected signer too.
            (other.clone(), "ok,4")
        } else {
            let mut seed = [0u8; 32];
            seed[0] = rng.below(256) as u8;
            (SigningKey::from_seed(UNREGISTERED_KEY_ID, &seed), "4")
        };
        // Up to three mutants of the body; the signer refuses those the schema does not allow.
        let mut unsigned = doc.clone();
        let mut signed = None;
        for _ in 0..3 {
            unsigned = doc.clone();
            unsigned.remove("signature");
            match rng.below(100) {
                0..45 => {
                    (0..=rng.below(2)).for_each(|_| mutate_json::tweak_leaf(rng, &mut unsigned))
                }
                45..75 => mutate_json::mutate(rng, &mut unsigned),
                _ => {}
            }
            // Mutating the signature member into existence again is not a re-signable document.
            unsigned.remove("signature");
            signed = self.sign(kind, &unsigned, &key);
            if signed.is_some() {
                break;
            }
        }
        let Some(signed) = signed else {
            // Every mutant was refused (schema): send the last one under the old signature.
            if let Some(signature) = doc.get("signature") {
                unsigned.set("signature", signature.clone());
            }
            return Some((unsigned.to_bytes(), None));
        };
        if rng.chance(25) {
            let mut value = J::parse(&signed)?;
            match rng.below(3) {
                0 => {
                    flip_signature(&mut value, rng);
                    expect = "3,4,6";
                }
                1 => {
                    let other = rng.pick(&self.keys).key_id().to_owned();
                    if other != key.key_id() {
                        if let Some(signature) = value.get_mut("signature") {
                            signature.set("keyId", J::Str(other));
                        }
                        expect = "4,6";
                    }
                }
                _ => {
                    if let Some(signature) = value.get_mut("signature") {
                        signature.set("keyId", J::Str(UNREGISTERED_KEY_ID.into()));
                    }
                    expect = "4";
                }
            }
            return Some((value.to_bytes(), Some(expect)));
        }
        Some((signed, Some(expect)))
    }
}

impl Target for VerifyTarget {
    fn name(&self) -> &'static str {
        "verify"
    }

    fn memory_factor(&self) -> f64 {
        // accepted documents keep their owned tree (up to about 21 x the input) besides the tape (4 x) and the signing bytes; rejections stay within 6 x (core/protocol/tests/json_memory.rs).
        32.0
    }

    fn buckets(&self) -> &'static [&'static str] {
        BUCKETS
    }

    fn seeds(&self) -> Vec<Vec<u8>> {
        SignedDocumentKind::ALL
            .iter()
            .map(|kind| join(*kind, None, &Self::seed_document(*kind)))
            .collect()
    }

    fn mutate(&self, rng: &mut Rng, base: &[u8]) -> Vec<u8> {
        let Some((kind, _, document)) = split(base) else {
            return mutate_bytes::mutate(rng, base);
        };
        let roll = rng.below(100);
        if roll < 10 {
            return join(kind, None, &mutate_bytes::mutate(rng, document));
        }
        if roll < 13 {
            return join(*rng.pick(&SignedDocumentKind::ALL), None, document);
        }
        let Some(mut value) = J::parse(document) else {
            return join(kind, None, &mutate_bytes::mutate(rng, document));
        };
        if roll < 30 {
            // Value-level edits under the original signature: the signature must now fail.
            if rng.chance(50) {
                mutate_json::tweak_leaf(rng, &mut value);
            } else {
                mutate_json::mutate(rng, &mut value);
            }
            return join(kind, None, &value.to_bytes());
        }
        if roll < 40 {
            // Only an unmodified seed is known to pass stages 1, 2 and 4.
            let is_seed = Self::seed_document(kind) == document;
            let expect = (flip_signature(&mut value, rng) && is_seed).then_some("3,6");
            return join(kind, expect, &value.to_bytes());
        }
        match self.resign(rng, kind, &value) {
            Some((document, expect)) => join(kind, expect, &document),
            None => join(kind, None, &value.to_bytes()),
        }
    }

    fn execute(&self, input: &[u8]) -> Verdict {
        let Some((kind, expect, document)) = split(input) else {
            return Ok(Outcome {
                bucket: 0,
                signal: "no-header".into(),
            });
        };
        let (outcome, signal) = match self.codec.verify(kind, document, &self.registry) {
            Ok(verified) => {
                let binding = self.registry.binding(&verified.key_id).ok_or_else(|| {
                    OracleFailure(format!(
                        "accepted with key {} not in the Registry",
                        verified.key_id
                    ))
                })?;
                if binding.principal != verified.principal {
                    return Err(OracleFailure(format!(
                        "accepted for Principal {:?}, the Registry binds {:?}",
                        verified.principal, binding.principal
                    )));
                }
                let legitimate = match self.key(&verified.key_id) {
                    Some(key) => {
                        encode_base64url(&key.sign(&verified.signing_bytes)) == verified.signature
                    }
                    None => self.seed_hashes.contains(&verified.signing_hash),
                };
                if !legitimate {
                    return Err(OracleFailure(format!(
                        "forgery: {kind:?} accepted with signature {} that key {} did not make",
                        verified.signature, verified.key_id
                    )));
                }
                ("ok".to_owned(), format!("accepted:{}", kind.as_str()))
            }
            Err(error) => {
                if error.stage == Stage::Admission {
                    return Err(OracleFailure("verify failed at the admission stage".into()));
                }
                let reason = typed_error("verify", &error, &[error.stage.wire_code()])?;
                if error.wire_code() != error.stage.wire_code() {
                    return Err(OracleFailure(format!(
                        "stage {:?} with wire code {}",
                        error.stage,
                        error.wire_code().as_str()
                    )));
                }
                if error.stage != Stage::Parse && parse(document).is_err() {
                    return Err(OracleFailure(format!(
                        "the strict parser refuses the bytes but verify failed at {:?}",
                        error.stage
                    )));
                }
                (
                    error.stage.number().to_string(),
                    format!("{}:{reason}", error.stage.as_str()),
                )
            }
        };
        self.check_ffi(kind, document, &outcome, &signal)?;
        if let Some(expect) = expect
            && !expect.contains(&outcome)
        {
            return Err(OracleFailure(format!(
                "expected one of {expect:?}, got {outcome} ({signal})"
            )));
        }
        let bucket = outcome.parse::<usize>().map_or(6, |stage| stage - 1);
        Ok(Outcome { bucket, signal })
    }
}
