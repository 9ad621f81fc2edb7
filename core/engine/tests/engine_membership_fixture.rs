//! Membership helpers over the engine fixture: `membership.change`/`end` payloads, Commands
//! carrying a chosen Membership Epoch, and reads of the stored Membership; re-exports
//! `engine_fixture.rs`. Included with `#[path]`; as its own test target it holds no tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol::{Principal, PrincipalType};
use missionweaveprotocol_engine::ingress::VerifiedCommand;
use missionweaveprotocol_engine::membership::Membership;

#[path = "engine_fixture.rs"]
pub mod fixture;
pub use fixture::*;

pub fn agent(id: &str) -> Principal {
    Principal::new(PrincipalType::Agent, id)
}

pub fn human(id: &str) -> Principal {
    Principal::new(PrincipalType::Human, id)
}

pub fn member_json(p: &Principal) -> String {
    format!(r#"{{"type": "{}", "id": "{}"}}"#, p.kind.as_str(), p.id)
}

/// A `membership.change` payload for `member` with `role` and `extra` members.
pub fn change_payload(member: &Principal, role: &str, extra: &str) -> String {
    format!(
        r#"{{"member": {}, "role": "{role}", "scopes": ["work:execute"]{extra}}}"#,
        member_json(member)
    )
}

pub fn end_payload(member: &Principal) -> String {
    format!(r#"{{"member": {}}}"#, member_json(member))
}

/// The stored Membership of `member` in `GROUP`.
pub fn membership(engine: &TestEngine, member: &Principal) -> Option<Membership> {
    let read = engine.membership(GROUP, member).unwrap();
    assert_eq!(
        read,
        Membership::read(engine.store(), GROUP, member).unwrap()
    );
    read
}

/// `kind` by `actor` carrying Membership Epoch `epoch` (the fixture's Commands carry 1).
pub fn with_epoch(
    f: &Fixture,
    kind: &str,
    actor: &str,
    extra: &str,
    payload: &str,
    epoch: u64,
) -> VerifiedCommand {
    let unsigned = f.unsigned(kind, actor, &f.action(), extra, payload);
    let text = String::from_utf8(json::canonical_bytes(&unsigned).unwrap()).unwrap();
    assert!(text.contains(r#""membershipEpoch":1"#));
    let text = text.replace(
        r#""membershipEpoch":1"#,
        &format!(r#""membershipEpoch":{epoch}"#),
    );
    f.verified(actor, &json::parse(text.as_bytes()).unwrap())
}

pub fn int(event: &Value, pointer: &str) -> u64 {
    event
        .pointer(pointer)
        .and_then(Value::as_number)
        .and_then(|n| n.as_u64())
        .unwrap_or_else(|| panic!("no {pointer}"))
}
