//! Conversions shared by the napi and WebAssembly bindings of MissionWeaveProtocol.
//!
//! Every function takes strings and bytes and returns one envelope string (see [`envelope`]):
//! the two bindings only register these functions, so Node and the browser see exactly the
//! same results. There is no protocol logic here; each function calls one core entry point and
//! converts its result or error. There is one Rust function per operation (no dispatch on an
//! operation's name): a binding that names an operation the core does not have does not
//! compile.

pub mod admission;
#[cfg(feature = "authority")]
pub mod agent;
#[cfg(all(feature = "authority", not(target_arch = "wasm32")))]
pub mod artifacts;
#[cfg(feature = "authority")]
pub mod auth;
#[cfg(feature = "authority")]
pub mod authority;
#[cfg(feature = "authority")]
pub mod authority_core;
#[cfg(feature = "authority")]
pub mod client;
#[cfg(feature = "authority")]
pub mod context;
#[cfg(feature = "authority")]
pub mod control;
pub mod envelope;
pub mod held;
pub mod keys;
pub mod limits;
#[cfg(feature = "authority")]
pub mod offline;
#[cfg(feature = "authority")]
pub mod policy;
pub mod reasons;
#[cfg(feature = "authority")]
pub mod scheduling;
#[cfg(feature = "authority")]
pub mod shapes;

use std::sync::Arc;

use missionweaveprotocol::bundle;
#[cfg(feature = "conformance-bundle")]
use missionweaveprotocol::conformance::{self, BundleKind, BundleReport, EmbeddedBundle};
use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json::{
    Document, ParseLimits, Value, canonical_bytes, parse, sha256_prefixed, write_view,
};
use missionweaveprotocol::registry::{AgentRegistryKeyResolver, KeyRegistrySnapshot};
use missionweaveprotocol::schema::SchemaCatalog;
use missionweaveprotocol::signed_documents::{
    self, SignedDocument, SignedDocumentCodec, SignedDocumentKind, VerifiedSignedDocument,
};
use missionweaveprotocol::wire::{self, ReceivedFrame};
use missionweaveprotocol::{Principal, WireCode};

pub use envelope::{Failure, Obj, Outcome, finish};
pub use held::Held;

/// Text of bytes the core produced as JSON (always UTF-8).
fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

pub fn kind(name: &str) -> Result<SignedDocumentKind, Failure> {
    SignedDocumentKind::parse(name).ok_or_else(|| {
        Failure::argument(format!(
            "unknown signed document kind {name:?} (expected one of {})",
            SignedDocumentKind::ALL
                .map(SignedDocumentKind::as_str)
                .join(", ")
        ))
    })
}

pub(crate) fn strict(bytes: &[u8]) -> Result<Value, Failure> {
    parse(bytes).map_err(|e| Failure::error(&e))
}

fn principal(principal: &Principal) -> Value {
    principal.to_value()
}

/// RFC 8785 text of strictly parsed JSON; `limits` as in [`limits::limits_arg`] (default
/// `STATE`).
pub fn canonicalize(bytes: &[u8], limits: &str) -> String {
    finish(canonical_of(bytes, limits).map(|out| Value::string(text(&out))))
}

/// `sha256:` of the RFC 8785 bytes.
pub fn canonical_hash_of(bytes: &[u8], limits: &str) -> String {
    finish(canonical_of(bytes, limits).map(|out| Value::string(sha256_prefixed(&out))))
}

/// Strict parse into the bounded tape, then RFC 8785 bytes: no owned tree is built.
fn canonical_of(bytes: &[u8], limits: &str) -> Result<Vec<u8>, Failure> {
    // An input may come from outside: `DOCUMENT` unless the caller chooses other limits.
    let limits = limits::limits_arg(limits, ParseLimits::DOCUMENT)?;
    let document = Document::parse(bytes, &limits).map_err(|e| Failure::error(&e))?;
    let mut out = Vec::with_capacity(bytes.len());
    write_view(document.root(), &mut out).map_err(|e| Failure::error(&e))?;
    Ok(out)
}

