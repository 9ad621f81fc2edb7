//! [`Client`]: the handle the application holds. Every call is a request to the task that
//! hosts the session machine (`driver.rs`); results come back typed.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_core::Stream;
use missionweaveprotocol_agent::replay::{InboxRow, ReplayBatch};
use missionweaveprotocol_gateway::frames::Attention;
use tokio::sync::{mpsc, oneshot, watch};

use crate::driver::{self, Driver, Request, ResolvedSubscription, Shared, VerifiedEvent};
use crate::error::ClientError;
use crate::notice::{ConnectionState, Notices};
use crate::options::ClientOptions;
use crate::transport::{self, Endpoint};

/// One Group to subscribe (§17.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscription {
    /// The Group.
    pub group_id: String,
    /// Replay after this sequence; `None`: after the durable cursor of the configured
    /// Agent-local store (0 without a store).
    pub after_sequence: Option<u64>,
    /// A live attention filter (§8): Events past its gaps arrive with `in_order: false`.
    pub attention: Option<Attention>,
}

impl Subscription {
    /// From the durable cursor of the Agent-local store.
    pub fn durable(group_id: impl Into<String>) -> Self {
        Self {
            group_id: group_id.into(),
            after_sequence: None,
            attention: None,
        }
    }

    /// After `sequence`.
    pub fn after(group_id: impl Into<String>, sequence: u64) -> Self {
        Self {
            group_id: group_id.into(),
            after_sequence: Some(sequence),
            attention: None,
        }
    }

    /// With a live attention filter.
    pub fn with_attention(mut self, attention: Attention) -> Self {
        self.attention = Some(attention);
        self
    }
}

/// A Group's verified Events, in Group order, deduplicated (across reconnects too). Each one's
/// Group Authority signature was verified by the session machine; an Event that failed is
/// never here (it is a [`Notice::Rejected`](crate::Notice::Rejected)). On a filtered
/// subscription, live attention Events past a gap arrive with `in_order: false` (and again
/// in order once the gap fills, if it does). Ends when the client is closed.
#[derive(Debug)]
pub struct EventStream {
    group_id: String,
    rx: mpsc::Receiver<VerifiedEvent>,
}

impl EventStream {
    /// The Group.
    pub fn group_id(&self) -> &str {
        &self.group_id
    }

    /// The next Event; `None` once the client is closed.
    pub async fn recv(&mut self) -> Option<VerifiedEvent> {
        self.rx.recv().await
    }

    /// An Event already delivered, without waiting.
    pub fn try_recv(&mut self) -> Option<VerifiedEvent> {
        self.rx.try_recv().ok()
    }
}

impl Stream for EventStream {
    type Item = VerifiedEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.rx.poll_recv(cx)
    }
}

/// An authenticated MissionWeaveProtocol connection of one Agent, kept up across disconnects.
///
/// Dropping the client (or [`close`](Self::close)) ends the connection; pending calls fail with
/// [`ClientError::Closed`].
pub struct Client {
    options: Arc<ClientOptions>,
    shared: Arc<Shared>,
    requests: mpsc::UnboundedSender<Request>,
    state: watch::Receiver<ConnectionState>,
}

impl core::fmt::Debug for Client {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Client")
            .field("agent_id", &self.options.agent_id)
            .field("state", &*self.state.borrow())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Connects to `url` (`wss://`, or `ws://` when the options allow plaintext), authenticates
    /// with `HELLO` (§6.3) and starts the task that keeps the connection. Fails fast: the
    /// first connection is not retried (reconnection applies from then on).
    pub async fn connect(url: &str, options: ClientOptions) -> Result<Self, ClientError> {
        let endpoint = Endpoint::parse(url)?;
        let tls = transport::tls_config(&options.tls)?;
        let conn = driver::establish(&options, &endpoint, tls.as_ref()).await?;
        let options = Arc::new(options);
        let shared = Arc::new(Shared::new(
            options.limits.stream_capacity,
            options.limits.notice_capacity,
            ConnectionState::Connected {
                session_epoch: conn.epoch,
            },
        ));
        let (requests, rx) = mpsc::unbounded_channel();
        let state = shared.state.subscribe();
        let driver = Driver::new(Arc::clone(&options), endpoint, tls, Arc::clone(&shared), rx);
        tokio::spawn(driver.run(conn));
        Ok(Self {
            options,
            shared,
            requests,
            state,
        })
    }

