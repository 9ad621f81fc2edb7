//! Every §19 code the gateway produces itself, each with a positive case (the code, with
//! `retryable` from the vocabulary) and a negative one (the corrected request passes), and the
//! Core's refusals relayed with `retryable` safe only when both the vocabulary and the Core say
//! so — including `INTERNAL_ERROR` from a failing Core, which never closes the connection.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use common::*;
use missionweaveprotocol::json::Value;
use missionweaveprotocol::{Fields, Principal, WireCode};
use missionweaveprotocol_agent::auth::{AgentKeyRegistry, SessionAuthority, SessionConfig};
use missionweaveprotocol_engine::Performed;
use missionweaveprotocol_engine::ingress::VerifiedCommand;
use missionweaveprotocol_engine::service::CoreError;
use missionweaveprotocol_gateway::frames::{self, SubscribeGroup};
use missionweaveprotocol_gateway::server::{
    CoreGateway, Gateway, GatewayCore, GroupPage, Limits, OpenedSession, Visibility,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The first answer of the server to `frame` on an authenticated connection of `agent`.
fn first_answer(pair: &mut Pair, frame: &[u8]) -> Option<Value> {
    pair.server.on_text(frame, NOW);
    drain(&mut pair.server, NOW).0.into_iter().next()
}

fn subscribe(group: &str, after: u64) -> Vec<u8> {
    frames::subscribe(
        "urn:x:sub",
        "urn:x:s",
        &[SubscribeGroup {
            group_id: group.into(),
            after_sequence: after,
            attention: None,
        }],
    )
    .unwrap()
}

fn assert_code(frame: &Value, code_text: &str) {
    assert_eq!(code(frame), code_text);
    let code = WireCode::parse(code_text).unwrap();
    assert_eq!(
        frame.pointer("/error/retryable"),
        Some(&Value::Bool(code.retryable())),
        "{code_text}: retryable is the vocabulary's"
    );
}

#[test]
fn each_gateway_code_positive_and_negative() {
    let world = World::with_limits(Limits {
        max_groups_per_subscribe: 1,
        ..Limits::default()
    });
    world.missions();
    let mut pair = world.pair(COORDINATOR);
    let head = world.head(GROUP);

    // GROUP_NOT_FOUND / a visible Group.
    assert_code(
        &first_answer(&mut pair, &subscribe(ABSENT_GROUP, 0)).unwrap(),
        "GROUP_NOT_FOUND",
    );
    assert_eq!(
        text(
            &first_answer(&mut pair, &subscribe(GROUP, head - 1)).unwrap(),
            "/frameType"
        ),
        "EVENT"
    );
    // PROTOCOL_VIOLATION (a Cursor after the head) / at the head.
    assert_code(
        &first_answer(&mut pair, &subscribe(GROUP, head + 1)).unwrap(),
        "PROTOCOL_VIOLATION",
    );
    assert!(first_answer(&mut pair, &subscribe(GROUP, head)).is_none());
    // RATE_LIMITED (two Groups in one SUBSCRIBE, limit 1) / one.
    let two = frames::subscribe(
        "urn:x:two",
        "urn:x:s",
        &[
            SubscribeGroup {
                group_id: GROUP.into(),
                after_sequence: head,
                attention: None,
            },
            SubscribeGroup {
                group_id: OTHER_GROUP.into(),
                after_sequence: 0,
                attention: None,
            },
        ],
    )
    .unwrap();
    assert_code(&first_answer(&mut pair, &two).unwrap(), "RATE_LIMITED");
    // SCHEMA_VALIDATION_FAILED (a PING without sentAt) / a PING.
    let bad_ping =
        br#"{"protocolVersion":"0.1","frameId":"urn:x:p","frameType":"PING","nonce":"bm9uY2U"}"#;
    assert_code(
        &first_answer(&mut pair, bad_ping).unwrap(),
        "SCHEMA_VALIDATION_FAILED",
    );
    let ping = frames::ping("urn:x:p", "bm9uY2U", None, NOW_TEXT, None).unwrap();
    assert_eq!(
        text(&first_answer(&mut pair, &ping).unwrap(), "/frameType"),
        "PING"
    );
    // AUTH_FORBIDDEN (another Agent's Command) / our own.
    let (theirs, _) = world.command_in(
        GROUP,
        "message.post",
        WORKER,
        1,
        &World::post_payload("t", MAIN, &[]),
    );
    assert_code(
        &first_answer(&mut pair, &frames::command("urn:x:c1", &theirs).unwrap()).unwrap(),
        "AUTH_FORBIDDEN",
    );
    let (ours, _) = pair.command(
        &world,
        GROUP,
        "message.post",
        &World::post_payload("o", MAIN, &[]),
    );
    assert_eq!(
        text(
            &first_answer(&mut pair, &frames::command("urn:x:c2", &ours).unwrap()).unwrap(),
            "/frameType"
        ),
        "EVENT"
    );
    // AUTH_STALE_SESSION (another epoch than the session's) / the session's: above.
    let (other_epoch, _) = world.command_in(
        GROUP,
        "message.post",
        COORDINATOR,
        9,
        &World::post_payload("e", MAIN, &[]),
    );
    assert_code(
        &first_answer(
            &mut pair,
            &frames::command("urn:x:c3", &other_epoch).unwrap(),
        )
        .unwrap(),
        "AUTH_STALE_SESSION",
    );
    // AUTH_REQUIRED, AUTH_INVALID_SIGNATURE, UNSUPPORTED_VERSION, BACKPRESSURE, CURSOR_TOO_OLD:
    // `handshake.rs`, `delivery.rs`, `subscribe.rs` (each with its passing counterpart).
    assert!(pair.server_closed.is_none());
}

/// A Core seam that fails on demand: `read_page` and `acknowledge` with `INTERNAL_ERROR`
/// (1: contended, retryable; 2: a corrupt row, not retryable; 0: healthy).
#[derive(Debug)]
struct Flaky {
    inner: CoreGateway<
        Arc<missionweaveprotocol_engine::store::InMemoryStore>,
        missionweaveprotocol::crypto::SigningKey,
    >,
    mode: AtomicU8,
}

impl Flaky {
    fn failure(&self) -> Option<CoreError> {
        let mode = self.mode.load(Ordering::Relaxed);
        if mode == 0 {
            return None;
        }
        let mut error = CoreError::invalid("contended", "the store kept changing", Fields::new());
        error.wire_code = WireCode::InternalError;
        error.retryable = mode == 1;
        if mode == 2 {
            error.reason = "store_corrupt".into();
            error.message = "a stored row failed its check".into();
        }
        Some(error)
    }
}

impl GatewayCore for Flaky {
    fn verify(&self, command: &[u8], now: UnixMillis) -> Result<VerifiedCommand, CoreError> {
        self.inner.verify(command, now)
    }
    fn perform(&self, command: &VerifiedCommand, now: UnixMillis) -> Result<Performed, CoreError> {
        self.inner.perform(command, now)
    }
    fn open_session(
        &self,
        agent_id: &str,
        action_id: &str,
        now: UnixMillis,
    ) -> Result<OpenedSession, CoreError> {
        self.inner.open_session(agent_id, action_id, now)
    }
    fn read_page(&self, group: &str, after: u64, limit: usize) -> Result<GroupPage, CoreError> {
        match self.failure() {
            Some(error) => Err(error),
            None => self.inner.read_page(group, after, limit),
        }
    }
    fn head(&self, group: &str) -> Result<u64, CoreError> {
        self.inner.head(group)
    }
    fn visibility(&self, member: &Principal, group: &str) -> Result<Option<Visibility>, CoreError> {
        self.inner.visibility(member, group)
    }
    fn acknowledge(&self, agent_id: &str, group: &str, sequence: u64) -> Result<(), CoreError> {
        match self.failure() {
            Some(error) => Err(error),
            None => self.inner.acknowledge(agent_id, group, sequence),
        }
    }
    fn acknowledged(&self, agent_id: &str, group: &str) -> Result<u64, CoreError> {
        self.inner.acknowledged(agent_id, group)
    }
    fn agent_keys(&self, agent_id: &str, key_id: &str) -> AgentKeyRegistry {
        self.inner.agent_keys(agent_id, key_id)
    }
    fn session_principal(&self, id: &str, key_id: &str) -> Option<Principal> {
        self.inner.session_principal(id, key_id)
    }
}

#[test]
fn a_failing_core_is_internal_error_retryable_only_when_the_core_says_so() {
    let world = World::new();
    world.missions();
    let flaky = Arc::new(Flaky {
        inner: CoreGateway::new(Arc::clone(&world.core)),
        mode: AtomicU8::new(0),
    });
    let sessions = SessionAuthority::new(
        b"another-test-secret-0123456789abcdef".to_vec(),
        SessionConfig::default(),
        Box::new(Counter(99)),
    )
    .unwrap();
    let gateway = Gateway::new(flaky.clone(), sessions, Limits::default()).unwrap();
    let mut pair = Pair {
        server: gateway.connect(NOW, Box::new(Counter(1))).unwrap(),
        client: world.client(COORDINATOR),
        now: NOW,
        server_closed: None,
    };
    pair.client.start(NOW).unwrap();
    pair.pump();
    pair.events();
    // Contended: retryable, with the Group; the connection stays open.
    flaky.mode.store(1, Ordering::Relaxed);
    let answer = first_answer(&mut pair, &subscribe(GROUP, 0)).unwrap();
    assert_code(&answer, "INTERNAL_ERROR");
    assert_eq!(text(&answer, "/error/groupId"), GROUP);
    assert_eq!(text(&answer, "/error/relatedFrameId"), "urn:x:sub");
    // A corrupt row: the code is usually retryable, this refusal is not.
    flaky.mode.store(2, Ordering::Relaxed);
    let ack = frames::ack(
        "urn:x:ack",
        &[frames::Acknowledgement {
            group_id: GROUP,
            sequence: 1,
        }],
        NOW_TEXT,
    )
    .unwrap();
    let answer = first_answer(&mut pair, &ack).unwrap();
    assert_eq!(code(&answer), "INTERNAL_ERROR");
    assert_eq!(
        answer.pointer("/error/retryable"),
        Some(&Value::Bool(false))
    );
    assert!(pair.server_closed.is_none());
    // Healthy again: the next wake-up delivers from the subscription's cursor.
    flaky.mode.store(0, Ordering::Relaxed);
    pair.server
        .on_group_moved(GROUP, Some(world.head(GROUP)), NOW);
    let (frames_out, _) = drain(&mut pair.server, NOW);
    assert_eq!(frames_out.len() as u64, world.head(GROUP));
    assert!(frames_out.iter().all(|f| text(f, "/frameType") == "EVENT"));
}
