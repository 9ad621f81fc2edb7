//! Fault tests with real processes: `kill -9` of a server process while its clients stream,
//! and their resumption elsewhere (§16: resume from `afterSequence`; catch-up by sequence is
//! the truth). Checked every round: the subscriber's log of the Group is gap-free and in order
//! (every sequence from 1 to the head exactly once, one Event ID per sequence), and every
//! Command the sender saw accepted (its Event received) is in that log at its sequence —
//! no acknowledged Command is lost. A Command in flight at the kill may or may not have
//! committed; if it did, it is in the log like any other Event.
//!
//! - three processes on one PostgreSQL database, 20 rounds: each round kills the process both
//!   clients use, they resume on another one, the killed process is started again;
//! - one process on SQLite, 5 rounds: killed and started again on the same file.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use futures_util::{SinkExt, StreamExt};
use missionweaveprotocol::json::Value;
use missionweaveprotocol::{Principal, PrincipalType};
use missionweaveprotocol_gateway::client::{ClientConfig, Session, SessionEvent};
use missionweaveprotocol_gateway::frames::SubscribeGroup;
use missionweaveprotocol_host::OsRandom;
use rustls::pki_types::ServerName;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;

/// Commands each round sends and awaits before the kill.
const ACCEPTED_PER_ROUND: usize = 4;
/// Commands sent without waiting, then the kill.
const IN_FLIGHT_AT_KILL: usize = 3;
/// How long a read may wait on a live connection.
const READ_WAIT: Duration = Duration::from_secs(60);

/// A connection that tolerates its server dying: every I/O failure is `None`.
struct Link {
    ws: Ws,
    session: Session,
}

async fn try_ws(url: &str, cert: &Path) -> Option<Ws> {
    let addr = url.split("://").nth(1)?.split('/').next()?.to_owned();
    let tcp = TcpStream::connect(&addr).await.ok()?;
    let config = client_tls(cert, &[&rustls::version::TLS13]);
    let tls = tokio_rustls::TlsConnector::from(config)
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .ok()?;
    let io: Box<dyn Io> = Box::new(tls);
    let (ws, _) = tokio_tungstenite::client_async(format!("ws://{addr}/ws"), io)
        .await
        .ok()?;
    Some(ws)
}

impl Link {
    /// Connects and authenticates `agent` (a new Session Epoch); `None` if the server is gone.
    async fn open(url: &str, cert: &Path, org: &Org, agent: &str) -> Option<Self> {
        let ws = try_ws(url, cert).await?;
        let config = ClientConfig::new(
            agent,
            Arc::clone(&org.registry),
            Principal::new(PrincipalType::Service, AUTHORITY),
        );
        let session =
            Session::new(config, Arc::new(org.key(agent).clone()), Box::new(OsRandom)).unwrap();
        let mut link = Self { ws, session };
        link.session.start(now()).unwrap();
        link.flush().await?;
        match link.next().await? {
            SessionEvent::Authenticated { .. } => Some(link),
            other => panic!("{agent}: expected Authenticated, got {other:?}"),
        }
    }

    async fn flush(&mut self) -> Option<()> {
        while let Some(bytes) = self.session.poll_output() {
            self.ws
                .send(Message::text(String::from_utf8(bytes).unwrap()))
                .await
                .ok()?;
        }
        Some(())
    }

    /// The next thing the session reports; `None` once the connection is gone.
    async fn next(&mut self) -> Option<SessionEvent> {
        loop {
            if let Some(event) = self.session.poll_event() {
                return Some(event);
            }
            let message = tokio::time::timeout(READ_WAIT, self.ws.next())
                .await
                .expect("nothing received in time from a live connection");
            match message {
                Some(Ok(Message::Text(text))) => {
                    self.session.on_text(text.as_bytes(), now()).ok()?;
                    self.flush().await?;
                }
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return None,
                Some(Ok(_)) => {}
            }
        }
    }

    fn epoch(&self) -> u64 {
        self.session.session_epoch().unwrap()
    }
}

/// The subscriber's durable state: its Cursor and the log it applied in order.
#[derive(Default)]
struct Log {
    /// sequence → (Event ID, the Action ID of its cause).
    entries: BTreeMap<u64, (String, Option<String>)>,
}

impl Log {
    fn cursor(&self) -> u64 {
        self.entries.keys().next_back().copied().unwrap_or(0)
    }

