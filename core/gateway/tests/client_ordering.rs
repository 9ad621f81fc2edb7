//! The client's per-Group order (§16, digest §2.11) with injected duplicates and reordering:
//! every Event reaches the host once and in Group order, the Cursor never passes a gap, the
//! out-of-order buffer is bounded (a full buffer is reported as a gap), an Event ID seen at two
//! positions or two Events at one position are rejected, only Group Authority signatures are
//! accepted, and a reconnecting session resumes from the previous session's Cursors.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::OnceLock;

use common::*;
use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol::{SignedDocumentCodec, SignedDocumentKind};
use missionweaveprotocol_gateway::client::{Session, SessionEvent};
use missionweaveprotocol_gateway::frames::{self, SubscribeGroup};
use proptest::prelude::*;

const POSTS: usize = 12;

struct Recorded {
    world: World,
    /// The EVENT frames of `GROUP` from sequence 1, as the server sent them.
    frames: Vec<Vec<u8>>,
}

fn recorded() -> &'static Recorded {
    static RECORDED: OnceLock<Recorded> = OnceLock::new();
    RECORDED.get_or_init(|| {
        let world = World::new();
        world.missions();
        for i in 0..POSTS {
            world.owner_posts(GROUP, &format!("p{i}"), &[]);
        }
        let mut pair = {
            let _one_at_a_time = HANDSHAKE
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            world.pair(COORDINATOR)
        };
        pair.client.subscribe(&[group(0)], NOW).unwrap();
        let subscribe = pair.client.poll_output().unwrap();
        pair.server.on_text(&subscribe, NOW);
        let frames = drain_bytes(&mut pair.server, NOW);
        assert_eq!(frames.len() as u64, world.head(GROUP));
        Recorded { world, frames }
    })
}

fn group(after: u64) -> SubscribeGroup {
    SubscribeGroup {
        group_id: GROUP.into(),
        after_sequence: after,
        attention: None,
    }
}

/// Handshakes of the one shared World, one at a time: the tests run on parallel threads, and two
/// HELLOs of one Agent racing each other are a real §6.3 conflict (the later Session Epoch
/// fences the earlier one: `AUTH_STALE_SESSION`), not what these tests are about.
static HANDSHAKE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// An authenticated session subscribed (client side only) to `GROUP` after `after`.
fn session(world: &World, max_buffered: usize, after: u64) -> Session {
    let _one_at_a_time = HANDSHAKE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut config = world.client_config(COORDINATOR);
    config.max_buffered_events = max_buffered;
    let mut pair = Pair {
        server: world.connection(),
        client: world.client_with(config),
        now: NOW,
        server_closed: None,
    };
    pair.client.start(NOW).unwrap();
    pair.pump();
    pair.events();
    pair.client.subscribe(&[group(after)], NOW).unwrap();
    let Pair { client, .. } = pair;
    client
}

fn sequence_of(frame: &[u8]) -> u64 {
    let value = missionweaveprotocol::wire::parse_frame(frame)
        .unwrap()
        .value;
    value
        .pointer("/event/sequence")
        .and_then(Value::as_number)
        .and_then(|n| n.as_u64())
        .unwrap()
}

fn in_order(events: &[SessionEvent]) -> Vec<u64> {
    events
        .iter()
        .filter_map(|e| match e {
            SessionEvent::Event(event) if event.in_order => Some(event.sequence),
            _ => None,
        })
        .collect()
}

