//! The `context` module (Context Packages, knowledge publications, Group Snapshots, §13.3 and
//! §7.4) for the JavaScript backends: one function per operation of
//! `missionweaveprotocol_agent::context::ops`, which reads and checks the JSON argument object;
//! a signing operation takes the caller's key as `keyId` and seed, as `sign` does (an empty
//! seed: no key, which the core refuses by name).

use missionweaveprotocol::crypto::{Signer, SigningKey};
use missionweaveprotocol::json::{Value, parse};
use missionweaveprotocol_agent::context::{ContextError, ops};

use crate::envelope::{Failure, finish};

fn arguments(args: &str) -> Result<Value, Failure> {
    parse(args.as_bytes()).map_err(|e| Failure::argument(format!("context arguments: {e}")))
}

/// The key of `seed` (none when it is empty).
fn key(key_id: &str, seed: &[u8]) -> Result<Option<SigningKey>, Failure> {
    if seed.is_empty() {
        return Ok(None);
    }
    let seed: &[u8; 32] = seed
        .try_into()
        .map_err(|_| Failure::argument("the signing seed must be exactly 32 bytes"))?;
    Ok(Some(SigningKey::from_seed(key_id, seed)))
}

/// A reading operation's envelope.
fn read(args: &str, op: fn(&Value) -> Result<Value, ContextError>) -> String {
    finish(arguments(args).and_then(|args| op(&args).map_err(|e| Failure::error(&e))))
}

type SigningOp = fn(&Value, Option<&dyn Signer>) -> Result<Value, ContextError>;

/// A signing operation's envelope.
fn signing(args: &str, key_id: &str, seed: &[u8], op: SigningOp) -> String {
    finish((|| {
        let args = arguments(args)?;
        let key = key(key_id, seed)?;
        op(&args, key.as_ref().map(|k| k as &dyn Signer)).map_err(|e| Failure::error(&e))
    })())
}

/// `{draft}` + key → `{document, text, hash}`: a signed Context Package.
pub fn publish(args: &str, key_id: &str, seed: &[u8]) -> String {
    signing(args, key_id, seed, ops::publish)
}

/// `{text, resolver, generator?}` → `{document, hash}`.
pub fn verify(args: &str) -> String {
    read(args, ops::verify)
}

/// `{document, expectedMissionId}` → `{groupId, revision, values}`.
pub fn install(args: &str) -> String {
    read(args, ops::install)
}

/// `{source, draft}` + key → the signed knowledge publication.
pub fn knowledge_publish(args: &str, key_id: &str, seed: &[u8]) -> String {
    signing(args, key_id, seed, ops::knowledge_publish)
}

/// `{publication, publicKey, source?}` → `null`.
pub fn knowledge_verify(args: &str) -> String {
    read(args, ops::knowledge_verify)
}

/// `{request, authority}` + key → `{document, text, hash}`: a signed Group Snapshot.
pub fn snapshot_archive(args: &str, key_id: &str, seed: &[u8]) -> String {
    signing(args, key_id, seed, ops::snapshot_archive)
}

/// `{text, resolver, authority?}` → `{document, hash}`.
pub fn snapshot_verify(args: &str) -> String {
    read(args, ops::snapshot_verify)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::{publish, verify};

    #[test]
    fn failures_are_envelopes_with_the_context_class() {
        let out = publish("{}", "", &[]);
        assert!(out.contains(r#""class":"ContextPackageError""#), "{out}");
        assert!(out.contains(r#""code":"PROTOCOL_VIOLATION""#), "{out}");
        let out = verify("not json");
        assert!(out.contains(r#""error""#), "{out}");
        let out = publish("{}", "k", &[1u8; 3]);
        assert!(out.contains("32 bytes"), "{out}");
    }
}
