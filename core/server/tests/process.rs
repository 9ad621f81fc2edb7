//! The binary as a process: `--help`/`--version`, every flag check and its exit code (2), the
//! environment variables of the reference, start-up failures (1), the Agent Card trust key
//! (unsigned, tampered and foreign-signed cards refused), `--allow-insecure` (plain ws,
//! loopback only, a loud warning), one server per SQLite file, and the graceful shutdown on
//! SIGTERM/SIGINT (close 1001, exit 0).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use missionweaveprotocol::json::Value;

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| (*a).to_owned()).collect()
}

/// `args` without the flag `name` and its value.
fn without(args: &[String], name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip = false;
    for arg in args {
        if skip {
            skip = false;
            continue;
        }
        if arg == name {
            skip = true;
            continue;
        }
        out.push(arg.clone());
    }
    out
}

fn with(args: &[String], extra: &[&str]) -> Vec<String> {
    let mut out = args.to_vec();
    out.extend(extra.iter().map(|a| (*a).to_owned()));
    out
}

#[test]
fn help_and_version() {
    let (code, out, _) = run_to_exit(&strings(&["--help"]), &[]);
    assert_eq!(code, Some(0));
    for flag in [
        "--registry",
        "--agent-registry-snapshot",
        "--database-url",
        "--host",
        "--port",
        "--authority-key-id",
        "--organization-public-key",
        "--tls-certfile",
        "--tls-keyfile",
        "--allow-insecure",
        "--dev",
        "MISSIONWEAVEPROTOCOL_AGENT_REGISTRY",
        "MISSIONWEAVEPROTOCOL_DATABASE_URL",
        "sqlite+aiosqlite:///./missionweaveprotocol.db",
        "8765",
        "urn:missionweaveprotocol:key:group-gateway",
    ] {
        assert!(out.contains(flag), "--help lacks {flag}:\n{out}");
    }
    // Secrets are hidden flags.
    assert!(!out.contains("--session-secret"));
    assert!(!out.contains("--authority-private-key"));
    let (code, out, _) = run_to_exit(&strings(&["--version"]), &[]);
    assert_eq!(code, Some(0));
    assert!(out.starts_with("missionweaveprotocol-server "), "{out}");
}

#[test]
fn flag_problems_exit_2_with_a_message() {
    let org = Org::new();
    let db = format!("sqlite:///{}", org.path("flags.db").display());
    let base = org.base_args(&db);
    let tls = with(
        &base,
        &[
            "--tls-certfile",
            "/nonexistent.pem",
            "--tls-keyfile",
            "/nonexistent.key",
        ],
    );
    let cases: Vec<(Vec<String>, &str)> = vec![
        (without(&base, "--registry"), "--registry"),
        (
            without(&base, "--agent-registry-snapshot"),
            "--agent-registry-snapshot",
        ),
        (
            with(
                &without(&base, "--registry"),
                &["--registry", "/nonexistent/cards.json"],
            ),
            "does not exist",
        ),
        (base.clone(), "requires TLS"),
        (without(&tls, "--tls-keyfile"), "--tls-keyfile"),
        (
            with(
                &base,
                &[
                    "--dev",
                    "--tls-certfile",
                    "/x.pem",
                    "--tls-keyfile",
                    "/x.key",
                ],
            ),
            "--dev",
        ),
        (
            with(&base, &["--allow-insecure", "--session-secret", "short"]),
            "32",
        ),
        (
            with(&without(&base, "--authority-private-key"), &["--dev"])
                .into_iter()
                .collect(),
            "",
        ),
        (
            with(
                &without(&base, "--authority-private-key"),
                &["--tls-certfile", "/a", "--tls-keyfile", "/b"],
            ),
            "--authority-private-key",
        ),
        (
            with(
                &without(&base, "--organization-public-key"),
                &["--tls-certfile", "/a", "--tls-keyfile", "/b"],
            ),
            "--organization-public-key",
        ),
        (
            with(
                &without(&base, "--authority-private-key"),
                &["--allow-insecure", "--authority-private-key", "not-a-key"],
            ),
            "--authority-private-key",
        ),
        (
            with(
                &without(&base, "--organization-public-key"),
                &["--allow-insecure", "--organization-public-key", "AAAA"],
            ),
            "--organization-public-key",
        ),
        (
            with(
                &without(&base, "--host"),
                &["--allow-insecure", "--host", "0.0.0.0"],
            ),
            "loopback",
        ),
        (
            with(&without(&base, "--host"), &["--dev", "--host", "0.0.0.0"]),
            "loopback",
        ),
        (
            with(
                &without(&base, "--port"),
                &["--allow-insecure", "--port", "70000"],
            ),
            "--port",
        ),
        (
            with(&base, &["--allow-insecure", "--no-such-flag"]),
            "--no-such-flag",
        ),
        (
            with(
                &without(&base, "--database-url"),
                &["--allow-insecure", "--database-url", "mysql://x/y"],
            ),
            "--database-url",
        ),
    ];
    for (args, needle) in cases {
        if needle.is_empty() {
            continue; // --dev without the authority key is allowed by the flags (checked below)
        }
        let (code, _, err) = run_to_exit(&args, &[]);
        assert_eq!(code, Some(2), "{args:?}\n{err}");
        assert!(err.contains(needle), "{needle} not in:\n{err}");
    }
}