/// The envelope every call on a freed native object answers with (`invalid-argument`): the one
/// text for napi and, through `freedError`, the JS wrapper.
pub fn freed(class: &str) -> String {
    finish(Err(Failure::argument(format!(
        "this {class} was freed (free() or [Symbol.dispose]) and cannot be used"
    ))))
}

/// Strict parse into the bounded tape for the calls that only read (no owned tree).
fn read_only(bytes: &[u8], limits: ParseLimits) -> Result<Document<'_>, Failure> {
    Document::parse(bytes, &limits).map_err(|e| Failure::error(&e))
}

/// Strict parse check (§6.4 stage 1): returns the top-level JSON type.
pub fn check_json(bytes: &[u8]) -> String {
    finish(
        read_only(bytes, ParseLimits::DOCUMENT)
            .map(|document| Value::string(document.root().type_name())),
    )
}

/// Schema validation by name (`command`, `command.schema.json` or the `$id`).
pub fn validate_schema(name: &str, bytes: &[u8]) -> String {
    finish((|| {
        let catalog = SchemaCatalog::embedded();
        if !catalog.contains(name) {
            return Err(Failure::argument(format!("unknown schema {name:?}")));
        }
        let document = read_only(bytes, ParseLimits::DOCUMENT)?;
        catalog
            .validate_view(name, document.root())
            .map_err(|issue| Failure::error(&issue))?;
        Ok(Value::Null)
    })())
}

/// The schema file names of the embedded catalog.
pub fn schema_names() -> String {
    let names = SchemaCatalog::embedded().names();
    finish(Ok(Value::Array(
        names.iter().map(|n| Value::string(n.clone())).collect(),
    )))
}

/// A validated (or rejected) Registry snapshot, held by a JavaScript `Registry` object.
#[derive(Debug, Clone)]
pub struct RegistryHandle {
    resolver: AgentRegistryKeyResolver,
}

impl RegistryHandle {
    /// Validates the bytes once; a rejected snapshot is kept and fails verification at stage 4.
    pub fn new(bytes: &[u8]) -> Self {
        Self {
            resolver: AgentRegistryKeyResolver::new(bytes),
        }
    }

    pub fn resolver(&self) -> &AgentRegistryKeyResolver {
        &self.resolver
    }

    fn snapshot(&self) -> Option<&Arc<KeyRegistrySnapshot>> {
        self.resolver.snapshot().ok()
    }

    /// `{organizationId, digest, size}` or the Registry error.
    pub fn info(&self) -> String {
        finish(match self.resolver.snapshot() {
            Ok(snapshot) => Ok(Obj::new()
                .str("organizationId", snapshot.organization_id())
                .str("digest", snapshot.digest())
                .num("size", snapshot.len() as u64)
                .build()),
            Err(error) => Err(Failure::error(error)),
        })
    }

    /// The binding of one key ID (for display; selection rules are applied by `verify`).
    pub fn binding(&self, key_id: &str) -> String {
        finish(Ok(self.snapshot().and_then(|s| s.binding(key_id)).map_or(
            Value::Null,
            |b| {
                Obj::new()
                    .str("keyId", b.key_id.clone())
                    .value("principal", principal(&b.principal))
                    .str("publicKey", b.public_key_text.clone())
                    .str("validFrom", b.valid_from.as_str())
                    .opt_str("validUntil", b.valid_until.as_ref().map(|t| t.as_str()))
                    .opt_str("revokedAt", b.revoked_at.as_ref().map(|t| t.as_str()))
                    .build()
            },
        )))
    }
}

