//! `mwp-js-reference`: runs every evaluation of the three embedded bundles (58 + 62 + 30)
//! natively through the Rust core and prints one JSON line per evaluation. The JavaScript
//! tests (`js/test/`) drive the same evaluations through the napi addon and the WebAssembly
//! build and require identical records: verdict, stage, code, bytes and hashes.

use std::cell::Cell;
use std::io::Write as _;

use missionweaveprotocol::AgentRegistryKeyResolver;
use missionweaveprotocol::bundle::embedded_file;
use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json::{Value, canonical_bytes, canonical_hash, parse};
use missionweaveprotocol::schema::SchemaCatalog;
use missionweaveprotocol::schema_formats::decode_base64url;
use missionweaveprotocol::signed_documents::{SignedDocumentCodec, SignedDocumentKind};
use missionweaveprotocol_ffi::admission::{ContextReply, Host, Log, Mode, Reply, admit};
use missionweaveprotocol_ffi::{Obj, RegistryHandle};

fn file(path: &str) -> Vec<u8> {
    embedded_file(path).map(<[u8]>::to_vec).unwrap_or_default()
}

fn json(path: &str) -> Value {
    parse(&file(path)).unwrap_or(Value::Null)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn str_at<'v>(value: &'v Value, pointer: &str) -> &'v str {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn items(value: &Value, name: &str) -> Vec<Value> {
    value
        .get(name)
        .and_then(Value::as_array)
        .map(<[Value]>::to_vec)
        .unwrap_or_default()
}

fn emit(out: &mut impl std::io::Write, record: Value) {
    let line = canonical_bytes(&record).unwrap_or_default();
    let _ = out.write_all(&line);
    let _ = out.write_all(b"\n");
}

fn structural(out: &mut impl std::io::Write) {
    let catalog = SchemaCatalog::embedded();
    for entry in json("conformance/manifest.json")
        .as_array()
        .unwrap_or_default()
    {
        let schema = str_at(entry, "/schema").trim_start_matches("schemas/");
        let record = Obj::new()
            .str("bundle", "structural")
            .str("id", str_at(entry, "/name"));
        let record = match parse(&file(str_at(entry, "/instance"))) {
            Err(_) => record
                .str("verdict", "invalid")
                .str("stage", "parse")
                .str("code", "PROTOCOL_VIOLATION"),
            Ok(value) => match catalog.validate(schema, &value) {
                Ok(()) => record
                    .str("verdict", "valid")
                    .value("stage", Value::Null)
                    .value("code", Value::Null),
                Err(_) => record
                    .str("verdict", "invalid")
                    .str("stage", "schema")
                    .str("code", "SCHEMA_VALIDATION_FAILED"),
            },
        };
        emit(out, record.build());
    }
}

fn cryptography(out: &mut impl std::io::Write) {
    let codec = SignedDocumentCodec::new();
    for case in items(&json("cryptography/manifest.json"), "cases") {
        let case_id = str_at(&case, "/id");
        for (index, evaluation) in items(&case, "evaluations").iter().enumerate() {
            let id = format!("{case_id}#{index}");
            let record = Obj::new().str("bundle", "cryptography").str("id", id);
            if str_at(&case, "/kind") == "canonicalization" {
                let value = parse(&file(str_at(evaluation, "/input"))).unwrap_or(Value::Null);
                let record = record
                    .str("verdict", "complete")
                    .str(
                        "canonical",
                        text(&canonical_bytes(&value).unwrap_or_default()),
                    )
                    .str("hash", canonical_hash(&value).unwrap_or_default());
                emit(out, record.build());
                continue;
            }
            let Some(kind) = SignedDocumentKind::parse(str_at(evaluation, "/profileId")) else {
                continue;
            };
            let document = file(str_at(evaluation, "/document"));
            let resolver = AgentRegistryKeyResolver::new(&file(str_at(evaluation, "/registry")));
            let record = match codec.verify(kind, &document, &resolver) {
                Ok(verified) => {
                    let mut record = record
                        .str("verdict", "complete")
                        .str("stage", "complete")
                        .value("code", Value::Null)
                        .str("signingBytes", text(&verified.signing_bytes))
                        .str("signingHash", verified.signing_hash.clone())
                        .str("signedDocumentHash", verified.signed_document_hash())
                        .str("keyId", verified.key_id.clone())
                        .value("principal", verified.principal.to_value())
                        .str("protectedTime", verified.protected_time.as_str())
                        .str("signature", verified.signature.clone());
                    let key = json(str_at(evaluation, "/signingKey"));
                    let seed = decode_base64url(str_at(&key, "/seed")).unwrap_or_default();
                    if let Ok(seed) = <[u8; 32]>::try_from(seed.as_slice()) {
                        let key = SigningKey::from_seed(str_at(&key, "/keyId"), &seed);
                        let unsigned = parse(&verified.signing_bytes).unwrap_or(Value::Null);
                        if let Ok(signed) = codec.sign(kind, &unsigned, &key) {
                            record = record
                                .str("resignedSignature", signed.signature)
                                .str("resignedDocumentHash", signed.document_hash);
                        }
                    }
                    record
                }
                Err(error) => record
                    .str("verdict", "rejected")
                    .str("stage", error.stage.as_str())
                    .str("code", error.wire_code().as_str())
                    .str("reason", error.reason),
            };
            emit(out, record.build());
        }
    }
}

