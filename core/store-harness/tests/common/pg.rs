//! The PostgreSQL server of the process tests, as `core/store-postgres/tests` find it: the URL
//! in `MWP_POSTGRES_URL`, or a private cluster started with `scripts/pg-cluster.sh start`
//! (which installs PostgreSQL when missing): the tests never skip. Each test works in a fresh
//! schema (`?schema=` of its store spec), dropped when it passed and kept for a look when it
//! failed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use missionweaveprotocol_store_harness::drop_store;

/// The server's URL.
pub fn url() -> &'static str {
    missionweaveprotocol_store_postgres::test_server::url()
}

/// `url` with one more query parameter.
pub fn with_param(url: &str, param: &str) -> String {
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}{param}")
}

/// A store spec in a fresh schema of the server, dropped when the test passed.
#[derive(Debug)]
pub struct PgSpec {
    pub spec: String,
    pub schema: String,
}

impl PgSpec {
    pub fn fresh(purpose: &str) -> Self {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let schema = format!(
            "mwp_{purpose}_{}_{nanos}_{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        Self {
            spec: with_param(url(), &format!("schema={schema}")),
            schema,
        }
    }
}

impl Drop for PgSpec {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            drop_store(&self.spec).unwrap();
        }
    }
}

/// Waits until the server has no session named `application_name` left: a killed client's
/// backend finishes the statement it was running (a `COMMIT` the client sent before it died
/// still commits) and ends when it reads the closed socket, rolling back anything else. After
/// that, what the killed writer left is settled and a check cannot race its last commit.
/// Whether a session was still there at the first look.
pub fn wait_sessions_gone(application_name: &str) -> bool {
    let mut client = postgres::Client::connect(url(), postgres::NoTls).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut waited = false;
    loop {
        let row = client
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1",
                &[&application_name],
            )
            .unwrap();
        if row.get::<_, i64>(0) == 0 {
            return waited;
        }
        waited = true;
        assert!(
            Instant::now() < deadline,
            "the sessions of {application_name} outlived their process by 60 s"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}
