//! The one call shape of the `context` module for every binding: a method name, a JSON
//! argument object and, for the signing methods, the caller's key. The Python extension and
//! the JavaScript backends only convert their values to this shape and back; every argument
//! is read and checked here.
//!
//! | method | arguments | answer |
//! | --- | --- | --- |
//! | `publish` | `{draft}` + key | `{document, text, hash}` |
//! | `verify` | `{text, resolver, generator?}` | `{document, hash}` |
//! | `install` | `{document, expectedMissionId}` | `{groupId, revision, values}` |
//! | `knowledgePublish` | `{source, draft}` + key | the signed publication |
//! | `knowledgeVerify` | `{publication, publicKey, source?}` | `null` |
//! | `snapshotArchive` | `{request, authority}` + key | `{document, text, hash}` |
//! | `snapshotVerify` | `{text, resolver, authority?}` | `{document, hash}` |
//!
//! `resolver` is `{"registry": <Registry JSON text>}` (the Organization's) or `{"key":
//! {"principal": {type, id}, "keyId", "publicKey": <base64url>}}` (the service's own key);
//! `source` is a package document (its hash is recomputed, never taken from the caller);
//! instants are Unix milliseconds (`…Ms`).

use std::sync::Arc;

use missionweaveprotocol::crypto::Signer;
use missionweaveprotocol::json::{Number, Object, Value, canonical_bytes, sha256_prefixed};
use missionweaveprotocol::registry::{AgentRegistryKeyResolver, KeyResolver};
use missionweaveprotocol::schema_formats::decode_base64url;
use missionweaveprotocol::signed_documents::SignedDocument;
use missionweaveprotocol::{Principal, PrincipalType};

use super::error::ContextError;
use super::install::{VerifiedContextPackage, install_values, verify};
use super::knowledge::{self, KnowledgeDraft};
use super::snapshot::{self, SnapshotRequest};
use crate::context::{
    package::{ContextDecision, ContextPackageDraft, SourceEvent, publish},
    resolver::single_key_resolver,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// Runs `method` with `args`; `key` signs for `publish`, `knowledgePublish` and
/// `snapshotArchive`. One function per method follows ([`ops`]): a binding that can name the
/// operation in code calls it directly, so an unknown operation does not compile.
pub fn call(method: &str, args: &Value, key: Option<&dyn Signer>) -> Result<Value, ContextError> {
    match method {
        "publish" => ops::publish(args, key),
        "verify" => ops::verify(args),
        "install" => ops::install(args),
        "knowledgePublish" => ops::knowledge_publish(args, key),
        "knowledgeVerify" => ops::knowledge_verify(args),
        "snapshotArchive" => ops::snapshot_archive(args, key),
        "snapshotVerify" => ops::snapshot_verify(args),
        other => Err(bad(format!("the context module has no method {other:?}"))),
    }
}

/// The methods of [`call`], one function each, with the same arguments and answers.
pub mod ops {
    use super::*;

    /// The caller's key, or the refusal naming `method`.
    fn signer<'k>(
        key: Option<&'k dyn Signer>,
        method: &str,
    ) -> Result<&'k dyn Signer, ContextError> {
        key.ok_or_else(|| bad(format!("{method} needs a signing key")))
    }

    /// `publish`: `{draft}` + key → `{document, text, hash}`.
    pub fn publish(args: &Value, key: Option<&dyn Signer>) -> Result<Value, ContextError> {
        let a = Args(args);
        let draft = package_draft(&Args(a.member("draft")?))?;
        Ok(signed(&super::publish(&draft, signer(key, "publish")?)?))
    }

    /// `verify`: `{text, resolver, generator?}` → `{document, hash}`.
    pub fn verify(args: &Value) -> Result<Value, ContextError> {
        let a = Args(args);
        let resolver = resolver(a.member("resolver")?)?;
        let verified = super::verify(
            a.text("text")?.as_bytes(),
            &*resolver,
            a.opt_text("generator")?,
        )?;
        Ok(pair(verified.document, &verified.package_hash))
    }

    /// `install`: `{document, expectedMissionId}` → `{groupId, revision, values}`.
    pub fn install(args: &Value) -> Result<Value, ContextError> {
        let a = Args(args);
        let package = source(a.member("document")?)?;
        let (group, revision, values) = install_values(&package, a.text("expectedMissionId")?)?;
        let mut o = Object::new();
        o.insert("groupId", Value::string(group));
        o.insert("revision", Value::Number(Number::from_u64(revision)));
        o.insert("values", values);
        Ok(Value::Object(o))
    }

    /// `knowledgePublish`: `{source, draft}` + key → the signed publication.
    pub fn knowledge_publish(
        args: &Value,
        key: Option<&dyn Signer>,
    ) -> Result<Value, ContextError> {
        let a = Args(args);
        let package = source(a.member("source")?)?;
        let draft = knowledge_draft(&Args(a.member("draft")?))?;
        knowledge::publish(&package, &draft, signer(key, "knowledgePublish")?)
    }

    /// `knowledgeVerify`: `{publication, publicKey, source?}` → `null`.
    pub fn knowledge_verify(args: &Value) -> Result<Value, ContextError> {
        let a = Args(args);
        let public = decode_base64url(a.text("publicKey")?)
            .and_then(|b| <[u8; 32]>::try_from(b).ok())
            .ok_or_else(|| bad("publicKey must be 32 bytes of base64url"))?;
        let package = match args.get("source") {
            None | Some(Value::Null) => None,
            Some(document) => Some(source(document)?),
        };
        knowledge::verify(a.member("publication")?, &public, package.as_ref())?;
        Ok(Value::Null)
    }

    /// `snapshotArchive`: `{request, authority}` + key → `{document, text, hash}`.
    pub fn snapshot_archive(args: &Value, key: Option<&dyn Signer>) -> Result<Value, ContextError> {
        let a = Args(args);
        let request = snapshot_request(&Args(a.member("request")?))?;
        let authority = principal(a.member("authority")?)?;
        Ok(signed(&snapshot::archive(
            &request,
            &authority,
            signer(key, "snapshotArchive")?,
        )?))
    }

    /// `snapshotVerify`: `{text, resolver, authority?}` → `{document, hash}`.
    pub fn snapshot_verify(args: &Value) -> Result<Value, ContextError> {
        let a = Args(args);
        let resolver = resolver(a.member("resolver")?)?;
        let authority = match args.get("authority") {
            None | Some(Value::Null) => None,
            Some(p) => Some(principal(p)?),
        };
        let verified =
            snapshot::verify(a.text("text")?.as_bytes(), &*resolver, authority.as_ref())?;
        Ok(pair(verified.document, &verified.artifact_hash))
    }
}

