//! The server's limits (`docs/network.md`, "Limits"), with their defaults and the typed
//! refusal each one produces. Every per-connection structure is bounded by one of them, which
//! is what makes the connection's memory bounded ([`Limits::connection_memory_bound`]).

use core::fmt;

use missionweaveprotocol::json::ParseLimits;

/// The largest page of Events one Core read returns (the Core's own bound).
pub const MAX_PAGE_SIZE: usize = 10_000;

/// The limits of a [`Gateway`](super::Gateway) and of each of its connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest received text frame (default: the strict parser's document limit, 4 MiB, so
    /// every document a verifier accepts fits). Larger: `ERROR PROTOCOL_VIOLATION`, close 1009.
    /// Hosts set their WebSocket library's message limit to this value.
    pub max_frame_bytes: usize,
    /// Time from connection to `server_accept` (default 10 s); past it: `ERROR AUTH_REQUIRED`,
    /// close 1008 (the host calls `on_tick`).
    pub handshake_timeout_ms: u64,
    /// `client_init` attempts per connection (default 3); more: `RATE_LIMITED`.
    pub max_hello_attempts: u32,
    /// Groups in one `SUBSCRIBE` (default 256); more: `RATE_LIMITED`, nothing subscribed.
    pub max_groups_per_subscribe: usize,
    /// Subscribed Groups per connection (default 1024); more: `RATE_LIMITED`.
    pub max_subscriptions: usize,
    /// Attention-filter list entries per subscribed Group (default 64); more: `RATE_LIMITED`.
    pub max_attention_entries: usize,
    /// Attention-filter bytes per connection, all subscriptions together (default 256 KiB),
    /// counted as [`attention_cost`]; more: `RATE_LIMITED`, nothing subscribed.
    pub max_attention_bytes: usize,
    /// Cursors in one `ACK` (default 256); more: `RATE_LIMITED`, nothing acknowledged.
    pub max_acknowledgements: usize,
    /// Largest Presence Record kept from a `PING` (canonical bytes, default 16 KiB).
    pub max_presence_bytes: usize,
    /// Subscription `EVENT` frames queued per connection (default 1024).
    pub max_queue_frames: usize,
    /// Their bytes (default 4 MiB). One frame larger than this still passes when the queue is
    /// empty (progress), so the queue holds at most this plus one Event frame.
    pub max_queue_bytes: usize,
    /// Frames one Group may hold in the queue (default 256): its share (§8, §17.3: a noisy
    /// Group must not starve the others).
    pub group_share_frames: usize,
    /// Bytes one Group may hold in the queue (default 1 MiB).
    pub group_share_bytes: usize,
    /// Replies and notices queued (HELLO, ERROR, PING replies, the Events of the connection's
    /// own Commands outside its subscriptions; default 64). At the bound the connection stops
    /// wanting input (`Connection::wants_input`); a frame fed anyway closes it (1008).
    pub max_reply_frames: usize,
    /// Their bytes (default 1 MiB).
    pub max_reply_bytes: usize,
    /// Events per Core read (default 128, at most 10 000).
    pub page_size: usize,
    /// `retryAfterMs` of a `BACKPRESSURE` error (default 1 s).
    pub backpressure_retry_after_ms: u64,
    /// How often `on_tick` re-reads the head of each subscribed Group (default 5 s): a missed
    /// wake-up only delays delivery by this much.
    pub poll_interval_ms: u64,
    /// Authenticated connections per Agent in one gateway (default 4); more: `RATE_LIMITED` at
    /// `client_response`, before any Session Epoch is opened.
    pub max_connections_per_agent: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_frame_bytes: ParseLimits::DOCUMENT.max_document_bytes,
            handshake_timeout_ms: 10_000,
            max_hello_attempts: 3,
            max_groups_per_subscribe: 256,
            max_subscriptions: 1024,
            max_attention_entries: 64,
            max_attention_bytes: 256 << 10,
            max_acknowledgements: 256,
            max_presence_bytes: 16 << 10,
            max_queue_frames: 1024,
            max_queue_bytes: 4 << 20,
            group_share_frames: 256,
            group_share_bytes: 1 << 20,
            max_reply_frames: 64,
            max_reply_bytes: 1 << 20,
            page_size: 128,
            backpressure_retry_after_ms: 1_000,
            poll_interval_ms: 5_000,
            max_connections_per_agent: 4,
        }
    }
}

/// A set of limits that cannot work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitsError {
    /// The limit (Rust field name).
    pub limit: &'static str,
    /// Why.
    pub reason: &'static str,
}

impl fmt::Display for LimitsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "limit {}: {}", self.limit, self.reason)
    }
}

impl std::error::Error for LimitsError {}

/// What an attention filter costs against `Limits::max_attention_bytes`: its texts plus
/// [`ATTENTION_ENTRY_OVERHEAD_BYTES`] per list entry (the string's own header).
pub fn attention_cost(attention: &crate::frames::Attention) -> usize {
    attention.text_bytes() + attention.entries() * ATTENTION_ENTRY_OVERHEAD_BYTES
}

/// Bytes one attention list entry costs besides its text.
pub const ATTENTION_ENTRY_OVERHEAD_BYTES: usize = 32;

