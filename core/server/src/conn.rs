//! One WebSocket connection: the gateway's `Connection` machine driven by three tasks.
//!
//! - the **reader** reads the next message only while the machine `wants_input()` (a `watch`
//!   the driver publishes) and hands it over through a channel of one;
//! - the **driver** owns the machine: every input (a message, coalesced wake-ups, the 1 s tick,
//!   the liveness ping, the writer's room) is one call on a blocking thread (the machine may
//!   block on the store), followed by taking the machine's outputs while the writer has room,
//!   and the head moves of its Commands (`poll_notification`: local wake-ups and `NOTIFY`);
//! - the **writer** writes frames and, last, the close with the code the machine gave.
//!
//! Bounded: the machine bounds its own queues (`Limits::connection_memory_bound`); between the
//! driver and the writer at most [`WRITER_FRAMES`] frames and [`WRITER_BYTES`] bytes (plus one
//! frame) are in flight; wake-ups are coalesced per Group; the WebSocket library's message
//! limit is `max_frame_bytes` and its write buffer is capped.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use missionweaveprotocol_gateway::server::{Connection, GroupMoved, Output};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{Notify, OwnedSemaphorePermit, mpsc, watch};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::error::{CapacityError, Error as WsError};
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};

use crate::fanout::ConnHandle;
use crate::metrics::Metrics;
use crate::server::Shared;

/// Frames handed to the writer and not yet written.
pub const WRITER_FRAMES: usize = 8;
/// Their bytes (one frame always passes, however large).
pub const WRITER_BYTES: usize = 512 * 1024;
/// How often the machine's `on_tick` runs.
pub const TICK: Duration = Duration::from_secs(1);
/// How often an authenticated connection sends a liveness `PING`.
pub const PING_EVERY: Duration = Duration::from_secs(20);

/// What the reader hands to the driver.
#[derive(Debug)]
enum Input {
    Text(Utf8Bytes),
    Binary,
    /// A text message that was not UTF-8 (the library refused it).
    NotUtf8,
    /// A message over the limit (the library refused it before reading it).
    TooBig,
    Closed,
}

/// What the writer writes.
#[derive(Debug)]
enum WriterItem {
    Frame(Vec<u8>),
    Close(u16, String),
}

/// One step of the machine.
#[derive(Debug)]
enum Step {
    Input(Input),
    Wakes(Vec<(String, Option<u64>)>),
    Tick,
    Ping,
    Drain,
    /// Delivery an in-memory step left for a store read.
    FinishIo,
}

/// What the driver learns after a step.
#[derive(Debug, Default)]
struct After {
    outputs: Vec<Output>,
    moved: Vec<GroupMoved>,
    wants_input: bool,
    authenticated: bool,
    closed: bool,
    has_more: bool,
    paused: u64,
    subscriptions: u64,
    queued_bytes: u64,
}

