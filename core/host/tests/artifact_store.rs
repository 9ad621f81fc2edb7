//! The filesystem Artifact store (§13.1 "Binary content MUST be stored outside the Group Event
//! log"): layout, put/get, tampering, conflicts, I/O failures, concurrent puts. Each rule has a
//! positive and a negative case; the manifest a put returns verifies with the six-stage verifier
//! (Artifact profile) and is accepted by the engine's `artifact.publish`. The sans-IO content
//! rules are tested in `core/engine/tests/artifact_content.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../../engine/tests/engine_work_fixture.rs"]
mod engine_work_fixture;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use engine_work_fixture::*;
use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol::{DescribeError, ErrorClass, WireCode};
use missionweaveprotocol_engine::artifact::ArtifactError;
use missionweaveprotocol_engine::artifact::content::{content_hash, object_path, sign_manifest};
use missionweaveprotocol_host::LocalArtifactStore;

const CONTENT: &[u8] = b"{\"total\": 42}\n";
/// `sha256sum` of CONTENT, computed outside this code.
const CONTENT_HASH: &str =
    "sha256:a94b0e0dcfd4f4771397bfe1d20857de2f06cd3f84e51c04b1e7ac517e3a10a2";

/// A fresh, empty directory under the system temporary directory.
fn scratch() -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "mwp-artifact-store-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The manifest metadata of a report by `WORKER` for `item`.
fn metadata(item: &str) -> Value {
    json::parse(
        format!(
            r#"{{"mediaType":"application/json","schemaUri":"https://example.org/report.json",
            "producer":{{"agentId":"{WORKER}","agentCardVersion":1,
              "capabilities":[{{"id":"text.summarise","version":"1.2.0"}}]}},
            "missionId":"{MISSION}","groupId":"{GROUP}","workItemId":"{item}",
            "sourceArtifactHashes":[],"toolVersions":[{{"name":"ledger-tool","version":"2.0"}}],
            "modelVersions":[],"classification":"internal","createdAt":"{NOW_TEXT}"}}"#
        )
        .as_bytes(),
    )
    .unwrap()
}

fn with(mut value: Value, name: &str, member: Value) -> Value {
    if let Value::Object(o) = &mut value {
        o.insert(name, member);
    }
    value
}

fn key_of(f: &Fixture, principal: &str) -> SigningKey {
    f.keys
        .iter()
        .find(|(p, _)| p.id == principal)
        .unwrap()
        .1
        .clone()
}

#[test]
fn layout_is_two_hex_digits_then_the_rest() {
    let hash = content_hash(CONTENT);
    let (directory, file) = object_path(&hash).unwrap();
    assert_eq!(directory, &hash[7..9]);
    assert_eq!(file, &hash[9..]);
    let store = LocalArtifactStore::new("/var/store");
    assert_eq!(
        store.path_of(&hash).unwrap(),
        PathBuf::from("/var/store")
            .join(&hash[7..9])
            .join(&hash[9..])
    );
    // Negative: other algorithms, upper-case hex, wrong length and path tricks are refused.
    for bad in [
        "sha512:00",
        &hash.to_uppercase(),
        &hash[..70],
        "sha256:../../../../etc/passwd000000000000000000000000000000000000000000",
        CONTENT_HASH.trim_start_matches("sha256:"),
    ] {
        let error = object_path(bad).unwrap_err();
        assert!(
            matches!(error, ArtifactError::UnsupportedHash { .. }),
            "{bad}"
        );
        assert_eq!(error.wire_code(), WireCode::SchemaValidationFailed);
        assert_eq!(error.class(), ErrorClass::Artifact);
    }
}

