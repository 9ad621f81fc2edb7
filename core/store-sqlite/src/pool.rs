//! The read connections of a file store: a small fixed pool, so that reads never wait behind
//! the writer connection while it holds a commit's fsync (`docs/store.md`, "Group commit and
//! concurrency").
//!
//! In WAL mode a reader sees the last committed state as of the start of its read transaction
//! and is never blocked by the writer (nor blocks it). A read of several statements (a replay
//! page: the Group head, then the rows) runs in one deferred transaction on one pooled
//! connection, so it sees one snapshot, as it did under the single connection.

use std::path::Path;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use missionweaveprotocol_engine::store::StoreError;
use rusqlite::{Connection, OpenFlags};

use crate::BUSY_TIMEOUT;
use crate::convert::backend;

/// A fixed set of read-only connections to one database file.
#[derive(Debug)]
pub(crate) struct ReadPool {
    idle: Mutex<Vec<Connection>>,
    returned: Condvar,
    size: usize,
}

impl ReadPool {
    /// Opens `size` (at least 1) read connections to the file at `path`, already in WAL mode
    /// with its schema in place.
    pub(crate) fn open(path: &Path, size: usize) -> Result<Self, StoreError> {
        let size = size.max(1);
        let mut idle = Vec::with_capacity(size);
        for _ in 0..size {
            // Read-write flags (a WAL reader may need to create the `-shm` index after a
            // restart), with `query_only` set so nothing is ever written through them.
            let conn = Connection::open_with_flags(
                path,
                OpenFlags::SQLITE_OPEN_READ_WRITE
                    | OpenFlags::SQLITE_OPEN_URI
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .map_err(backend)?;
            conn.busy_timeout(BUSY_TIMEOUT).map_err(backend)?;
            conn.execute_batch("PRAGMA query_only=ON;")
                .map_err(backend)?;
            crate::read::plan_once(&conn)?;
            idle.push(conn);
        }
        Ok(Self {
            idle: Mutex::new(idle),
            returned: Condvar::new(),
            size,
        })
    }

    /// How many read connections the pool holds.
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    fn idle(&self) -> MutexGuard<'_, Vec<Connection>> {
        // Only `Vec` pushes and pops happen under the lock.
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `read` on a pooled connection, waiting for a free connection if all are busy.
    /// With `snapshot`, inside one read transaction (a read of several statements sees one
    /// state); without, each statement is its own (a single-statement read needs no more,
    /// and skips a `BEGIN` and a `COMMIT`).
    pub(crate) fn read<T>(
        &self,
        snapshot: bool,
        read: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut checkout = {
            let mut idle = self.idle();
            loop {
                if let Some(conn) = idle.pop() {
                    break Checkout {
                        pool: self,
                        conn: Some(conn),
                    };
                }
                idle = self
                    .returned
                    .wait(idle)
                    .unwrap_or_else(PoisonError::into_inner);
            }
        };
        let Some(conn) = checkout.conn.as_mut() else {
            return Err(StoreError::Backend {
                detail: "read pool: a checked-out connection went missing".to_owned(),
            });
        };
        if !snapshot {
            return read(conn);
        }
        // Deferred: the snapshot is taken at the first read and held to the end; dropped
        // without commit (an error, a panic), it rolls back, which for a read only ends it.
        let snapshot = conn.transaction().map_err(backend)?;
        let value = read(&snapshot)?;
        snapshot.commit().map_err(backend)?;
        Ok(value)
    }
}

/// A connection taken from the pool, put back when dropped (also after an error or a panic:
/// its read transaction has ended by then, so it is clean).
struct Checkout<'a> {
    pool: &'a ReadPool,
    conn: Option<Connection>,
}

impl Drop for Checkout<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.pool.idle().push(conn);
            self.pool.returned.notify_one();
        }
    }
}
