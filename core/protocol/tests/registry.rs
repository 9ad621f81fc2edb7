#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! §6.4 stage 4: Registry evidence validation (each rule, positive and negative) and selection.

mod common;

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::registry::{
    ExpectedSigner, KeyRegistrySnapshot, RegistryErrorReason as R,
};
use missionweaveprotocol::schema_formats::{Timestamp, encode_base64url};
use missionweaveprotocol::{Principal, PrincipalType};

fn key(n: u8) -> String {
    encode_base64url(&SigningKey::from_seed("", &[n; 32]).public_key_bytes())
}

fn binding(
    key_id: &str,
    principal: &str,
    public_key: &str,
    valid_from: &str,
    history: &str,
) -> String {
    format!(
        r#"{{"keyId":"{key_id}","principal":{{"type":"agent","id":"{principal}"}},"algorithm":"Ed25519","publicKey":"{public_key}","validFrom":"{valid_from}","validityHistory":[{history}]}}"#
    )
}

fn registry(bindings: &[String]) -> Vec<u8> {
    format!(
        r#"{{"organizationId":"urn:example:org","bindings":[{}]}}"#,
        bindings.join(",")
    )
    .into_bytes()
}

fn reason(bytes: &[u8]) -> R {
    KeyRegistrySnapshot::from_bytes(bytes).unwrap_err().reason
}

const T0: &str = "2026-01-01T00:00:00Z";

#[test]
fn accepts_a_complete_snapshot_and_identical_repeats() {
    let a = binding(
        "urn:k:a",
        "urn:agent:a",
        &key(1),
        T0,
        r#"{"sequence":1,"recordedAt":"2026-01-01T00:00:00Z"}"#,
    );
    let snapshot = KeyRegistrySnapshot::from_bytes(&registry(&[a.clone(), a])).unwrap();
    assert_eq!(snapshot.len(), 1);
    assert_eq!(snapshot.organization_id(), "urn:example:org");
    assert!(snapshot.digest().starts_with("sha256:"));
}

