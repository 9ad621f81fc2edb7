//! The Agent-local SQLite store (`core/store-sqlite`'s `SqliteAgentStore`) for the package's
//! `SqliteAgentStore` (`js/src/api.mjs`, Node entry only: a browser has no SQLite file).
//!
//! Envelopes as everywhere in this addon: every call returns `{"ok":…}` or `{"error":…}` and
//! nothing throws. A store refusal is the class `LocalStoreError` with the core's §19 code and
//! reason slug (`LocalStoreErrorKind`). JSON values (Action payloads, Group context values,
//! checkpoint contents, Scheduler snapshots) cross as JSON text; sequences and revisions as
//! JavaScript numbers (integers up to 2^53 − 1). Conversions only: every rule is the core's.

use std::sync::{Arc, PoisonError, RwLock};

use missionweaveprotocol::json::{Number, Value};
use missionweaveprotocol_agent::replay::{LocalStoreError, LocalStoreErrorKind};
use missionweaveprotocol_ffi::{Failure, Obj, finish};
use missionweaveprotocol_kernel::resources::MAX_SAFE_INTEGER;
use missionweaveprotocol_kernel::scheduler::SchedulerSnapshot;
use missionweaveprotocol_store_sqlite::SqliteAgentStore;
use napi_derive::napi;

use crate::freed;

/// A store refusal: the shared envelope of the core's description (`LocalStoreError`
/// describes itself: class `LocalStoreError`, §19 code, reason slug).
pub(crate) fn store_error(error: &LocalStoreError) -> String {
    finish(Err(Failure::error(error)))
}

/// An unusable argument (`LocalStoreError`, `invalid_argument`, `INVALID_COMMAND`).
fn invalid(detail: impl Into<String>) -> String {
    store_error(&LocalStoreError::new(
        LocalStoreErrorKind::InvalidArgument,
        detail,
    ))
}

/// A JavaScript number as a non-negative integer (a sequence or revision).
pub(crate) fn count(value: f64, what: &str) -> Result<u64, String> {
    if value.is_finite() && value.fract() == 0.0 && value >= 0.0 && value <= MAX_SAFE_INTEGER as f64
    {
        Ok(value as u64)
    } else {
        Err(invalid(format!(
            "{what} must be a non-negative integer (at most 2^53 - 1)"
        )))
    }
}

/// JSON text from the wrapper as a core value (strict parse: `ParseError` otherwise).
fn json(text: &str) -> Result<Value, String> {
    missionweaveprotocol::json::parse(text.as_bytes()).map_err(|e| finish(Err(Failure::error(&e))))
}

fn number(n: u64) -> Value {
    Value::Number(Number::from_u64(n))
}

fn done<T>(result: Result<T, String>, to_value: impl FnOnce(T) -> Value) -> String {
    match result {
        Ok(value) => finish(Ok(to_value(value))),
        Err(envelope) => envelope,
    }
}

/// The raw Agent-local store: `open(path)` (`":memory:"` for a private in-memory database).
/// WAL, `synchronous=FULL`; every write is one transaction.
#[napi]
#[derive(Debug)]
pub struct AgentStore {
    store: RwLock<Option<Arc<SqliteAgentStore>>>,
    /// `{"ok":null}`, or why the database could not be opened.
    status: String,
}

impl AgentStore {
    /// The open store (shared with the replays that use it), or the freed envelope.
    pub(crate) fn shared(&self) -> Result<Arc<SqliteAgentStore>, String> {
        self.store
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .ok_or_else(|| {
                if self.status.contains("\"error\"") {
                    self.status.clone()
                } else {
                    freed("SqliteAgentStore")
                }
            })
    }

    fn with<T>(
        &self,
        use_: impl FnOnce(&SqliteAgentStore) -> Result<T, String>,
    ) -> Result<T, String> {
        use_(&*self.shared()?)
    }
}

fn core<T>(result: Result<T, LocalStoreError>) -> Result<T, String> {
    result.map_err(|e| store_error(&e))
}

#[napi]
impl AgentStore {
    /// Opens (creating) the database; a failure is kept and reported by `status()`.
    #[napi(constructor)]
    pub fn new(path: String) -> Self {
        let opened = if path == ":memory:" {
            SqliteAgentStore::in_memory()
        } else {
            SqliteAgentStore::open(&path)
        };
        match opened {
            Ok(store) => Self {
                store: RwLock::new(Some(Arc::new(store))),
                status: finish(Ok(Value::Null)),
            },
            Err(e) => Self {
                store: RwLock::new(None),
                status: store_error(&e),
            },
        }
    }

    /// `{"ok":null}`, or the error that kept the database from opening.
    #[napi(catch_unwind)]
    pub fn status(&self) -> String {
        self.status.clone()
    }