    /// Applies an in-order Event (a duplicate must be the same Event).
    fn apply(&mut self, sequence: u64, event_id: &str, document: &Value) {
        let cause = document
            .pointer("/cause/id")
            .and_then(Value::as_str)
            .map(str::to_owned);
        if let Some((known, _)) = self.entries.get(&sequence) {
            assert_eq!(known, event_id, "two Events at sequence {sequence}");
            return;
        }
        assert_eq!(sequence, self.cursor() + 1, "a gap before {sequence}");
        self.entries.insert(sequence, (event_id.to_owned(), cause));
    }
}

/// Subscribes `link` to `GROUP` from `log`'s Cursor and applies Events until `until`.
async fn catch_up(link: &mut Link, log: &mut Log, until: u64) -> Option<()> {
    while log.cursor() < until {
        match link.next().await? {
            SessionEvent::Event(event) if event.group_id.as_deref() == Some(GROUP) => {
                assert!(
                    event.in_order,
                    "an unfiltered subscription delivers in order"
                );
                log.apply(event.sequence, &event.event_id, &event.document);
            }
            SessionEvent::Error(error) => panic!("subscriber: {error:?}"),
            _ => {}
        }
    }
    Some(())
}

async fn subscribe(link: &mut Link, log: &Log) -> Option<()> {
    let group = SubscribeGroup {
        group_id: GROUP.to_owned(),
        after_sequence: log.cursor(),
        attention: None,
    };
    link.session.subscribe(&[group], now()).unwrap();
    link.flush().await
}

/// Sends one `message.post` signed for `link`'s session; its Action ID.
async fn send(link: &mut Link, org: &Org, id: &str) -> Option<String> {
    let (bytes, action) = org.command(
        GROUP,
        "message.post",
        COORDINATOR,
        link.epoch(),
        &Org::post_payload(id, GROUP, "streamed"),
    );
    link.session.send_command(&bytes, now()).unwrap();
    link.flush().await?;
    Some(action)
}

/// Waits for `action`'s acceptance on the sender: its sequence.
async fn accepted(link: &mut Link, action: &str, record: &mut Vec<(String, u64)>) -> Option<u64> {
    loop {
        match link.next().await? {
            SessionEvent::CommandAccepted {
                ticket, sequence, ..
            } => {
                record.push((ticket.action_id.clone(), sequence));
                if ticket.action_id == action {
                    return Some(sequence);
                }
            }
            SessionEvent::CommandRefused { error, .. } => panic!("refused: {error:?}"),
            _ => {}
        }
    }
}

/// The checks of a round: the log is gap-free from 1 (by construction of `Log::apply`, and
/// here again) and holds every accepted Command at its sequence.
fn check(log: &Log, accepted: &[(String, u64)], round: usize) {
    let sequences: Vec<u64> = log.entries.keys().copied().collect();
    let expected: Vec<u64> = (1..=log.cursor()).collect();
    assert_eq!(sequences, expected, "round {round}: the log has a gap");
    for (action, sequence) in accepted {
        let entry = log.entries.get(sequence);
        assert_eq!(
            entry.and_then(|(_, cause)| cause.as_deref()),
            Some(action.as_str()),
            "round {round}: the accepted Command {action} is not at sequence {sequence}"
        );
    }
}

/// Where the servers of a scenario run and how one is started again.
struct Cluster {
    servers: Vec<Option<ServerProcess>>,
    args: Vec<Vec<String>>,
    certs: Vec<PathBuf>,
}

impl Cluster {
    fn start(args: Vec<Vec<String>>, certs: Vec<PathBuf>) -> Self {
        let servers = args
            .iter()
            .map(|a| Some(ServerProcess::start(a, &[]).ready()))
            .collect();
        Self {
            servers,
            args,
            certs,
        }
    }

    fn url(&self, i: usize) -> String {
        self.servers[i].as_ref().unwrap().url.clone()
    }

    fn kill_9(&mut self, i: usize) {
        let mut server = self.servers[i].take().unwrap();
        server.signal("KILL");
        let status = server.wait_exit(WAIT).expect("not dead after kill -9");
        assert!(!status.success());
    }

    fn restart(&mut self, i: usize) {
        self.servers[i] = Some(ServerProcess::start(&self.args[i], &[]).ready());
    }
}

