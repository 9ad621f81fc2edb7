//! Process metrics, rendered as Prometheus text by `GET /metrics`: counters and gauges are
//! atomics, the store latency a fixed-bucket histogram. Nothing here grows with traffic.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::fanout::Gauges;

/// Upper bounds of the store latency buckets, in seconds.
const BUCKETS: [f64; 12] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 2.5,
];

/// A latency histogram (cumulative on render).
#[derive(Debug, Default)]
pub struct Histogram {
    buckets: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_nanos: AtomicU64,
}

impl Histogram {
    /// Records one observation.
    pub fn observe(&self, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        if let Some(i) = BUCKETS.iter().position(|bound| seconds <= *bound) {
            self.buckets[i].fetch_add(1, Ordering::Relaxed);
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        self.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// Observations so far.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    fn render(&self, out: &mut String, name: &str, labels: &str) {
        let mut cumulative = 0;
        for (bound, bucket) in BUCKETS.iter().zip(&self.buckets) {
            cumulative += bucket.load(Ordering::Relaxed);
            let _ = writeln!(out, "{name}_bucket{{{labels}le=\"{bound}\"}} {cumulative}");
        }
        let count = self.count();
        let _ = writeln!(out, "{name}_bucket{{{labels}le=\"+Inf\"}} {count}");
        let sum = self.sum_nanos.load(Ordering::Relaxed) as f64 / 1e9;
        let plain = labels.trim_end_matches(',');
        let _ = writeln!(out, "{name}_sum{{{plain}}} {sum}");
        let _ = writeln!(out, "{name}_count{{{plain}}} {count}");
    }
}

/// The store operations timed separately.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreOp {
    /// `commit`, `commit_many`.
    Commit,
    /// Aggregate, receipt and batched reads.
    Read,
    /// `replay` (delivery pages).
    Replay,
    /// `head` (the head poll, wake-ups without a sequence).
    Head,
}

impl StoreOp {
    const ALL: [StoreOp; 4] = [
        StoreOp::Commit,
        StoreOp::Read,
        StoreOp::Replay,
        StoreOp::Head,
    ];

    fn name(self) -> &'static str {
        match self {
            StoreOp::Commit => "commit",
            StoreOp::Read => "read",
            StoreOp::Replay => "replay",
            StoreOp::Head => "head",
        }
    }
}

/// Every metric of one server process.
#[derive(Debug, Default)]
pub struct Metrics {
    /// TCP connections accepted.
    pub connections_accepted: AtomicU64,
    /// Connections refused before TLS (unauthenticated limit, per-address rate, shutdown).
    pub connections_refused: AtomicU64,
    /// WebSocket connections open now.
    pub connections_open: AtomicU64,
    /// Of those, authenticated.
    pub connections_authenticated: AtomicU64,
    /// TLS or WebSocket handshakes that failed (TLS 1.2 clients, bad requests, timeouts).
    pub handshakes_failed: AtomicU64,
    /// `COMMAND` frames received.
    pub commands_received: AtomicU64,
    /// Commands that moved a Group head (committed here).
    pub commands_committed: AtomicU64,
    /// Text frames written to clients.
    pub frames_sent: AtomicU64,
    /// `EVENT` frames written to clients.
    pub events_delivered: AtomicU64,
    /// `ERROR` frames written to clients.
    pub errors_sent: AtomicU64,
    /// Wake-ups delivered to local connections (local commits and `NOTIFY`).
    pub wakeups: AtomicU64,
    /// `NOTIFY mwp_group_head` sent.
    pub notify_sent: AtomicU64,
    /// Notifications received on the `LISTEN` connection.
    pub notify_received: AtomicU64,
    /// Notifications not sent because the sender was busy or down (the head poll covers them).
    pub notify_dropped: AtomicU64,
    /// Whether the `LISTEN` connection is up (PostgreSQL only).
    pub listen_connected: AtomicU64,
    /// Store latency per operation.
    pub store_commit: Histogram,
    /// Store read latency.
    pub store_read: Histogram,
    /// Store replay latency.
    pub store_replay: Histogram,
    /// Store head latency.
    pub store_head: Histogram,
}

impl Metrics {
    /// The histogram of `op`.
    pub fn store(&self, op: StoreOp) -> &Histogram {
        match op {
            StoreOp::Commit => &self.store_commit,
            StoreOp::Read => &self.store_read,
            StoreOp::Replay => &self.store_replay,
            StoreOp::Head => &self.store_head,
        }
    }