fn lock(machine: &Mutex<Connection>) -> MutexGuard<'_, Connection> {
    machine
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The `frameType` of a frame the machine built (canonical JSON: the top-level member is the
/// last `"frameType":"` in the text, string values being escaped).
fn frame_type(bytes: &[u8]) -> &[u8] {
    const KEY: &[u8] = b"\"frameType\":\"";
    let Some(at) = bytes.windows(KEY.len()).rposition(|w| w == KEY) else {
        return b"";
    };
    let rest = &bytes[at + KEY.len()..];
    let end = rest.iter().position(|b| *b == b'"').unwrap_or(0);
    &rest[..end]
}

/// Whether a received text is a `COMMAND` frame (for the Commands/s counter only; the machine
/// decides everything about it).
fn is_command(text: &str) -> bool {
    text.contains("\"COMMAND\"")
}

/// Runs the machine `machine` over `ws` until it closes, the peer goes away or the server
/// shuts down. `unauthenticated` is held until HELLO completes.
pub async fn run<S>(
    shared: Arc<Shared>,
    ws: WebSocketStream<S>,
    machine: Connection,
    mut unauthenticated: Option<OwnedSemaphorePermit>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let id = machine.id();
    let handle = shared.connections.insert(id);
    Metrics::inc(&shared.metrics.connections_open);
    let machine = Arc::new(Mutex::new(machine));
    let (sink, mut stream) = ws.split();

    // Reader.
    let (input_tx, mut input_rx) = mpsc::channel::<Input>(1);
    let (wants_tx, mut wants_rx) = watch::channel(true);
    let reader = tokio::spawn(async move {
        loop {
            if wants_rx.wait_for(|wants| *wants).await.is_err() {
                return;
            }
            let input = match stream.next().await {
                Some(Ok(Message::Text(text))) => Input::Text(text),
                Some(Ok(Message::Binary(_))) => Input::Binary,
                Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => continue,
                Some(Ok(Message::Close(_))) | None => Input::Closed,
                Some(Err(WsError::Capacity(CapacityError::MessageTooLong { .. }))) => Input::TooBig,
                Some(Err(WsError::Utf8(_))) => Input::NotUtf8,
                Some(Err(_)) => Input::Closed,
            };
            let last = matches!(input, Input::Closed | Input::TooBig | Input::NotUtf8);
            if input_tx.send(input).await.is_err() || last {
                return;
            }
        }
    });

    // Writer.
    let (writer_tx, writer_rx) = mpsc::channel::<WriterItem>(WRITER_FRAMES);
    let in_flight = Arc::new(AtomicUsize::new(0));
    let drained = Arc::new(Notify::new());
    let writer = tokio::spawn(write_loop(
        sink,
        writer_rx,
        Arc::clone(&in_flight),
        Arc::clone(&drained),
        Arc::clone(&shared),
    ));

    let mut driver = Driver {
        id,
        shared: Arc::clone(&shared),
        machine: Arc::clone(&machine),
        handle: Arc::clone(&handle),
        writer_tx,
        in_flight,
        authenticated: false,
        closing: false,
        has_more: false,
        wants_input: true,
    };
    let mut shutdown = shared.shutdown.subscribe();
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut ping = tokio::time::interval_at(tokio::time::Instant::now() + PING_EVERY, PING_EVERY);
    ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);

    let mut going_away = *shutdown.borrow();
    while !driver.closing && !going_away {
        let step = tokio::select! {
            biased;
            changed = shutdown.changed() => {
                if changed.is_err() || *shutdown.borrow() {
                    going_away = true;
                }
                continue;
            }
            input = input_rx.recv(), if driver.wants_input => {
                match input {
                    Some(input) => Step::Input(input),
                    None => Step::Input(Input::Closed),
                }
            }
            () = drained.notified(), if driver.has_more => Step::Drain,
            () = handle.notify.notified() => Step::Wakes(handle.take()),
            _ = tick.tick() => Step::Tick,
            _ = ping.tick(), if driver.authenticated => Step::Ping,
        };
        let peer_closed = matches!(step, Step::Input(Input::Closed));
        driver.step(step).await;
        if peer_closed {
            break;
        }
        let _ = wants_tx.send(driver.wants_input);
        if driver.authenticated {
            unauthenticated.take();
        }
    }

    if going_away && !driver.closing {
        // Shutdown: a message already read is still handled (a Command in flight finishes),
        // what the machine has queued is written while the writer has room, then 1001.
        if driver.wants_input
            && let Ok(input) = input_rx.try_recv()
            && !matches!(input, Input::Closed)
        {
            driver.step(Step::Input(input)).await;
        }
        let _ = driver
            .writer_tx
            .send(WriterItem::Close(1001, "server shutting down".into()))
            .await;
        driver.closing = true;
    }
    reader.abort();
    drop(input_rx);
    let Driver {
        writer_tx,
        authenticated,
        ..
    } = driver;
    drop(writer_tx);
    let grace = Duration::from_secs(shared.shutdown_grace.max(1));
    let _ = tokio::time::timeout(grace, writer).await;
    let machine_for_close = Arc::clone(&machine);
    let _ = tokio::task::spawn_blocking(move || lock(&machine_for_close).on_closed()).await;
    shared.connections.remove(id);
    Metrics::dec(&shared.metrics.connections_open);
    if authenticated {
        Metrics::dec(&shared.metrics.connections_authenticated);
    }
}

