//! Property tests: random and mutated frames fed to the server machine (unauthenticated and
//! authenticated, over a real Core) never panic; every frame it sends is schema-valid; an input
//! that is not a valid frame is always answered by a typed ERROR (and a close only after a
//! fatal one); the queue stays bounded. The client machine never panics on random input.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::OnceLock;

use common::*;
use missionweaveprotocol::json::Value;
use missionweaveprotocol::wire;
use missionweaveprotocol_gateway::frames;
use missionweaveprotocol_gateway::server::{Connection, Output};
use proptest::prelude::*;

fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let world = World::new();
        world.missions();
        world.owner_posts(GROUP, "seed", &[COORDINATOR]);
        world
    })
}

/// Valid frames of every type a client sends (and two it should not).
fn seeds() -> &'static Vec<Vec<u8>> {
    static SEEDS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let world = world();
        let (command, _) = world.command_in(
            GROUP,
            "message.post",
            COORDINATOR,
            1,
            &World::post_payload("prop", MAIN, &[]),
        );
        let event = {
            let record = world.store_event(GROUP, 1);
            frames::event("urn:x:e", &record).unwrap()
        };
        vec![
            frames::hello_client_init(
                "urn:x:1",
                COORDINATOR,
                "urn:missionweaveprotocol:key:23",
                "bm9uY2U",
                &["0.1"],
            )
            .unwrap(),
            frames::hello_client_response(
                "urn:x:2",
                COORDINATOR,
                "urn:missionweaveprotocol:key:23",
                "bm9uY2U",
                "c2VydmVy",
                "c2lnbmF0dXJl",
            )
            .unwrap(),
            frames::subscribe(
                "urn:x:3",
                "urn:x:s",
                &[frames::SubscribeGroup {
                    group_id: GROUP.into(),
                    after_sequence: 0,
                    attention: Some(frames::Attention {
                        event_kinds: Some(vec!["message.posted".into()]),
                        mentions_only: Some(true),
                        ..frames::Attention::default()
                    }),
                }],
            )
            .unwrap(),
            frames::command("urn:x:4", &command).unwrap(),
            frames::ack(
                "urn:x:5",
                &[frames::Acknowledgement {
                    group_id: GROUP,
                    sequence: 1,
                }],
                NOW_TEXT,
            )
            .unwrap(),
            frames::ping("urn:x:6", "bm9uY2U", None, NOW_TEXT, None).unwrap(),
            frames::error(
                "urn:x:7",
                &frames::ErrorBody::new(missionweaveprotocol::WireCode::Backpressure, "slow"),
                NOW_TEXT,
            )
            .unwrap(),
            event,
        ]
    })
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(proptest::sample::Index, u8),
    Truncate(proptest::sample::Index),
    Insert(proptest::sample::Index, Vec<u8>),
    Replace(proptest::sample::Index, proptest::sample::Index, Vec<u8>),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let snippet = prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..8),
        prop_oneof![
            Just(b"null".to_vec()),
            Just(b"-1".to_vec()),
            Just(b"1e400".to_vec()),
            Just(b"\"\\ud800\"".to_vec()),
            Just(b"{}".to_vec()),
            Just(b"[]".to_vec()),
            Just(b"\"urn:x:g\"".to_vec()),
            Just(b"9007199254740993".to_vec()),
            Just(b",\"x\":1".to_vec()),
        ],
    ];
    prop_oneof![
        (any::<proptest::sample::Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        any::<proptest::sample::Index>().prop_map(Mutation::Truncate),
        (any::<proptest::sample::Index>(), snippet.clone())
            .prop_map(|(i, s)| Mutation::Insert(i, s)),
        (
            any::<proptest::sample::Index>(),
            any::<proptest::sample::Index>(),
            snippet
        )
            .prop_map(|(i, j, s)| Mutation::Replace(i, j, s)),
    ]
}

fn mutate(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        let len = bytes.len().max(1);
        match m {
            Mutation::Flip(i, b) => {
                if !bytes.is_empty() {
                    let at = i.index(len);
                    bytes[at] ^= b | 1;
                }
            }
            Mutation::Truncate(i) => bytes.truncate(i.index(len)),
            Mutation::Insert(i, s) => {
                let at = i.index(bytes.len() + 1);
                bytes.splice(at..at, s.iter().copied());
            }
            Mutation::Replace(i, j, s) => {
                let a = i.index(bytes.len() + 1);
                let b = (a + j.index(16)).min(bytes.len());
                bytes.splice(a..b, s.iter().copied());
            }
        }
    }
    bytes
}

fn input() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..256),
        (0..8usize, proptest::collection::vec(mutation(), 0..4))
            .prop_map(|(seed, mutations)| mutate(seeds()[seed].clone(), &mutations)),
    ]
}

/// Feeds `bytes`, then checks every output.
fn feed_and_check(server: &mut Connection, bytes: &[u8]) -> Result<(), TestCaseError> {
    let valid = wire::parse_received_frame(bytes).is_ok();
    server.on_text(bytes, NOW);
    let mut errors = 0;
    let mut fatal = false;
    let mut closed = false;
    let mut frames_out = 0usize;
    while let Some(output) = server.poll_output(NOW) {
        match output {
            Output::Frame(frame) => {
                prop_assert!(!closed, "nothing after the close");
                let parsed = wire::parse_frame(&frame);
                prop_assert!(
                    parsed.is_ok(),
                    "an output frame fails the schema: {}",
                    String::from_utf8_lossy(&frame)
                );
                let value = parsed.unwrap().value;
                if value.get("frameType").and_then(Value::as_str) == Some("ERROR") {
                    errors += 1;
                    fatal |= value.pointer("/error/fatal") == Some(&Value::Bool(true));
                }
                frames_out += 1;
                prop_assert!(frames_out < 10_000, "unbounded output");
            }
            Output::Close(_) => {
                prop_assert!(fatal, "a close follows a fatal ERROR");
                closed = true;
            }
        }
    }
    if !valid && !server.is_closed() {
        prop_assert!(
            errors >= 1,
            "an invalid input is answered by an ERROR: {}",
            String::from_utf8_lossy(bytes)
        );
    }
    if !valid && !bytes.is_empty() && closed {
        prop_assert!(errors == 1);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_unauthenticated_server_answers_everything_typed(inputs in proptest::collection::vec(input(), 1..4)) {
        let mut server = world().connection();
        for bytes in inputs {
            feed_and_check(&mut server, &bytes)?;
        }
    }

    #[test]
    fn the_authenticated_server_answers_everything_typed(inputs in proptest::collection::vec(input(), 1..4)) {
        let mut pair = world().pair(COORDINATOR);
        for bytes in inputs {
            feed_and_check(&mut pair.server, &bytes)?;
        }
    }

    #[test]
    fn the_client_never_panics(inputs in proptest::collection::vec(input(), 1..4)) {
        let mut client = world().client(COORDINATOR);
        client.start(NOW).unwrap();
        for bytes in inputs {
            let _ = client.on_text(&bytes, NOW);
            while client.poll_event().is_some() {}
            while let Some(frame) = client.poll_output() {
                prop_assert!(wire::parse_frame(&frame).is_ok() || wire::parse_received_frame(&frame).is_ok());
            }
        }
    }
}
