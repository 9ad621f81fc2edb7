//! `Core::replay` serves only Events signed by the Group Authority, at the log position
//! they name (`service/served_events.rs`, `docs/store.md` "Data at rest"). Forged Events are
//! written into an `InMemoryStore` by raw commits, as a tamperer with write access to the store
//! could; each is refused with `INTERNAL_ERROR` (`store_corrupt`) naming its Event ID and
//! sequence, and the page holding it is not served.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_fixture.rs"]
mod fixture;

use std::sync::Arc;

use fixture::*;
use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json::{self, Number, Object, Value, canonical_bytes};
use missionweaveprotocol::registry::RegistryBuilder;
use missionweaveprotocol::{
    DescribeError, FieldValue, Principal, SignedDocumentCodec, SignedDocumentKind, WireCode,
};
use missionweaveprotocol_engine::events::{EventIssuer, SequentialEventIds};
use missionweaveprotocol_engine::service::{Core, CoreError, default_authorizer};
use missionweaveprotocol_engine::store::{EventRecord, InMemoryStore, Store, Transaction};

/// A core over `store` signing with `key`, in which both Agents opened their sessions.
fn core_over(f: &Fixture, store: Arc<InMemoryStore>, key: SigningKey) -> Core {
    let core = Core::new(
        store,
        Arc::clone(&f.registry),
        EventIssuer::new(authority(), key),
        default_authorizer(vec![SERVICE.to_owned()], Vec::new()),
        Box::new(SequentialEventIds::new(
            "urn:missionweaveprotocol:event:replay-",
        )),
    );
    for agent in [COORDINATOR, OTHER_AGENT] {
        core.perform_verified(&f.session_open(agent), NOW).unwrap();
    }
    core
}

