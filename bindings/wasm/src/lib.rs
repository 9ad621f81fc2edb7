//! The WebAssembly build: registers the shared conversions of `missionweaveprotocol-ffi` (core/ffi) with wasm-bindgen.
//! Every function returns an envelope string (`{"ok":…}` / `{"error":…}`) that the package's
//! JavaScript wrapper turns into typed objects and `Error` subclasses; nothing throws here.

use missionweaveprotocol_ffi::admission::{self, ContextReply, Host, Log, Mode, NoHost, Reply};
use wasm_bindgen::prelude::*;

/// A Registry snapshot, validated once; a rejected snapshot fails verification at stage 4.
#[wasm_bindgen]
#[derive(Debug)]
pub struct Registry(missionweaveprotocol_ffi::RegistryHandle);

#[wasm_bindgen]
impl Registry {
    #[wasm_bindgen(constructor)]
    pub fn new(bytes: &[u8]) -> Self {
        Self(missionweaveprotocol_ffi::RegistryHandle::new(bytes))
    }

    pub fn info(&self) -> String {
        self.0.info()
    }

    pub fn binding(&self, key_id: &str) -> String {
        self.0.binding(key_id)
    }
}

/// The core's in-memory Admission Log.
#[wasm_bindgen]
#[derive(Debug)]
pub struct InMemoryAdmissionLog(admission::MemoryLog);

#[wasm_bindgen]
impl InMemoryAdmissionLog {
    #[wasm_bindgen(constructor)]
    pub fn new(service_type: &str, service_id: &str) -> Result<Self, JsError> {
        admission::MemoryLog::new(service_type, service_id)
            .map(Self)
            .ok_or_else(|| JsError::new("unknown Principal type"))
    }

    pub fn size(&self) -> u32 {
        u32::try_from(self.0.len()).unwrap_or(u32::MAX)
    }
}

#[wasm_bindgen]
pub fn canonicalize(bytes: &[u8]) -> String {
    missionweaveprotocol_ffi::canonicalize(bytes)
}

#[wasm_bindgen(js_name = canonicalHash)]
pub fn canonical_hash(bytes: &[u8]) -> String {
    missionweaveprotocol_ffi::canonical_hash_of(bytes)
}

#[wasm_bindgen(js_name = checkJson)]
pub fn check_json(bytes: &[u8]) -> String {
    missionweaveprotocol_ffi::check_json(bytes)
}

#[wasm_bindgen(js_name = validateSchema)]
pub fn validate_schema(name: &str, bytes: &[u8]) -> String {
    missionweaveprotocol_ffi::validate_schema(name, bytes)
}

#[wasm_bindgen(js_name = schemaNames)]
pub fn schema_names() -> String {
    missionweaveprotocol_ffi::schema_names()
}

#[wasm_bindgen]
pub fn sign(kind: &str, unsigned: &[u8], key_id: &str, seed: &[u8]) -> String {
    missionweaveprotocol_ffi::sign(kind, unsigned, key_id, seed, None)
}

/// Signs, then verifies the produced bytes through all six stages against `registry`.
#[wasm_bindgen(js_name = signAndVerify)]
pub fn sign_and_verify(
    kind: &str,
    unsigned: &[u8],
    key_id: &str,
    seed: &[u8],
    registry: &Registry,
) -> String {
    missionweaveprotocol_ffi::sign(kind, unsigned, key_id, seed, Some(&registry.0))
}

#[wasm_bindgen]
pub fn verify(kind: &str, bytes: &[u8], registry: &Registry) -> String {
    missionweaveprotocol_ffi::verify(kind, bytes, &registry.0)
}

#[wasm_bindgen(js_name = verifyMany)]
pub fn verify_many(
    kinds: &str,
    lengths: &[u32],
    data: &[u8],
    registry: &Registry,
    threads: u32,
) -> String {
    missionweaveprotocol_ffi::verify_many(kinds, lengths, data, &registry.0, threads)
}

#[wasm_bindgen(js_name = signingPreview)]
pub fn signing_preview(bytes: &[u8]) -> String {
    missionweaveprotocol_ffi::signing_preview(bytes)
}

#[wasm_bindgen(js_name = detectKinds)]
pub fn detect_kinds(bytes: &[u8]) -> String {
    missionweaveprotocol_ffi::detect_kinds(bytes)
}

