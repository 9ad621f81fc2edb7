//! The PostgreSQL server the workspace's tests run against (test support, hidden from the
//! docs): the URL in `MWP_POSTGRES_URL`, or else the private cluster that
//! `scripts/pg-cluster.sh start` creates and starts (installing Debian's `postgresql` when
//! missing) — never a skip. One definition for the tests of every crate that needs a server.
#![allow(clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

/// The server's URL (`postgresql://user@host:port/database`), resolved once per process.
/// Panics when no server can be had: a test that needs one must fail, not pass unseen.
pub fn url() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| {
        if let Ok(url) = std::env::var("MWP_POSTGRES_URL")
            && !url.is_empty()
        {
            return url;
        }
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/pg-cluster.sh");
        let output = Command::new("bash")
            .arg(&script)
            .arg("start")
            .output()
            .expect("run scripts/pg-cluster.sh start");
        assert!(
            output.status.success(),
            "scripts/pg-cluster.sh start failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .last()
            .expect("pg-cluster.sh printed a URL")
            .trim()
            .to_owned()
    })
}