#[test]
fn rejects_malformed_evidence() {
    assert_eq!(reason(b"{}"), R::MalformedEvidence);
    assert_eq!(reason(b"not json"), R::MalformedEvidence);
    assert_eq!(
        reason(br#"{"organizationId":"urn:o","bindings":[],"x":1}"#),
        R::MalformedEvidence
    );
    assert_eq!(
        reason(br#"{"organizationId":"urn:o","bindings":[]}"#),
        R::NoBindings
    );
    assert_eq!(
        reason(br#"{"organizationId":"organizations/acme","bindings":[]}"#),
        R::OrganizationId
    );
    let good = binding("urn:k:a", "urn:agent:a", &key(1), T0, "");
    assert_eq!(
        reason(&registry(&[good.replace(
            "\"algorithm\":\"Ed25519\"",
            "\"algorithm\":\"Ed448\""
        )])),
        R::Algorithm
    );
    assert_eq!(
        reason(&registry(&[good.replace("urn:k:a", "urn:k:a\\n")])),
        R::KeyIdNotUri
    );
    assert_eq!(
        reason(&registry(&[good.replace("urn:agent:a", "urn:agent:%GG")])),
        R::PrincipalShape
    );
    assert_eq!(
        reason(&registry(&[
            good.replace("\"type\":\"agent\"", "\"type\":\"robot\"")
        ])),
        R::PrincipalShape
    );
    assert_eq!(
        reason(&registry(&[good.replacen("}", ",\"extra\":1}", 1)])),
        R::PrincipalShape
    );
    assert_eq!(
        reason(&registry(&[format!(
            "{},\"x\":1}}",
            &good[..good.len() - 1]
        )])),
        R::BindingShape
    );
    assert_eq!(
        reason(&registry(&[good.replace(T0, "2026-06-30T23:59:60Z")])),
        R::ValidFrom
    );
}

#[test]
fn rejects_bad_public_keys() {
    let padded = format!("{}=", key(1));
    // The last of 43 characters carries 4 data bits and 2 unused bits: set an unused bit.
    let mut pad_bits = key(1);
    let last = pad_bits.pop().unwrap();
    let alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    pad_bits.push(
        alphabet
            .chars()
            .nth(alphabet.find(last).unwrap() + 1)
            .unwrap(),
    );
    for (public_key, expected) in [
        (padded.as_str(), R::PublicKeyEncoding),
        (pad_bits.as_str(), R::PublicKeyEncoding),
        (
            "AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
            R::PublicKeyPoint,
        ),
        (
            "AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
            R::PublicKeyPoint,
        ),
        ("", R::PublicKeyEncoding),
    ] {
        assert_eq!(
            reason(&registry(&[binding(
                "urn:k:a",
                "urn:agent:a",
                public_key,
                T0,
                ""
            )])),
            expected,
            "{public_key}"
        );
    }
}

#[test]
fn enforces_immutable_bindings_uniqueness_and_no_aliases() {
    let a = binding("urn:k:a", "urn:agent:a", &key(1), T0, "");
    // Same key ID, different key: key ID reused.
    assert_eq!(
        reason(&registry(&[
            a.clone(),
            binding("urn:k:a", "urn:agent:a", &key(2), T0, "")
        ])),
        R::KeyIdReused
    );
    // Same key ID, different validFrom.
    assert_eq!(
        reason(&registry(&[
            a.clone(),
            binding(
                "urn:k:a",
                "urn:agent:a",
                &key(1),
                "2026-01-02T00:00:00Z",
                ""
            )
        ])),
        R::KeyIdReused
    );
    // Same key under another Principal.
    assert_eq!(
        reason(&registry(&[
            a.clone(),
            binding("urn:k:b", "urn:agent:b", &key(1), T0, "")
        ])),
        R::PublicKeyReused
    );
    // Same key and Principal under another key ID (an alias, digest §3.8 rule 9) is also a
    // reuse of the key bytes under another key ID (rule 8), and rule 8 is checked first, so the
    // exact reason is `PublicKeyReused`. `KeyIdAlias` is unreachable: both lookup maps are filled
    // together from the same (key ID, Principal, key), so an entry (P, K) → other ≠ keyId implies
    // K → (other, P), which rule 8 refuses before rule 9 is consulted. See
    // `key_id_alias_is_reported_as_public_key_reuse` for every order and variant.
    assert_eq!(
        reason(&registry(&[
            a,
            binding("urn:k:alias", "urn:agent:a", &key(1), T0, "")
        ])),
        R::PublicKeyReused
    );
}

#[test]
fn key_id_alias_is_reported_as_public_key_reuse() {
    let a = binding("urn:k:a", "urn:agent:a", &key(1), T0, "");
    let alias = binding("urn:k:alias", "urn:agent:a", &key(1), T0, "");
    let later_alias = binding(
        "urn:k:alias",
        "urn:agent:a",
        &key(1),
        "2026-01-02T00:00:00Z",
        "",
    );
    let other = binding("urn:k:b", "urn:agent:b", &key(2), T0, "");
    for bindings in [
        vec![a.clone(), alias.clone()],
        vec![alias.clone(), a.clone()],
        vec![a.clone(), later_alias.clone()],
        vec![a.clone(), other.clone(), alias.clone()],
        vec![a.clone(), a.clone(), alias.clone()],
    ] {
        let error = KeyRegistrySnapshot::from_bytes(&registry(&bindings)).unwrap_err();
        assert_eq!(error.reason, R::PublicKeyReused, "{bindings:?}");
        assert_ne!(error.reason, R::KeyIdAlias);
    }
    // Positive: identical repeats are one logical binding; distinct keys coexist.
    let ok = KeyRegistrySnapshot::from_bytes(&registry(&[a.clone(), a, other])).unwrap();
    assert_eq!(ok.len(), 2);
}

#[test]
fn enforces_append_only_validity_history() {
    let h = |records: &str| registry(&[binding("urn:k:a", "urn:agent:a", &key(1), T0, records)]);
    assert_eq!(
        reason(&h(r#"{"sequence":2,"recordedAt":"2026-01-01T00:00:00Z"}"#)),
        R::HistorySequence
    );
    assert_eq!(
        reason(&h(r#"{"sequence":0,"recordedAt":"2026-01-01T00:00:00Z"}"#)),
        R::HistoryShape
    );
    assert_eq!(
        reason(&h(
            r#"{"sequence":1,"recordedAt":"2026-01-01T00:00:00Z","note":"x"}"#
        )),
        R::HistoryShape
    );
    assert_eq!(
        reason(&h(r#"{"sequence":1,"recordedAt":"yesterday"}"#)),
        R::HistoryTimestamp
    );
    assert_eq!(
        reason(&h(
            r#"{"sequence":1,"recordedAt":"2026-01-02T00:00:00Z"},{"sequence":2,"recordedAt":"2026-01-01T00:00:00Z"}"#
        )),
        R::HistoryOrder
    );
    assert_eq!(
        reason(&h(
            r#"{"sequence":1,"recordedAt":"2026-01-01T00:00:00Z","validUntil":"2026-02-01T00:00:00Z"},{"sequence":2,"recordedAt":"2026-01-02T00:00:00Z","validUntil":"2026-03-01T00:00:00Z"}"#
        )),
        R::HistoryMovedLater
    );
    assert_eq!(
        reason(&h(
            r#"{"sequence":1,"recordedAt":"2026-01-01T00:00:00Z","revokedAt":"2026-02-01T00:00:00Z"},{"sequence":2,"recordedAt":"2026-01-02T00:00:00Z","revokedAt":"2026-03-01T00:00:00Z"}"#
        )),
        R::HistoryMovedLater
    );
    assert_eq!(
        reason(&h(
            r#"{"sequence":1,"recordedAt":"2026-01-01T00:00:00Z"},{"sequence":1,"recordedAt":"2026-01-02T00:00:00Z"}"#
        )),
        R::HistorySequence
    );
    // Moving boundaries earlier is allowed; the effective boundary is the last (earliest) one.
    let snapshot = KeyRegistrySnapshot::from_bytes(&h(
        r#"{"sequence":1,"recordedAt":"2026-01-01T00:00:00Z","validUntil":"2026-03-01T00:00:00Z"},{"sequence":2,"recordedAt":"2026-01-01T00:00:00Z","validUntil":"2026-02-01T00:00:00+00:00"}"#,
    ))
    .unwrap();
    let binding = snapshot.binding("urn:k:a").unwrap();
    assert_eq!(
        binding.valid_until.as_ref().unwrap().as_str(),
        "2026-02-01T00:00:00+00:00"
    );
}

#[test]
fn selection_applies_signer_rule_and_half_open_interval() {
    let registry_bytes = registry(&[binding(
        "urn:k:a",
        "urn:agent:a",
        &key(1),
        T0,
        r#"{"sequence":1,"recordedAt":"2026-01-01T00:00:00Z","validUntil":"2026-02-01T00:00:00Z","revokedAt":"2026-01-20T00:00:00Z"}"#,
    )]);
    let snapshot = KeyRegistrySnapshot::from_bytes(&registry_bytes).unwrap();
    let signer = ExpectedSigner::Principal(Principal::new(PrincipalType::Agent, "urn:agent:a"));
    let at = |text: &str| Timestamp::parse(text).unwrap().instant().clone();
    assert!(
        snapshot
            .select("urn:k:a", &signer, &at("2026-01-01T00:00:00Z"))
            .is_ok()
    );
    assert!(
        snapshot
            .select("urn:k:a", &signer, &at("2026-01-19T23:59:59.999999999999Z"))
            .is_ok()
    );
    assert_eq!(
        snapshot
            .select("urn:k:a", &signer, &at("2025-12-31T23:59:59Z"))
            .unwrap_err()
            .reason,
        R::NotYetValid
    );
    assert_eq!(
        snapshot
            .select("urn:k:a", &signer, &at("2026-01-20T00:00:00Z"))
            .unwrap_err()
            .reason,
        R::Revoked
    );
    assert_eq!(
        snapshot
            .select("urn:k:b", &signer, &at("2026-01-02T00:00:00Z"))
            .unwrap_err()
            .reason,
        R::UnknownKey
    );
    let other = ExpectedSigner::Principal(Principal::new(PrincipalType::Human, "urn:agent:a"));
    assert_eq!(
        snapshot
            .select("urn:k:a", &other, &at("2026-01-02T00:00:00Z"))
            .unwrap_err()
            .reason,
        R::SignerMismatch
    );
    assert_eq!(
        snapshot
            .select(
                "urn:k:a",
                &ExpectedSigner::ServicePrincipal,
                &at("2026-01-02T00:00:00Z")
            )
            .unwrap_err()
            .reason,
        R::SignerMismatch
    );
}

#[test]
fn cached_snapshots_are_shared() {
    let bytes = common::file("cryptography/keys/registry-valid.json");
    let a = KeyRegistrySnapshot::from_bytes_cached(bytes).unwrap();
    let b = KeyRegistrySnapshot::from_bytes_cached(bytes).unwrap();
    assert!(std::sync::Arc::ptr_eq(&a, &b));
    assert_eq!(a.len(), 7);
}