#[wasm_bindgen]
extern "C" {
    /// The wrapper's host object: `lookup(org, hash)`, `append(candidateJson, bytes)`,
    /// `context()`.
    pub type AdmissionHost;
    #[wasm_bindgen(method, catch)]
    fn lookup(
        this: &AdmissionHost,
        organization_id: &str,
        signing_hash: &str,
    ) -> Result<LogReply, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn append(this: &AdmissionHost, candidate: &str, bytes: &[u8]) -> Result<LogReply, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn context(this: &AdmissionHost) -> Result<TrustedContext, JsValue>;

    /// `{status, record?, serviceType?, serviceId?}`.
    pub type LogReply;
    #[wasm_bindgen(method, getter, catch)]
    fn status(this: &LogReply) -> Result<Option<String>, JsValue>;
    #[wasm_bindgen(method, getter, catch)]
    fn record(this: &LogReply) -> Result<Option<Vec<u8>>, JsValue>;
    #[wasm_bindgen(method, getter, catch, js_name = serviceType)]
    fn service_type(this: &LogReply) -> Result<Option<String>, JsValue>;
    #[wasm_bindgen(method, getter, catch, js_name = serviceId)]
    fn service_id(this: &LogReply) -> Result<Option<String>, JsValue>;

    /// `{admissionRecordId, trustedAcceptedAt, acceptedByType, acceptedById}`.
    pub type TrustedContext;
    #[wasm_bindgen(method, getter, catch, js_name = admissionRecordId)]
    fn admission_record_id(this: &TrustedContext) -> Result<Option<String>, JsValue>;
    #[wasm_bindgen(method, getter, catch, js_name = trustedAcceptedAt)]
    fn trusted_accepted_at(this: &TrustedContext) -> Result<Option<String>, JsValue>;
    #[wasm_bindgen(method, getter, catch, js_name = acceptedByType)]
    fn accepted_by_type(this: &TrustedContext) -> Result<Option<String>, JsValue>;
    #[wasm_bindgen(method, getter, catch, js_name = acceptedById)]
    fn accepted_by_id(this: &TrustedContext) -> Result<Option<String>, JsValue>;
}

/// A host call that throws or answers with the wrong shape is `None` (fail closed).
struct JsHost<'a>(&'a AdmissionHost);

fn reply(reply: Result<LogReply, JsValue>) -> Option<Reply> {
    let reply = reply.ok()?;
    Some(Reply {
        status: reply.status().ok()??,
        record: reply.record().ok()?,
        service_type: reply.service_type().ok()?,
        service_id: reply.service_id().ok()?,
    })
}

impl Host for JsHost<'_> {
    fn lookup(&self, organization_id: &str, signing_hash: &str) -> Option<Reply> {
        reply(self.0.lookup(organization_id, signing_hash))
    }

    fn append(&self, candidate: &str, candidate_bytes: &[u8]) -> Option<Reply> {
        reply(self.0.append(candidate, candidate_bytes))
    }

    fn context(&self) -> Option<ContextReply> {
        context_reply(&self.0.context().ok()?)
    }
}

fn context_reply(context: &TrustedContext) -> Option<ContextReply> {
    Some(ContextReply {
        admission_record_id: context.admission_record_id().ok()??,
        trusted_accepted_at: context.trusted_accepted_at().ok()??,
        accepted_by_type: context.accepted_by_type().ok()??,
        accepted_by_id: context.accepted_by_id().ok()??,
    })
}

fn mode(replay: bool) -> Mode {
    if replay {
        Mode::HistoricalReplay
    } else {
        Mode::FirstAdmission
    }
}

/// Verifies and admits with a JavaScript Admission Log (`host.lookup`, `host.append`).
#[wasm_bindgen(js_name = admitWithHost)]
pub fn admit_with_host(
    replay: bool,
    kind: &str,
    bytes: &[u8],
    registry: &Registry,
    host: &AdmissionHost,
) -> String {
    admission::admit(
        mode(replay),
        kind,
        bytes,
        &registry.0,
        Log::Host,
        &JsHost(host),
    )
}

/// Verifies and admits with the in-memory log; `host.context()` supplies the trusted context.
#[wasm_bindgen(js_name = admitWithMemoryLog)]
pub fn admit_with_memory_log(
    replay: bool,
    kind: &str,
    bytes: &[u8],
    registry: &Registry,
    log: &InMemoryAdmissionLog,
    host: Option<AdmissionHost>,
) -> String {
    let log = Log::Memory(&log.0);
    match &host {
        Some(host) => admission::admit(mode(replay), kind, bytes, &registry.0, log, &JsHost(host)),
        None => admission::admit(mode(replay), kind, bytes, &registry.0, log, &NoHost),
    }
}

#[wasm_bindgen(js_name = sourceCommit)]
pub fn source_commit() -> String {
    missionweaveprotocol_ffi::source_commit()
}