/// Replays the evaluation's declared Admission Log outcomes and counts the calls.
struct FixtureHost<'e> {
    evaluation: &'e Value,
    calls: [Cell<u32>; 3],
}

impl FixtureHost<'_> {
    fn reply(&self, name: &str) -> Option<Reply> {
        let outcome = self.evaluation.get(name)?;
        let record = outcome.get("record").and_then(Value::as_str).map(file);
        Some(Reply {
            status: str_at(outcome, "/status").to_owned(),
            record,
            service_type: Some(str_at(outcome, "/authenticatedService/type").to_owned()),
            service_id: Some(str_at(outcome, "/authenticatedService/id").to_owned()),
        })
    }
}

impl Host for FixtureHost<'_> {
    fn lookup(&self, _: &str, _: &str) -> Option<Reply> {
        self.calls[0].set(self.calls[0].get() + 1);
        self.reply("lookup")
    }

    fn append(&self, _: &str, _: &[u8]) -> Option<Reply> {
        self.calls[2].set(self.calls[2].get() + 1);
        self.reply("append")
    }

    fn context(&self) -> Option<ContextReply> {
        self.calls[1].set(self.calls[1].get() + 1);
        let context = self.evaluation.get("trustedContext")?;
        Some(ContextReply {
            admission_record_id: str_at(context, "/admissionRecordId").to_owned(),
            trusted_accepted_at: str_at(context, "/trustedAcceptedAt").to_owned(),
            accepted_by_type: str_at(context, "/acceptedBy/type").to_owned(),
            accepted_by_id: str_at(context, "/acceptedBy/id").to_owned(),
        })
    }
}

fn admission(out: &mut impl std::io::Write) {
    for case in items(&json("admission/manifest.json"), "cases") {
        for evaluation in items(&case, "evaluations") {
            let host = FixtureHost {
                evaluation: &evaluation,
                calls: Default::default(),
            };
            let mode = if str_at(&evaluation, "/mode") == "historical-replay" {
                Mode::HistoricalReplay
            } else {
                Mode::FirstAdmission
            };
            let registry = RegistryHandle::new(&file(str_at(&evaluation, "/registry")));
            let envelope = admit(
                mode,
                str_at(&evaluation, "/profileId"),
                &file(str_at(&evaluation, "/document")),
                &registry,
                Log::Host,
                &host,
            );
            let envelope = parse(envelope.as_bytes()).unwrap_or(Value::Null);
            let record = Obj::new()
                .str("bundle", "admission")
                .str("id", str_at(&evaluation, "/id"));
            let record = match envelope.get("ok") {
                Some(ok) => record
                    .str("verdict", "complete")
                    .str("stage", "complete")
                    .value("code", Value::Null)
                    .str(
                        "record",
                        text(
                            &canonical_bytes(ok.get("record").unwrap_or(&Value::Null))
                                .unwrap_or_default(),
                        ),
                    )
                    .str("recordBytes", str_at(ok, "/recordBytes"))
                    .bool(
                        "existing",
                        ok.get("existing").and_then(Value::as_bool) == Some(true),
                    ),
                None => record
                    .str("verdict", "rejected")
                    .str("stage", str_at(&envelope, "/error/stage"))
                    .str("code", str_at(&envelope, "/error/code"))
                    .str("reason", str_at(&envelope, "/error/reason")),
            };
            let calls = host
                .calls
                .iter()
                .map(|c| {
                    Value::Number(missionweaveprotocol::json::Number::from_u64(u64::from(
                        c.get(),
                    )))
                })
                .collect();
            emit(out, record.value("calls", Value::Array(calls)).build());
        }
    }
}

fn main() {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    structural(&mut out);
    cryptography(&mut out);
    admission(&mut out);
    let _ = out.flush();
}
