//! Two server processes on one PostgreSQL database (`MWP_POSTGRES_URL`, or the private cluster
//! of `scripts/pg-cluster.sh`; a fresh database per test): an Event committed through process A
//! reaches a subscriber of process B through `NOTIFY mwp_group_head` (B's head poll is set to
//! ten minutes, so only the notification can bring it); a commit that sends no notification
//! reaches subscribers through the head poll; after `kill -9` of one process the other keeps
//! serving.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;

fn server(org: &Org, url: &str, name: &str, extra: &[&str]) -> ServerProcess {
    ServerProcess::start(&org.named_dev_args(url, name, extra), &[]).ready()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_committed_on_a_reaches_a_subscriber_of_b_and_b_survives_kill_9_of_a() {
    let org = Org::new();
    let database = FreshDatabase::new();
    let url = database.url();
    org.seed(&url);
    // Both share the session secret, as one deployment's processes do.
    let secret = ["--session-secret", "one-deployment-shares-this-secret-0123"];
    let mut a = server(&org, &url, "a", &secret);
    let b_extra = [secret[0], secret[1], "--head-poll-ms", "600000"];
    let b = server(&org, &url, "b", &b_extra);
    let (a_cert, b_cert) = (org.path("a.pem"), org.path("b.pem"));

    // A subscriber on B.
    let mut worker = Agent::connect(&b.url, Some(&b_cert), &org, WORKER).await;
    worker.subscribe(&[(GROUP, 0), (OTHER_GROUP, 0)]).await;
    worker.wait_event(GROUP, 1).await;
    // Wait until B listens (its LISTEN connection is up).
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let (_, body) = http_get(&b.url, Some(&b_cert), "/metrics").await;
        if metric(&body, "mwp_listen_connected") == Some(1.0) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "B never listened:\n{}",
            b.stderr()
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }

    // A Command through A: the Event reaches the subscriber on B (by NOTIFY only).
    let mut planner = Agent::connect(&a.url, Some(&a_cert), &org, COORDINATOR).await;
    let (sequence, _) = planner.post_accepted(&org, GROUP, "pg-1", "via A").await;
    let events = worker.wait_event(GROUP, sequence).await;
    assert!(delivered(&events).contains(&(GROUP.to_owned(), sequence)));
    let (_, a_metrics) = http_get(&a.url, Some(&a_cert), "/metrics").await;
    assert!(
        metric(&a_metrics, "mwp_notify_sent_total").unwrap() >= 1.0,
        "{a_metrics}"
    );
    let (_, b_metrics) = http_get(&b.url, Some(&b_cert), "/metrics").await;
    assert!(
        metric(&b_metrics, "mwp_notify_received_total").unwrap() >= 1.0,
        "{b_metrics}"
    );

    // A commit that notifies nobody (another Core on the database): A's subscribers get it
    // from the head poll.
    let mut watcher = Agent::connect(&a.url, Some(&a_cert), &org, WORKER).await;
    watcher.subscribe(&[(OTHER_GROUP, 0)]).await;
    watcher.wait_event(OTHER_GROUP, 1).await;
    let silent = off_runtime(|| {
        let store = missionweaveprotocol_store_open::open(
            &missionweaveprotocol_store_open::StoreUrl::parse(&url).unwrap(),
        )
        .unwrap();
        let core = missionweaveprotocol_engine::config::CoreConfig::new(
            &missionweaveprotocol::Principal::new(
                missionweaveprotocol::PrincipalType::Service,
                AUTHORITY,
            ),
        )
        .build(
            store,
            std::sync::Arc::clone(&org.registry),
            org.authority_key().clone(),
            Box::new(missionweaveprotocol_host::OsRandom),
        )
        .unwrap();
        let (bytes, _) = org.command(
            OTHER_GROUP,
            "message.post",
            OWNER,
            0,
            &Org::post_payload("pg-silent", OTHER_GROUP, "no notification"),
        );
        core.perform_bytes(&bytes, now()).unwrap().events[0].sequence
    });
    watcher.wait_event(OTHER_GROUP, silent).await;

    // kill -9 A: B keeps serving.
    a.child.kill().unwrap();
    a.child.wait().unwrap();
    let mut planner = Agent::connect(&b.url, Some(&b_cert), &org, COORDINATOR).await;
    let (after_kill, _) = planner.post_accepted(&org, GROUP, "pg-2", "via B").await;
    worker.wait_event(GROUP, after_kill).await;
    let (status, _) = http_get(&b.url, Some(&b_cert), "/healthz").await;
    assert_eq!(status, "HTTP/1.1 200 OK");
}
