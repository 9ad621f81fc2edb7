//! The Node.js addon: registers the shared conversions of `missionweaveprotocol-ffi` (core/ffi) with napi-rs.
//! Every function returns an envelope string (`{"ok":…}` / `{"error":…}`) that the package's
//! JavaScript wrapper turns into typed objects and `Error` subclasses; nothing throws here.
//! `catch_unwind` turns a panic (a core bug) into a JavaScript exception instead of an abort.

use missionweaveprotocol_ffi::admission::{self, ContextReply, Host, Log, Mode, NoHost, Reply};
use napi::bindgen_prelude::{Buffer, FnArgs, Function, Object, Uint8Array, Uint32Array};
use napi_derive::napi;

pub mod keys;

/// A Registry snapshot, validated once; a rejected snapshot fails verification at stage 4.
#[napi]
#[derive(Debug)]
pub struct Registry(missionweaveprotocol_ffi::RegistryHandle);

#[napi]
impl Registry {
    #[napi(constructor)]
    pub fn new(bytes: Uint8Array) -> Self {
        Self(missionweaveprotocol_ffi::RegistryHandle::new(&bytes))
    }

    #[napi(catch_unwind)]
    pub fn info(&self) -> String {
        self.0.info()
    }

    #[napi(catch_unwind)]
    pub fn binding(&self, key_id: String) -> String {
        self.0.binding(&key_id)
    }
}

/// The core's in-memory Admission Log.
#[napi]
#[derive(Debug)]
pub struct InMemoryAdmissionLog(admission::MemoryLog);

#[napi]
impl InMemoryAdmissionLog {
    #[napi(constructor)]
    pub fn new(service_type: String, service_id: String) -> napi::Result<Self> {
        admission::MemoryLog::new(&service_type, &service_id)
            .map(Self)
            .ok_or_else(|| napi::Error::from_reason("unknown Principal type"))
    }

    #[napi(catch_unwind)]
    pub fn size(&self) -> u32 {
        u32::try_from(self.0.len()).unwrap_or(u32::MAX)
    }
}

#[napi(catch_unwind)]
pub fn canonicalize(bytes: Uint8Array) -> String {
    missionweaveprotocol_ffi::canonicalize(&bytes)
}

#[napi(catch_unwind)]
pub fn canonical_hash(bytes: Uint8Array) -> String {
    missionweaveprotocol_ffi::canonical_hash_of(&bytes)
}

#[napi(catch_unwind)]
pub fn check_json(bytes: Uint8Array) -> String {
    missionweaveprotocol_ffi::check_json(&bytes)
}

#[napi(catch_unwind)]
pub fn validate_schema(name: String, bytes: Uint8Array) -> String {
    missionweaveprotocol_ffi::validate_schema(&name, &bytes)
}

#[napi(catch_unwind)]
pub fn schema_names() -> String {
    missionweaveprotocol_ffi::schema_names()
}

#[napi(catch_unwind)]
pub fn sign(kind: String, unsigned: Uint8Array, key_id: String, seed: Uint8Array) -> String {
    missionweaveprotocol_ffi::sign(&kind, &unsigned, &key_id, &seed, None)
}

/// Signs, then verifies the produced bytes through all six stages against `registry`.
#[napi(catch_unwind)]
pub fn sign_and_verify(
    kind: String,
    unsigned: Uint8Array,
    key_id: String,
    seed: Uint8Array,
    registry: &Registry,
) -> String {
    missionweaveprotocol_ffi::sign(&kind, &unsigned, &key_id, &seed, Some(&registry.0))
}

#[napi(catch_unwind)]
pub fn verify(kind: String, bytes: Uint8Array, registry: &Registry) -> String {
    missionweaveprotocol_ffi::verify(&kind, &bytes, &registry.0)
}

#[napi(catch_unwind)]
pub fn verify_many(
    kinds: String,
    lengths: Uint32Array,
    data: Uint8Array,
    registry: &Registry,
    threads: u32,
) -> String {
    missionweaveprotocol_ffi::verify_many(&kinds, &lengths, &data, &registry.0, threads)
}

#[napi(catch_unwind)]
pub fn signing_preview(bytes: Uint8Array) -> String {
    missionweaveprotocol_ffi::signing_preview(&bytes)
}