#[test]
fn environment_variables_stand_for_flags() {
    let org = Org::new();
    let db = org.seeded_sqlite();
    let cert = org.path("env-cert.pem");
    let (cards, registry) = (
        org.cards_path.display().to_string(),
        org.registry_path.display().to_string(),
    );
    let (seed, trust) = (org.authority_seed(), org.organization_key());
    let key_id = org.authority_key().key_id().to_owned();
    let cert_text = cert.display().to_string();
    let env = [
        ("MISSIONWEAVEPROTOCOL_AGENT_REGISTRY", cards.as_str()),
        (
            "MISSIONWEAVEPROTOCOL_AGENT_REGISTRY_SNAPSHOT",
            registry.as_str(),
        ),
        ("MISSIONWEAVEPROTOCOL_DATABASE_URL", db.as_str()),
        ("MISSIONWEAVEPROTOCOL_HOST", "127.0.0.1"),
        ("MISSIONWEAVEPROTOCOL_PORT", "0"),
        (
            "MISSIONWEAVEPROTOCOL_SESSION_SECRET",
            "a-session-secret-of-at-least-32-bytes!",
        ),
        ("MISSIONWEAVEPROTOCOL_AUTHORITY_KEY_ID", key_id.as_str()),
        ("MISSIONWEAVEPROTOCOL_AUTHORITY_PRIVATE_KEY", seed.as_str()),
        (
            "MISSIONWEAVEPROTOCOL_ORGANIZATION_PUBLIC_KEY",
            trust.as_str(),
        ),
        ("MISSIONWEAVEPROTOCOL_DEV_CERT", cert_text.as_str()),
    ];
    let mut server = ServerProcess::start(&strings(&["--dev"]), &env).ready();
    assert!(server.url.starts_with("wss://127.0.0.1:"));
    assert!(cert.is_file());
    let stderr = server.stderr();
    assert!(!stderr.contains(&seed), "the authority key was logged");
    assert!(
        !stderr.contains("a-session-secret"),
        "the session secret was logged"
    );
    // A short secret through the environment is refused like the flag.
    let mut short = env.to_vec();
    short[5] = ("MISSIONWEAVEPROTOCOL_SESSION_SECRET", "short");
    let (code, _, err) = run_to_exit(&strings(&["--dev"]), &short);
    assert_eq!(code, Some(2), "{err}");
    server.signal("TERM");
    assert!(server.wait_exit(WAIT).unwrap().success());
}

