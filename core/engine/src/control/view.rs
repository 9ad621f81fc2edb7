//! The projections [`build`](super::build) reads, from a Group's Events alone: what a human
//! who holds only the signed log (the MissionOwner's page, subscribed over the WebSocket)
//! passes instead of querying a Core. The Mission is the engine's own replay
//! ([`crate::mission::rebuild`], each Event's `aggregateRevision` checked); the human's
//! Membership Epoch is the last Membership document an Event carries for the human, else the
//! first epoch of the Membership `mission.create` opened for its MissionOwner (§8; those
//! initial Memberships have no Event of their own, `membership::initial`).

use missionweaveprotocol::json::{Object, Value};
use missionweaveprotocol::{Principal, PrincipalType};

use super::error::ControlError;
use crate::membership::FIRST_MEMBERSHIP_EPOCH;
use crate::mission::rebuild;

/// `{mission, membership}` of `human_id` from `events` (Event documents of one Group, in
/// sequence order): `mission` the Mission document (`null` before its creation), `membership`
/// `{membershipEpoch, state}` of the human's Membership (`null` when the human has none).
pub fn view(human_id: &str, events: &[Value]) -> Result<Value, ControlError> {
    let mission = rebuild(events.iter()).map_err(|_| {
        ControlError::invalid(
            "events",
            "the Group's Event documents in sequence order (each fitting the Mission so far)",
        )
    })?;
    let human = Principal::new(PrincipalType::Human, human_id);
    let mut membership: Option<(u64, String)> = mission
        .as_ref()
        .filter(|m| *m.owner() == human)
        .map(|_| (FIRST_MEMBERSHIP_EPOCH, "active".to_owned()));
    for event in events {
        let Some(document) = event.pointer("/payload/membership") else {
            continue;
        };
        let member = document.get("member").and_then(Principal::from_value);
        if member.as_ref() != Some(&human) {
            continue;
        }
        let epoch = document
            .get("membershipEpoch")
            .and_then(Value::as_number)
            .and_then(|n| n.as_u64());
        let state = document.get("state").and_then(Value::as_str);
        if let (Some(epoch), Some(state)) = (epoch, state) {
            membership = Some((epoch, state.to_owned()));
        }
    }
    let mut out = Object::new();
    out.insert("mission", mission.map_or(Value::Null, |m| m.document()));
    out.insert(
        "membership",
        membership.map_or(Value::Null, |(epoch, state)| {
            let mut m = Object::new();
            m.insert(
                "membershipEpoch",
                Value::Number(missionweaveprotocol::json::Number::from_u64(epoch)),
            );
            m.insert("state", Value::string(state));
            Value::Object(m)
        }),
    );
    Ok(Value::Object(out))
}
