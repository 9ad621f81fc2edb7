//! The authoritative Core (`missionweaveprotocol_ffi::authority_core`): `perform`, `query` and
//! `replay` are napi `AsyncTask`s, run on the libuv thread pool, so awaiting them never blocks
//! the event loop and concurrent calls really run in parallel (the core serializes Commands of
//! one Group through its store; different Groups never wait for each other). Each Promise
//! resolves to the core's envelope text; the JavaScript wrapper turns it into Events or a typed
//! error. A panic in the core (a bug) rejects the Promise instead of aborting the process.

use std::panic::{AssertUnwindSafe, catch_unwind};

use missionweaveprotocol_ffi::RegistryHandle;
use missionweaveprotocol_ffi::authority_core::{CoreHandle, StoreHandle};
use missionweaveprotocol_host::OsRandom;
use napi::bindgen_prelude::{AsyncTask, Either};
use napi::{Env, Task};
use napi_derive::napi;

use crate::sql_store::SqlStore;
use crate::{RegistryArg, freed};

/// The in-memory authoritative store, shareable between cores.
#[napi]
#[derive(Debug)]
pub struct InMemoryStore(Option<StoreHandle>);

impl Default for InMemoryStore {
    fn default() -> Self {
        Self::new()
    }
}

#[napi]
impl InMemoryStore {
    #[napi(constructor)]
    pub fn new() -> Self {
        Self(Some(StoreHandle::new()))
    }

    /// Drops this object's reference now (cores using the store keep theirs); idempotent.
    #[napi(catch_unwind)]
    pub fn free(&mut self) {
        self.0 = None;
    }
}

/// One call of the core, run on a libuv worker thread.
#[derive(Debug)]
pub struct CoreTask {
    core: CoreHandle,
    call: Call,
}

#[derive(Debug)]
enum Call {
    Perform(Vec<u8>, f64),
    Query(String, f64),
    Replay(String, f64, f64),
}

impl Task for CoreTask {
    type Output = String;
    type JsValue = String;

    fn compute(&mut self) -> napi::Result<String> {
        let core = &self.core;
        let call = &self.call;
        catch_unwind(AssertUnwindSafe(|| match call {
            Call::Perform(bytes, now) => core.perform(bytes, *now),
            Call::Query(query, now) => core.query(query, *now),
            Call::Replay(group, after, limit) => core.replay(group, *after, *limit),
        }))
        .map_err(|_| napi::Error::from_reason("the core panicked (a bug); nothing was returned"))
    }

    fn resolve(&mut self, _env: Env, output: String) -> napi::Result<String> {
        Ok(output)
    }
}

/// The authoritative core. Construction never throws for bad options: `status()` reports them.
#[napi]
#[derive(Debug)]
pub struct Core(Result<CoreHandle, String>);

impl Core {
    /// The core behind this object (the gateway host serves it), or the envelope of why
    /// there is none (refused construction, freed).
    pub(crate) fn handle(&self) -> Result<&CoreHandle, String> {
        self.0.as_ref().map_err(Clone::clone)
    }
}

#[napi]
impl Core {
    /// `options`: the JSON form of the core's `CoreConfig`; `seed` and `key_id`: the authority
    /// key; `store`: the store (the wrapper makes one when the caller shares none). Random
    /// Event IDs come from the operating system.
    #[napi(constructor, catch_unwind)]
    pub fn new(
        options: String,
        registry: RegistryArg<'_>,
        seed: &[u8],
        key_id: String,
        store: Either<&InMemoryStore, &SqlStore>,
    ) -> Self {
        let store = match store {
            Either::A(memory) => match memory.0.as_ref() {
                Some(store) => store.clone(),
                None => return Self(Err(freed("InMemoryStore"))),
            },
            // An SQL store must be open (initialized, not closed): else its lifecycle error.
            Either::B(sql) => match sql.handle() {
                Ok(store) => store,
                Err(envelope) => return Self(Err(envelope)),
            },
        };
        let make = |registry: &RegistryHandle| {
            CoreHandle::new(
                &options,
                registry,
                seed,
                &key_id,
                &store,
                Box::new(OsRandom),
            )
        };
        Self(match registry {
            Either::A(object) => object
                .0
                .as_ref()
                .map_or_else(|| Err(freed("Registry")), make),
            Either::B(bytes) => make(&RegistryHandle::new(bytes)),
        })
    }

    /// `{"ok":null}`, or the error that rejected the construction.
    #[napi(catch_unwind)]
    pub fn status(&self) -> String {
        match &self.0 {
            Ok(_) => r#"{"ok":null}"#.to_owned(),
            Err(envelope) => envelope.clone(),
        }
    }

    fn task(&self, call: Call) -> Either<AsyncTask<CoreTask>, String> {
        match &self.0 {
            Ok(core) => Either::A(AsyncTask::new(CoreTask {
                core: core.clone(),
                call,
            })),
            Err(envelope) => Either::B(envelope.clone()),
        }
    }

    /// Verifies and applies a signed Command at `now` (ms): a Promise of the envelope.
    #[napi(catch_unwind)]
    pub fn perform(&self, bytes: &[u8], now: f64) -> Either<AsyncTask<CoreTask>, String> {
        self.task(Call::Perform(bytes.to_vec(), now))
    }

    #[napi(catch_unwind)]
    pub fn query(&self, query: String, now: f64) -> Either<AsyncTask<CoreTask>, String> {
        self.task(Call::Query(query, now))
    }

    #[napi(catch_unwind)]
    pub fn replay(
        &self,
        group_id: String,
        after: f64,
        limit: f64,
    ) -> Either<AsyncTask<CoreTask>, String> {
        self.task(Call::Replay(group_id, after, limit))
    }

    /// Drops this object's core now; calls already running finish. Idempotent.
    #[napi(catch_unwind)]
    pub fn free(&mut self) {
        self.0 = Err(freed("Core"));
    }
}