#[wasm_bindgen(js_name = bundleFile)]
pub fn bundle_file(path: &str) -> Option<Vec<u8>> {
    missionweaveprotocol_ffi::bundle_file(path)
}

#[wasm_bindgen(js_name = bundlePaths)]
pub fn bundle_paths() -> String {
    missionweaveprotocol_ffi::bundle_paths()
}

#[wasm_bindgen(js_name = verifyCryptographyBundle)]
pub fn verify_cryptography_bundle() -> String {
    missionweaveprotocol_ffi::verify_cryptography_bundle()
}

#[wasm_bindgen(js_name = verifyAdmissionBundle)]
pub fn verify_admission_bundle() -> String {
    missionweaveprotocol_ffi::verify_admission_bundle()
}

#[wasm_bindgen(js_name = runConformance)]
pub fn run_conformance(bundles: &str) -> String {
    missionweaveprotocol_ffi::run_conformance(bundles)
}

#[wasm_bindgen(js_name = parseFrame)]
pub fn parse_frame(bytes: &[u8]) -> String {
    missionweaveprotocol_ffi::parse_frame(bytes)
}

#[wasm_bindgen(js_name = parseReceivedFrame)]
pub fn parse_received_frame(bytes: &[u8]) -> String {
    missionweaveprotocol_ffi::parse_received_frame(bytes)
}

#[wasm_bindgen(js_name = encodeFrame)]
pub fn encode_frame(bytes: &[u8]) -> String {
    missionweaveprotocol_ffi::encode_frame(bytes)
}

#[wasm_bindgen(js_name = errorFrame)]
pub fn error_frame(
    frame_id: &str,
    code: &str,
    message: &str,
    occurred_at: &str,
    related_frame_id: Option<String>,
) -> String {
    missionweaveprotocol_ffi::error_frame(
        frame_id,
        code,
        message,
        occurred_at,
        related_frame_id.as_deref(),
    )
}

/// A stateful core object: a lease, the budget ledger, a Delegation Grant's authority, a retry
/// controller or a Scheduler (see `missionweaveprotocol_ffi::Handle`). Arguments are JSON arrays; results
/// are envelopes.
#[wasm_bindgen]
#[derive(Debug)]
pub struct Handle(missionweaveprotocol_ffi::Handle);

#[wasm_bindgen]
impl Handle {
    #[wasm_bindgen(constructor)]
    pub fn new(class: &str, mode: &str, args: &str) -> Self {
        Self(missionweaveprotocol_ffi::Handle::new(class, mode, args))
    }

    pub fn status(&self) -> String {
        self.0.status()
    }

    pub fn call(&mut self, method: &str, args: &str) -> String {
        self.0.call(method, args)
    }

    pub fn schedule(&mut self, now: f64) -> String {
        self.0.schedule(now)
    }

    pub fn apply(&mut self, work_id: &str, transition: &str, now: f64) -> String {
        self.0.apply(work_id, transition, now)
    }
}

#[wasm_bindgen(js_name = callFunction)]
pub fn call_function(method: &str, args: &str) -> String {
    missionweaveprotocol_ffi::call_function(method, args)
}

/// An admission driven step by step from JavaScript, for Admission Logs that answer
/// asynchronously (`step()`, then `onLookup`/`onContext`/`onAppend`, then `result()`).
/// A missing or malformed reply means the host call failed: admission fails closed.
#[wasm_bindgen]
#[derive(Debug)]
pub struct AdmissionSession(admission::Session);

#[wasm_bindgen]
impl AdmissionSession {
    #[wasm_bindgen(constructor)]
    pub fn new(replay: bool, kind: &str, bytes: &[u8], registry: &Registry) -> Self {
        Self(admission::Session::start(
            mode(replay),
            kind,
            bytes,
            &registry.0,
        ))
    }

    pub fn step(&self) -> String {
        self.0.step()
    }

    #[wasm_bindgen(js_name = onLookup)]
    pub fn on_lookup(&mut self, reply: Option<LogReply>) {
        self.0.on_lookup(reply.and_then(|r| self::reply(Ok(r))));
    }

    #[wasm_bindgen(js_name = onContext)]
    pub fn on_context(&mut self, context: Option<TrustedContext>) {
        self.0.on_context(context.as_ref().and_then(context_reply));
    }

    #[wasm_bindgen(js_name = onAppend)]
    pub fn on_append(&mut self, reply: Option<LogReply>) {
        self.0.on_append(reply.and_then(|r| self::reply(Ok(r))));
    }

    pub fn result(&mut self) -> String {
        self.0.result()
    }
}