/// The result of one verification: an error envelope, or an `ok` envelope with every field but
/// `signingBytes`, which follow it after a line feed. JSON text never holds a raw line feed, so
/// the first one separates the two and the bytes cross without JSON escaping.
pub(crate) fn verified_envelope(result: Result<VerifiedSignedDocument, Failure>) -> String {
    let verified = match result {
        Ok(verified) => verified,
        Err(failure) => return finish(Err(failure)),
    };
    let signing = String::from_utf8_lossy(&verified.signing_bytes);
    let mut out = envelope::FlatOk::new(640 + signing.len())
        .str("kind", verified.kind.as_str())
        .str("signingHash", &verified.signing_hash)
        .str("organizationId", &verified.organization_id)
        .str("keyId", &verified.key_id)
        .str("publicKey", &verified.public_key_text)
        .object(
            "principal",
            &[
                ("type", verified.principal.kind.as_str()),
                ("id", &verified.principal.id),
            ],
        )
        .str("protectedTime", verified.protected_time.as_str())
        .str("signature", &verified.signature)
        .str("validFrom", verified.valid_from.as_str())
        .opt_str(
            "validUntil",
            verified.valid_until.as_ref().map(|t| t.as_str()),
        )
        .opt_str(
            "revokedAt",
            verified.revoked_at.as_ref().map(|t| t.as_str()),
        )
        .finish();
    out.push('\n');
    out.push_str(&signing);
    out
}

/// Six-stage verification of the exact received bytes (see [`verified_envelope`]); `limits`
/// as in [`limits::limits_arg`] (default `DOCUMENT`).
pub fn verify(kind_name: &str, bytes: &[u8], registry: &RegistryHandle, limits: &str) -> String {
    let result = kind(kind_name).and_then(|kind| {
        SignedDocumentCodec::new()
            .with_limits(limits::limits_arg(limits, ParseLimits::DOCUMENT)?)
            .verify(kind, bytes, registry.resolver())
            .map_err(|e| Failure::error(&e))
    });
    verified_envelope(result)
}

/// Splits a batch given as comma-separated kinds, byte lengths and the concatenated bytes.
fn batch<'b>(
    kinds: &str,
    lengths: &[u32],
    data: &'b [u8],
) -> Result<Vec<(SignedDocumentKind, &'b [u8])>, Failure> {
    let names: Vec<&str> = if kinds.is_empty() {
        Vec::new()
    } else {
        kinds.split(',').collect()
    };
    if names.len() != lengths.len() {
        return Err(Failure::argument("kinds and lengths differ in count"));
    }
    let mut items = Vec::with_capacity(names.len());
    let mut offset = 0usize;
    for (name, length) in names.into_iter().zip(lengths) {
        let end = offset
            .checked_add(*length as usize)
            .filter(|end| *end <= data.len())
            .ok_or_else(|| Failure::argument("lengths exceed the data"))?;
        items.push((kind(name)?, &data[offset..end]));
        offset = end;
    }
    if offset != data.len() {
        return Err(Failure::argument("lengths do not cover the data"));
    }
    Ok(items)
}

/// Separates the records of a batch: a control character, which neither JSON text nor RFC 8785
/// output ever holds raw.
const RECORD_SEPARATOR: char = '\u{1e}';

/// Verifies a batch in one call: `{"ok":count}`, then one [`verified_envelope`] per item in
/// input order, each preceded by U+001E. A malformed batch is one error envelope.
pub fn verify_many(
    kinds: &str,
    lengths: &[u32],
    data: &[u8],
    registry: &RegistryHandle,
    threads: u32,
    limits: &str,
) -> String {
    let prepared = batch(kinds, lengths, data)
        .and_then(|items| Ok((items, limits::limits_arg(limits, ParseLimits::DOCUMENT)?)));
    let (items, limits) = match prepared {
        Ok(prepared) => prepared,
        Err(failure) => return finish(Err(failure)),
    };
    let results = SignedDocumentCodec::new().with_limits(limits).verify_many(
        &items,
        registry.resolver(),
        threads as usize,
    );
    let mut out = finish(Ok(Value::Number(
        missionweaveprotocol::json::Number::from_u64(results.len() as u64),
    )));
    for result in results {
        out.push(RECORD_SEPARATOR);
        out.push_str(&verified_envelope(result.map_err(|e| Failure::error(&e))));
    }
    out
}

