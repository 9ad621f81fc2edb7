//! The Node.js addon: registers the shared conversions of `missionweaveprotocol-ffi` (core/ffi) with napi-rs.
//! Every function returns an envelope string (`{"ok":…}` / `{"error":…}`) that the package's
//! JavaScript wrapper turns into typed objects and `Error` subclasses; nothing throws here.
//! `catch_unwind` turns a panic (a core bug) into a JavaScript exception instead of an abort.
//!
//! Memory (issue 9, item 10): byte arguments are borrowed slices (`&[u8]`), read during the call
//! without a napi reference; a Registry may be passed as its bytes (validated for that call on
//! the Rust stack, no JavaScript object); every class has `free()`, which drops its native state
//! at once instead of when the garbage collector and then the event loop get to it. A freed
//! object answers every call with an `invalid-argument` envelope.

use missionweaveprotocol_ffi::RegistryHandle;
use missionweaveprotocol_ffi::admission::{self, ContextReply, Host, Log, Mode, NoHost, Reply};
use napi::bindgen_prelude::{Buffer, Either, FnArgs, Function, Object, Uint8ArraySlice};
use napi_derive::napi;

/// `#[napi]` methods of a class holding a `Held` ffi object: each hands its string arguments
/// (a JSON argument array, or nothing) to the ffi method of the same name and answers its
/// envelope. One line per operation; an operation the ffi object lacks does not compile.
macro_rules! ops {
    ($class:ident { $($name:ident ( $($arg:ident),* );)* }) => {
        #[napi]
        impl $class {
            $(
                #[napi(catch_unwind)]
                pub fn $name(&mut self, $($arg: String),*) -> String {
                    self.0.with_mut(|held| held.$name($(&$arg),*))
                }
            )*
        }
    };
}

pub mod agent;
pub mod artifacts;
pub mod auth;
pub mod authority;
pub mod authority_core;
pub mod client_session;
pub mod context;
pub mod control;
pub mod gateway;
pub mod head_fanout;
pub mod keys;
pub mod local_store;
pub mod offline;
pub mod policy;
pub mod replay;
pub mod scheduler;
pub mod sql_store;

/// The envelope every call on a freed object answers with (the core's text).
pub(crate) fn freed(class: &str) -> String {
    missionweaveprotocol_ffi::freed(class)
}

/// The same envelope for the JavaScript wrapper's own freed objects.
#[napi(catch_unwind)]
pub fn freed_error(class: String) -> String {
    missionweaveprotocol_ffi::freed(&class)
}

/// A Registry snapshot, validated once; a rejected snapshot fails verification at stage 4.
#[napi]
#[derive(Debug)]
pub struct Registry(Option<RegistryHandle>);

#[napi]
impl Registry {
    #[napi(constructor)]
    pub fn new(bytes: &[u8]) -> Self {
        Self(Some(RegistryHandle::new(bytes)))
    }

    #[napi(catch_unwind)]
    pub fn info(&self) -> String {
        self.0
            .as_ref()
            .map_or_else(|| freed("Registry"), RegistryHandle::info)
    }

    #[napi(catch_unwind)]
    pub fn binding(&self, key_id: String) -> String {
        self.0
            .as_ref()
            .map_or_else(|| freed("Registry"), |h| h.binding(&key_id))
    }

    /// Drops the validated snapshot now (idempotent).
    #[napi(catch_unwind)]
    pub fn free(&mut self) {
        self.0 = None;
    }
}

/// Tells the JavaScript wrapper that every Registry parameter also takes the snapshot bytes.
#[napi]
pub const REGISTRY_BYTES_ARGUMENT: bool = true;

/// A Registry argument: a `Registry` object, or the snapshot bytes themselves, validated for
/// this one call (problems fail stage 4) and dropped when it returns.
pub(crate) type RegistryArg<'a> = Either<&'a Registry, &'a [u8]>;

/// Runs `use_` with the Registry of `registry`; a freed `Registry` is the `invalid-argument`
/// envelope.
pub(crate) fn with_registry(
    registry: RegistryArg<'_>,
    use_: impl FnOnce(&RegistryHandle) -> String,
) -> String {
    match registry {
        Either::A(object) => object.0.as_ref().map_or_else(|| freed("Registry"), use_),
        Either::B(bytes) => use_(&RegistryHandle::new(bytes)),
    }
}