#[test]
fn start_up_failures_exit_1() {
    let org = Org::new();
    let db = format!("sqlite:///{}", org.path("fail.db").display());
    let dev = org.dev_args(&db);
    // Registry evidence that is not valid.
    let bad = org.path("bad-registry.json");
    std::fs::write(&bad, b"{\"not\": \"a registry\"}").unwrap();
    let args = with(
        &without(&dev, "--agent-registry-snapshot"),
        &["--agent-registry-snapshot", bad.to_str().unwrap()],
    );
    let (code, _, err) = run_to_exit(&args, &[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("Registry"), "{err}");
    // An authority key ID the Registry does not hold.
    let args = with(
        &without(&dev, "--authority-key-id"),
        &["--authority-key-id", "urn:missionweaveprotocol:key:none"],
    );
    let (code, _, err) = run_to_exit(&args, &[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("not in the Registry"), "{err}");
    // A key ID the Registry binds, with another key: the Core refuses (authority_key_not_bound).
    let args = with(
        &without(&dev, "--authority-private-key"),
        &["--authority-private-key", &b64(&[7; 32])],
    );
    let (code, _, err) = run_to_exit(&args, &[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("authority_key_not_bound") || err.contains("bound"),
        "{err}"
    );
    // --dev without the authority key: a random one, which no Registry binds.
    let (code, _, err) = run_to_exit(&without(&dev, "--authority-private-key"), &[]);
    assert_eq!(code, Some(1), "{err}");
    // A PostgreSQL server that is not there.
    let args = with(
        &without(&dev, "--database-url"),
        &[
            "--database-url",
            "postgresql://mwp@127.0.0.1:1/none?connect_timeout=2",
        ],
    );
    let (code, _, err) = run_to_exit(&args, &[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("could not be opened"), "{err}");
    assert!(!err.contains("password"), "{err}");
}

#[test]
fn agent_cards_must_be_signed_by_the_organization_key() {
    let org = Org::new();
    let db = format!("sqlite:///{}", org.path("cards.db").display());
    let dev = org.dev_args(&db);
    let start_with = |cards: Value, name: &str| {
        let path = org.write(name, &cards);
        let args = with(
            &without(&dev, "--registry"),
            &["--registry", path.to_str().unwrap()],
        );
        run_to_exit(&args, &[])
    };
    // Unsigned.
    let (code, _, err) = start_with(
        Value::Array(vec![org.unsigned_card(WORKER, 1)]),
        "unsigned.json",
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("not signed"), "{err}");
    // Tampered after signing.
    let mut card = org.card(WORKER, 1, REGISTRAR);
    if let Value::Object(object) = &mut card {
        object.insert("displayName", Value::string("someone else"));
    }
    let (code, _, err) = start_with(Value::Array(vec![card]), "tampered.json");
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("refused") && err.contains("AUTH_INVALID_SIGNATURE"),
        "{err}"
    );
    // Signed by another service of the Registry: valid, but not the Organization key.
    let foreign = org.card(WORKER, 1, OTHER_SERVICE);
    let (code, _, err) = start_with(Value::Array(vec![foreign.clone()]), "foreign.json");
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("--organization-public-key"), "{err}");
    // Signed by an Agent key (not a service): refused by the verifier.
    let by_agent = org.card(WORKER, 1, COORDINATOR);
    let (code, _, err) = start_with(Value::Array(vec![by_agent]), "by-agent.json");
    assert_eq!(code, Some(1), "{err}");
    // Duplicates, empty, not a list.
    let card = org.card(WORKER, 1, REGISTRAR);
    let (code, _, err) = start_with(Value::Array(vec![card.clone(), card.clone()]), "dup.json");
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("two cards"), "{err}");
    let (code, _, err) = start_with(Value::Array(vec![]), "empty.json");
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("no card"), "{err}");
    let (code, _, _) = start_with(Value::string("cards"), "string.json");
    assert_eq!(code, Some(1));
    // {"agentCards": [...]} is accepted; the foreign-signed card too without a trust key.
    let mut wrapped = missionweaveprotocol::json::Object::new();
    wrapped.insert("agentCards", Value::Array(vec![foreign]));
    let path = org.write("wrapped.json", &Value::Object(wrapped));
    let args = with(
        &without(&without(&dev, "--registry"), "--organization-public-key"),
        &["--registry", path.to_str().unwrap()],
    );
    let mut server = ServerProcess::start(&args, &[]).ready();
    server.signal("TERM");
    assert!(server.wait_exit(WAIT).unwrap().success());
    let _ = server.stdout_lines();
}