pub(crate) fn signed_value(signed: &SignedDocument) -> Value {
    Obj::new()
        .str("kind", signed.kind.as_str())
        .str("document", text(&signed.bytes))
        .str("documentHash", signed.document_hash.clone())
        .str("signingBytes", text(&signed.signing_bytes))
        .str("signingHash", signed.signing_hash.clone())
        .str("protectedTime", signed.protected_time.as_str())
        .str("signature", signed.signature.clone())
        .build()
}

/// Signs an unsigned document with a test or deployment seed. With a Registry, the produced
/// bytes are also verified through all six stages before they are returned.
pub fn sign(
    kind_name: &str,
    unsigned: &[u8],
    key_id: &str,
    seed: &[u8],
    registry: Option<&RegistryHandle>,
) -> String {
    finish((|| {
        let kind = kind(kind_name)?;
        let seed: &[u8; 32] = seed
            .try_into()
            .map_err(|_| Failure::argument("the signing seed must be exactly 32 bytes"))?;
        let key = SigningKey::from_seed(key_id, seed);
        let value = strict(unsigned)?;
        let codec = SignedDocumentCodec::new();
        let signed = match registry {
            Some(registry) => codec
                .sign_and_verify(kind, &value, &key, registry.resolver())
                .map(|(signed, _)| signed),
            None => codec.sign(kind, &value, &key),
        }
        .map_err(|e| Failure::error(&e))?;
        Ok(signed_value(&signed))
    })())
}

/// The signing bytes of stage 5 for display when verification stopped at stage 6: the strict
/// parse, the document without its top-level `signature`, RFC 8785.
pub fn signing_preview(bytes: &[u8]) -> String {
    finish((|| {
        // A document: the codec's DOCUMENT limits, as Python's `SignedDocumentCodec`.
        let document = read_only(bytes, ParseLimits::DOCUMENT)?;
        if document.root().as_object().is_none() {
            return Err(Failure::argument("a signed document is a JSON object"));
        }
        let out =
            signed_documents::signing_bytes_of(document.root()).map_err(|e| Failure::error(&e))?;
        Ok(Obj::new()
            .str("signingHash", sha256_prefixed(&out))
            .str("signingBytes", text(&out))
            .build())
    })())
}

/// The kinds whose schema the document satisfies (`SignedDocumentCodec::detect_kinds`).
pub fn detect_kinds(bytes: &[u8]) -> String {
    finish((|| {
        let document = read_only(bytes, ParseLimits::DOCUMENT)?;
        let kinds = SignedDocumentCodec::new().detect_kinds_of(document.root());
        Ok(Value::Array(
            kinds
                .into_iter()
                .map(|kind| Value::string(kind.as_str()))
                .collect(),
        ))
    })())
}

// ---- bundle ------------------------------------------------------------------------------

pub fn source_commit() -> String {
    bundle::SOURCE_COMMIT.to_owned()
}

#[cfg(feature = "conformance-bundle")]
pub fn bundle_file(path: &str) -> Option<Vec<u8>> {
    bundle::embedded_file(path).map(<[u8]>::to_vec)
}

#[cfg(feature = "conformance-bundle")]
pub fn bundle_paths() -> String {
    finish(Ok(Value::Array(
        bundle::embedded_files()
            .map(|(path, _)| Value::string(path))
            .collect(),
    )))
}

#[cfg(feature = "conformance-bundle")]
pub fn verify_cryptography_bundle() -> String {
    finish(
        bundle::verify_cryptography_bundle()
            .map(|summary| summary.to_value())
            .map_err(|e| Failure::error(&e)),
    )
}

#[cfg(feature = "conformance-bundle")]
pub fn verify_admission_bundle() -> String {
    finish(
        bundle::verify_admission_bundle()
            .map(|summary| summary.to_value())
            .map_err(|e| Failure::error(&e)),
    )
}