/// The core's in-memory Admission Log.
#[napi]
#[derive(Debug)]
pub struct InMemoryAdmissionLog(Option<admission::MemoryLog>);

#[napi]
impl InMemoryAdmissionLog {
    #[napi(constructor)]
    pub fn new(service_type: String, service_id: String) -> napi::Result<Self> {
        admission::MemoryLog::new(&service_type, &service_id)
            .map(|log| Self(Some(log)))
            .ok_or_else(|| napi::Error::from_reason("unknown Principal type"))
    }

    /// The number of records; 0 once freed.
    #[napi(catch_unwind)]
    pub fn size(&self) -> u32 {
        self.0
            .as_ref()
            .map_or(0, |log| u32::try_from(log.len()).unwrap_or(u32::MAX))
    }

    /// Drops every record now (idempotent).
    #[napi(catch_unwind)]
    pub fn free(&mut self) {
        self.0 = None;
    }
}

#[napi(catch_unwind)]
pub fn canonicalize(bytes: &[u8], limits: Option<String>) -> String {
    missionweaveprotocol_ffi::canonicalize(bytes, limits.as_deref().unwrap_or_default())
}

#[napi(catch_unwind)]
pub fn canonical_hash(bytes: &[u8], limits: Option<String>) -> String {
    missionweaveprotocol_ffi::canonical_hash_of(bytes, limits.as_deref().unwrap_or_default())
}

/// The parse-limit profiles (`{"document": …, "state": …}` envelope).
#[napi(catch_unwind)]
pub fn parse_limit_profiles() -> String {
    missionweaveprotocol_ffi::limits::parse_limit_profiles()
}

#[napi(catch_unwind)]
pub fn check_json(bytes: &[u8]) -> String {
    missionweaveprotocol_ffi::check_json(bytes)
}

#[napi(catch_unwind)]
pub fn validate_schema(name: String, bytes: &[u8]) -> String {
    missionweaveprotocol_ffi::validate_schema(&name, bytes)
}

#[napi(catch_unwind)]
pub fn schema_names() -> String {
    missionweaveprotocol_ffi::schema_names()
}

#[napi(catch_unwind)]
pub fn sign(kind: String, unsigned: &[u8], key_id: String, seed: &[u8]) -> String {
    missionweaveprotocol_ffi::sign(&kind, unsigned, &key_id, seed, None)
}

/// Signs, then verifies the produced bytes through all six stages against `registry`.
#[napi(catch_unwind)]
pub fn sign_and_verify(
    kind: String,
    unsigned: &[u8],
    key_id: String,
    seed: &[u8],
    registry: RegistryArg<'_>,
) -> String {
    with_registry(registry, |registry| {
        missionweaveprotocol_ffi::sign(&kind, unsigned, &key_id, seed, Some(registry))
    })
}

#[napi(catch_unwind)]
pub fn verify(
    kind: String,
    bytes: &[u8],
    registry: RegistryArg<'_>,
    limits: Option<String>,
) -> String {
    with_registry(registry, |registry| {
        missionweaveprotocol_ffi::verify(
            &kind,
            bytes,
            registry,
            limits.as_deref().unwrap_or_default(),
        )
    })
}

#[napi(catch_unwind)]
pub fn verify_many(
    kinds: String,
    lengths: &[u32],
    data: &[u8],
    registry: RegistryArg<'_>,
    threads: u32,
    limits: Option<String>,
) -> String {
    with_registry(registry, |registry| {
        missionweaveprotocol_ffi::verify_many(
            &kinds,
            lengths,
            data,
            registry,
            threads,
            limits.as_deref().unwrap_or_default(),
        )
    })
}

#[napi(catch_unwind)]
pub fn signing_preview(bytes: &[u8]) -> String {
    missionweaveprotocol_ffi::signing_preview(bytes)
}

#[napi(catch_unwind)]
pub fn detect_kinds(bytes: &[u8]) -> String {
    missionweaveprotocol_ffi::detect_kinds(bytes)
}

/// One Admission Log reply, as the JavaScript host returns it. The record is read in place
/// (copied once into the core's reply, no napi reference).
#[napi(object, object_to_js = false)]
pub struct LogReply<'a> {
    pub status: String,
    pub record: Option<Uint8ArraySlice<'a>>,
    pub service_type: Option<String>,
    pub service_id: Option<String>,
}

