//! Head moves between processes on one PostgreSQL database for the Node `GroupGateway`
//! (`js/src/api/gateway.mjs`): the Rust server's `LISTEN`/`NOTIFY mwp_group_head` pair
//! (`missionweaveprotocol_server::fanout`, `docs/network.md` "Scale-out"), reused as is — the
//! channel, the payload `<groupId> <sequence>`, the reconnecting `LISTEN` thread and the
//! bounded, coalescing `NOTIFY` queue are written once there. Conversions only: a notification
//! of another process calls the JavaScript `onMove(groupId, sequence)` (through a weak
//! threadsafe function: it never keeps the event loop alive), and `notify` queues this
//! process's own head moves for the others. A wake-up is a hint (the machines read after their
//! own cursors, and poll heads every `pollIntervalMs`), so a lost one only delays delivery.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use missionweaveprotocol_server::fanout::{self, Notifier};
use missionweaveprotocol_server::metrics::Metrics;
use missionweaveprotocol_store_open::Location;
use napi::bindgen_prelude::FnArgs;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;

use crate::sql_store::SqlStore;

/// `onMove(groupId, sequence)`, weak (does not hold the process open), errors not passed.
type OnMove =
    ThreadsafeFunction<FnArgs<(String, f64)>, (), FnArgs<(String, f64)>, napi::Status, false, true>;

/// The `LISTEN` and `NOTIFY` threads of one gateway over a PostgreSQL store; over any other
/// store nothing runs (`active()` is false: one process, its own wake-ups suffice).
#[napi]
pub struct HeadFanout {
    notifier: Option<Notifier>,
    stop: Arc<AtomicBool>,
    metrics: Arc<Metrics>,
}

impl std::fmt::Debug for HeadFanout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeadFanout")
            .field("active", &self.notifier.is_some())
            .finish_non_exhaustive()
    }
}

#[napi]
impl HeadFanout {
    /// `store`: the Core's `SQLStore`; `on_move`: called for each head move another process
    /// announces. A store that is not PostgreSQL (or is freed): inactive.
    #[napi(constructor, catch_unwind)]
    pub fn new(store: &SqlStore, on_move: OnMove) -> napi::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let metrics = Arc::new(Metrics::default());
        let libpq = match store.url().map(|url| url.location().clone()) {
            Some(Location::Postgresql(libpq)) => libpq,
            _ => {
                return Ok(Self {
                    notifier: None,
                    stop,
                    metrics,
                });
            }
        };
        let notifier =
            fanout::start_notifier(libpq.clone(), Arc::clone(&metrics), Arc::clone(&stop))
                .map_err(|e| napi::Error::from_reason(format!("cannot start NOTIFY: {e}")))?;
        fanout::start_listener(
            libpq,
            move |group, sequence| {
                // Non-blocking: a full queue drops the wake-up (the head poll catches up).
                let _ = on_move.call(
                    (group.to_owned(), sequence as f64).into(),
                    ThreadsafeFunctionCallMode::NonBlocking,
                );
            },
            Arc::clone(&metrics),
            Arc::clone(&stop),
        )
        .map_err(|e| napi::Error::from_reason(format!("cannot start LISTEN: {e}")))?;
        Ok(Self {
            notifier: Some(notifier),
            stop,
            metrics,
        })
    }

    /// Whether the threads run (a PostgreSQL store).
    #[napi(catch_unwind)]
    pub fn active(&self) -> bool {
        self.notifier.is_some() && !self.stop.load(Ordering::Relaxed)
    }

    /// Whether the `LISTEN` connection is up.
    #[napi(catch_unwind)]
    pub fn listening(&self) -> bool {
        self.metrics.listen_connected.load(Ordering::Relaxed) == 1
    }

    /// Announces a head this process moved to the other processes (never blocks).
    #[napi(catch_unwind)]
    pub fn notify(&self, group_id: String, sequence: f64) {
        if let Some(notifier) = &self.notifier
            && sequence.is_finite()
            && sequence >= 0.0
        {
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            notifier.notify(&group_id, sequence as u64);
        }
    }

    /// Stops both threads (within about half a second); idempotent.
    #[napi(catch_unwind)]
    pub fn close(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.notifier = None;
    }
}

impl Drop for HeadFanout {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
