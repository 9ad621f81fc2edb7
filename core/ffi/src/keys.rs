//! One's own keys and Registry evidence, the first things a new user needs: make a key, bind it
//! in a Registry snapshot, sign, verify (own keys → Registry → sign → verify).
//!
//! The core holds no randomness (design decision "Randomness"): the host draws the 32-byte seed
//! (`crypto.getRandomValues`) and hands it in. Base64url is the §2 canonical unpadded form,
//! decoded by the core's strict decoder so a noncanonical spelling is refused here exactly as
//! the verifier would refuse it.

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json::{Number, Value, parse};
use missionweaveprotocol::registry::{RegistryBuilder, ValidityRecord};
use missionweaveprotocol::schema_formats::{decode_base64url, encode_base64url, is_protocol_uri};
use missionweaveprotocol::{Principal, PrincipalType};

use crate::envelope::{Failure, Obj, finish};

/// The 32-byte Ed25519 seed, or an argument failure.
fn seed(bytes: &[u8]) -> Result<&[u8; 32], Failure> {
    bytes
        .try_into()
        .map_err(|_| Failure::argument("the signing seed must be exactly 32 bytes"))
}

/// Key IDs are absolute URIs (§2 identifiers); a Registry refuses any other (stage 4,
/// `key-id-invalid`), so the key refuses it at construction.
fn key_id(text: &str) -> Result<&str, Failure> {
    if is_protocol_uri(text) {
        Ok(text)
    } else {
        Err(Failure::argument(format!(
            "keyId {text:?} is not an absolute URI (§2 identifiers)"
        )))
    }
}

/// `{keyId, algorithm, publicKey}` of the key made from `seed` (publicKey in base64url).
pub fn key_info(key_id_text: &str, seed_bytes: &[u8]) -> String {
    finish((|| {
        let id = key_id(key_id_text)?;
        let key = SigningKey::from_seed(id, seed(seed_bytes)?);
        Ok(Obj::new()
            .str("keyId", key.key_id())
            .str("algorithm", key.algorithm())
            .str("publicKey", encode_base64url(&key.public_key_bytes()))
            .build())
    })())
}

/// Canonical unpadded base64url text of `bytes` (§2).
pub fn encode(bytes: &[u8]) -> String {
    finish(Ok(Value::string(encode_base64url(bytes))))
}

/// The bytes of canonical unpadded base64url `text` as a JSON array of numbers; `length` (if
/// not 0) is the required byte length. Noncanonical spellings (padding, nonzero pad bits, `+`,
/// `/`, whitespace) are refused (§2).
pub fn decode(text: &str, length: u32, what: &str) -> String {
    finish((|| {
        let bytes = decode_base64url(text).ok_or_else(|| {
            Failure::argument(format!("{what} is not canonical unpadded base64url (§2)"))
        })?;
        if length != 0 && bytes.len() != length as usize {
            return Err(Failure::argument(format!(
                "{what} must decode to exactly {length} bytes, not {}",
                bytes.len()
            )));
        }
        Ok(Value::Array(
            bytes
                .into_iter()
                .map(|b| Value::Number(Number::from_u64(u64::from(b))))
                .collect(),
        ))
    })())
}

/// A Registry snapshot under construction for one's own Agents
/// (`missionweaveprotocol::registry::RegistryBuilder`).
#[derive(Debug, Clone)]
pub struct RegistryBuilderHandle(RegistryBuilder);

impl RegistryBuilderHandle {
    pub fn new(organization_id: &str) -> Self {
        Self(RegistryBuilder::new(organization_id))
    }

    /// Binds a key. `history` is a JSON array of `{recordedAt, validUntil?, revokedAt?}`
    /// (sequences are numbered by the builder). Core checks run now: a strict public-key point,
    /// §2 timestamps; Registry-wide rules run at [`build`](Self::build).
    pub fn add_key(
        &mut self,
        key_id: &str,
        principal_type: &str,
        principal_id: &str,
        public_key: &[u8],
        valid_from: &str,
        history: &str,
    ) -> String {
        finish((|| {
            let kind = PrincipalType::parse(principal_type).ok_or_else(|| {
                Failure::argument(format!(
                    "principal.type {principal_type:?} is not agent, human or service"
                ))
            })?;
            let records = history_records(history)?;
            self.0
                .add_key_with_history(
                    key_id,
                    Principal::new(kind, principal_id),
                    public_key,
                    valid_from,
                    &records,
                )
                .map_err(|e| Failure::error(&e))?;
            Ok(Value::Null)
        })())
    }

