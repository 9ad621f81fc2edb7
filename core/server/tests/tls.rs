//! TLS over real sockets and processes: `--dev` (a generated certificate, its path and
//! fingerprint printed, trusted by a client that loads that PEM), normal TLS with given PEM
//! files, TLS 1.2 refused, `/healthz` and `/metrics` on the same listener, plain HTTP refused
//! on the TLS port, unknown paths answered 404.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use rustls::pki_types::pem::PemObject;
use sha2::{Digest, Sha256};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dev_mode_prints_a_trustable_certificate_and_serves_tls_13() {
    let org = Org::new();
    let mut server = org.dev_server();
    assert!(server.url.starts_with("wss://127.0.0.1:"), "{}", server.url);
    let cert = org.path("dev-cert.pem");
    let lines = server.stdout_lines().join("\n");
    assert!(lines.contains(&cert.display().to_string()), "{lines}");
    // The printed fingerprint is the certificate's.
    let der = rustls::pki_types::CertificateDer::from_pem_file(&cert).unwrap();
    let expected: Vec<String> = Sha256::digest(der.as_ref())
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect();
    assert!(lines.contains(&expected.join(":")), "{lines}");
    // The PEM holds no private key.
    let pem = std::fs::read_to_string(&cert).unwrap();
    assert!(!pem.contains("PRIVATE KEY"));

    let addr = server.addr();
    let tls = tls_connect(&addr, client_tls(&cert, &[&rustls::version::TLS13]))
        .await
        .unwrap();
    assert_eq!(
        tls.get_ref().1.protocol_version(),
        Some(rustls::ProtocolVersion::TLSv1_3)
    );
    drop(tls);
    let (status, body) = http_get(&server.url, Some(&cert), "/healthz").await;
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(body, "ok\n");
    let (status, _) = http_get(&server.url, Some(&cert), "/nowhere").await;
    assert_eq!(status, "HTTP/1.1 404 Not Found");
    // A full HELLO over the dev certificate.
    let agent = Agent::connect(&server.url, Some(&cert), &org, WORKER).await;
    assert!(agent.epoch() >= 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_12_only_clients_are_refused() {
    let org = Org::new();
    let server = org.dev_server();
    let cert = org.path("dev-cert.pem");
    let result = tls_connect(
        &server.addr(),
        client_tls(&cert, &[&rustls::version::TLS12]),
    )
    .await;
    assert!(
        result.is_err(),
        "a TLS 1.2-only client must fail the handshake"
    );
    // The server keeps serving TLS 1.3 clients.
    let (status, _) = http_get(&server.url, Some(&cert), "/healthz").await;
    assert_eq!(status, "HTTP/1.1 200 OK");
    let (_, metrics) = http_get(&server.url, Some(&cert), "/metrics").await;
    assert!(
        metric(&metrics, "mwp_handshakes_failed_total").unwrap() >= 1.0,
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_http_on_the_tls_port_gets_nothing() {
    let org = Org::new();
    let server = org.dev_server();
    let plain = format!("ws://{}/ws", server.addr());
    let (status, _) = http_get(&plain, None, "/healthz").await;
    assert!(!status.starts_with("HTTP/1.1 200"), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn normal_tls_mode_serves_the_given_certificate() {
    let org = Org::new();
    let url = org.seeded_sqlite();
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let certfile = org.path("server.pem");
    let keyfile = org.path("server.key");
    std::fs::write(&certfile, certified.cert.pem()).unwrap();
    std::fs::write(&keyfile, certified.signing_key.serialize_pem()).unwrap();
    let mut args = org.base_args(&url);
    args.extend([
        "--tls-certfile".into(),
        certfile.display().to_string(),
        "--tls-keyfile".into(),
        keyfile.display().to_string(),
    ]);
    let server = ServerProcess::start(&args, &[]).ready();
    assert!(server.url.starts_with("wss://"), "{}", server.url);
    let (status, body) = http_get(&server.url, Some(&certfile), "/healthz").await;
    assert_eq!(
        (status.as_str(), body.as_str()),
        ("HTTP/1.1 200 OK", "ok\n")
    );
    let mut agent = Agent::connect(&server.url, Some(&certfile), &org, COORDINATOR).await;
    agent.subscribe(&[(GROUP, 0)]).await;
    let events = agent.wait_event(GROUP, 1).await;
    assert_eq!(delivered(&events).first(), Some(&(GROUP.to_owned(), 1)));
    // A client that does not trust this certificate fails.
    let other = org.path("other.pem");
    let stranger = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    std::fs::write(&other, stranger.cert.pem()).unwrap();
    assert!(
        tls_connect(
            &server.addr(),
            client_tls(&other, &[&rustls::version::TLS13])
        )
        .await
        .is_err()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_report_connections_commands_events_and_store_latency() {
    let org = Org::new();
    let server = org.dev_server();
    let cert = org.path("dev-cert.pem");
    let mut planner = Agent::connect(&server.url, Some(&cert), &org, COORDINATOR).await;
    planner.subscribe(&[(GROUP, 0)]).await;
    planner.wait_event(GROUP, 1).await;
    let (sequence, _) = planner
        .post_accepted(&org, GROUP, "metrics-1", "hello")
        .await;
    assert!(sequence >= 2);
    let (status, body) = http_get(&server.url, Some(&cert), "/metrics").await;
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(metric(&body, "mwp_connections_open"), Some(1.0), "{body}");
    assert_eq!(
        metric(&body, "mwp_connections_authenticated"),
        Some(1.0),
        "{body}"
    );
    assert!(
        metric(&body, "mwp_commands_received_total").unwrap() >= 1.0,
        "{body}"
    );
    assert!(
        metric(&body, "mwp_events_delivered_total").unwrap() >= 3.0,
        "{body}"
    );
    assert_eq!(metric(&body, "mwp_paused_groups"), Some(0.0), "{body}");
    assert_eq!(metric(&body, "mwp_subscriptions"), Some(1.0), "{body}");
    assert!(
        body.contains("mwp_store_latency_seconds_bucket{op=\"commit\",le=\"+Inf\"}"),
        "{body}"
    );
    assert!(
        metric(&body, "mwp_store_latency_seconds_count{op=\"commit\"}").unwrap() >= 1.0,
        "{body}"
    );
    assert!(body.contains("# TYPE mwp_commands_received_total counter"));
}
