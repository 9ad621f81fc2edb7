//! Switching a database file to WAL when several processes open it at the same moment.
//!
//! `PRAGMA journal_mode=WAL` on a file still in rollback-journal mode (a new file) first takes
//! a read transaction on it, then upgrades that transaction to an exclusive one to rewrite the
//! header. SQLite never runs the busy handler for a connection that upgrades a transaction it
//! already holds (two upgraders waiting for each other would deadlock), so when another
//! process holds any lock on the file at that moment — it is converting the file itself, or
//! creating the schema — the pragma fails at once with `SQLITE_BUSY` ("database is locked"),
//! whatever `busy_timeout` says. That was the 1-in-6 failure of two worker processes opening
//! one new file together (`docs/store-sqlite.md`, "Opening"). The statement then ends and
//! releases its locks, so retrying is safe: this retries a busy answer, with short pauses,
//! until the busy timeout. Every other step of an open (`BEGIN IMMEDIATE` for the migrations,
//! reads) starts a transaction rather than upgrading one, so SQLite's busy handler covers it.

use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode};

/// The first pause after a busy answer; each further one doubles, up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_micros(500);
const MAX_PAUSE: Duration = Duration::from_millis(20);

/// Whether `error` is SQLite's "another connection holds the lock" answer.
pub(crate) fn is_busy(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// Runs `PRAGMA journal_mode=WAL` on `conn`, retrying busy answers until `timeout` has passed;
/// answers the journal mode SQLite reports (`wal` unless it refused).
pub(crate) fn enable(conn: &Connection, timeout: Duration) -> Result<String, rusqlite::Error> {
    let deadline = Instant::now() + timeout;
    let mut pause = FIRST_PAUSE;
    loop {
        match conn.query_row("PRAGMA journal_mode=WAL", [], |row| row.get::<_, String>(0)) {
            Err(e) if is_busy(&e) && Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(MAX_PAUSE);
            }
            answer => return answer,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// The failure this module exists for, in one process: another connection holding the
    /// write lock of a new rollback-journal file (as a process converting or creating it does)
    /// makes the switch fail at once despite the busy timeout; retried, it succeeds as soon as
    /// the lock is released, and gives up with the busy answer after the timeout.
    #[test]
    fn the_switch_is_retried_while_another_connection_holds_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.sqlite");
        let holder = Connection::open(&path).unwrap();
        holder.execute_batch("CREATE TABLE t (x);").unwrap();
        let converting = Connection::open(&path).unwrap();
        converting.busy_timeout(Duration::from_secs(5)).unwrap();

        holder.execute_batch("BEGIN IMMEDIATE").unwrap();
        let began = Instant::now();
        let e = converting
            .query_row("PRAGMA journal_mode=WAL", [], |row| row.get::<_, String>(0))
            .unwrap_err();
        assert!(is_busy(&e), "{e}");
        assert!(
            began.elapsed() < Duration::from_secs(1),
            "the busy handler ran"
        );
        // Given up after the timeout while the lock stays held.
        let e = enable(&converting, Duration::from_millis(50)).unwrap_err();
        assert!(is_busy(&e), "{e}");

        // Retried, it waits for the lock instead.
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            holder.execute_batch("COMMIT").unwrap();
        });
        assert_eq!(enable(&converting, Duration::from_secs(5)).unwrap(), "wal");
        release.join().unwrap();
    }
}