struct Driver {
    id: missionweaveprotocol_gateway::server::ConnectionId,
    shared: Arc<Shared>,
    machine: Arc<Mutex<Connection>>,
    handle: Arc<ConnHandle>,
    writer_tx: mpsc::Sender<WriterItem>,
    in_flight: Arc<AtomicUsize>,
    authenticated: bool,
    closing: bool,
    has_more: bool,
    wants_input: bool,
}

impl Driver {
    async fn step(&mut self, step: Step) {
        if let Step::Input(Input::Text(text)) = &step
            && is_command(text.as_str())
        {
            Metrics::inc(&self.shared.metrics.commands_received);
        }
        let machine = Arc::clone(&self.machine);
        let room_frames = self.writer_tx.capacity();
        let in_flight = Arc::clone(&self.in_flight);
        let clock = self.shared.clock.clone();
        if matches!(step, Step::Wakes(_) | Step::Drain | Step::Tick | Step::Ping) {
            // Live delivery, ticks and pings on the event loop: the Event tail, the known
            // Agent views and the heads other connections' polls read answer without the
            // store; only what needs a store read goes to a blocking thread
            // (`Connection::in_memory`) — a thousand idle connections no longer hand a
            // thousand ticks a second to other threads. Steps of one connection run one at a
            // time, so the machine's lock is free here.
            let (after, served) = lock(&machine)
                .in_memory(|conn| run_step(conn, step, room_frames, &in_flight, clock.now()));
            self.apply(after);
            if served || self.closing {
                return;
            }
            let room_frames = self.writer_tx.capacity();
            let in_flight = Arc::clone(&self.in_flight);
            let after = tokio::task::spawn_blocking(move || {
                run_step(
                    &mut lock(&machine),
                    Step::FinishIo,
                    room_frames,
                    &in_flight,
                    clock.now(),
                )
            })
            .await;
            let Ok(after) = after else {
                self.closing = true;
                return;
            };
            return self.apply(after);
        }
        let after = tokio::task::spawn_blocking(move || {
            run_step(
                &mut lock(&machine),
                step,
                room_frames,
                &in_flight,
                clock.now(),
            )
        })
        .await;
        let Ok(after) = after else {
            // The machine panicked: drop the connection.
            self.closing = true;
            return;
        };
        self.apply(after);
    }

    fn apply(&mut self, after: After) {
        let metrics = &self.shared.metrics;
        for output in after.outputs {
            let item = match output {
                Output::Frame(frame) => {
                    self.in_flight.fetch_add(frame.len(), Ordering::AcqRel);
                    WriterItem::Frame(frame)
                }
                Output::Close(close) => {
                    self.closing = true;
                    WriterItem::Close(close.code, close.reason.to_owned())
                }
            };
            // The room was measured before the step and only the driver sends: this fits.
            if self.writer_tx.try_send(item).is_err() {
                self.closing = true;
            }
        }
        for moved in &after.moved {
            Metrics::inc(&metrics.commands_committed);
            self.shared.announce(moved, Some(self.id));
        }
        if after.authenticated && !self.authenticated {
            self.authenticated = true;
            Metrics::inc(&metrics.connections_authenticated);
        }
        self.handle.paused.store(after.paused, Ordering::Relaxed);
        self.handle
            .queued_bytes
            .store(after.queued_bytes, Ordering::Relaxed);
        self.handle
            .subscriptions
            .store(after.subscriptions, Ordering::Relaxed);
        self.wants_input = after.wants_input && !after.closed;
        self.has_more = after.has_more;
        if after.closed {
            self.closing = true;
        }
    }
}