#[cfg(feature = "conformance-bundle")]
fn report_value(report: &BundleReport) -> Value {
    let Value::Object(mut object) = report.to_value() else {
        return Value::Null;
    };
    let outcomes = report
        .outcomes
        .iter()
        .map(|(id, actual, passed)| {
            Obj::new()
                .str("id", id.clone())
                .str("actual", actual.clone())
                .bool("passed", *passed)
                .build()
        })
        .collect();
    object.insert("bundle", Value::string(report.kind.as_str()));
    object.insert("summary", Value::string(report.summary()));
    object.insert("outcomes", Value::Array(outcomes));
    Value::Object(object)
}

#[cfg(feature = "conformance-bundle")]
/// Runs the embedded conformance bundles (`structural,cryptography,admission`; empty = all).
pub fn run_conformance(bundles: &str) -> String {
    finish((|| {
        let kinds = if bundles.is_empty() {
            BundleKind::ALL.to_vec()
        } else {
            bundles
                .split(',')
                .map(|name| {
                    BundleKind::parse(name)
                        .ok_or_else(|| Failure::argument(format!("unknown bundle {name:?}")))
                })
                .collect::<Result<_, _>>()?
        };
        let report = conformance::run(&EmbeddedBundle, &kinds);
        Ok(Obj::new()
            .bool("ok", report.ok())
            .str(
                "source",
                format!("embedded bundle at {}", bundle::SOURCE_COMMIT),
            )
            .value(
                "bundles",
                Value::Array(report.reports.iter().map(report_value).collect()),
            )
            .build())
    })())
}

// ---- frames ------------------------------------------------------------------------------

fn frame_value(frame: &wire::Frame) -> Result<Value, Failure> {
    let json = canonical_bytes(&frame.value).map_err(|e| Failure::error(&e))?;
    Ok(Obj::new()
        .str("frameType", frame.frame_type.as_str())
        .str("frameId", frame.frame_id())
        .opt_str("phase", frame.phase())
        .str("json", text(&json))
        .build())
}

pub fn parse_frame(bytes: &[u8]) -> String {
    finish(
        wire::parse_frame(bytes)
            .map_err(|e| Failure::error(&e))
            .and_then(|frame| frame_value(&frame)),
    )
}

pub fn parse_received_frame(bytes: &[u8]) -> String {
    finish(
        match wire::parse_received_frame(bytes).map_err(|e| Failure::error(&e)) {
            Ok(ReceivedFrame::Command(command)) => Ok(Obj::new()
                .str("frameType", "COMMAND")
                .str("frameId", command.frame_id)
                .str("protocolVersion", command.protocol_version)
                .str("commandBytes", text(&command.command_bytes))
                .build()),
            Ok(ReceivedFrame::Other(frame)) => frame_value(&frame),
            Err(error) => Err(error),
        },
    )
}

pub fn encode_frame(bytes: &[u8]) -> String {
    finish((|| {
        let value = strict(bytes)?;
        wire::encode_frame(&value)
            .map(|out| Value::string(text(&out)))
            .map_err(|e| Failure::error(&e))
    })())
}

pub fn error_frame(
    frame_id: &str,
    code: &str,
    message: &str,
    occurred_at: &str,
    related_frame_id: Option<&str>,
) -> String {
    finish((|| {
        let code = WireCode::parse(code)
            .ok_or_else(|| Failure::argument(format!("unknown wire code {code:?}")))?;
        wire::error_frame(frame_id, code, message, occurred_at, related_frame_id)
            .map(|out| Value::string(text(&out)))
            .map_err(|e| Failure::error(&e))
    })())
}

// ---- vocabularies every build reads ----------------------------------------------------------

/// The §19 wire codes an unchanged retry can succeed on (`WireCode::retryable`, the core's
/// `retryable_wire_code` vocabulary): what an error's `retryable` is when it does not say.
pub fn retryable_wire_codes() -> String {
    finish(Ok(Value::Array(
        WireCode::ALL
            .into_iter()
            .filter(|code| code.retryable())
            .map(|code| Value::string(code.as_str()))
            .collect(),
    )))
}
