//! The server's clock: the wall clock, or — for demonstrations and tests only — a controlled
//! one (`--clock manual:2026-07-15T08:00:00Z`).
//!
//! Time is an input of every decision (Command freshness §6.4, lease expiry §11.3, session and
//! challenge expiry §6.3). A proof of concept that must print byte-identical reports and let an
//! Execution Lease expire "on the clock" (§22) cannot use the wall clock, so the process that
//! started the server moves time itself by writing lines to the server's standard input:
//!
//! ```text
//! advance 3s        → stdout: "clock 2026-07-15T08:00:03.000Z"
//! advance 250ms     → stdout: "clock 2026-07-15T08:00:03.250Z"
//! ```
//!
//! The answer line is printed after the clock moved, so a driver that waits for it knows every
//! later decision sees the new time. Time never goes backwards. The mode is refused together
//! with a non-loopback `--host` (`cli.rs`): a server whose time anyone on stdin controls is not
//! a deployment. In this mode Event IDs are sequential too (`app.rs`), so two runs of the same
//! script emit byte-identical Events.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use missionweaveprotocol::schema_formats::Timestamp;
use missionweaveprotocol_host::SystemClock;
use missionweaveprotocol_kernel::random::{RandomSource, RandomUnavailable};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use sha2::{Digest, Sha256};

/// The most one `advance` line may move the clock (a year): a typo cannot overflow it.
pub const MAX_ADVANCE_MS: i64 = 366 * 24 * 3600 * 1000;

/// Where the server reads time.
#[derive(Debug, Clone, Default)]
pub struct ServerClock {
    manual: Option<Arc<AtomicI64>>,
}

impl ServerClock {
    /// The wall clock.
    pub fn system() -> Self {
        Self { manual: None }
    }

    /// A clock that stands at `start` until [`advance`](Self::advance)d.
    pub fn manual(start: UnixMillis) -> Self {
        Self {
            manual: Some(Arc::new(AtomicI64::new(start.0))),
        }
    }

    /// Whether time is controlled.
    pub fn is_manual(&self) -> bool {
        self.manual.is_some()
    }

    /// Now.
    pub fn now(&self) -> UnixMillis {
        match &self.manual {
            Some(at) => UnixMillis(at.load(Ordering::SeqCst)),
            None => SystemClock.now(),
        }
    }

    /// Moves a manual clock forward by `ms` (0 ≤ ms ≤ [`MAX_ADVANCE_MS`]) and returns the new
    /// time; the wall clock cannot be moved (`None`).
    pub fn advance(&self, ms: i64) -> Option<UnixMillis> {
        let at = self.manual.as_ref()?;
        let ms = ms.clamp(0, MAX_ADVANCE_MS);
        Some(UnixMillis(at.fetch_add(ms, Ordering::SeqCst) + ms))
    }
}

/// Deterministic "randomness" for connections under a controlled clock: SHA-256 of
/// (connection number, block counter). Only for `--clock manual:…` (loopback demonstrations):
/// challenge nonces and frame IDs become predictable, which is exactly what a byte-identical
/// demonstration needs and what a deployment must never have.
#[derive(Debug)]
pub struct SeededRandom {
    connection: u64,
    block: u64,
}

static CONNECTIONS: AtomicU64 = AtomicU64::new(0);

impl SeededRandom {
    /// The stream of the next connection of this process (numbered in accept order).
    pub fn next_connection() -> Self {
        Self {
            connection: CONNECTIONS.fetch_add(1, Ordering::SeqCst),
            block: 0,
        }
    }
}

impl RandomSource for SeededRandom {
    fn fill(&mut self, out: &mut [u8]) -> Result<(), RandomUnavailable> {
        for chunk in out.chunks_mut(32) {
            let mut hash = Sha256::new();
            hash.update(b"missionweaveprotocol-manual-clock");
            hash.update(self.connection.to_be_bytes());
            hash.update(self.block.to_be_bytes());
            self.block += 1;
            let digest = hash.finalize();
            chunk.copy_from_slice(&digest[..chunk.len()]);
        }
        Ok(())
    }
}

/// The `--clock` value: `system`, or `manual:<RFC 3339 timestamp>` (§2 timestamp profile).
pub fn parse_clock(text: &str) -> Result<Option<UnixMillis>, String> {
    if text == "system" {
        return Ok(None);
    }
    let Some(start) = text.strip_prefix("manual:") else {
        return Err(format!(
            "'{text}' is neither 'system' nor 'manual:<RFC 3339 timestamp>'"
        ));
    };
    let stamp = Timestamp::parse(start)
        .map_err(|e| format!("'{start}' is not an RFC 3339 timestamp: {e}"))?;
    Ok(Some(UnixMillis(stamp.instant().unix_millis())))
}

