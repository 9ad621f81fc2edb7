//! Admission through JavaScript Admission Logs (synchronous host, in-memory log, step-wise
//! session): `missionweaveprotocol_ffi::admission`.

use missionweaveprotocol_ffi::admission::{self, ContextReply, Host, Log, Mode, NoHost, Reply};
use wasm_bindgen::prelude::*;

use crate::Registry;

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