/// Bytes a subscription holds besides its Group ID and filter texts: the map entry, the
/// subscription record, the hub's index entry and the filter's vectors (measured by
/// `tests/memory.rs`, rounded up).
pub const SUBSCRIPTION_OVERHEAD_BYTES: usize = 512;
/// Bytes a connection holds with nothing subscribed or queued (measured, rounded up).
pub const CONNECTION_BASE_BYTES: usize = 8 << 10;
/// Bytes a queued frame costs besides its own bytes (its queue slot, with the queue's growth).
pub const QUEUED_FRAME_OVERHEAD_BYTES: usize = 128;
/// Longest protocol ID (`common.schema.json` `id`).
pub const MAX_ID_BYTES: usize = 512;
/// Largest frame of one stored Event (an Event passes the document limit; its frame adds the
/// envelope).
pub const MAX_EVENT_FRAME_BYTES: usize = (4 << 20) + 1024;

impl Limits {
    /// Checks that every limit is usable: positive, shares within the queue, pages within the
    /// Core's bound.
    pub fn validate(&self) -> Result<(), LimitsError> {
        let positive: [(&'static str, u64); 18] = [
            ("max_frame_bytes", self.max_frame_bytes as u64),
            ("handshake_timeout_ms", self.handshake_timeout_ms),
            ("max_hello_attempts", u64::from(self.max_hello_attempts)),
            (
                "max_groups_per_subscribe",
                self.max_groups_per_subscribe as u64,
            ),
            ("max_subscriptions", self.max_subscriptions as u64),
            ("max_acknowledgements", self.max_acknowledgements as u64),
            ("max_attention_bytes", self.max_attention_bytes as u64),
            ("max_presence_bytes", self.max_presence_bytes as u64),
            ("max_queue_frames", self.max_queue_frames as u64),
            ("max_queue_bytes", self.max_queue_bytes as u64),
            ("group_share_frames", self.group_share_frames as u64),
            ("group_share_bytes", self.group_share_bytes as u64),
            ("max_reply_frames", self.max_reply_frames as u64),
            ("max_reply_bytes", self.max_reply_bytes as u64),
            ("page_size", self.page_size as u64),
            (
                "backpressure_retry_after_ms",
                self.backpressure_retry_after_ms,
            ),
            ("poll_interval_ms", self.poll_interval_ms),
            (
                "max_connections_per_agent",
                self.max_connections_per_agent as u64,
            ),
        ];
        if let Some((limit, _)) = positive.iter().find(|(_, value)| *value == 0) {
            return Err(LimitsError {
                limit,
                reason: "must be positive",
            });
        }
        if self.group_share_frames > self.max_queue_frames {
            return Err(LimitsError {
                limit: "group_share_frames",
                reason: "must not exceed max_queue_frames",
            });
        }
        if self.group_share_bytes > self.max_queue_bytes {
            return Err(LimitsError {
                limit: "group_share_bytes",
                reason: "must not exceed max_queue_bytes",
            });
        }
        if self.page_size > MAX_PAGE_SIZE {
            return Err(LimitsError {
                limit: "page_size",
                reason: "must not exceed the Core's page bound (10 000)",
            });
        }
        if self.backpressure_retry_after_ms > (1 << 53) - 1 {
            return Err(LimitsError {
                limit: "backpressure_retry_after_ms",
                reason: "must be a safe integer",
            });
        }
        Ok(())
    }

    /// The most heap bytes one connection's own state can hold (the Core, the shared
    /// `SessionAuthority` and the frame the host is handing in are not the connection's):
    ///
    /// - a base ([`CONNECTION_BASE_BYTES`]: handshake, frame IDs, the Presence Record slot
    ///   excluded) plus the Presence Record (`max_presence_bytes`);
    /// - each subscription: [`SUBSCRIPTION_OVERHEAD_BYTES`] + its Group ID; all filters
    ///   together `max_attention_bytes` ([`attention_cost`]);
    /// - the subscription queue: `max_queue_bytes` + one Event frame beyond it, plus
    ///   [`QUEUED_FRAME_OVERHEAD_BYTES`] per frame;
    /// - the reply queue: `max_reply_bytes` + the replies of one input beyond it (one
    ///   Command's Events, each at most one Event frame; the bound counts one), plus the
    ///   per-frame overhead;
    /// - the notifications the host has not taken (at most
    ///   [`MAX_NOTIFICATIONS`](super::MAX_NOTIFICATIONS), a Group ID each).
    pub fn connection_memory_bound(&self) -> usize {
        let subscriptions = self
            .max_subscriptions
            .saturating_mul(SUBSCRIPTION_OVERHEAD_BYTES + MAX_ID_BYTES)
            .saturating_add(self.max_attention_bytes);
        let queue = self
            .max_queue_bytes
            .saturating_add(MAX_EVENT_FRAME_BYTES)
            .saturating_add((self.max_queue_frames + 1) * QUEUED_FRAME_OVERHEAD_BYTES);
        let replies = self
            .max_reply_bytes
            .saturating_add(MAX_EVENT_FRAME_BYTES)
            .saturating_add((self.max_reply_frames + 8) * QUEUED_FRAME_OVERHEAD_BYTES);
        let notifications = super::MAX_NOTIFICATIONS * (MAX_ID_BYTES + 64);
        CONNECTION_BASE_BYTES
            .saturating_add(notifications)
            .saturating_add(self.max_presence_bytes)
            .saturating_add(subscriptions)
            .saturating_add(queue)
            .saturating_add(replies)
    }
}