/// One control line: `advance <n>s` or `advance <n>ms` → milliseconds.
pub fn parse_advance(line: &str) -> Result<i64, String> {
    let amount = line
        .trim()
        .strip_prefix("advance ")
        .ok_or_else(|| {
            format!(
                "unknown clock command '{}': use 'advance <n>s|ms'",
                line.trim()
            )
        })?
        .trim();
    let (digits, scale) = if let Some(n) = amount.strip_suffix("ms") {
        (n, 1)
    } else if let Some(n) = amount.strip_suffix('s') {
        (n, 1000)
    } else {
        return Err(format!("'{amount}' needs a unit: s or ms"));
    };
    let n: i64 = digits
        .parse()
        .map_err(|_| format!("'{digits}' is not a whole number"))?;
    match n.checked_mul(scale) {
        Some(ms) if (0..=MAX_ADVANCE_MS).contains(&ms) => Ok(ms),
        _ => Err(format!("'{amount}' is outside 0..=366 days")),
    }
}

/// Reads control lines from standard input until it closes, moving `clock` and answering each
/// line on standard output (`clock <time>`) or standard error (`clock error: …`). Runs on its
/// own thread: standard input is blocking.
pub fn spawn_stdin_control(clock: ServerClock) {
    let _ = std::thread::Builder::new()
        .name("mwp-clock".into())
        .spawn(move || {
            use std::io::{BufRead, Write};
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { return };
                if line.trim().is_empty() {
                    continue;
                }
                match parse_advance(&line).map(|ms| clock.advance(ms)) {
                    Ok(Some(now)) => {
                        let text = now.to_rfc3339().unwrap_or_else(|| now.0.to_string());
                        let mut out = std::io::stdout().lock();
                        let _ = writeln!(out, "clock {text}");
                        let _ = out.flush();
                    }
                    Ok(None) => return,
                    Err(message) => {
                        let _ = writeln!(std::io::stderr(), "clock error: {message}");
                    }
                }
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_flag_is_system_or_manual_with_a_timestamp() {
        assert_eq!(parse_clock("system"), Ok(None));
        assert_eq!(
            parse_clock("manual:2026-07-15T08:00:00Z"),
            Ok(Some(UnixMillis(1_784_102_400_000)))
        );
        assert!(parse_clock("manual:yesterday").is_err());
        assert!(parse_clock("2026-07-15T08:00:00Z").is_err());
        assert!(parse_clock("manual").is_err());
    }

    #[test]
    fn advance_lines_take_seconds_or_milliseconds_forward_only() {
        assert_eq!(parse_advance("advance 3s"), Ok(3000));
        assert_eq!(parse_advance("advance 250ms\n"), Ok(250));
        assert!(parse_advance("advance -3s").is_err());
        assert!(parse_advance("advance 3").is_err());
        assert!(parse_advance("advance 9999999999s").is_err());
        assert!(parse_advance("rewind 3s").is_err());
    }

    #[test]
    fn seeded_streams_repeat_per_connection_number_and_differ_between_connections() {
        let (mut a, mut b) = (
            SeededRandom {
                connection: 7,
                block: 0,
            },
            SeededRandom {
                connection: 7,
                block: 0,
            },
        );
        let (mut x, mut y) = ([0u8; 48], [0u8; 48]);
        assert!(a.fill(&mut x).is_ok() && b.fill(&mut y).is_ok());
        assert_eq!(x, y);
        let mut other = SeededRandom {
            connection: 8,
            block: 0,
        };
        assert!(other.fill(&mut y).is_ok());
        assert_ne!(x, y);
        // The stream moves on: the next draw differs from the first.
        assert!(a.fill(&mut y).is_ok());
        assert_ne!(x, y);
    }

    #[test]
    fn a_manual_clock_stands_still_until_advanced() {
        let clock = ServerClock::manual(UnixMillis(1_000));
        assert!(clock.is_manual());
        assert_eq!(clock.now(), UnixMillis(1_000));
        assert_eq!(clock.advance(500), Some(UnixMillis(1_500)));
        assert_eq!(clock.now(), UnixMillis(1_500));
        // Never backwards.
        assert_eq!(clock.advance(-10), Some(UnixMillis(1_500)));
        let wall = ServerClock::system();
        assert!(!wall.is_manual());
        assert_eq!(wall.advance(1), None);
        assert!(wall.now().0 > 1_767_225_600_000);
    }
}
