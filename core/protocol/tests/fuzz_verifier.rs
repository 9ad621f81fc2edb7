#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Property-based fuzzing of the untrusted-input surface: any bytes give a verified document or
//! a typed error at a stage with the matching wire code — never a panic. Mutations start from
//! the bundle's real documents so that deep stages are reached. For longer, structure-aware
//! runs of every entry point, see `mwp-fuzz` (docs/testing.md).
//!
//! Oracles: a mutant that verifies must carry the signing hash of one of the original documents
//! (no forgery: changing signed content must break the signature), and bytes that the strict
//! JSON parser refuses must be rejected at the parse stage.

mod common;

use common::{registry, valid_document};
use missionweaveprotocol::json::parse;
use missionweaveprotocol::signed_documents::{SignedDocumentCodec, SignedDocumentKind};
use missionweaveprotocol::wire::parse_received_frame;
use missionweaveprotocol::{AgentRegistryKeyResolver, KeyRegistrySnapshot, Stage};
use proptest::prelude::*;
use std::collections::HashSet;
use std::sync::OnceLock;

/// Signing hashes of the original (unmutated) documents, one per kind.
fn original_hashes() -> &'static HashSet<String> {
    static HASHES: OnceLock<HashSet<String>> = OnceLock::new();
    HASHES.get_or_init(|| {
        SignedDocumentKind::ALL
            .iter()
            .map(|kind| {
                SignedDocumentCodec::new()
                    .verify(*kind, valid_document(kind.as_str()), &registry())
                    .expect("the original documents verify")
                    .signing_hash
            })
            .collect()
    })
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let tokens = prop::sample::select(vec![
        b"{".to_vec(),
        b"}".to_vec(),
        b"\"".to_vec(),
        b"\\u".to_vec(),
        b"\\ud800".to_vec(),
        b"1e400".to_vec(),
        b",".to_vec(),
        b":".to_vec(),
        b"\xEF\xBB\xBF".to_vec(),
        b"\x80".to_vec(),
        b"-0".to_vec(),
        b"null".to_vec(),
        b"[[[[".to_vec(),
    ]);
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(at, bit)| Mutation::Flip(at, 1 << (bit % 8))),
        (any::<usize>(), tokens).prop_map(|(at, token)| Mutation::Insert(at, token)),
        (any::<usize>(), 1usize..16).prop_map(|(at, n)| Mutation::Delete(at, n)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn apply(bytes: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for mutation in mutations {
        let len = out.len().max(1);
        match mutation {
            Mutation::Flip(at, mask) => {
                if !out.is_empty() {
                    let i = at % out.len();
                    out[i] ^= mask;
                }
            }
            Mutation::Insert(at, token) => {
                let i = at % (out.len() + 1);
                out.splice(i..i, token.iter().copied());
            }
            Mutation::Delete(at, n) => {
                let i = at % len;
                let end = (i + n).min(out.len());
                if i < end {
                    out.drain(i..end);
                }
            }
            Mutation::Truncate(at) => out.truncate(at % len),
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(768))]

    #[test]
    fn mutated_documents_never_panic(kind_index in 0usize..9, mutations in prop::collection::vec(mutation(), 1..4)) {
        let kind = SignedDocumentKind::ALL[kind_index];
        let bytes = apply(valid_document(kind.as_str()), &mutations);
        match SignedDocumentCodec::new().verify(kind, &bytes, &registry()) {
            Ok(verified) => prop_assert!(
                original_hashes().contains(&verified.signing_hash),
                "forgery: a mutant verified with signing hash {}", verified.signing_hash
            ),
            Err(error) => {
                prop_assert_eq!(error.wire_code(), error.stage.wire_code());
                if parse(&bytes).is_err() {
                    prop_assert_eq!(error.stage, Stage::Parse);
                }
            }
        }
    }

    #[test]
    fn mutated_registries_never_panic(mutations in prop::collection::vec(mutation(), 1..4)) {
        let bytes = apply(common::file("cryptography/keys/registry-valid.json"), &mutations);
        let _ = KeyRegistrySnapshot::from_bytes(&bytes);
        let resolver = AgentRegistryKeyResolver::new(&bytes);
        if let Ok(verified) = SignedDocumentCodec::new().verify(SignedDocumentKind::Command, valid_document("command"), &resolver) {
            prop_assert!(original_hashes().contains(&verified.signing_hash));
        }
    }

    #[test]
    fn mutated_frames_never_panic(mutations in prop::collection::vec(mutation(), 1..4)) {
        let bytes = apply(common::file("conformance/vectors/valid/websocket-frame.json"), &mutations);
        let _ = parse_received_frame(&bytes);
        if let Ok(value) = parse(&bytes) {
            let _ = missionweaveprotocol::schema::SchemaCatalog::embedded().validate("websocket-frame", &value);
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        match SignedDocumentCodec::new().verify(SignedDocumentKind::Event, &bytes, &registry()) {
            Ok(verified) => prop_assert!(original_hashes().contains(&verified.signing_hash)),
            Err(error) => {
                if parse(&bytes).is_err() {
                    prop_assert_eq!(error.stage, Stage::Parse);
                }
            }
        }
    }
}

/// Deterministic form of the no-forgery oracle: every single-letter substitution of every
/// original document either fails or verifies with an original signing hash. Many of these keep
/// the document schema-valid, so they reach the signature stage (§6.4 stage 6).
#[test]
fn letter_substitutions_never_forge() {
    let mut reached_signature = 0usize;
    for kind in SignedDocumentKind::ALL {
        let original = valid_document(kind.as_str());
        for i in 0..original.len() {
            if !original[i].is_ascii_lowercase() {
                continue;
            }
            let mut bytes = original.to_vec();
            bytes[i] = if bytes[i] == b'a' { b'b' } else { b'a' };
            match SignedDocumentCodec::new().verify(kind, &bytes, &registry()) {
                Ok(verified) => assert!(
                    original_hashes().contains(&verified.signing_hash),
                    "forgery: {kind:?} with byte {i} changed verified"
                ),
                Err(error) => reached_signature += usize::from(error.stage == Stage::Signature),
            }
        }
    }
    assert!(reached_signature > 0, "no substitution reached stage 6");
}