#[napi(catch_unwind)]
pub fn detect_kinds(bytes: Uint8Array) -> String {
    missionweaveprotocol_ffi::detect_kinds(&bytes)
}

/// One Admission Log reply, as the JavaScript host returns it.
#[napi(object, object_to_js = false)]
pub struct LogReply {
    pub status: String,
    pub record: Option<Uint8Array>,
    pub service_type: Option<String>,
    pub service_id: Option<String>,
}

impl std::fmt::Debug for LogReply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogReply")
            .field("status", &self.status)
            .field("record", &self.record.as_ref().map(|r| r.len()))
            .finish_non_exhaustive()
    }
}

/// The trusted acceptance context, as the JavaScript host returns it.
#[napi(object, object_to_js = false)]
#[derive(Debug)]
pub struct TrustedContext {
    pub admission_record_id: String,
    pub trusted_accepted_at: String,
    pub accepted_by_type: String,
    pub accepted_by_id: String,
}

/// The host object of the wrapper: `lookup(org, hash)`, `append(candidateJson, bytes)` and
/// `context()`. A call that throws or answers with the wrong shape is `None` (fail closed).
struct JsHost<'a>(&'a Object<'a>);

impl JsHost<'_> {
    fn reply(reply: napi::Result<LogReply>) -> Option<Reply> {
        reply.ok().map(LogReply::into_glue)
    }
}

impl LogReply {
    fn into_glue(self) -> Reply {
        Reply {
            status: self.status,
            record: self.record.map(|bytes| bytes.to_vec()),
            service_type: self.service_type,
            service_id: self.service_id,
        }
    }
}

impl TrustedContext {
    fn into_glue(self) -> ContextReply {
        ContextReply {
            admission_record_id: self.admission_record_id,
            trusted_accepted_at: self.trusted_accepted_at,
            accepted_by_type: self.accepted_by_type,
            accepted_by_id: self.accepted_by_id,
        }
    }
}

impl Host for JsHost<'_> {
    fn lookup(&self, organization_id: &str, signing_hash: &str) -> Option<Reply> {
        let lookup: Function<FnArgs<(String, String)>, LogReply> =
            self.0.get("lookup").ok().flatten()?;
        Self::reply(lookup.call((organization_id.to_owned(), signing_hash.to_owned()).into()))
    }

    fn append(&self, candidate: &str, candidate_bytes: &[u8]) -> Option<Reply> {
        let append: Function<FnArgs<(String, Buffer)>, LogReply> =
            self.0.get("append").ok().flatten()?;
        Self::reply(append.call((candidate.to_owned(), Buffer::from(candidate_bytes)).into()))
    }

    fn context(&self) -> Option<ContextReply> {
        let context: Function<(), TrustedContext> = self.0.get("context").ok().flatten()?;
        context.call(()).ok().map(TrustedContext::into_glue)
    }
}

fn mode(replay: bool) -> Mode {
    if replay {
        Mode::HistoricalReplay
    } else {
        Mode::FirstAdmission
    }
}

/// Verifies and admits with a JavaScript Admission Log (`host.lookup`, `host.append`).
#[napi(catch_unwind)]
pub fn admit_with_host(
    replay: bool,
    kind: String,
    bytes: Uint8Array,
    registry: &Registry,
    host: Object,
) -> String {
    admission::admit(
        mode(replay),
        &kind,
        &bytes,
        &registry.0,
        Log::Host,
        &JsHost(&host),
    )
}

/// Verifies and admits with the in-memory log; `host.context()` supplies the trusted context.
#[napi(catch_unwind)]
pub fn admit_with_memory_log(
    replay: bool,
    kind: String,
    bytes: Uint8Array,
    registry: &Registry,
    log: &InMemoryAdmissionLog,
    host: Option<Object>,
) -> String {
    let log = Log::Memory(&log.0);
    match &host {
        Some(host) => {
            admission::admit(mode(replay), &kind, &bytes, &registry.0, log, &JsHost(host))
        }
        None => admission::admit(mode(replay), &kind, &bytes, &registry.0, log, &NoHost),
    }
}

#[napi(catch_unwind)]
pub fn source_commit() -> String {
    missionweaveprotocol_ffi::source_commit()
}

#[napi(catch_unwind)]
pub fn bundle_file(path: String) -> Option<Buffer> {
    missionweaveprotocol_ffi::bundle_file(&path).map(Buffer::from)
}