    /// The Agent.
    pub fn agent_id(&self) -> &str {
        &self.options.agent_id
    }

    /// Where the connection is.
    pub fn state(&self) -> ConnectionState {
        *self.state.borrow()
    }

    /// The current Session Epoch (Agent Commands must carry it, §6.3, §15.1); `None` while
    /// reconnecting or closed.
    pub fn session_epoch(&self) -> Option<u64> {
        match self.state() {
            ConnectionState::Connected { session_epoch } => Some(session_epoch),
            _ => None,
        }
    }

    /// Waits until connected at a Session Epoch above `above` (after a reconnect: above the
    /// previous one) and returns it.
    pub async fn connected_above(&self, above: u64) -> Result<u64, ClientError> {
        let mut state = self.state.clone();
        loop {
            match *state.borrow_and_update() {
                ConnectionState::Connected { session_epoch } if session_epoch > above => {
                    return Ok(session_epoch);
                }
                ConnectionState::Closed => return Err(ClientError::Closed),
                _ => {}
            }
            state.changed().await.map_err(|_| ClientError::Closed)?;
        }
    }

    /// The notices from now on.
    pub fn notices(&self) -> Notices {
        Notices {
            rx: self.shared.subscribe_notices(),
        }
    }

    /// The Event stream of `group` (one consumer per Group; take it before or right after
    /// subscribing). When a stream is full the client stops reading the socket until it is
    /// drained, so read every subscribed Group's stream (concurrently with awaiting
    /// [`send`](Self::send)).
    pub fn events(&self, group_id: &str) -> Result<EventStream, ClientError> {
        Ok(EventStream {
            group_id: group_id.to_owned(),
            rx: self.shared.take_receiver(group_id)?,
        })
    }

    async fn request<T>(
        &self,
        make: impl FnOnce(oneshot::Sender<Result<T, ClientError>>) -> Request,
    ) -> Result<T, ClientError> {
        let (reply, rx) = oneshot::channel();
        self.requests
            .send(make(reply))
            .map_err(|_| ClientError::Closed)?;
        rx.await.map_err(|_| ClientError::Closed)?
    }

    /// The durable cursors of `groups` in the Agent-local store (0 for a Group never
    /// processed).
    pub async fn durable_cursors(
        &self,
        groups: &[&str],
    ) -> Result<Vec<(String, u64)>, ClientError> {
        let store = self.options.store.clone().ok_or(ClientError::NoStore)?;
        let agent = self.options.agent_id.clone();
        let groups: Vec<String> = groups.iter().map(|g| (*g).to_owned()).collect();
        tokio::task::spawn_blocking(move || {
            groups
                .into_iter()
                .map(|g| store.cursor(&agent, &g).map(|c| (g, c)))
                .collect::<Result<Vec<_>, _>>()
        })
        .await
        .map_err(|e| ClientError::Io(e.to_string()))?
        .map_err(ClientError::Store)
    }

    /// Subscribes `groups` (§17.2). A Group without a position starts after its durable cursor
    /// (the store's; without a store, after what this client delivered, 0 at first). The
    /// server answers only refusals: a Group refused or too old arrives as a
    /// [`Notice`](crate::Notice) (`GroupRefused`, `CursorTooOld`). Subscriptions are resumed
    /// after every reconnect from the durable cursors.
    pub async fn subscribe(
        &self,
        groups: impl IntoIterator<Item = Subscription>,
    ) -> Result<(), ClientError> {
        let groups: Vec<Subscription> = groups.into_iter().collect();
        let durable: Vec<&str> = groups
            .iter()
            .filter(|s| s.after_sequence.is_none())
            .map(|s| s.group_id.as_str())
            .collect();
        let cursors = if self.options.store.is_some() && !durable.is_empty() {
            self.durable_cursors(&durable).await?
        } else {
            Vec::new()
        };
        let resolved = groups
            .into_iter()
            .map(|s| {
                let after_sequence = s.after_sequence.or_else(|| {
                    cursors
                        .iter()
                        .find(|(g, _)| g == &s.group_id)
                        .map(|(_, c)| *c)
                });
                ResolvedSubscription {
                    group_id: s.group_id,
                    after_sequence,
                    attention: s.attention,
                }
            })
            .collect();
        self.request(|reply| Request::Subscribe {
            groups: resolved,
            reply,
        })
        .await
    }