#[test]
fn cards_are_registered_once_and_a_newer_version_replaces_them() {
    let org = Org::new();
    let db = org.seeded_sqlite();
    let dev = org.dev_args(&db);
    let mut first = ServerProcess::start(&dev, &[]).ready();
    assert!(
        first.stderr().contains("registered=2"),
        "{}",
        first.stderr()
    );
    first.signal("TERM");
    assert!(first.wait_exit(WAIT).unwrap().success());
    // The same cards again: nothing new.
    let mut second = ServerProcess::start(&dev, &[]).ready();
    assert!(
        second.stderr().contains("registered=0 unchanged=2"),
        "{}",
        second.stderr()
    );
    second.signal("TERM");
    assert!(second.wait_exit(WAIT).unwrap().success());
    // A newer version of one card.
    let path = org.write(
        "cards-v2.json",
        &Value::Array(vec![org.card(WORKER, 2, REGISTRAR)]),
    );
    let args = with(
        &without(&dev, "--registry"),
        &["--registry", path.to_str().unwrap()],
    );
    let mut third = ServerProcess::start(&args, &[]).ready();
    assert!(
        third.stderr().contains("registered=1"),
        "{}",
        third.stderr()
    );
    third.signal("TERM");
    assert!(third.wait_exit(WAIT).unwrap().success());
    // An older one than registered: refused at start.
    let (code, _, err) = run_to_exit(&dev, &[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("card_version_not_newer"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_insecure_serves_plain_ws_on_loopback_with_a_warning() {
    let org = Org::new();
    let db = org.seeded_sqlite();
    let args = with(&org.base_args(&db), &["--allow-insecure"]);
    let server = ServerProcess::start(&args, &[]).ready();
    assert!(server.url.starts_with("ws://127.0.0.1:"), "{}", server.url);
    assert!(server.stderr().contains("WARNING"), "{}", server.stderr());
    let (status, _) = http_get(&server.url, None, "/healthz").await;
    assert_eq!(status, "HTTP/1.1 200 OK");
    let mut agent = Agent::connect(&server.url, None, &org, WORKER).await;
    agent.subscribe(&[(GROUP, 0)]).await;
    agent.wait_event(GROUP, 1).await;
}

#[test]
fn one_server_per_sqlite_file() {
    let org = Org::new();
    let db = org.seeded_sqlite();
    let _first = ServerProcess::start(&org.dev_args(&db), &[]).ready();
    let mut args = org.dev_args(&db);
    args = with(
        &without(&args, "--dev-cert"),
        &["--dev-cert", org.path("second.pem").to_str().unwrap()],
    );
    let (code, _, err) = run_to_exit(&args, &[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("another server process"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_and_sigint_close_connections_with_1001_and_exit_0() {
    for signal in ["TERM", "INT"] {
        let org = Org::new();
        let mut server = org.dev_server();
        let cert = org.path("dev-cert.pem");
        let mut agent = Agent::connect(&server.url, Some(&cert), &org, WORKER).await;
        agent.subscribe(&[(GROUP, 0)]).await;
        agent.wait_event(GROUP, 1).await;
        let mut planner = Agent::connect(&server.url, Some(&cert), &org, COORDINATOR).await;
        planner
            .post_accepted(&org, GROUP, "before-shutdown", "x")
            .await;
        server.signal(signal);
        // Everything before the close, then 1001.
        let code = loop {
            match agent.read().await {
                Read::Event(_) => {}
                Read::Closed(code) => break code,
            }
        };
        assert_eq!(code, Some(1001), "{signal}");
        match planner.read().await {
            Read::Closed(code) => assert_eq!(code, Some(1001)),
            Read::Event(_) => match planner.read().await {
                Read::Closed(code) => assert_eq!(code, Some(1001)),
                other => panic!("{other:?}"),
            },
        }
        let status = server.wait_exit(WAIT).expect("the server did not exit");
        assert_eq!(status.code(), Some(0), "{signal}: {}", server.stderr());
        // It no longer listens.
        assert!(std::net::TcpStream::connect(server.addr()).is_err());
    }
}

/// `--app-dir`: the page's files under `/app/` with their types, the generated
/// `/app/config.json`, nothing outside the directory; a directory that does not exist is a flag
/// problem (exit 2).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn app_dir_serves_the_page_files_and_nothing_outside() {
    let org = Org::new();
    let db = org.seeded_sqlite();
    let dir = tempfile::tempdir().unwrap();
    let package = dir.path().join("package");
    std::fs::create_dir_all(package.join("page")).unwrap();
    std::fs::write(
        package.join("page/approve.html"),
        "<!doctype html><title>t</title>",
    )
    .unwrap();
    std::fs::write(dir.path().join("secret.json"), r#"{"secret": true}"#).unwrap();
    let app = package.to_str().unwrap();
    let (code, _, err) = run_to_exit(
        &with(
            &org.base_args(&db),
            &["--allow-insecure", "--app-dir", "/nonexistent/mwp-app"],
        ),
        &[],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--app-dir"), "{err}");
    let args = with(&org.base_args(&db), &["--allow-insecure", "--app-dir", app]);
    let server = ServerProcess::start(&args, &[]).ready();
    let (status, body) = http_get(&server.url, None, "/app/page/approve.html").await;
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(body.starts_with("<!doctype html>"), "{body}");
    let (status, body) = http_get(&server.url, None, "/app/config.json").await;
    assert_eq!(status, "HTTP/1.1 200 OK");
    let config = missionweaveprotocol::json::parse(body.as_bytes()).unwrap();
    assert_eq!(
        config.get("websocketPath").and_then(Value::as_str),
        Some("/ws")
    );
    assert!(config.get("registry").is_some());
    for path in [
        "/app/../secret.json",
        "/app/%2e%2e/secret.json",
        "/app/page/..%2f..%2fsecret.json",
        "/app/page",
    ] {
        let (status, _) = http_get(&server.url, None, path).await;
        assert_eq!(status, "HTTP/1.1 404 Not Found", "{path}");
    }
    let (status, _) = http_get(&server.url, None, "/app/").await;
    assert_eq!(status, "HTTP/1.1 302 Found");
    // Without --app-dir nothing is served there.
    let other = Org::new();
    let plain_args = with(
        &other.base_args(&other.seeded_sqlite()),
        &["--allow-insecure"],
    );
    let plain = ServerProcess::start(&plain_args, &[]).ready();
    let (status, _) = http_get(&plain.url, None, "/app/page/approve.html").await;
    assert_eq!(status, "HTTP/1.1 404 Not Found");
}