fn drain_events(client: &mut Session) -> Vec<SessionEvent> {
    std::iter::from_fn(|| client.poll_event()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Any delivery order with any duplicates: each Event once, in order; the Cursor is always
    /// the contiguous prefix of what arrived; a bounded buffer that overflows reports a gap and
    /// never delivers past it.
    #[test]
    fn duplicates_and_reordering_never_break_group_order(
        order in Just((0..POSTS + 2).collect::<Vec<usize>>()).prop_shuffle(),
        duplicates in proptest::collection::vec(0..POSTS + 2, 0..10),
        positions in proptest::collection::vec(any::<proptest::sample::Index>(), 0..10),
        max_buffered in prop_oneof![Just(1024usize), 1usize..4],
    ) {
        let recorded = recorded();
        let count = recorded.frames.len();
        let mut feed: Vec<usize> = order.into_iter().filter(|i| *i < count).collect();
        for (duplicate, position) in duplicates.iter().zip(&positions) {
            if *duplicate < count {
                let at = position.index(feed.len() + 1);
                feed.insert(at, *duplicate);
            }
        }
        let mut client = session(&recorded.world, max_buffered, 0);
        let mut seen = std::collections::BTreeSet::new();
        let mut delivered = Vec::new();
        let mut gaps = 0;
        for index in feed {
            let frame = &recorded.frames[index];
            seen.insert(sequence_of(frame));
            client.on_text(frame, NOW).unwrap();
            let events = drain_events(&mut client);
            gaps += events.iter().filter(|e| matches!(e, SessionEvent::Gap { .. })).count();
            let rejected = events.iter().any(|e| matches!(e, SessionEvent::Rejected { .. }));
            prop_assert!(!rejected, "a genuine Event was rejected");
            delivered.extend(in_order(&events));
            let cursor = client.cursor(GROUP).unwrap();
            // Never over a gap: every sequence up to the Cursor arrived.
            prop_assert!((1..=cursor).all(|s| seen.contains(&s)));
            prop_assert_eq!(delivered.len() as u64, cursor);
        }
        // Each delivered once, in order, a prefix of the Group.
        let expected: Vec<u64> = (1..=delivered.len() as u64).collect();
        prop_assert_eq!(&delivered, &expected);
        if max_buffered >= count {
            prop_assert_eq!(delivered.len(), count);
            prop_assert_eq!(gaps, 0);
        } else if delivered.len() < count {
            prop_assert!(gaps >= 1, "an undelivered tail is always reported");
        }
    }
}

#[test]
fn a_full_buffer_is_one_gap_report_and_a_resubscription_fills_it() {
    let recorded = recorded();
    let mut client = session(&recorded.world, 2, 0);
    // Everything but the first Event, backwards.
    for frame in recorded.frames[1..].iter().rev() {
        client.on_text(frame, NOW).unwrap();
    }
    let events = drain_events(&mut client);
    let gaps: Vec<_> = events
        .iter()
        .filter(|e| matches!(e, SessionEvent::Gap { .. }))
        .collect();
    assert_eq!(gaps.len(), 1, "one report while the buffer stays full");
    assert_eq!(
        gaps[0],
        &SessionEvent::Gap {
            group_id: GROUP.into(),
            cursor: 0
        }
    );
    assert_eq!(client.buffered(GROUP), 2);
    assert_eq!(client.cursor(GROUP), Some(0));
    // The missing first Event arrives; what stayed buffered (the last two) is not next yet.
    client.on_text(&recorded.frames[0], NOW).unwrap();
    assert_eq!(in_order(&drain_events(&mut client)), [1]);
    // A resubscription from the Cursor brings the rest (the dropped ones come again).
    let cursor = client.cursor(GROUP).unwrap();
    client.subscribe(&[group(cursor)], NOW).unwrap();
    for frame in &recorded.frames[cursor as usize..] {
        client.on_text(frame, NOW).unwrap();
    }
    assert_eq!(
        in_order(&drain_events(&mut client)),
        (cursor + 1..=recorded.frames.len() as u64).collect::<Vec<_>>()
    );
}

#[test]
fn a_reconnecting_session_resumes_from_the_cursors_and_drops_duplicates() {
    let recorded = recorded();
    let half = recorded.frames.len() / 2;
    let mut first = session(&recorded.world, 1024, 0);
    for frame in &recorded.frames[..half] {
        first.on_text(frame, NOW).unwrap();
    }
    let cursors = first.cursors();
    assert_eq!(cursors, [(GROUP.to_owned(), half as u64)]);
    // A new session, subscribed from the old one's Cursors; the server replays around the
    // disconnect (here: a few Events before the Cursor again).
    let mut second = session(&recorded.world, 1024, cursors[0].1);
    for frame in &recorded.frames[half - 3..] {
        second.on_text(frame, NOW).unwrap();
    }
    assert_eq!(
        in_order(&drain_events(&mut second)),
        (half as u64 + 1..=recorded.frames.len() as u64).collect::<Vec<_>>()
    );
}

/// An Event document of `frame` (parsed), for forging variants.
fn event_document(frame: &[u8]) -> Value {
    missionweaveprotocol::wire::parse_frame(frame)
        .unwrap()
        .value
        .get("event")
        .unwrap()
        .clone()
}

fn reframe(event: &Value) -> Vec<u8> {
    frames::event("urn:x:forged", &json::canonical_bytes(event).unwrap()).unwrap()
}

/// `event` without its signature, changed by `edit`, signed with `key` of `world`.
fn resigned(world: &World, event: &Value, key: &str, edit: impl Fn(&mut json::Object)) -> Value {
    let Value::Object(mut object) = event.clone() else {
        unreachable!()
    };
    object.remove("signature");
    edit(&mut object);
    let key = if key == AUTHORITY {
        key_of(30)
    } else {
        world.key(key).clone()
    };
    SignedDocumentCodec::new()
        .sign(SignedDocumentKind::Event, &Value::Object(object), &key)
        .unwrap()
        .document
}

#[test]
fn only_verified_group_authority_events_are_accepted() {
    let recorded = recorded();
    let world = &recorded.world;
    let mut client = session(world, 1024, 0);
    let first = event_document(&recorded.frames[0]);
    // Tampered after signing: stage 6.
    let mut tampered = json::canonical_bytes(&first).unwrap();
    let text = String::from_utf8(tampered.clone())
        .unwrap()
        .replace("Close the July books", "Close the June books");
    assert_ne!(text.as_bytes(), &tampered[..]);
    tampered = text.into_bytes();
    client
        .on_text(&frames::event("urn:x:t", &tampered).unwrap(), NOW)
        .unwrap();
    // Well signed, but by a registered key of someone else who names itself as acceptor.
    let owner_signed = resigned(world, &first, OWNER, |o| {
        o.insert(
            "acceptedBy",
            json::parse(format!(r#"{{"type": "human", "id": "{OWNER}"}}"#).as_bytes()).unwrap(),
        );
    });
    client.on_text(&reframe(&owner_signed), NOW).unwrap();
    let events = drain_events(&mut client);
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(
        matches!(&events[0], SessionEvent::Rejected { reason, .. } if reason.contains("does not verify"))
    );
    assert!(
        matches!(&events[1], SessionEvent::Rejected { reason, .. } if reason.contains("Group Authority"))
    );
    assert_eq!(client.cursor(GROUP), Some(0));
    // The genuine Event is accepted.
    client.on_text(&recorded.frames[0], NOW).unwrap();
    assert_eq!(in_order(&drain_events(&mut client)), [1]);
}

#[test]
fn an_event_id_never_moves_and_a_position_holds_one_event() {
    let recorded = recorded();
    let world = &recorded.world;
    let mut client = session(world, 1024, 0);
    // Sequence 3 buffered (a gap before it).
    let third = event_document(&recorded.frames[2]);
    client.on_text(&recorded.frames[2], NOW).unwrap();
    // Another genuine-looking Event at position 3 (other ID, signed by the authority).
    let impostor = resigned(world, &third, AUTHORITY, |o| {
        o.insert(
            "eventId",
            Value::string("urn:missionweaveprotocol:event:impostor"),
        );
    });
    client.on_text(&reframe(&impostor), NOW).unwrap();
    // The third Event's ID at position 4.
    let moved = resigned(
        world,
        &event_document(&recorded.frames[3]),
        AUTHORITY,
        |o| {
            o.insert("eventId", third.get("eventId").unwrap().clone());
        },
    );
    client.on_text(&reframe(&moved), NOW).unwrap();
    let events = drain_events(&mut client);
    let reasons: Vec<&str> = events
        .iter()
        .map(|e| match e {
            SessionEvent::Rejected { reason, .. } => reason.as_str(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        reasons,
        [
            "another Event holds this Group position",
            "the Event ID was seen at another position"
        ]
    );
    // The real order still completes.
    for frame in &recorded.frames[..4] {
        client.on_text(frame, NOW).unwrap();
    }
    assert_eq!(in_order(&drain_events(&mut client)), [1, 2, 3, 4]);
}

#[test]
fn frames_out_of_place_are_protocol_errors_for_the_host() {
    let recorded = recorded();
    let mut fresh = recorded.world.client(COORDINATOR);
    // An EVENT before authentication.
    assert!(matches!(
        fresh.on_text(&recorded.frames[0], NOW),
        Err(missionweaveprotocol_gateway::client::ClientError::Protocol(
            _
        ))
    ));
    // A server_accept without a challenge.
    let accept =
        frames::hello_server_accept("urn:x:a", "0.1", "t0ken-t0ken-t0ken", 1, NOW_TEXT).unwrap();
    assert!(fresh.on_text(&accept, NOW).is_err());
    // A COMMAND from the server, and bytes that are no frame.
    let mut client = session(&recorded.world, 8, 0);
    let command = frames::command("urn:x:c", br#"{"a":1}"#).unwrap();
    assert!(client.on_text(&command, NOW).is_err());
    assert!(client.on_text(b"nope", NOW).is_err());
}