/// One step of the machine `conn`, then what the driver needs: the outputs that fit the
/// writer (`room_frames` frames; bytes beyond `WRITER_BYTES` with what is `in_flight`), the
/// head moves of its own Commands, and its state.
fn run_step(
    conn: &mut Connection,
    step: Step,
    room_frames: usize,
    in_flight: &AtomicUsize,
    now: UnixMillis,
) -> After {
    match step {
        Step::Input(Input::Text(text)) => conn.on_text(text.as_bytes(), now),
        Step::Input(Input::Binary) => conn.on_binary(now),
        // The library refused a text that is not UTF-8: the machine answers such a text (one
        // ERROR, close 1007) — it is given one invalid byte in its place.
        Step::Input(Input::NotUtf8) => conn.on_text(&[0xFF], now),
        Step::Input(Input::TooBig) => conn.on_too_big(now),
        Step::Input(Input::Closed) => conn.on_closed(),
        Step::Wakes(wakes) => {
            for (group, sequence) in wakes {
                conn.on_group_moved(&group, sequence, now);
            }
        }
        Step::Tick => conn.on_tick(now),
        Step::Ping => conn.ping(now),
        Step::Drain => {}
        Step::FinishIo => conn.finish_io(now),
    }
    let mut after = After {
        moved: std::iter::from_fn(|| conn.poll_notification()).collect(),
        ..After::default()
    };
    let mut frames = 0;
    let mut bytes = in_flight.load(Ordering::Acquire);
    while frames < room_frames && (frames == 0 || bytes < WRITER_BYTES) {
        match conn.poll_output(now) {
            Some(Output::Frame(frame)) => {
                frames += 1;
                bytes += frame.len();
                after.outputs.push(Output::Frame(frame));
            }
            Some(close @ Output::Close(_)) => {
                after.outputs.push(close);
                break;
            }
            None => break,
        }
    }
    after.wants_input = conn.wants_input();
    after.authenticated = conn.agent_id().is_some();
    after.closed = conn.is_closed();
    after.has_more = conn.queued_frames() > 0;
    after.queued_bytes = conn.queued_bytes() as u64;
    // Counted in one pass without lookups: this runs on the event loop for every delivery
    // (a lookup per subscribed Group hashed each Group ID with SipHash, ≈ 1 % of the loaded
    // server's CPU).
    after.subscriptions = conn.subscription_count() as u64;
    after.paused = conn.paused_groups() as u64;
    after
}

async fn write_loop<S>(
    mut sink: futures_util::stream::SplitSink<WebSocketStream<S>, Message>,
    mut rx: mpsc::Receiver<WriterItem>,
    in_flight: Arc<AtomicUsize>,
    drained: Arc<Notify>,
    shared: Arc<Shared>,
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let metrics = &shared.metrics;
    let mut next = rx.recv().await;
    while let Some(item) = next.take() {
        match item {
            WriterItem::Frame(frame) => {
                // Every frame already handed over is fed, then one flush: frames that queued
                // together leave in one TLS write (one system call) instead of one each.
                let mut fed = 0usize;
                let mut item = Some(WriterItem::Frame(frame));
                while let Some(WriterItem::Frame(frame)) = item.take() {
                    let len = frame.len();
                    match frame_type(&frame) {
                        b"EVENT" => Metrics::inc(&metrics.events_delivered),
                        b"ERROR" => Metrics::inc(&metrics.errors_sent),
                        _ => {}
                    }
                    let Ok(text) = String::from_utf8(frame) else {
                        return;
                    };
                    if sink.feed(Message::text(text)).await.is_err() {
                        return;
                    }
                    fed += len;
                    Metrics::inc(&metrics.frames_sent);
                    match rx.try_recv() {
                        Ok(more @ WriterItem::Frame(_)) => item = Some(more),
                        Ok(close) => next = Some(close),
                        Err(_) => {}
                    }
                }
                let flushed = sink.flush().await;
                in_flight.fetch_sub(fed, Ordering::AcqRel);
                drained.notify_one();
                if flushed.is_err() {
                    return;
                }
            }
            WriterItem::Close(code, reason) => {
                let frame = CloseFrame {
                    code: CloseCode::from(code),
                    reason: reason.into(),
                };
                let _ = sink.send(Message::Close(Some(frame))).await;
                let _ = sink.flush().await;
                let _ = sink.close().await;
                return;
            }
        }
        if next.is_none() {
            next = rx.recv().await;
        }
    }
    let _ = sink.close().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_types_of_canonical_frames() {
        let event = br#"{"event":{"kind":"x","payload":{"frameType":"ERROR"}},"frameId":"urn:a","frameType":"EVENT","protocolVersion":"0.1"}"#;
        assert_eq!(frame_type(event), b"EVENT");
        let error = br#"{"error":{"code":"X","message":"m \"frameType\":\"EVENT\""},"frameId":"urn:a","frameType":"ERROR","protocolVersion":"0.1"}"#;
        assert_eq!(frame_type(error), b"ERROR");
        assert_eq!(frame_type(b"{}"), b"");
    }
}