    /// Adds one to `counter`.
    pub fn inc(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Takes one from a gauge.
    pub fn dec(gauge: &AtomicU64) {
        let _ = gauge.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
            Some(v.saturating_sub(1))
        });
    }

    /// The Prometheus text exposition (version 0.0.4), with the gauges read from the live
    /// connections by the caller.
    pub fn render(&self, gauges: &Gauges) -> String {
        let mut out = String::with_capacity(4096);
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let mut metric = |name: &str, kind: &str, help: &str, value: u64| {
            let _ = writeln!(out, "# HELP {name} {help}");
            let _ = writeln!(out, "# TYPE {name} {kind}");
            let _ = writeln!(out, "{name} {value}");
        };
        metric(
            "mwp_connections_open",
            "gauge",
            "WebSocket connections open now.",
            load(&self.connections_open),
        );
        metric(
            "mwp_connections_authenticated",
            "gauge",
            "WebSocket connections past HELLO.",
            load(&self.connections_authenticated),
        );
        metric(
            "mwp_connections_accepted_total",
            "counter",
            "TCP connections accepted.",
            load(&self.connections_accepted),
        );
        metric(
            "mwp_connections_refused_total",
            "counter",
            "Connections refused before TLS (limits, shutdown).",
            load(&self.connections_refused),
        );
        metric(
            "mwp_handshakes_failed_total",
            "counter",
            "TLS, HTTP or WebSocket handshakes that failed.",
            load(&self.handshakes_failed),
        );
        metric(
            "mwp_commands_received_total",
            "counter",
            "COMMAND frames received (rate() gives Commands/s).",
            load(&self.commands_received),
        );
        metric(
            "mwp_commands_committed_total",
            "counter",
            "Commands whose Events moved a Group head.",
            load(&self.commands_committed),
        );
        metric(
            "mwp_frames_sent_total",
            "counter",
            "Text frames written to clients.",
            load(&self.frames_sent),
        );
        metric(
            "mwp_events_delivered_total",
            "counter",
            "EVENT frames written to clients.",
            load(&self.events_delivered),
        );
        metric(
            "mwp_errors_sent_total",
            "counter",
            "ERROR frames written to clients.",
            load(&self.errors_sent),
        );
        metric(
            "mwp_wakeups_total",
            "counter",
            "Wake-ups delivered to local connections.",
            load(&self.wakeups),
        );
        metric(
            "mwp_notify_sent_total",
            "counter",
            "NOTIFY mwp_group_head sent.",
            load(&self.notify_sent),
        );
        metric(
            "mwp_notify_received_total",
            "counter",
            "Notifications received on the LISTEN connection.",
            load(&self.notify_received),
        );
        metric(
            "mwp_notify_dropped_total",
            "counter",
            "Notifications not sent (the head poll covers them).",
            load(&self.notify_dropped),
        );
        metric(
            "mwp_listen_connected",
            "gauge",
            "1 while the LISTEN connection is up (PostgreSQL).",
            load(&self.listen_connected),
        );
        metric(
            "mwp_paused_groups",
            "gauge",
            "Subscriptions paused by BACKPRESSURE.",
            gauges.paused_groups,
        );
        metric(
            "mwp_subscriptions",
            "gauge",
            "Subscribed (connection, Group) pairs.",
            gauges.subscriptions,
        );
        metric(
            "mwp_subscribed_groups",
            "gauge",
            "Groups with at least one local subscriber.",
            gauges.groups,
        );
        metric(
            "mwp_queued_bytes",
            "gauge",
            "Bytes the connection machines hold for their writers.",
            gauges.queued_bytes,
        );
        metric(
            "mwp_max_connection_queued_bytes",
            "gauge",
            "The largest of one connection.",
            gauges.max_queued_bytes,
        );
        let name = "mwp_store_latency_seconds";
        let _ = writeln!(out, "# HELP {name} Store call latency by operation.");
        let _ = writeln!(out, "# TYPE {name} histogram");
        for op in StoreOp::ALL {
            let labels = format!("op=\"{}\",", op.name());
            self.store(op).render(&mut out, name, &labels);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_and_cumulative_buckets() {
        let metrics = Metrics::default();
        Metrics::inc(&metrics.commands_received);
        metrics.store_commit.observe(Duration::from_micros(300));
        metrics.store_commit.observe(Duration::from_secs(5));
        let gauges = Gauges {
            paused_groups: 2,
            subscriptions: 3,
            groups: 1,
            ..Gauges::default()
        };
        let text = metrics.render(&gauges);
        assert!(text.contains("mwp_commands_received_total 1\n"), "{text}");
        assert!(text.contains("mwp_paused_groups 2\n"), "{text}");
        assert!(
            text.contains("mwp_store_latency_seconds_bucket{op=\"commit\",le=\"0.0005\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("mwp_store_latency_seconds_bucket{op=\"commit\",le=\"+Inf\"} 2\n"),
            "{text}"
        );
        assert!(
            text.contains("mwp_store_latency_seconds_count{op=\"commit\"} 2\n"),
            "{text}"
        );
    }
}
