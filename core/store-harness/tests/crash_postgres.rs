//! Crash safety on PostgreSQL (issue 11 "Reliability"): the body of `crash_sqlite.rs`
//! (`tests/common/crash.rs`) on a fresh schema of a PostgreSQL server (`MWP_POSTGRES_URL`, or
//! the cluster `scripts/pg-cluster.sh start` provides). The writer is the client process: a
//! SIGKILL drops its connections mid-statement or mid-`COMMIT`; the server rolls back what was
//! not committed. Each writer names its sessions (`application_name`), and after a kill the
//! test waits until the server has ended them: a `COMMIT` the dead client had sent may still
//! complete until then, and the checks must see the outcome, not race it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::atomic::{AtomicU32, Ordering};

use common::crash::Writers;
use common::pg::{PgSpec, wait_sessions_gone, with_param};

#[test]
fn a_writer_killed_a_hundred_times_loses_nothing_confirmed_and_half_applies_nothing_on_postgresql()
{
    let store = PgSpec::fresh("crash");
    let name = |n: u32| format!("{}_writer_{n}", store.schema);
    let spec_of = |n: u32| with_param(&store.spec, &format!("application_name={}", name(n)));
    let lingering = AtomicU32::new(0);
    let settle = |n: u32| {
        if wait_sessions_gone(&name(n)) {
            lingering.fetch_add(1, Ordering::Relaxed);
        }
    };
    let writers = Writers {
        spec: &spec_of,
        settle: &settle,
    };
    let report = common::crash::run_with(&store.spec, 1, 100, 0x5eed_c4a6, &writers);
    println!(
        "crash test on PostgreSQL: {} kills ({} before the first confirmation), {} stream \
         Commands; in-flight Command applied-unconfirmed {} times, absent {} times; the dead \
         writer's session still open on the server after {} kills; {:.1} s",
        report.kills,
        report.early_kills,
        report.commands,
        report.in_flight_applied,
        report.in_flight_absent,
        lingering.load(Ordering::Relaxed),
        report.elapsed.as_secs_f64()
    );
    assert!(report.kills >= 50);
    assert_eq!(
        report.in_flight_applied + report.in_flight_absent,
        report.kills
    );
}