impl std::fmt::Debug for LogReply<'_> {
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
    fn reply(reply: napi::Result<LogReply<'_>>) -> Option<Reply> {
        reply.ok().map(LogReply::into_glue)
    }
}

impl LogReply<'_> {
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
        let lookup: Function<FnArgs<(String, String)>, LogReply<'_>> =
            self.0.get("lookup").ok().flatten()?;
        Self::reply(lookup.call((organization_id.to_owned(), signing_hash.to_owned()).into()))
    }

    fn append(&self, candidate: &str, candidate_bytes: &[u8]) -> Option<Reply> {
        let append: Function<FnArgs<(String, Buffer)>, LogReply<'_>> =
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
    bytes: &[u8],
    registry: RegistryArg<'_>,
    host: Object,
) -> String {
    with_registry(registry, |registry| {
        admission::admit(
            mode(replay),
            &kind,
            bytes,
            registry,
            Log::Host,
            &JsHost(&host),
        )
    })
}

/// Verifies and admits with the in-memory log; `host.context()` supplies the trusted context.
#[napi(catch_unwind)]
pub fn admit_with_memory_log(
    replay: bool,
    kind: String,
    bytes: &[u8],
    registry: RegistryArg<'_>,
    log: &InMemoryAdmissionLog,
    host: Option<Object>,
) -> String {
    let Some(log) = log.0.as_ref() else {
        return freed("InMemoryAdmissionLog");
    };
    with_registry(registry, |registry| {
        let log = Log::Memory(log);
        match &host {
            Some(host) => {
                admission::admit(mode(replay), &kind, bytes, registry, log, &JsHost(host))
            }
            None => admission::admit(mode(replay), &kind, bytes, registry, log, &NoHost),
        }
    })
}

/// The §19 wire codes an unchanged retry can succeed on (the core's `retryable_wire_code`).
#[napi(catch_unwind)]
pub fn retryable_wire_codes() -> String {
    missionweaveprotocol_ffi::retryable_wire_codes()
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
pub fn parse_frame(bytes: &[u8]) -> String {
    missionweaveprotocol_ffi::parse_frame(bytes)
}

#[napi(catch_unwind)]
pub fn parse_received_frame(bytes: &[u8]) -> String {
    missionweaveprotocol_ffi::parse_received_frame(bytes)
}

#[napi(catch_unwind)]
pub fn encode_frame(bytes: &[u8]) -> String {
    missionweaveprotocol_ffi::encode_frame(bytes)
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

/// An admission driven step by step from JavaScript, for Admission Logs that answer
/// asynchronously (`step()`, then `onLookup`/`onContext`/`onAppend`, then `result()`).
/// `None` replies mean the host call failed: admission fails closed.
#[napi]
#[derive(Debug)]
pub struct AdmissionSession(admission::Session);

#[napi]
impl AdmissionSession {
    #[napi(constructor, catch_unwind)]
    pub fn new(replay: bool, kind: String, bytes: &[u8], registry: RegistryArg<'_>) -> Self {
        let start = |registry: &RegistryHandle| {
            admission::Session::start(mode(replay), &kind, bytes, registry)
        };
        Self(match registry {
            Either::A(object) => object
                .0
                .as_ref()
                .map_or_else(|| admission::Session::failed(freed("Registry")), start),
            Either::B(bytes) => start(&RegistryHandle::new(bytes)),
        })
    }

    #[napi(catch_unwind)]
    pub fn step(&self) -> String {
        self.0.step()
    }

    #[napi(catch_unwind)]
    pub fn on_lookup(&mut self, reply: Option<LogReply<'_>>) {
        self.0.on_lookup(reply.map(LogReply::into_glue));
    }

    #[napi(catch_unwind)]
    pub fn on_context(&mut self, context: Option<TrustedContext>) {
        self.0.on_context(context.map(TrustedContext::into_glue));
    }

    #[napi(catch_unwind)]
    pub fn on_append(&mut self, reply: Option<LogReply<'_>>) {
        self.0.on_append(reply.map(LogReply::into_glue));
    }

    #[napi(catch_unwind)]
    pub fn result(&mut self) -> String {
        self.0.result()
    }

    /// Drops the session (and the verified document it holds) now; idempotent.
    #[napi(catch_unwind)]
    pub fn free(&mut self) {
        self.0 = admission::Session::failed(freed("AdmissionSession"));
    }
}
