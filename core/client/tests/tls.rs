//! The client over real TLS 1.3 WebSocket sockets on loopback, against the gateway's
//! `Connection` over a real Core (`support`): connect and authenticate (§6.3), subscribe and
//! replay (§17.2), Commands and their Events or typed refusals (§15.1, §19), Event
//! verification, deduplication and Group order, durable cursors never over a gap (§16),
//! reconnection, backoff, and TLS 1.2 refused (§17.1). No timing assertions: every wait is
//! generous and only bounds a hang.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::sync::Arc;
use std::time::Duration;

use missionweaveprotocol::WireCode;
use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json::Value;
use missionweaveprotocol_agent::replay::{AgentLocalStore, MemoryAgentStore, ReplayBatch};
use missionweaveprotocol_client::{
    Attention, Backoff, Client, ClientError, ConnectionState, EventStream, Notice, Notices,
    Subscription, TlsOptions, VerifiedEvent,
};
use support::{COORDINATOR, GROUP, OUTSIDER, TestServer, World, event_sequence, replace, within};

async fn next(stream: &mut EventStream) -> VerifiedEvent {
    within("the next Event", stream.recv())
        .await
        .expect("the stream ended")
}

/// Events from `stream` until `last` is reached; each must be the successor of the one
/// before (`from` is the sequence before the first), none twice.
async fn contiguous(stream: &mut EventStream, from: u64, last: u64) -> Vec<VerifiedEvent> {
    let mut events = Vec::new();
    let mut at = from;
    while at < last {
        let event = next(stream).await;
        assert!(event.in_order, "{event:?}");
        assert_eq!(event.sequence, at + 1, "out of order or duplicated");
        at = event.sequence;
        events.push(event);
    }
    events
}

/// The next notice matching `pick`.
async fn notice<T>(notices: &mut Notices, mut pick: impl FnMut(&Notice) -> Option<T>) -> T {
    within("a notice", async {
        loop {
            let notice = notices.recv().await.expect("notices ended");
            if let Some(found) = pick(&notice) {
                return found;
            }
        }
    })
    .await
}

fn cause(event: &VerifiedEvent) -> Option<&str> {
    event.document.pointer("/cause/id").and_then(Value::as_str)
}

fn action_of(command: &[u8]) -> String {
    let value = missionweaveprotocol::json::parse(command).unwrap();
    value
        .get("actionId")
        .and_then(Value::as_str)
        .unwrap()
        .to_owned()
}