    /// Whether the store is open.
    #[napi(catch_unwind)]
    pub fn is_open(&self) -> bool {
        self.store
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    #[napi(catch_unwind)]
    pub fn acknowledge(&self, agent_id: String, group_id: String, sequence: f64) -> String {
        done(
            self.with(|s| core(s.acknowledge(&agent_id, &group_id, count(sequence, "sequence")?))),
            |()| Value::Null,
        )
    }

    #[napi(catch_unwind)]
    pub fn cursor(&self, agent_id: String, group_id: String) -> String {
        done(self.with(|s| core(s.cursor(&agent_id, &group_id))), number)
    }

    /// `groupId` and `sequence` together, or neither.
    #[napi(catch_unwind)]
    pub fn remember_event(
        &self,
        agent_id: String,
        event_id: String,
        group_id: Option<String>,
        sequence: Option<f64>,
    ) -> String {
        done(
            self.with(|s| {
                let position = match (group_id.as_deref(), sequence) {
                    (Some(g), Some(n)) => Some((g, count(n, "sequence")?)),
                    (None, None) => None,
                    _ => return Err(invalid("groupId and sequence go together")),
                };
                core(s.remember_event(&agent_id, &event_id, position))
            }),
            Value::Bool,
        )
    }

    #[napi(catch_unwind)]
    pub fn has_event(&self, agent_id: String, event_id: String) -> String {
        done(
            self.with(|s| core(s.has_event(&agent_id, &event_id))),
            Value::Bool,
        )
    }

    /// `{"groupId", "sequence"}` or `null`.
    #[napi(catch_unwind)]
    pub fn event_position(&self, agent_id: String, event_id: String) -> String {
        done(
            self.with(|s| core(s.event_position(&agent_id, &event_id))),
            |p| {
                p.map_or(Value::Null, |p| {
                    Obj::new()
                        .str("groupId", p.group_id)
                        .num("sequence", p.sequence)
                        .build()
                })
            },
        )
    }

    #[napi(catch_unwind)]
    pub fn enqueue_action(&self, agent_id: String, action_id: String, payload: String) -> String {
        done(
            self.with(|s| core(s.enqueue_action(&agent_id, &action_id, &json(&payload)?))),
            Value::Bool,
        )
    }

    /// The unsent payloads, in enqueue order.
    #[napi(catch_unwind)]
    pub fn pending_actions(&self, agent_id: String) -> String {
        done(self.with(|s| core(s.pending_actions(&agent_id))), |rows| {
            Value::Array(rows.into_iter().map(|p| p.payload).collect())
        })
    }

    #[napi(catch_unwind)]
    pub fn mark_action_sent(&self, agent_id: String, action_id: String) -> String {
        done(
            self.with(|s| core(s.mark_action_sent(&agent_id, &action_id))),
            Value::Bool,
        )
    }

    #[napi(catch_unwind)]
    pub fn save_group_context(
        &self,
        agent_id: String,
        group_id: String,
        revision: f64,
        values: String,
    ) -> String {
        done(
            self.with(|s| {
                let revision = count(revision, "revision")?;
                core(s.save_group_context(&agent_id, &group_id, revision, &json(&values)?))
            }),
            |()| Value::Null,
        )
    }

    /// `{"revision", "values"}` or `null`.
    #[napi(catch_unwind)]
    pub fn group_context(&self, agent_id: String, group_id: String) -> String {
        done(
            self.with(|s| core(s.group_context(&agent_id, &group_id))),
            |found| {
                found.map_or(Value::Null, |(revision, values)| {
                    Obj::new()
                        .num("revision", revision)
                        .value("values", values)
                        .build()
                })
            },
        )
    }

    #[napi(catch_unwind)]
    pub fn save_checkpoint(
        &self,
        agent_id: String,
        group_id: String,
        work_id: String,
        checkpoint_id: String,
        content: String,
    ) -> String {
        done(
            self.with(|s| {
                core(s.save_checkpoint(
                    &agent_id,
                    &group_id,
                    &work_id,
                    &checkpoint_id,
                    &json(&content)?,
                ))
            }),
            |()| Value::Null,
        )
    }

    #[napi(catch_unwind)]
    pub fn load_checkpoint(
        &self,
        agent_id: String,
        group_id: String,
        work_id: String,
        checkpoint_id: String,
    ) -> String {
        done(
            self.with(|s| core(s.load_checkpoint(&agent_id, &group_id, &work_id, &checkpoint_id))),
            |found| found.unwrap_or(Value::Null),
        )
    }

    #[napi(catch_unwind)]
    pub fn delete_checkpoint(
        &self,
        agent_id: String,
        group_id: String,
        work_id: String,
        checkpoint_id: String,
    ) -> String {
        done(
            self.with(|s| {
                core(s.delete_checkpoint(&agent_id, &group_id, &work_id, &checkpoint_id))
            }),
            Value::Bool,
        )
    }

    /// `snapshot`: the JSON text of a `SchedulerSnapshot` (`Scheduler.snapshot()`).
    #[napi(catch_unwind)]
    pub fn save_scheduler(&self, agent_id: String, snapshot: String) -> String {
        done(
            self.with(|s| {
                let snapshot = SchedulerSnapshot::from_value(&json(&snapshot)?)
                    .map_err(|e| finish(Err(Failure::error(&e))))?;
                core(s.save_scheduler(&agent_id, &snapshot))
            }),
            |()| Value::Null,
        )
    }

    /// The snapshot's JSON form, or `null`.
    #[napi(catch_unwind)]
    pub fn load_scheduler(&self, agent_id: String) -> String {
        done(self.with(|s| core(s.load_scheduler(&agent_id))), |found| {
            found.map_or(Value::Null, |snapshot| snapshot.to_value())
        })
    }

    /// Closes the database (idempotent). A replay still using the store keeps it open until
    /// the replay is freed; this object answers every later call with the freed envelope.
    #[napi(catch_unwind)]
    pub fn close(&self) -> String {
        let taken = self
            .store
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        match taken.map(Arc::try_unwrap) {
            Some(Ok(store)) => done(core(store.close()), |()| Value::Null),
            _ => finish(Ok(Value::Null)),
        }
    }
}