#[napi(catch_unwind)]
pub fn bundle_paths() -> String {
    missionweaveprotocol_ffi::bundle_paths()
}

#[napi(catch_unwind)]
pub fn verify_cryptography_bundle() -> String {
    missionweaveprotocol_ffi::verify_cryptography_bundle()
}

#[napi(catch_unwind)]
pub fn verify_admission_bundle() -> String {
    missionweaveprotocol_ffi::verify_admission_bundle()
}

#[napi(catch_unwind)]
pub fn run_conformance(bundles: String) -> String {
    missionweaveprotocol_ffi::run_conformance(&bundles)
}

#[napi(catch_unwind)]
pub fn parse_frame(bytes: Uint8Array) -> String {
    missionweaveprotocol_ffi::parse_frame(&bytes)
}

#[napi(catch_unwind)]
pub fn parse_received_frame(bytes: Uint8Array) -> String {
    missionweaveprotocol_ffi::parse_received_frame(&bytes)
}

#[napi(catch_unwind)]
pub fn encode_frame(bytes: Uint8Array) -> String {
    missionweaveprotocol_ffi::encode_frame(&bytes)
}

#[napi(catch_unwind)]
pub fn error_frame(
    frame_id: String,
    code: String,
    message: String,
    occurred_at: String,
    related_frame_id: Option<String>,
) -> String {
    missionweaveprotocol_ffi::error_frame(
        &frame_id,
        &code,
        &message,
        &occurred_at,
        related_frame_id.as_deref(),
    )
}

/// A stateful core object: a lease, the budget ledger, a Delegation Grant's authority, a retry
/// controller or a Scheduler (see `missionweaveprotocol_ffi::Handle`). Arguments are JSON arrays; results
/// are envelopes.
#[napi]
#[derive(Debug)]
pub struct Handle(missionweaveprotocol_ffi::Handle);

#[napi]
impl Handle {
    #[napi(constructor)]
    pub fn new(class: String, mode: String, args: String) -> Self {
        Self(missionweaveprotocol_ffi::Handle::new(&class, &mode, &args))
    }

    #[napi(catch_unwind)]
    pub fn status(&self) -> String {
        self.0.status()
    }

    #[napi(catch_unwind)]
    pub fn call(&mut self, method: String, args: String) -> String {
        self.0.call(&method, &args)
    }

    #[napi(catch_unwind)]
    pub fn schedule(&mut self, now: f64) -> String {
        self.0.schedule(now)
    }

    #[napi(catch_unwind)]
    pub fn apply(&mut self, work_id: String, transition: String, now: f64) -> String {
        self.0.apply(&work_id, &transition, now)
    }
}

#[napi(catch_unwind)]
pub fn call_function(method: String, args: String) -> String {
    missionweaveprotocol_ffi::call_function(&method, &args)
}

/// An admission driven step by step from JavaScript, for Admission Logs that answer
/// asynchronously (`step()`, then `onLookup`/`onContext`/`onAppend`, then `result()`).
/// `None` replies mean the host call failed: admission fails closed.
#[napi]
#[derive(Debug)]
pub struct AdmissionSession(admission::Session);

#[napi]
impl AdmissionSession {
    #[napi(constructor, catch_unwind)]
    pub fn new(replay: bool, kind: String, bytes: Uint8Array, registry: &Registry) -> Self {
        Self(admission::Session::start(
            mode(replay),
            &kind,
            &bytes,
            &registry.0,
        ))
    }

    #[napi(catch_unwind)]
    pub fn step(&self) -> String {
        self.0.step()
    }

    #[napi(catch_unwind)]
    pub fn on_lookup(&mut self, reply: Option<LogReply>) {
        self.0.on_lookup(reply.map(LogReply::into_glue));
    }

    #[napi(catch_unwind)]
    pub fn on_context(&mut self, context: Option<TrustedContext>) {
        self.0.on_context(context.map(TrustedContext::into_glue));
    }

    #[napi(catch_unwind)]
    pub fn on_append(&mut self, reply: Option<LogReply>) {
        self.0.on_append(reply.map(LogReply::into_glue));
    }

    #[napi(catch_unwind)]
    pub fn result(&mut self) -> String {
        self.0.result()
    }
}