#[test]
fn put_then_get_round_trips_and_lays_out_the_object() {
    let f = fixture();
    let root = scratch();
    let store = LocalArtifactStore::new(&root);
    let signed = store
        .put(CONTENT, &metadata(W1), &key_of(&f, WORKER))
        .unwrap();
    let hash = content_hash(CONTENT);
    let path = root.join(&hash[7..9]).join(&hash[9..]);
    assert_eq!(std::fs::read(&path).unwrap(), CONTENT);
    assert_eq!(store.get(&signed.document).unwrap(), CONTENT);
    // Only the object remains in its directory: the temporary file is gone.
    let entries: Vec<_> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(entries, vec![std::ffi::OsString::from(&hash[9..])]);
    // Putting the same bytes again is idempotent.
    store
        .put(CONTENT, &metadata(W2), &key_of(&f, WORKER))
        .unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), CONTENT);
    // Refused metadata stores nothing.
    let other_root = scratch();
    let other = LocalArtifactStore::new(&other_root);
    let inline = with(metadata(W1), "inlineContent", Value::string("e30="));
    assert!(other.put(CONTENT, &inline, &key_of(&f, WORKER)).is_err());
    assert!(!other_root.exists());
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn get_refuses_tampered_truncated_and_missing_bytes() {
    let f = fixture();
    let root = scratch();
    let store = LocalArtifactStore::new(&root);
    let signed = store
        .put(CONTENT, &metadata(W1), &key_of(&f, WORKER))
        .unwrap();
    let path = store.path_of(&content_hash(CONTENT)).unwrap();

    let mut flipped = CONTENT.to_vec();
    flipped[3] ^= 0x20;
    std::fs::write(&path, &flipped).unwrap();
    let error = store.get(&signed.document).unwrap_err();
    assert_eq!(error.reason(), "hash_mismatch");
    assert_eq!(error.wire_code(), WireCode::ProtocolViolation);

    std::fs::write(&path, b"short").unwrap();
    let error = store.get(&signed.document).unwrap_err();
    assert_eq!(error.reason(), "size_mismatch");
    assert_eq!(
        error.fields().get("actual_size"),
        Some(&missionweaveprotocol::FieldValue::Integer(5))
    );

    std::fs::remove_file(&path).unwrap();
    let error = store.get(&signed.document).unwrap_err();
    assert_eq!(error.reason(), "content_missing");

    // A manifest naming an unsupported hash is refused before any path is built.
    let bad = with(
        signed.document.clone(),
        "contentHash",
        Value::string("sha256:../x"),
    );
    assert_eq!(store.get(&bad).unwrap_err().reason(), "unsupported_hash");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn put_refuses_to_overwrite_other_bytes() {
    let f = fixture();
    let root = scratch();
    let store = LocalArtifactStore::new(&root);
    let path = store.path_of(&content_hash(CONTENT)).unwrap();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, b"planted").unwrap();
    let error = store
        .put(CONTENT, &metadata(W1), &key_of(&f, WORKER))
        .unwrap_err();
    assert_eq!(error.reason(), "stored_bytes_conflict");
    assert_eq!(error.wire_code(), WireCode::ProtocolViolation);
    assert_eq!(std::fs::read(&path).unwrap(), b"planted");
    // Positive counterpart: with the right bytes there, put succeeds and keeps them.
    std::fs::write(&path, CONTENT).unwrap();
    store
        .put(CONTENT, &metadata(W1), &key_of(&f, WORKER))
        .unwrap();
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn io_failures_are_internal_and_retryable() {
    let root = scratch();
    // The root is a file: the object directory cannot be created.
    std::fs::write(&root, b"not a directory").unwrap();
    let error = LocalArtifactStore::new(&root)
        .put_bytes(CONTENT)
        .unwrap_err();
    assert_eq!(error.reason(), "io");
    assert_eq!(error.wire_code(), WireCode::InternalError);
    assert!(error.retryable());
    std::fs::remove_file(&root).unwrap();
}

#[test]
fn concurrent_puts_of_the_same_bytes_all_succeed() {
    let root = scratch();
    let store = LocalArtifactStore::new(&root);
    std::thread::scope(|s| {
        for _ in 0..6 {
            s.spawn(|| store.put_bytes(CONTENT).unwrap());
        }
    });
    assert_eq!(
        std::fs::read(store.path_of(&content_hash(CONTENT)).unwrap()).unwrap(),
        CONTENT
    );
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn manifest_from_put_is_accepted_by_artifact_publish() {
    let f = fixture();
    let engine = f.active();
    f.active_item(&engine, W1);
    let (epoch, lease) = execution(&engine, W1);
    let root = scratch();
    let store = LocalArtifactStore::new(&root);
    let signed = store
        .put(CONTENT, &metadata(W1), &key_of(&f, WORKER))
        .unwrap();
    let text = String::from_utf8(signed.bytes.clone()).unwrap();
    let command = f.command(
        "artifact.publish",
        WORKER,
        "",
        &format!(r#"{{"manifest":{text},"ownershipEpoch":{epoch},"leaseId":"{lease}"}}"#),
    );
    let performed = engine
        .perform_with_resolver(&command, NOW, &f.registry)
        .unwrap_or_else(|e| panic!("refused: {e} ({})", e.wire_code()));
    let events = f.checked(&performed);
    assert_eq!(events.len(), 1);
    let published = events[0].pointer("/payload/artifact").unwrap();
    assert_eq!(json::canonical_bytes(published).unwrap(), signed.bytes);
    // The published manifest still fetches the bytes.
    assert_eq!(store.get(published).unwrap(), CONTENT);

    // Negative: a manifest signed by the coordinator's key for the Worker's producer ID is
    // refused by the engine (six-stage verifier, Artifact profile).
    let forged = sign_manifest(b"other bytes", &metadata(W1), &key_of(&f, COORDINATOR)).unwrap();
    let text = String::from_utf8(forged.bytes).unwrap();
    let command = f.command(
        "artifact.publish",
        WORKER,
        "",
        &format!(r#"{{"manifest":{text},"ownershipEpoch":{epoch},"leaseId":"{lease}"}}"#),
    );
    let error = engine
        .perform_with_resolver(&command, NOW, &f.registry)
        .unwrap_err();
    assert_eq!(error.wire_code(), WireCode::AuthInvalidSignature);
    std::fs::remove_dir_all(&root).unwrap();
}