/// A core holding an active Mission and two renewals: Group Events at sequences 1..=n.
fn core_with_log(f: &Fixture) -> Core {
    let core = core_over(f, Arc::new(InMemoryStore::new()), f.authority_key.clone());
    core.perform_verified(&f.create(), NOW).unwrap();
    for _ in 0..2 {
        let renew = f.by_coordinator("mission.renew_coordinator", 1, r#"{"leaseSeconds": 300}"#);
        core.perform_verified(&renew, NOW).unwrap();
    }
    core
}

fn next_sequence(core: &Core) -> u64 {
    core.store().head(GROUP).unwrap().next_sequence
}

fn stored(core: &Core, sequence: u64) -> EventRecord {
    core.engine()
        .replay(GROUP, sequence - 1, 1)
        .unwrap()
        .events
        .remove(0)
}

fn object(bytes: &[u8]) -> Object {
    match json::parse(bytes).unwrap() {
        Value::Object(object) => object,
        other => panic!("not an object: {other:?}"),
    }
}

/// The Event at `from`, moved to the next position as `event_id` (its `eventId` and `sequence`
/// rewritten), `edit`ed, and signed again with `key`.
fn resigned(
    core: &Core,
    from: u64,
    event_id: &str,
    key: &SigningKey,
    edit: impl FnOnce(&mut Object),
) -> Vec<u8> {
    let mut event = object(&stored(core, from).body);
    event.remove("signature");
    event.insert("eventId", Value::string(event_id));
    event.insert(
        "sequence",
        Value::Number(Number::from_u64(next_sequence(core))),
    );
    edit(&mut event);
    SignedDocumentCodec::new()
        .sign(SignedDocumentKind::Event, &Value::Object(event), key)
        .unwrap()
        .bytes
}

/// Appends `body` as `event_id` at the next sequence of `GROUP`, behind the engine's back.
fn inject(core: &Core, event_id: &str, body: &[u8]) -> u64 {
    let sequence = next_sequence(core);
    let mut tx = Transaction::new();
    tx.append(GROUP, EventRecord::new(sequence, event_id, body));
    core.store().commit(tx).unwrap();
    sequence
}

/// Every page that holds `sequence` is refused as a corrupt stored Event naming it; the pages
/// before it still serve. Answers the error's detail.
fn refused_at(core: &Core, sequence: u64, event_id: &str) -> String {
    for (after, limit) in [
        (0, 10_000),
        (sequence - 1, 1),
        (sequence.saturating_sub(2), 5),
    ] {
        let error: CoreError = core
            .replay(GROUP, after as i64, limit)
            .map(|page| panic!("served {} Events", page.events.len()))
            .unwrap_err();
        assert_eq!(error.wire_code, WireCode::InternalError, "{error}");
        assert_eq!(error.reason, "store_corrupt");
        assert!(!error.retryable);
        // A store failure (Python `core.StoreError`), never a revision conflict to retry on.
        assert_eq!(
            error.family,
            missionweaveprotocol_engine::service::ErrorFamily::StoreFailure
        );
        assert_eq!(
            error.fields.get("event_id"),
            Some(&FieldValue::Text(event_id.to_owned()))
        );
        assert_eq!(
            error.fields.get("sequence"),
            Some(&FieldValue::Integer(sequence as i64))
        );
        assert!(error.detail.contains(event_id), "{}", error.detail);
        assert!(
            error.detail.contains(&format!("{GROUP} #{sequence}")),
            "{}",
            error.detail
        );
    }
    let before = core.replay(GROUP, 0, (sequence - 1) as i64).unwrap();
    assert_eq!(before.events.len() as u64, sequence - 1);
    core.replay(GROUP, (sequence - 1) as i64, 1)
        .unwrap_err()
        .detail
}

#[test]
fn an_untouched_log_is_served_in_every_page_size() {
    let f = fixture();
    let core = core_with_log(&f);
    let all = core.engine().replay(GROUP, 0, 10_000).unwrap().events;
    assert!(all.len() >= 3, "{}", all.len());
    for limit in [1, 2, 10_000] {
        let mut served = Vec::new();
        let mut after = 0;
        loop {
            let page = core.replay(GROUP, after, limit).unwrap();
            served.extend(page.events);
            match page.continuation {
                Some(next) => after = next as i64,
                None => break,
            }
        }
        assert_eq!(served, all);
    }
}

#[test]
fn a_log_served_once_is_served_again_without_signature_checks_and_forgeries_are_still_checked() {
    let f = fixture();
    let core = core_with_log(&f);
    let genuine = core.replay(GROUP, 0, 10_000).unwrap().events;
    let checked = core.served_events_checked();
    assert_eq!(checked, genuine.len() as u64);
    for limit in [1, 10_000] {
        let mut after = 0;
        while let Some(next) = core.replay(GROUP, after, limit).unwrap().continuation {
            after = next as i64;
        }
    }
    assert_eq!(core.served_events_checked(), checked);
    // A forgery appended after the served log is new bytes at a new position: checked in full
    // and refused; the genuine Events before it still serve without a check.
    let impostor = SigningKey::from_seed(f.authority_key.key_id(), &[98; 32]);
    let id = "urn:missionweaveprotocol:event:forged-after-serving";
    let body = resigned(&core, 2, id, &impostor, |_| {});
    let sequence = inject(&core, id, &body);
    let detail = refused_at(&core, sequence, id);
    assert!(detail.contains("does not verify"), "{detail}");
    assert_eq!(
        core.served_events_checked(),
        checked + 4,
        "only the forgery, once for each of the 4 refused pages"
    );
}

#[test]
fn an_event_signed_with_another_registered_key_is_not_served() {
    let f = fixture();
    let core = core_with_log(&f);
    let (_, owner_key) = f.keys.iter().find(|(p, _)| p.id == OWNER).unwrap();
    // `acceptedBy` still names the Group Authority; the key is the Mission owner's.
    let id = "urn:missionweaveprotocol:event:forged-1";
    let body = resigned(&core, 2, id, owner_key, |_| {});
    let sequence = inject(&core, id, &body);
    let detail = refused_at(&core, sequence, id);
    assert!(detail.contains("signature does not verify"), "{detail}");
}

#[test]
fn an_event_whose_signer_names_itself_in_accepted_by_is_not_served() {
    let f = fixture();
    let core = core_with_log(&f);
    let (owner, owner_key) = f.keys.iter().find(|(p, _)| p.id == OWNER).unwrap();
    // A self-consistent signed Event (its signer is the Principal it names in `acceptedBy`,
    // bound in the Registry): valid for the six stages, but not the Group Authority's.
    let id = "urn:missionweaveprotocol:event:forged-2";
    let body = resigned(&core, 2, id, owner_key, |event| {
        event.insert("acceptedBy", owner.to_value());
    });
    let sequence = inject(&core, id, &body);
    let detail = refused_at(&core, sequence, id);
    assert!(detail.contains("not by the Group Authority"), "{detail}");
}

#[test]
fn an_event_signed_with_a_key_posing_under_the_authority_key_id_is_not_served() {
    let f = fixture();
    let core = core_with_log(&f);
    let impostor = SigningKey::from_seed(f.authority_key.key_id(), &[99; 32]);
    let id = "urn:missionweaveprotocol:event:forged-3";
    let body = resigned(&core, 3, id, &impostor, |event| {
        event.insert(
            "payload",
            json::parse(br#"{"leaseSeconds": 86400}"#).unwrap(),
        );
    });
    let sequence = inject(&core, id, &body);
    let detail = refused_at(&core, sequence, id);
    assert!(
        detail.contains("does not verify with the Group Authority's key"),
        "{detail}"
    );
}

#[test]
fn an_edited_event_keeping_the_authority_signature_is_not_served() {
    let f = fixture();
    let core = core_with_log(&f);
    // The last genuine Event moved to the next position with its signature kept: the signed
    // `sequence` and `eventId` no longer match.
    let last = next_sequence(&core) - 1;
    let id = "urn:missionweaveprotocol:event:edited";
    let mut event = object(&stored(&core, last).body);
    event.insert("eventId", Value::string(id));
    event.insert(
        "sequence",
        Value::Number(Number::from_u64(next_sequence(&core))),
    );
    let body = canonical_bytes(&Value::Object(event)).unwrap();
    let sequence = inject(&core, id, &body);
    let detail = refused_at(&core, sequence, id);
    assert!(detail.contains("does not verify"), "{detail}");
}

#[test]
fn a_genuine_event_served_at_another_position_is_not_served() {
    let f = fixture();
    let core = core_with_log(&f);
    // Event 1's exact signed bytes appended again: its `sequence` is not the log position.
    let first = stored(&core, 1);
    let sequence = inject(&core, &first.event_id, &first.body);
    let detail = refused_at(&core, sequence, &first.event_id);
    assert!(detail.contains("is not the log position"), "{detail}");

    // Under another log Event ID: its `eventId` is not the record's.
    let f = fixture();
    let core = core_with_log(&f);
    let sequence = next_sequence(&core);
    let mut moved = object(&stored(&core, 1).body);
    moved.insert("sequence", Value::Number(Number::from_u64(sequence)));
    let id = "urn:missionweaveprotocol:event:other-id";
    inject(&core, id, &canonical_bytes(&Value::Object(moved)).unwrap());
    let detail = refused_at(&core, sequence, id);
    assert!(detail.contains("eventId"), "{detail}");
}

#[test]
fn bytes_that_are_not_an_event_are_not_served() {
    let f = fixture();
    let core = core_with_log(&f);
    let id = "urn:missionweaveprotocol:event:garbage";
    let sequence = inject(&core, id, b"{\"eventId\": ");
    let detail = refused_at(&core, sequence, id);
    assert!(detail.contains("not strict JSON"), "{detail}");
}

#[test]
fn events_signed_before_a_key_rotation_are_still_served() {
    // The Registry binds two keys to the Group Authority: the one it signed with before the
    // rotation and the current one.
    let mut f = fixture();
    let old_key = SigningKey::from_seed("urn:missionweaveprotocol:key:authority-old", &[31; 32]);
    let mut builder = RegistryBuilder::new(ORG);
    let authority_keys = [(authority(), &old_key), (authority(), &f.authority_key)];
    let principals: Vec<(Principal, &SigningKey)> = f
        .keys
        .iter()
        .map(|(p, k)| (p.clone(), k))
        .chain(authority_keys)
        .collect();
    for (principal, key) in principals {
        builder
            .add_key(
                key.key_id(),
                principal,
                &key.public_key_bytes(),
                "2026-01-01T00:00:00Z",
            )
            .unwrap();
    }
    f.registry = Arc::new(builder.build().unwrap().1);

    let store = Arc::new(InMemoryStore::new());
    let before = core_over(&f, Arc::clone(&store), old_key);
    before.perform_verified(&f.create(), NOW).unwrap();
    let old_events = before.replay(GROUP, 0, 10_000).unwrap().events;

    // The new core opens the Agents' sessions again (Session Epoch 2).
    let after = core_over(&f, store, f.authority_key.clone());
    f.use_session_epoch(2);
    let renew = f.by_coordinator("mission.renew_coordinator", 1, r#"{"leaseSeconds": 300}"#);
    after.perform_verified(&renew, NOW).unwrap();
    let served = after.replay(GROUP, 0, 10_000).unwrap().events;
    assert_eq!(served[..old_events.len()], old_events[..]);
    assert!(served.len() > old_events.len());
    for record in &served {
        f.check_event(record);
    }
}

#[test]
fn the_refusal_describes_itself_like_every_core_error() {
    let f = fixture();
    let core = core_with_log(&f);
    let first = stored(&core, 1);
    let sequence = inject(&core, &first.event_id, &first.body);
    let error = core.replay(GROUP, 0, 100).unwrap_err();
    assert_eq!(error.wire_code(), WireCode::InternalError);
    assert_eq!(error.reason(), "store_corrupt");
    assert_eq!(
        error.fields().get("locator"),
        Some(&FieldValue::Text(format!("{GROUP} #{sequence}")))
    );
    assert_eq!(
        error.fields().get("stored"),
        Some(&FieldValue::Text("event".to_owned()))
    );
}