    /// `{evidence, organizationId, digest, size}`: the RFC 8785 evidence text, validated by the
    /// stage-4 rules a verifier applies (§6.4), or the rule it breaks.
    pub fn build(&self) -> String {
        finish(
            self.0
                .build()
                .map(|(bytes, snapshot)| {
                    Obj::new()
                        .str("evidence", String::from_utf8_lossy(&bytes).into_owned())
                        .str("organizationId", snapshot.organization_id())
                        .str("digest", snapshot.digest())
                        .num("size", snapshot.len() as u64)
                        .build()
                })
                .map_err(|e| Failure::error(&e)),
        )
    }
}

const HISTORY_MEMBERS: [&str; 3] = ["recordedAt", "validUntil", "revokedAt"];

/// Reads `[{recordedAt, validUntil?, revokedAt?}]`; unknown members are refused rather than
/// ignored, so a misspelt `revokedAt` never yields a key that stays valid. Read by hand, not by
/// the serde shapes of [`crate::shapes`]: `RegistryBuilder` is part of the verify-only
/// WebAssembly module, and serde_json would add about 40 KB gzipped to it (over its 300 KiB
/// budget).
fn history_records(text: &str) -> Result<Vec<ValidityRecord>, Failure> {
    let value = parse(text.as_bytes()).map_err(|e| Failure::error(&e))?;
    let items = value
        .as_array()
        .ok_or_else(|| Failure::argument("history must be an array"))?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let object = item
                .as_object()
                .ok_or_else(|| Failure::argument(format!("history[{i}] must be an object")))?;
            for (name, _) in object.iter() {
                let name = name.to_lossy();
                if !HISTORY_MEMBERS.contains(&name.as_ref()) {
                    return Err(Failure::argument(format!(
                        "history[{i}]: unknown member {name:?} (expected recordedAt, validUntil, revokedAt)"
                    )));
                }
            }
            let text = |name: &str| -> Result<Option<String>, Failure> {
                match object.get(name) {
                    None | Some(Value::Null) => Ok(None),
                    Some(v) => v.as_str().map(|s| Some(s.to_owned())).ok_or_else(|| {
                        Failure::argument(format!("history[{i}].{name} must be a string"))
                    }),
                }
            };
            Ok(ValidityRecord {
                recorded_at: text("recordedAt")?.ok_or_else(|| {
                    Failure::argument(format!("history[{i}].recordedAt is required"))
                })?,
                valid_until: text("validUntil")?,
                revoked_at: text("revokedAt")?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::expect_used)]

    use super::*;

    fn ok(envelope: &str) -> Value {
        let value = parse(envelope.as_bytes()).expect("envelope is JSON");
        value.get("ok").cloned().expect(envelope)
    }

    fn error(envelope: &str) -> Value {
        let value = parse(envelope.as_bytes()).expect("envelope is JSON");
        value.get("error").cloned().expect(envelope)
    }

    const KEY: &str = "urn:missionweaveprotocol:key:alice-1";
    const AGENT: &str = "urn:missionweaveprotocol:agent:alice";
    const ORG: &str = "urn:missionweaveprotocol:organization:acme";

    fn public_key(seed: &[u8; 32]) -> Vec<u8> {
        let info = ok(&key_info(KEY, seed));
        let text = info.get("publicKey").and_then(Value::as_str).expect("key");
        decode_base64url(text).expect("canonical")
    }

    #[cfg(feature = "conformance-bundle")]
    #[test]
    fn own_key_registry_sign_verify() {
        use crate::{RegistryHandle, sign, verify};
        // The bundle's valid Command without its signature, re-signed by our own key bound to
        // the Command's actor.
        let doc = missionweaveprotocol::bundle::embedded_file(
            "cryptography/vectors/signed-documents/valid/command.json",
        )
        .expect("embedded");
        let preview = ok(&crate::signing_preview(doc));
        let unsigned = preview
            .get("signingBytes")
            .and_then(Value::as_str)
            .expect("bytes");
        let actor = parse(unsigned.as_bytes()).expect("JSON");
        let actor = actor
            .pointer("/actor/id")
            .and_then(Value::as_str)
            .expect("actor");
        let seed = [7u8; 32];
        let mut builder = RegistryBuilderHandle::new(ORG);
        ok(&builder.add_key(
            KEY,
            "agent",
            actor,
            &public_key(&seed),
            "2026-01-01T00:00:00Z",
            "[]",
        ));
        let built = ok(&builder.build());
        let evidence = built.get("evidence").and_then(Value::as_str).expect("text");
        let registry = RegistryHandle::new(evidence.as_bytes());
        let signed = ok(&sign(
            "command",
            unsigned.as_bytes(),
            KEY,
            &seed,
            Some(&registry),
        ));
        let bytes = signed
            .get("document")
            .and_then(Value::as_str)
            .expect("document");
        let verified = verify("command", bytes.as_bytes(), &registry, "");
        assert!(verified.starts_with("{\"ok\""), "{verified}");
        assert!(verified.contains(KEY));
        // Another key's Registry: stage 4, unknown key.
        let other = [8u8; 32];
        let mut builder = RegistryBuilderHandle::new(ORG);
        ok(&builder.add_key(
            "urn:missionweaveprotocol:key:bob-1",
            "agent",
            actor,
            &public_key(&other),
            "2026-01-01T00:00:00Z",
            "[]",
        ));
        let built = ok(&builder.build());
        let evidence = built.get("evidence").and_then(Value::as_str).expect("text");
        let e = error(&verify(
            "command",
            bytes.as_bytes(),
            &RegistryHandle::new(evidence.as_bytes()),
            "",
        ));
        assert_eq!(e.get("reason").and_then(Value::as_str), Some("unknown-key"));
    }

    #[test]
    fn key_info_refuses_bad_seed_and_key_id() {
        let e = error(&key_info(KEY, &[1; 31]));
        assert_eq!(
            e.get("code").and_then(Value::as_str),
            Some("PROTOCOL_VIOLATION")
        );
        let e = error(&key_info("not a uri", &[1; 32]));
        assert_eq!(
            e.get("class").and_then(Value::as_str),
            Some("ArgumentError")
        );
        let info = ok(&key_info(KEY, &[1; 32]));
        assert_eq!(
            info.get("algorithm").and_then(Value::as_str),
            Some("Ed25519")
        );
    }

    #[test]
    fn base64url_is_strict() {
        let text = ok(&encode(&[0xfb; 32]));
        let text = text.as_str().expect("string");
        assert!(!text.contains('=') && !text.contains('+'));
        let back = ok(&decode(text, 32, "seed"));
        assert_eq!(back.as_array().map(<[Value]>::len), Some(32));
        // Padded, and the right text for the wrong length: refused.
        assert!(
            error(&decode(&format!("{text}="), 32, "seed"))
                .get("code")
                .and_then(Value::as_str)
                == Some("PROTOCOL_VIOLATION")
        );
        assert!(
            error(&decode(text, 31, "seed"))
                .get("code")
                .and_then(Value::as_str)
                == Some("PROTOCOL_VIOLATION")
        );
        // Nonzero unused pad bits (last char of a 32-byte value must encode 0 low bits).
        let mut bad = text.to_owned();
        bad.pop();
        bad.push('h');
        assert!(
            error(&decode(&bad, 32, "seed"))
                .get("code")
                .and_then(Value::as_str)
                == Some("PROTOCOL_VIOLATION")
        );
    }

    #[test]
    fn builder_reports_stage_4_rules() {
        let seed = [9u8; 32];
        let key = public_key(&seed);
        // Identity point: not a strict public key.
        let mut identity = [0u8; 32];
        identity[0] = 1;
        let mut builder = RegistryBuilderHandle::new(ORG);
        let e =
            error(&builder.add_key(KEY, "agent", AGENT, &identity, "2026-01-01T00:00:00Z", "[]"));
        assert_eq!(
            e.get("reason").and_then(Value::as_str),
            Some("public-key-point")
        );
        let e = error(&builder.add_key(KEY, "robot", AGENT, &key, "2026-01-01T00:00:00Z", "[]"));
        assert_eq!(
            e.get("class").and_then(Value::as_str),
            Some("ArgumentError")
        );
        let e = error(&builder.add_key(
            KEY,
            "agent",
            AGENT,
            &key,
            "2026-01-01T00:00:00Z",
            r#"[{"recordedAt":"2026-02-01T00:00:00Z","revokedat":"2026-02-01T00:00:00Z"}]"#,
        ));
        assert_eq!(
            e.get("class").and_then(Value::as_str),
            Some("ArgumentError")
        );
        // Key reuse under a second key ID is found at build.
        ok(&builder.add_key(KEY, "agent", AGENT, &key, "2026-01-01T00:00:00Z", "[]"));
        ok(&builder.add_key(
            "urn:missionweaveprotocol:key:alice-2",
            "agent",
            AGENT,
            &key,
            "2026-01-01T00:00:00Z",
            r#"[{"recordedAt":"2026-02-01T00:00:00Z","revokedAt":"2026-03-01T00:00:00Z"}]"#,
        ));
        let e = error(&builder.build());
        assert_eq!(
            e.get("reason").and_then(Value::as_str),
            Some("public-key-reused")
        );
        assert_eq!(
            e.get("code").and_then(Value::as_str),
            Some("AUTH_INVALID_SIGNATURE")
        );
    }
}