fn store() -> Arc<MemoryAgentStore> {
    Arc::new(MemoryAgentStore::new())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connects_over_tls13_and_authenticates() {
    let world = World::new();
    let server = TestServer::start(&world).await;
    let client = Client::connect(&server.url, world.options(COORDINATOR, &server))
        .await
        .unwrap();
    let epoch = client.session_epoch().expect("authenticated");
    assert!(epoch >= 1);
    assert_eq!(
        client.state(),
        ConnectionState::Connected {
            session_epoch: epoch
        }
    );
    assert_eq!(server.accepted(), 1);
    // A second connection of the Agent opens the next epoch (§6.3), through the Core.
    let again = Client::connect(&server.url, world.options(COORDINATOR, &server))
        .await
        .unwrap();
    assert!(again.session_epoch().unwrap() > epoch);
    // The connection is live: a PING round trip (§17.3).
    within("ping", again.ping()).await.unwrap();
    again.close().await;
    client.close().await;
    assert_eq!(client.state(), ConnectionState::Closed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authentication_failures_are_typed() {
    let world = World::new();
    let server = TestServer::start(&world).await;
    // A key the Registry does not know.
    let mut options = world.options(COORDINATOR, &server);
    options.signer = Arc::new(SigningKey::from_seed(
        "urn:missionweaveprotocol:key:unknown",
        &[99; 32],
    ));
    let error = Client::connect(&server.url, options).await.unwrap_err();
    assert_eq!(
        error.code(),
        Some(WireCode::AuthInvalidSignature),
        "{error}"
    );
    assert!(matches!(error, ClientError::Handshake(_)));
    // The Agent's key ID, another secret: the signature does not verify.
    let mut options = world.options(COORDINATOR, &server);
    options.signer = Arc::new(SigningKey::from_seed(
        world.key(COORDINATOR).key_id().to_owned(),
        &[98; 32],
    ));
    let error = Client::connect(&server.url, options).await.unwrap_err();
    assert_eq!(
        error.code(),
        Some(WireCode::AuthInvalidSignature),
        "{error}"
    );
    // The right key still works on the same server.
    let client = Client::connect(&server.url, world.options(COORDINATOR, &server))
        .await
        .unwrap();
    assert!(client.session_epoch().is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls12_only_server_and_untrusted_certificates_are_refused() {
    let world = World::new();
    let old = TestServer::start_with(&world, &[&rustls::version::TLS12]).await;
    let error = Client::connect(&old.url, world.options(COORDINATOR, &old))
        .await
        .unwrap_err();
    assert!(matches!(error, ClientError::Tls(_)), "{error}");
    // A TLS 1.3 server whose certificate is not among the roots.
    let server = TestServer::start(&world).await;
    let error = Client::connect(&server.url, world.options(COORDINATOR, &old))
        .await
        .unwrap_err();
    assert!(matches!(error, ClientError::Tls(_)), "{error}");
    // No roots for wss://, and ws:// without opting in to plaintext.
    let mut options = world.options(COORDINATOR, &server);
    options.tls = TlsOptions::default();
    let error = Client::connect(&server.url, options).await.unwrap_err();
    assert_eq!(error, ClientError::NoTrustRoots);
    let plain = format!("ws://localhost:{}/", server.addr.port());
    let error = Client::connect(&plain, world.options(COORDINATOR, &server))
        .await
        .unwrap_err();
    assert_eq!(error, ClientError::PlaintextNotAllowed);
    assert!(TlsOptions::from_pem(b"not a certificate").is_err());
    assert_eq!(server.accepted(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribes_and_replays_after_sequence_and_from_the_durable_cursor() {
    let world = World::new();
    let server = TestServer::start(&world).await;
    for i in 0..3 {
        world.owner_posts(&format!("r{i}"));
    }
    let head = world.head();
    assert!(head >= 4);
    // An explicit afterSequence.
    let client = Client::connect(&server.url, world.options(COORDINATOR, &server))
        .await
        .unwrap();
    let mut events = client.events(GROUP).unwrap();
    client
        .subscribe([Subscription::after(GROUP, head - 2)])
        .await
        .unwrap();
    let replayed = contiguous(&mut events, head - 2, head).await;
    assert_eq!(replayed.len(), 2);
    // Live Events follow the replay.
    let live = world.owner_posts("live");
    server.moved(live);
    contiguous(&mut events, head, live).await;
    client.close().await;

    // From the Agent-local store's durable cursor (§16).
    let local = store();
    local
        .commit_replay(&ReplayBatch {
            agent_id: COORDINATOR,
            group_id: GROUP,
            from_cursor: 0,
            to_cursor: 1,
            events: &[],
            scheduler: None,
            snapshot_hash: None,
        })
        .unwrap();
    let options = world
        .options(COORDINATOR, &server)
        .with_store(local.clone());
    let client = Client::connect(&server.url, options).await.unwrap();
    let mut events = client.events(GROUP).unwrap();
    client.subscribe_durable(&[GROUP]).await.unwrap();
    let replayed = contiguous(&mut events, 1, live).await;
    // Processing moves the durable cursor one Event at a time.
    for event in &replayed {
        assert!(client.advance(event).await.unwrap());
        // Again: a duplicate, nothing written.
        assert!(!client.advance(event).await.unwrap());
    }
    assert_eq!(local.cursor(COORDINATOR, GROUP).unwrap(), live);
    // Each advance was acknowledged: the server's durable delivery Cursor followed (§16).
    assert_eq!(world.acknowledged(COORDINATOR, live).await, live);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_resolves_to_its_verified_event_or_a_typed_refusal() {
    let world = World::new();
    let server = TestServer::start(&world).await;
    let client = Client::connect(&server.url, world.options(COORDINATOR, &server))
        .await
        .unwrap();
    let epoch = client.session_epoch().unwrap();
    let mut events = client.events(GROUP).unwrap();
    client
        .subscribe([Subscription::after(GROUP, world.head())])
        .await
        .unwrap();
    let command = world.command("message.post", COORDINATOR, epoch, &World::post("cmd"));
    let action = action_of(&command);
    let outcome = within("send", client.send(command)).await.unwrap();
    assert!(!outcome.is_empty());
    assert_eq!(cause(&outcome[0]), Some(action.as_str()));
    assert_eq!(outcome[0].group_id.as_deref(), Some(GROUP));
    // The same Event reaches the Group stream, in order.
    let streamed = next(&mut events).await;
    assert_eq!(streamed.event_id, outcome[0].event_id);
    assert!(streamed.in_order);

    // A Command at another Session Epoch: AUTH_STALE_SESSION with its frame, nothing applied.
    let head = world.head();
    let stale = world.command(
        "message.post",
        COORDINATOR,
        epoch + 7,
        &World::post("stale"),
    );
    let error = within("send", client.send(stale)).await.unwrap_err();
    assert_eq!(error.code(), Some(WireCode::AuthStaleSession), "{error}");
    let body = error.error_body().unwrap();
    assert!(body.related_frame_id.is_some());
    assert_eq!(world.head(), head);
    // Another Agent's Command on this session: AUTH_FORBIDDEN.
    let foreign = world.command("message.post", OUTSIDER, epoch, &World::post("foreign"));
    let error = within("send", client.send(foreign)).await.unwrap_err();
    assert_eq!(error.code(), Some(WireCode::AuthForbidden), "{error}");
    // Bytes that are not a Command are refused before anything is sent.
    let error = client.send(b"{}".to_vec()).await.unwrap_err();
    assert!(matches!(error, ClientError::Session(_)), "{error}");
    assert_eq!(world.head(), head);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_with_a_bad_authority_signature_is_rejected_and_the_cursor_waits() {
    let world = World::new();
    let server = TestServer::start(&world).await;
    let local = store();
    let options = world
        .options(COORDINATOR, &server)
        .with_store(local.clone());
    let client = Client::connect(&server.url, options).await.unwrap();
    let mut notices = client.notices();
    let mut events = client.events(GROUP).unwrap();
    client.subscribe_durable(&[GROUP]).await.unwrap();
    let start = world.head();
    for event in contiguous(&mut events, 0, start).await {
        client.advance(&event).await.unwrap();
    }
    // The Event of "forged" is altered on the wire: its signature no longer matches.
    server.set_tamper(Some(Box::new(|frame: Vec<u8>| {
        vec![replace(&frame, "note forged", "note forgeD")]
    })));
    let forged = world.owner_posts("forged");
    server.moved(forged);
    let (event_id, reason) = notice(&mut notices, |n| match n {
        Notice::Rejected { event_id, reason } => Some((event_id.clone(), reason.clone())),
        _ => None,
    })
    .await;
    assert!(event_id.is_some());
    assert!(reason.contains("verify"), "{reason}");
    // Later Events wait behind the gap: nothing passes it, the durable cursor stays. (The
    // PING is answered after the later Event was written: the client has read it.)
    let after = world.owner_posts("after");
    server.moved(after);
    server.wait_sent(after).await;
    within("ping", client.ping()).await.unwrap();
    assert!(events.try_recv().is_none(), "delivered past the gap");
    assert_eq!(local.cursor(COORDINATOR, GROUP).unwrap(), start);
    server.set_tamper(None);
    // The socket drops; the client resumes from the durable cursor and the genuine Events
    // arrive in order, the forged position included, each once.
    server.drop_connections();
    let resumed = contiguous(&mut events, start, after).await;
    assert_eq!(resumed.len() as u64, after - start);
    for event in &resumed {
        assert!(client.advance(event).await.unwrap());
    }
    assert_eq!(local.cursor(COORDINATOR, GROUP).unwrap(), after);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_signed_by_another_key_is_rejected() {
    use missionweaveprotocol::{SignedDocumentCodec, SignedDocumentKind};
    let world = World::new();
    let server = TestServer::start(&world).await;
    let client = Client::connect(&server.url, world.options(COORDINATOR, &server))
        .await
        .unwrap();
    let mut notices = client.notices();
    let mut events = client.events(GROUP).unwrap();
    let start = world.head();
    client
        .subscribe([Subscription::after(GROUP, start)])
        .await
        .unwrap();
    // The MissionOwner re-signs the Event: valid, registered, but not the Group Authority.
    let owner = world.key(support::OWNER);
    server.set_tamper(Some(Box::new(move |frame: Vec<u8>| {
        if event_sequence(&frame).is_none() {
            return vec![frame];
        }
        let value = missionweaveprotocol::json::parse(&frame).unwrap();
        let mut event = value.get("event").unwrap().clone();
        if let Value::Object(object) = &mut event {
            object.remove("signature");
            // Consistent with its signer, so the six stages pass: only the Group Authority
            // check refuses it.
            object.insert(
                "acceptedBy",
                missionweaveprotocol::json::parse(
                    format!(r#"{{"type": "human", "id": "{}"}}"#, support::OWNER).as_bytes(),
                )
                .unwrap(),
            );
        }
        let signed = SignedDocumentCodec::new()
            .sign(SignedDocumentKind::Event, &event, &owner)
            .unwrap();
        let frame_id = value.get("frameId").and_then(Value::as_str).unwrap();
        vec![missionweaveprotocol_gateway::frames::event(frame_id, &signed.bytes).unwrap()]
    })));
    let forged = world.owner_posts("resigned");
    server.moved(forged);
    let reason = notice(&mut notices, |n| match n {
        Notice::Rejected { reason, .. } => Some(reason.clone()),
        _ => None,
    })
    .await;
    assert!(reason.contains("Group Authority"), "{reason}");
    server.set_tamper(None);
    server.drop_connections();
    let resumed = contiguous(&mut events, start, forged).await;
    assert_eq!(resumed.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicate_events_are_dropped() {
    let world = World::new();
    let server = TestServer::start(&world).await;
    // Every Event is sent twice.
    server.set_tamper(Some(Box::new(|frame: Vec<u8>| {
        if event_sequence(&frame).is_some() {
            vec![frame.clone(), frame]
        } else {
            vec![frame]
        }
    })));
    let client = Client::connect(&server.url, world.options(COORDINATOR, &server))
        .await
        .unwrap();
    let mut events = client.events(GROUP).unwrap();
    client
        .subscribe([Subscription::after(GROUP, 0)])
        .await
        .unwrap();
    let head = world.head();
    contiguous(&mut events, 0, head).await;
    let mut last = head;
    for i in 0..3 {
        let next_head = world.owner_posts(&format!("dup{i}"));
        server.moved(next_head);
        // The duplicate of `last` was sent before this one: it was dropped.
        contiguous(&mut events, last, next_head).await;
        last = next_head;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gap_never_advances_the_durable_cursor() {
    let world = World::new();
    let server = TestServer::start(&world).await;
    let local = store();
    let options = world
        .options(COORDINATOR, &server)
        .with_store(local.clone());
    let client = Client::connect(&server.url, options).await.unwrap();
    let mut events = client.events(GROUP).unwrap();
    client.subscribe_durable(&[GROUP]).await.unwrap();
    let head = world.head();
    let first = world.owner_posts("g1");
    let second = world.owner_posts("g2");
    server.moved(second);
    let delivered = contiguous(&mut events, 0, second).await;
    // Skipping one: the next cannot move the durable cursor over it.
    let error = client
        .advance(&delivered[(first - 1) as usize])
        .await
        .unwrap_err();
    assert!(
        matches!(error, ClientError::Gap { cursor: 0, sequence, .. } if sequence == first),
        "{error}"
    );
    assert_eq!(local.cursor(COORDINATOR, GROUP).unwrap(), 0);
    // An acknowledgement past what was delivered is refused too.
    let error = client.acknowledge(GROUP, second + 1).await.unwrap_err();
    assert!(
        matches!(error, ClientError::AckBeyondCursor { .. }),
        "{error}"
    );
    // An Event not delivered in order never moves it.
    let mut unordered = delivered[0].clone();
    unordered.in_order = false;
    assert!(matches!(
        client.advance(&unordered).await.unwrap_err(),
        ClientError::NotInOrder { .. }
    ));
    // In order, one by one, it moves.
    for event in delivered.iter().take(head as usize) {
        assert!(client.advance(event).await.unwrap());
    }
    assert_eq!(local.cursor(COORDINATOR, GROUP).unwrap(), head);

    // A withheld Event (never sent) leaves a gap the session machine does not deliver past.
    server.set_tamper(Some(Box::new(move |frame: Vec<u8>| {
        if event_sequence(&frame) == Some(second + 1) {
            Vec::new()
        } else {
            vec![frame]
        }
    })));
    let withheld = world.owner_posts("g3");
    let beyond = world.owner_posts("g4");
    server.moved(beyond);
    server.wait_sent(beyond).await;
    within("ping", client.ping()).await.unwrap();
    assert!(events.try_recv().is_none(), "delivered past the gap");
    // Processing what was delivered: the cursor reaches the gap and stops.
    for event in delivered.iter().skip(head as usize) {
        assert!(client.advance(event).await.unwrap());
    }
    assert_eq!(local.cursor(COORDINATOR, GROUP).unwrap(), second);
    // The server's durable delivery Cursor (moved by ACK) stops there too.
    assert_eq!(world.acknowledged(COORDINATOR, second).await, second);
    // A reconnect replays from the durable cursor: the gap fills, in order.
    server.set_tamper(None);
    server.drop_connections();
    let resumed = contiguous(&mut events, second, beyond).await;
    assert_eq!(resumed[0].sequence, withheld);
    for event in &resumed {
        assert!(client.advance(event).await.unwrap());
    }
    assert_eq!(local.cursor(COORDINATOR, GROUP).unwrap(), beyond);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnects_after_the_server_drops_the_socket_without_loss_or_duplicates() {
    let world = World::new();
    let server = TestServer::start(&world).await;
    let local = store();
    let backoff = Backoff {
        initial: Duration::from_millis(20),
        max: Duration::from_millis(200),
        ..Backoff::default()
    };
    let options = world
        .options(COORDINATOR, &server)
        .with_store(local.clone())
        .with_backoff(backoff);
    let client = Client::connect(&server.url, options).await.unwrap();
    let mut notices = client.notices();
    let mut events = client.events(GROUP).unwrap();
    client.subscribe_durable(&[GROUP]).await.unwrap();
    let mut at = 0;
    for round in 0..3 {
        let epoch = client.session_epoch().unwrap_or(0);
        // Some Events processed, some only delivered, some committed while disconnected.
        let head = world.owner_posts(&format!("before{round}"));
        server.moved(head);
        let delivered = contiguous(&mut events, at, head).await;
        let (processed, pending) = delivered.split_at(delivered.len() / 2);
        for event in processed {
            assert!(client.advance(event).await.unwrap());
        }
        server.drop_connections();
        notice(&mut notices, |n| {
            matches!(n, Notice::Disconnected { .. }).then_some(())
        })
        .await;
        let during = world.owner_posts(&format!("during{round}"));
        let epoch = within("reconnect", client.connected_above(epoch))
            .await
            .unwrap();
        assert!(epoch > 0);
        // What was delivered but not processed is replayed by the server and dropped as a
        // duplicate; the stream continues right after `head`.
        for event in pending {
            assert!(client.advance(event).await.unwrap());
        }
        let after = world.owner_posts(&format!("after{round}"));
        server.moved(after);
        let resumed = contiguous(&mut events, head, after).await;
        assert_eq!(resumed.first().map(|e| e.sequence), Some(head + 1));
        assert!(resumed.iter().any(|e| e.sequence == during));
        for event in &resumed {
            assert!(client.advance(event).await.unwrap());
        }
        at = after;
        assert_eq!(local.cursor(COORDINATOR, GROUP).unwrap(), after);
        assert_eq!(world.acknowledged(COORDINATOR, after).await, after);
    }
    // A Command sent after the reconnects carries the new epoch and resolves.
    let epoch = client.session_epoch().unwrap();
    let command = world.command("message.post", COORDINATOR, epoch, &World::post("last"));
    let outcome = within("send", client.send(command)).await.unwrap();
    assert_eq!(outcome[0].sequence, at + 1);
    assert!(server.accepted() >= 4);
}

#[test]
fn backoff_delays_are_bounded() {
    let backoff = Backoff {
        initial: Duration::from_millis(100),
        max: Duration::from_secs(5),
        jitter: 0.5,
        max_attempts: None,
    };
    for attempt in 1..=80 {
        let base = Duration::from_millis(100)
            .saturating_mul(1u32 << (attempt - 1).min(31))
            .min(backoff.max);
        for random in [0.0, 0.25, 0.5, 0.999_999] {
            let delay = backoff.delay(attempt, random);
            assert!(delay <= backoff.max, "{attempt}: {delay:?}");
            assert!(delay <= base, "{attempt}: {delay:?}");
            assert!(delay >= base.mul_f64(0.5), "{attempt}: {delay:?}");
        }
    }
    assert_eq!(backoff.delay(1, 0.0), Duration::from_millis(100));
    assert_eq!(backoff.delay(3, 0.0), Duration::from_millis(400));
    assert_eq!(backoff.delay(1000, 0.0), backoff.max);
    // Out-of-range inputs stay within bounds.
    let wild = Backoff {
        jitter: 7.0,
        ..backoff
    };
    assert!(wild.delay(u32::MAX, 2.0) <= wild.max);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnection_backs_off_within_bounds_and_gives_up() {
    let world = World::new();
    let server = TestServer::start(&world).await;
    let backoff = Backoff {
        initial: Duration::from_millis(10),
        max: Duration::from_millis(40),
        jitter: 0.5,
        max_attempts: Some(5),
    };
    let options = world.options(COORDINATOR, &server).with_backoff(backoff);
    let client = Client::connect(&server.url, options).await.unwrap();
    let mut notices = client.notices();
    server.stop();
    let mut delays = Vec::new();
    let mut failures = 0;
    let attempts = notice(&mut notices, |n| match n {
        Notice::Reconnecting { attempt, delay } => {
            delays.push((*attempt, *delay));
            None
        }
        Notice::ConnectFailed { .. } => {
            failures += 1;
            None
        }
        Notice::GaveUp { attempts } => Some(*attempts),
        _ => None,
    })
    .await;
    assert_eq!(attempts, 5);
    assert_eq!(failures, 5);
    assert_eq!(
        delays.iter().map(|(a, _)| *a).collect::<Vec<_>>(),
        vec![1, 2, 3, 4, 5]
    );
    for (attempt, delay) in delays {
        assert!(delay <= backoff.max, "{attempt}: {delay:?}");
    }
    within("closed", async {
        while client.state() != ConnectionState::Closed {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    let error = client.send(b"{}".to_vec()).await.unwrap_err();
    assert_eq!(error, ClientError::Closed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_command_survives_a_reconnect_when_a_resigner_is_set() {
    use missionweaveprotocol_client::EpochResigner;
    let world = World::new();
    let server = TestServer::start(&world).await;
    let options = world
        .options(COORDINATOR, &server)
        .with_resigner(Arc::new(EpochResigner::new(world.signer(COORDINATOR))))
        .with_backoff(Backoff {
            initial: Duration::from_millis(20),
            max: Duration::from_millis(200),
            ..Backoff::default()
        });
    let client = Arc::new(Client::connect(&server.url, options).await.unwrap());
    let epoch = client.session_epoch().unwrap();
    let mut events = client.events(GROUP).unwrap();
    let start = world.head();
    client
        .subscribe([Subscription::after(GROUP, start)])
        .await
        .unwrap();
    // The server withholds every frame for now: the Command is sent, its outcome unknown.
    server.set_tamper(Some(Box::new(|_frame: Vec<u8>| Vec::new())));
    let command = world.command("message.post", COORDINATOR, epoch, &World::post("inflight"));
    let action = action_of(&command);
    let sender = Arc::clone(&client);
    let pending = tokio::spawn(async move { sender.send(command).await });
    // Wait until the Core applied it (the client cannot know).
    within("applied", async {
        while world.head() == start {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    // The socket drops before anything of the outcome was sent (then frames flow again).
    server.drop_connections();
    server.set_tamper(None);
    // Re-signed at the new epoch with the same Action ID: the Core answers
    // ACTION_ID_COLLISION, the original Event arrives through the subscription, once.
    let outcome = within("the pending Command", pending).await.unwrap();
    let resumed = contiguous(&mut events, start, start + 1).await;
    assert_eq!(cause(&resumed[0]), Some(action.as_str()));
    match outcome {
        Ok(events) => assert_eq!(events[0].event_id, resumed[0].event_id),
        Err(error) => assert_eq!(error.code(), Some(WireCode::ActionIdCollision), "{error}"),
    }
    assert_eq!(world.head(), start + 1, "applied once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_the_agent_may_not_see_is_refused_like_an_absent_one() {
    let world = World::new();
    let server = TestServer::start(&world).await;
    let absent = "urn:missionweaveprotocol:group:nowhere";
    let mut refusals = Vec::new();
    for (agent, group) in [(OUTSIDER, GROUP), (OUTSIDER, absent)] {
        let client = Client::connect(&server.url, world.options(agent, &server))
            .await
            .unwrap();
        let mut notices = client.notices();
        client
            .subscribe([Subscription::after(group, 0)])
            .await
            .unwrap();
        let (refused, error) = notice(&mut notices, |n| match n {
            Notice::GroupRefused { group_id, error } => Some((group_id.clone(), error.clone())),
            _ => None,
        })
        .await;
        assert_eq!(refused, group);
        assert_eq!(error.code, WireCode::GroupNotFound);
        refusals.push(error.message);
    }
    // §17.2: the same answer for a hidden Group and an absent one.
    assert_eq!(refusals[0], refusals[1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_stream_buffer_loses_nothing() {
    let world = World::new();
    let server = TestServer::start(&world).await;
    let mut options = world.options(COORDINATOR, &server);
    // The socket is not read while the stream is full; nothing is dropped.
    options.limits.stream_capacity = 2;
    let client = Client::connect(&server.url, options).await.unwrap();
    let mut events = client.events(GROUP).unwrap();
    let start = world.head();
    client
        .subscribe([Subscription::after(GROUP, start)])
        .await
        .unwrap();
    let mut head = start;
    for i in 0..40 {
        head = world.owner_posts(&format!("b{i}"));
    }
    server.moved(head);
    server.wait_sent(head).await;
    let delivered = contiguous(&mut events, start, head).await;
    assert_eq!(delivered.len() as u64, head - start);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_consumer_that_pauses_is_not_taken_for_a_dead_server() {
    let world = World::new();
    let server = TestServer::start(&world).await;
    let mut options = world.options(COORDINATOR, &server);
    options.limits.stream_capacity = 1;
    options.limits.tick_interval = Duration::from_millis(20);
    options.limits.ping_interval = Duration::from_millis(200);
    options.limits.idle_timeout = Duration::from_secs(2);
    let client = Client::connect(&server.url, options).await.unwrap();
    let mut notices = client.notices();
    let mut events = client.events(GROUP).unwrap();
    let start = world.head();
    client
        .subscribe([Subscription::after(GROUP, start)])
        .await
        .unwrap();
    let mut head = start;
    for i in 0..5 {
        head = world.owner_posts(&format!("p{i}"));
    }
    server.moved(head);
    server.wait_sent(head).await;
    // The application reads nothing for several idle timeouts: the socket is not read, on
    // purpose, and that silence is not the server's.
    tokio::time::sleep(Duration::from_secs(5)).await;
    contiguous(&mut events, start, head).await;
    within("ping", client.ping()).await.unwrap();
    while let Some(notice) = notices.try_recv() {
        assert!(!matches!(notice, Notice::Disconnected { .. }), "{notice:?}");
    }
    assert_eq!(server.accepted(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attention_filter_changes_live_delivery_only() {
    let world = World::new();
    let server = TestServer::start(&world).await;
    world.owner_posts("before");
    let head = world.head();
    let local = store();
    let options = world
        .options(COORDINATOR, &server)
        .with_store(local.clone());
    let client = Client::connect(&server.url, options).await.unwrap();
    let mut events = client.events(GROUP).unwrap();
    let attention = Attention {
        mentions_only: Some(true),
        ..Attention::default()
    };
    client
        .subscribe([Subscription::after(GROUP, 0).with_attention(attention)])
        .await
        .unwrap();
    // Replay is never filtered (§17.2): every Event up to the head, in order.
    for event in contiguous(&mut events, 0, head).await {
        assert!(client.advance(&event).await.unwrap());
    }
    // Live: a post that does not mention the Agent is left out; one that does arrives past
    // the gap, out of order (the durable cursor cannot move over the gap, §16).
    let plain = world.owner_posts("plain");
    server.moved(plain);
    let mentioned = world.owner_posts_mentioning("hello", COORDINATOR);
    server.moved(mentioned);
    let event = next(&mut events).await;
    assert_eq!(
        event.sequence, mentioned,
        "the unmentioned post is filtered out"
    );
    assert!(!event.in_order);
    assert!(
        matches!(
            client.advance(&event).await,
            Err(ClientError::NotInOrder { sequence, .. }) if sequence == mentioned
        ),
        "never over the gap"
    );
    assert_eq!(local.cursor(COORDINATOR, GROUP).unwrap(), head);
    client.close().await;
}