fn bad(detail: impl Into<String>) -> ContextError {
    ContextError::InvalidArgument(detail.into())
}

struct Args<'a>(&'a Value);

impl<'a> Args<'a> {
    fn member(&self, name: &str) -> Result<&'a Value, ContextError> {
        match self.0.get(name) {
            Some(Value::Null) | None => Err(bad(format!("{name} is missing"))),
            Some(value) => Ok(value),
        }
    }

    fn text(&self, name: &str) -> Result<&'a str, ContextError> {
        self.member(name)?
            .as_str()
            .ok_or_else(|| bad(format!("{name} must be a string")))
    }

    fn opt_text(&self, name: &str) -> Result<Option<&'a str>, ContextError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_str()
                .map(Some)
                .ok_or_else(|| bad(format!("{name} must be a string"))),
        }
    }

    fn count(&self, name: &str) -> Result<u64, ContextError> {
        self.member(name)?
            .as_number()
            .and_then(Number::as_u64)
            .filter(|n| *n < (1 << 53))
            .ok_or_else(|| bad(format!("{name} must be an integer in 0..=2^53-1")))
    }

    fn millis(&self, name: &str) -> Result<UnixMillis, ContextError> {
        self.member(name)?
            .as_number()
            .and_then(Number::as_i64)
            .map(UnixMillis)
            .ok_or_else(|| bad(format!("{name} must be Unix milliseconds")))
    }

    fn texts(&self, name: &str) -> Result<Vec<String>, ContextError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| bad(format!("{name} must list strings")))
                })
                .collect(),
            Some(_) => Err(bad(format!("{name} must be an array of strings"))),
        }
    }

    fn objects(&self, name: &str) -> Result<Vec<Args<'a>>, ContextError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_object()
                        .map(|_| Args(v))
                        .ok_or_else(|| bad(format!("{name} must list objects")))
                })
                .collect(),
            Some(_) => Err(bad(format!("{name} must be an array of objects"))),
        }
    }
}

fn events(a: &Args<'_>) -> Result<Vec<SourceEvent>, ContextError> {
    a.objects("events")?
        .iter()
        .map(|e| {
            Ok(SourceEvent {
                event_id: e.text("eventId")?.to_owned(),
                group_id: e.text("groupId")?.to_owned(),
                sequence: e.count("sequence")?,
            })
        })
        .collect()
}