/// `rounds` rounds over `cluster`: the sender and the subscriber use server `victim(round)`,
/// which is killed while Commands are in flight; they resume on `resume(round)`.
async fn rounds(
    org: &Org,
    cluster: &mut Cluster,
    rounds: usize,
    victim: impl Fn(usize) -> usize,
    resume: impl Fn(usize) -> usize,
) {
    let mut log = Log::default();
    let mut all_accepted: Vec<(String, u64)> = Vec::new();
    let mut in_flight_committed = 0;
    for round in 0..rounds {
        let v = victim(round);
        let (url, cert) = (cluster.url(v), cluster.certs[v].clone());
        let mut sender = Link::open(&url, &cert, org, COORDINATOR).await.unwrap();
        let mut subscriber = Link::open(&url, &cert, org, WORKER).await.unwrap();
        subscribe(&mut subscriber, &log).await.unwrap();
        // Stream: Commands awaited (acknowledged), the subscriber following.
        let mut head = 0;
        for i in 0..ACCEPTED_PER_ROUND {
            let action = send(&mut sender, org, &format!("r{round}-a{i}"))
                .await
                .unwrap();
            head = accepted(&mut sender, &action, &mut all_accepted)
                .await
                .unwrap();
        }
        catch_up(&mut subscriber, &mut log, head).await.unwrap();
        // More Commands without waiting, then kill -9 while they are in flight.
        let mut pending = Vec::new();
        for i in 0..IN_FLIGHT_AT_KILL {
            if let Some(action) = send(&mut sender, org, &format!("r{round}-f{i}")).await {
                pending.push(action);
            }
        }
        cluster.kill_9(v);
        // The connections end (whatever they still delivered counts).
        while let Some(event) = sender.next().await {
            if let SessionEvent::CommandAccepted {
                ticket, sequence, ..
            } = event
            {
                all_accepted.push((ticket.action_id.clone(), sequence));
            }
        }
        while let Some(event) = subscriber.next().await {
            if let SessionEvent::Event(e) = event
                && e.group_id.as_deref() == Some(GROUP)
            {
                log.apply(e.sequence, &e.event_id, &e.document);
            }
        }
        // Resume elsewhere: a new session (a new Session Epoch), from the Cursor.
        let r = resume(round);
        if cluster.servers[r].is_none() {
            cluster.restart(r);
        }
        let (url, cert) = (cluster.url(r), cluster.certs[r].clone());
        let mut subscriber = Link::open(&url, &cert, org, WORKER).await.unwrap();
        subscribe(&mut subscriber, &log).await.unwrap();
        let mut sender = Link::open(&url, &cert, org, COORDINATOR).await.unwrap();
        let action = send(&mut sender, org, &format!("r{round}-resumed"))
            .await
            .unwrap();
        let head = accepted(&mut sender, &action, &mut all_accepted)
            .await
            .unwrap();
        catch_up(&mut subscriber, &mut log, head).await.unwrap();
        check(&log, &all_accepted, round);
        in_flight_committed += pending
            .iter()
            .filter(|a| {
                log.entries
                    .values()
                    .any(|(_, cause)| cause.as_deref() == Some(a.as_str()))
            })
            .count();
        if cluster.servers[v].is_none() {
            cluster.restart(v);
        }
    }
    eprintln!(
        "{rounds} rounds: {} Events in order, {} Commands acknowledged, {} of {} in flight at a kill committed",
        log.cursor(),
        all_accepted.len(),
        in_flight_committed,
        rounds * IN_FLIGHT_AT_KILL
    );
    assert!(all_accepted.len() >= rounds * (ACCEPTED_PER_ROUND + 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_of_one_of_three_processes_on_postgresql_loses_nothing_acknowledged() {
    let org = Org::new();
    let database = FreshDatabase::new();
    let url = database.url();
    org.seed(&url);
    let secret = ["--session-secret", "one-deployment-shares-this-secret-0123"];
    let names = ["p0", "p1", "p2"];
    let args = names
        .iter()
        .map(|n| org.named_dev_args(&url, n, &secret))
        .collect();
    let certs = names
        .iter()
        .map(|n| org.path(&format!("{n}.pem")))
        .collect();
    let mut cluster = Cluster::start(args, certs);
    // Round r kills process r % 3 and resumes on the next one.
    rounds(&org, &mut cluster, 20, |r| r % 3, |r| (r + 1) % 3).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_and_restart_of_a_single_server_on_sqlite_loses_nothing_acknowledged() {
    let org = Org::new();
    let url = org.seeded_sqlite();
    let args = vec![org.named_dev_args(&url, "single", &[])];
    let certs = vec![org.path("single.pem")];
    let mut cluster = Cluster::start(args, certs);
    // The only process: killed, started again on the same file, resumed on.
    rounds(&org, &mut cluster, 5, |_| 0, |_| 0).await;
}
