//! What the client tells the application besides typed results: connection state and the
//! protocol's notices (§16 `CURSOR_TOO_OLD`, gaps, rejected Events, backpressure).

use std::time::Duration;

use missionweaveprotocol_gateway::frames::ErrorBody;
use tokio::sync::broadcast;

use crate::error::ClientError;

/// Where the connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectionState {
    /// Authenticated at this Session Epoch: Agent Commands must carry it (§6.3).
    Connected {
        /// The Session Epoch.
        session_epoch: u64,
    },
    /// Lost; reconnection attempt `attempt` is under way.
    Reconnecting {
        /// From 1.
        attempt: u32,
    },
    /// Closed, or reconnection gave up: every stream has ended.
    Closed,
}

/// A notice.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Notice {
    /// (Re)authenticated at a new Session Epoch; subscriptions were resumed.
    Connected {
        /// The new Session Epoch.
        session_epoch: u64,
    },
    /// The connection was lost.
    Disconnected {
        /// Why.
        reason: String,
    },
    /// Reconnection attempt `attempt` starts after `delay` (bounded by `Backoff::max`).
    Reconnecting {
        /// From 1.
        attempt: u32,
        /// The backoff delay, jitter included.
        delay: Duration,
    },
    /// A reconnection attempt failed.
    ConnectFailed {
        /// Its number.
        attempt: u32,
        /// Why.
        error: ClientError,
    },
    /// `Backoff::max_attempts` reached: the client is closed.
    GaveUp {
        /// Attempts made.
        attempts: u32,
    },
    /// §16: the Group's cursor is older than the online log. The Group is no longer
    /// subscribed: restore the snapshot through `agent::replay` (which moves the durable
    /// cursor to its `throughSequence`), then subscribe again.
    CursorTooOld {
        /// The Group.
        group_id: String,
        /// The signed snapshot to restore.
        snapshot_artifact_hash: Option<String>,
    },
    /// The Group was refused (`GROUP_NOT_FOUND`: absent or not visible, §17.2) and is no
    /// longer subscribed.
    GroupRefused {
        /// The Group.
        group_id: String,
        /// The error.
        error: ErrorBody,
    },
    /// The machine's out-of-order buffer for the Group overflowed; the client resubscribed
    /// from the Group's cursor (what was dropped comes again, §16).
    Gap {
        /// The Group.
        group_id: String,
        /// Its contiguous cursor.
        cursor: u64,
    },
    /// An Event failed verification (not signed by the Group Authority, tampered, …) or
    /// contradicts what was seen: dropped, never delivered.
    Rejected {
        /// Its Event ID, when readable.
        event_id: Option<String>,
        /// Why.
        reason: String,
    },
    /// The server paused a Group (§17.3).
    Backpressure {
        /// The Group.
        group_id: Option<String>,
        /// Its retry guidance.
        retry_after_ms: Option<u64>,
    },
    /// A pending Command needs re-signing for the new Session Epoch (its `send` failed with
    /// [`ClientError::ResignRequired`]).
    ResignRequired {
        /// Its Action ID.
        action_id: String,
        /// The new Session Epoch.
        session_epoch: u64,
    },
    /// Any other `ERROR` the server sent.
    Error(ErrorBody),
}

/// The notices of a client, from the moment [`Client::notices`](crate::Client::notices) was
/// called. A reader that falls more than `ClientLimits::notice_capacity` behind skips the
/// oldest.
#[derive(Debug)]
pub struct Notices {
    pub(crate) rx: broadcast::Receiver<Notice>,
}

impl Notices {
    /// The next notice; `None` once the client is closed.
    pub async fn recv(&mut self) -> Option<Notice> {
        loop {
            match self.rx.recv().await {
                Ok(notice) => return Some(notice),
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }

    /// A notice already there, without waiting.
    pub fn try_recv(&mut self) -> Option<Notice> {
        loop {
            match self.rx.try_recv() {
                Ok(notice) => return Some(notice),
                Err(broadcast::error::TryRecvError::Lagged(_)) => {}
                Err(_) => return None,
            }
        }
    }
}