fn package_draft(a: &Args<'_>) -> Result<ContextPackageDraft, ContextError> {
    Ok(ContextPackageDraft {
        context_package_id: a.text("contextPackageId")?.to_owned(),
        version: a.count("version")?,
        previous_context_package_id: a.opt_text("previousContextPackageId")?.map(str::to_owned),
        mission_id: a.text("missionId")?.to_owned(),
        group_id: a.text("groupId")?.to_owned(),
        work_item_id: a.opt_text("workItemId")?.map(str::to_owned),
        events: events(a)?,
        artifact_hashes: a.texts("artifactHashes")?,
        summary: a.text("summary")?.to_owned(),
        decisions: a
            .objects("decisions")?
            .iter()
            .map(|d| {
                Ok(ContextDecision {
                    description: d.text("description")?.to_owned(),
                    source_event_ids: d.texts("sourceEventIds")?,
                })
            })
            .collect::<Result<_, ContextError>>()?,
        constraints: a.texts("constraints")?,
        unresolved_questions: a.texts("unresolvedQuestions")?,
        generated_by: a.text("generatedBy")?.to_owned(),
        generated_at: a.millis("generatedAtMs")?,
    })
}

fn knowledge_draft(a: &Args<'_>) -> Result<KnowledgeDraft, ContextError> {
    Ok(KnowledgeDraft {
        publication_id: a.text("publicationId")?.to_owned(),
        target_scope: a.text("targetScope")?.to_owned(),
        artifact_hash: a.text("artifactHash")?.to_owned(),
        classification: a.text("classification")?.to_owned(),
        summary: a.text("summary")?.to_owned(),
        published_by: principal(a.member("publishedBy")?)?,
        published_at: a.millis("publishedAtMs")?,
    })
}

fn snapshot_request(a: &Args<'_>) -> Result<SnapshotRequest, ContextError> {
    let policy_log = match a.member("policyLog")? {
        Value::Array(items) => items.clone(),
        _ => return Err(bad("policyLog must be an array")),
    };
    Ok(SnapshotRequest {
        snapshot_id: a.text("snapshotId")?.to_owned(),
        group_id: a.text("groupId")?.to_owned(),
        events: events(a)?,
        state: a.0.get("state").cloned().unwrap_or(Value::Null),
        policy_log,
        created_at: a.millis("createdAtMs")?,
    })
}

fn principal(value: &Value) -> Result<Principal, ContextError> {
    let a = Args(value);
    let text = a.text("type")?;
    let kind = PrincipalType::parse(text).ok_or_else(|| {
        bad(format!(
            "principal type {text:?} is not agent, human or service"
        ))
    })?;
    Ok(Principal::new(kind, a.text("id")?))
}

fn resolver(value: &Value) -> Result<Arc<dyn KeyResolver>, ContextError> {
    let a = Args(value);
    if let Some(registry) = a.opt_text("registry")? {
        return Ok(Arc::new(AgentRegistryKeyResolver::new(registry.as_bytes())));
    }
    let key = Args(a.member("key")?);
    let public = decode_base64url(key.text("publicKey")?)
        .ok_or_else(|| bad("resolver.key.publicKey must be base64url"))?;
    let snapshot = single_key_resolver(
        principal(key.member("principal")?)?,
        key.text("keyId")?,
        &public,
    )?;
    Ok(Arc::new(snapshot))
}

/// A package document the caller holds: its hash is recomputed from its canonical bytes and
/// its rules re-checked (a caller cannot hand in another hash).
fn source(document: &Value) -> Result<VerifiedContextPackage, ContextError> {
    super::package::check(document, None)?;
    let bytes = canonical_bytes(document).map_err(|e| bad(e.to_string()))?;
    Ok(VerifiedContextPackage {
        package_hash: sha256_prefixed(&bytes),
        document: document.clone(),
    })
}

fn signed(document: &SignedDocument) -> Value {
    let mut o = Object::new();
    o.insert("document", document.document.clone());
    o.insert(
        "text",
        Value::string(String::from_utf8_lossy(&document.bytes).into_owned()),
    );
    o.insert("hash", Value::string(&document.document_hash));
    Value::Object(o)
}

fn pair(document: Value, hash: &str) -> Value {
    let mut o = Object::new();
    o.insert("document", document);
    o.insert("hash", Value::string(hash));
    Value::Object(o)
}