    /// Subscribes each Group from its durable cursor.
    pub async fn subscribe_durable(&self, groups: &[&str]) -> Result<(), ClientError> {
        self.subscribe(groups.iter().map(|g| Subscription::durable(*g)))
            .await
    }

    /// Sends a signed Command (its exact bytes, §15.1) and awaits its outcome, correlated by
    /// the `COMMAND` frame ID: the Event(s) it caused, verified (the first always, with those
    /// of the same atomic batch read with it; every one also reaches its Group's stream), or
    /// the typed refusal ([`ClientError::Refused`], with its wire code). A disconnect does not
    /// fail the call: the Command is re-sent when safe (see [`ClientError::ResignRequired`]).
    pub async fn send(
        &self,
        command: impl Into<Vec<u8>>,
    ) -> Result<Vec<VerifiedEvent>, ClientError> {
        let command = command.into();
        self.request(|reply| Request::Send { command, reply }).await
    }

    /// Acknowledges durable progress in `group` up to `sequence` (§16: `ACK`). Refused past
    /// what was delivered in order; sent (again) on every connection as the session's cursor
    /// allows.
    pub async fn acknowledge(&self, group_id: &str, sequence: u64) -> Result<(), ClientError> {
        let group_id = group_id.to_owned();
        self.request(|reply| Request::Ack {
            group_id,
            sequence,
            reply,
        })
        .await
    }

    /// After the application persisted `event`'s effects: moves the durable cursor of its
    /// Group in the Agent-local store to it (recording it in the inbox, one atomic commit) and
    /// acknowledges it. Only an Event delivered in order, right after the durable cursor, can
    /// move it (§16: never over a gap). Returns `false` when the cursor already was there
    /// (a duplicate: nothing written, acknowledged again).
    pub async fn advance(&self, event: &VerifiedEvent) -> Result<bool, ClientError> {
        let store = self.options.store.clone().ok_or(ClientError::NoStore)?;
        let (Some(group_id), true) = (event.group_id.clone(), event.in_order) else {
            return Err(ClientError::NotInOrder {
                group_id: event.group_id.clone(),
                sequence: event.sequence,
            });
        };
        let agent = self.options.agent_id.clone();
        let event_id = event.event_id.clone();
        let sequence = event.sequence;
        let group = group_id.clone();
        let moved = tokio::task::spawn_blocking(move || -> Result<bool, ClientError> {
            let cursor = store.cursor(&agent, &group)?;
            if cursor >= sequence {
                return Ok(false);
            }
            if cursor + 1 != sequence {
                return Err(ClientError::Gap {
                    group_id: group,
                    cursor,
                    sequence,
                });
            }
            let rows = [InboxRow {
                event_id: Arc::from(event_id.as_str()),
                sequence,
            }];
            store.commit_replay(&ReplayBatch {
                agent_id: &agent,
                group_id: &group,
                from_cursor: cursor,
                to_cursor: sequence,
                events: &rows,
                scheduler: None,
                snapshot_hash: None,
            })?;
            Ok(true)
        })
        .await
        .map_err(|e| ClientError::Io(e.to_string()))??;
        self.acknowledge(&group_id, sequence).await?;
        Ok(moved)
    }

    /// A `PING` (§17.3); returns the round trip.
    pub async fn ping(&self) -> Result<Duration, ClientError> {
        self.request(|reply| Request::Ping { reply }).await
    }

    /// Closes the connection: pending calls fail with [`ClientError::Closed`], the streams end
    /// after what they hold.
    pub async fn close(&self) {
        let (reply, rx) = oneshot::channel();
        if self.requests.send(Request::Close { reply }).is_ok() {
            let _ = rx.await;
        }
    }
}
