//! Consistency checks of a store: every Group log replayed and checked (contiguous sequences
//! from the first online one, the head agreeing, every Event parsing with its record's ID,
//! Group and sequence, and — given the Registry — passing the six-stage verifier, Event
//! profile, §6.4), and the checks that tie one stream Command to its effects (receipt, Event,
//! aggregate: all or nothing, §15.1).

use std::collections::HashSet;
use std::sync::Arc;

use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol::{KeyRegistrySnapshot, Principal, PrincipalType};
use missionweaveprotocol::{SignedDocumentCodec, SignedDocumentKind};
use missionweaveprotocol_engine::membership::Membership;
use missionweaveprotocol_engine::mission::{GROUP_KIND, MISSION_KIND};
use missionweaveprotocol_engine::organization::ORGANIZATION_EVENT_KIND;
use missionweaveprotocol_engine::store::{AggregateKey, EventRecord, Store};

use crate::error::HarnessError;
use crate::workload::{StreamCommand, StreamEffect};

/// Replay page size of the checks.
const PAGE: usize = 1_000;

/// One Event of a Group log, parsed.
#[derive(Debug, Clone)]
pub struct LoggedEvent {
    /// Its sequence.
    pub sequence: u64,
    /// Its Event ID.
    pub event_id: String,
    /// Its kind.
    pub kind: String,
    /// The Action ID of the Command that caused it (`cause.id` when `cause.type` is
    /// `command`).
    pub action_id: Option<String>,
    /// `aggregateRevision`: the revision of the aggregate it changed, after the change.
    pub aggregate_revision: Option<u64>,
    /// The whole Event.
    pub document: Value,
}

/// What [`verify_store`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// Groups replayed.
    pub groups: usize,
    /// Group Events checked.
    pub events: u64,
    /// Organization-scoped Events checked (§15.2: no Group, kept under their Event IDs).
    pub organization_events: usize,
}

/// Every Event of `group`'s online log in order, checked: sequences contiguous from the first
/// online one with the head just past the last, each Event parsing with the record's Event ID,
/// Group and sequence, no Event ID twice. With `registry`, every Event also passes the six-stage
/// verifier (Event profile). An unknown Group is an empty log.
pub fn group_log(
    store: &dyn Store,
    group: &str,
    registry: Option<&Arc<KeyRegistrySnapshot>>,
) -> Result<Vec<LoggedEvent>, HarnessError> {
    let head = store.head(group)?;
    let mut events = Vec::new();
    let mut ids = HashSet::new();
    let mut after = head.first_online.saturating_sub(1);
    loop {
        let page = store.replay(group, after, PAGE)?;
        for record in &page.events {
            let expected = after + 1;
            if record.sequence != expected {
                return Err(HarnessError::check(format!(
                    "{group}: sequence {} where {expected} was next (a gap or a duplicate)",
                    record.sequence
                )));
            }
            let event = parse_event(group, record, registry)?;
            if !ids.insert(event.event_id.clone()) {
                return Err(HarnessError::check(format!(
                    "{group}: Event ID {} appears twice",
                    event.event_id
                )));
            }
            events.push(event);
            after = expected;
        }
        if page.continuation.is_none() || page.events.is_empty() {
            break;
        }
    }
    if head.next_sequence != after + 1 {
        return Err(HarnessError::check(format!(
            "{group}: the head says next sequence {}, the log ends at {after}",
            head.next_sequence
        )));
    }
    Ok(events)
}

fn parse_event(
    group: &str,
    record: &EventRecord,
    registry: Option<&Arc<KeyRegistrySnapshot>>,
) -> Result<LoggedEvent, HarnessError> {
    let where_ = || format!("{group} #{}", record.sequence);
    let document = match registry {
        Some(registry) => SignedDocumentCodec::new()
            .verify(SignedDocumentKind::Event, &record.body, registry)
            .map_err(|e| HarnessError::check(format!("{}: Event fails §6.4: {e}", where_())))?
            .into_document(),
        None => json::parse_state(&record.body)
            .map_err(|e| HarnessError::check(format!("{}: Event does not parse: {e}", where_())))?,
    };
    let text = |name: &str| {
        document
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let number = |name: &str| {
        document
            .get(name)
            .and_then(Value::as_number)
            .and_then(|n| n.as_u64())
    };
    if text("eventId").as_deref() != Some(&*record.event_id) {
        return Err(HarnessError::check(format!(
            "{}: eventId differs from the record's {}",
            where_(),
            record.event_id
        )));
    }
    if number("sequence") != Some(record.sequence) || text("groupId").as_deref() != Some(group) {
        return Err(HarnessError::check(format!(
            "{}: the Event's groupId/sequence differ from its record",
            where_()
        )));
    }
    let kind = text("kind").ok_or_else(|| HarnessError::check(format!("{}: no kind", where_())))?;
    let action_id = match document.pointer("/cause/type").and_then(Value::as_str) {
        Some("command") => document
            .pointer("/cause/id")
            .and_then(Value::as_str)
            .map(str::to_owned),
        _ => None,
    };
    Ok(LoggedEvent {
        sequence: record.sequence,
        event_id: record.event_id.to_string(),
        kind,
        action_id,
        aggregate_revision: number("aggregateRevision"),
        document,
    })
}

/// Replays every Group the store knows (one per Mission, `group` aggregates) with
/// [`group_log`] and the Registry, and parses and verifies every Organization-scoped Event.
pub fn verify_store(
    store: &dyn Store,
    registry: &Arc<KeyRegistrySnapshot>,
) -> Result<VerifyReport, HarnessError> {
    let mut report = VerifyReport::default();
    for (group, _) in store.list(GROUP_KIND, "")? {
        report.events += group_log(store, &group, Some(registry))?.len() as u64;
        report.groups += 1;
    }
    for (event_id, stored) in store.list(ORGANIZATION_EVENT_KIND, "")? {
        let verified = SignedDocumentCodec::new()
            .verify(SignedDocumentKind::Event, &stored.value, registry)
            .map_err(|e| {
                HarnessError::check(format!("Organization Event {event_id} fails §6.4: {e}"))
            })?;
        if verified.view().get("eventId").and_then(|v| v.as_str()) != Some(&*event_id) {
            return Err(HarnessError::check(format!(
                "Organization Event stored under {event_id} carries another eventId"
            )));
        }
        report.organization_events += 1;
    }
    Ok(report)
}

/// The Events of `log` caused by Action `action_id`.
pub fn caused_by<'l>(log: &'l [LoggedEvent], action_id: &str) -> Vec<&'l LoggedEvent> {
    log.iter()
        .filter(|e| e.action_id.as_deref() == Some(action_id))
        .collect()
}

/// Where a stream Command's Event is, if it was applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// Its Group.
    pub group: String,
    /// Its sequence.
    pub sequence: u64,
    /// Its Event ID.
    pub event_id: String,
}

/// Whether stream Command `command` is applied in `store`, checking that it is applied
/// entirely or not at all: its receipt, its one Event in `log` (its Group's log, from
/// [`group_log`]) at the receipt's position, and the aggregate it creates (the Mission and
/// its Group, or the Membership) exist together or not at all. A renewal's Mission revision is
/// checked against the whole log by [`mission_matches_log`].
pub fn stream_applied(
    store: &dyn Store,
    command: &StreamCommand,
    log: &[LoggedEvent],
) -> Result<Option<Applied>, HarnessError> {
    let label = format!(
        "stream Command {} ({})",
        command.index, command.command.kind
    );
    let receipt = store.receipt(&command.command.receipt_key())?;
    let events = caused_by(log, &command.command.action_id);
    if events.len() > 1 {
        return Err(HarnessError::check(format!(
            "{label}: {} Events (applied more than once)",
            events.len()
        )));
    }
    let effect = match &command.effect {
        StreamEffect::CreateMission { mission } => {
            let mission = store
                .aggregate(&AggregateKey::new(MISSION_KIND, mission))?
                .is_some();
            let group = store
                .aggregate(&AggregateKey::new(GROUP_KIND, &command.group))?
                .is_some();
            if mission != group {
                return Err(HarnessError::check(format!(
                    "{label}: Mission stored {mission}, its Group {group}"
                )));
            }
            Some(mission)
        }
        StreamEffect::AddMember { member } => Some(
            Membership::read(
                store,
                &command.group,
                &Principal::new(PrincipalType::Agent, member.as_str()),
            )
            .map_err(|e| HarnessError::check(format!("{label}: Membership unreadable: {e}")))?
            .is_some(),
        ),
        StreamEffect::RenewCoordinator { .. } => None,
    };
    match (receipt, events.first()) {
        (None, None) if effect != Some(true) => Ok(None),
        (Some(receipt), Some(event)) if effect != Some(false) => {
            let position = receipt.first_event.position.clone();
            if position != Some((command.group.clone(), event.sequence))
                || receipt.first_event.event_id != event.event_id
            {
                return Err(HarnessError::check(format!(
                    "{label}: the receipt names {position:?} {}, the Event is #{} {}",
                    receipt.first_event.event_id, event.sequence, event.event_id
                )));
            }
            Ok(Some(Applied {
                group: command.group.clone(),
                sequence: event.sequence,
                event_id: event.event_id.clone(),
            }))
        }
        (receipt, event) => Err(HarnessError::check(format!(
            "{label} is half-applied: receipt {}, Event {}, aggregate {effect:?}",
            receipt.is_some(),
            event.is_some()
        ))),
    }
}

/// The stored Mission's revision equals the `aggregateRevision` the last Mission Event of its
/// Group announced (every Mission change is an Event, and no Event without its change).
pub fn mission_matches_log(
    store: &dyn Store,
    mission: &str,
    log: &[LoggedEvent],
) -> Result<(), HarnessError> {
    let stored = store
        .aggregate(&AggregateKey::new(MISSION_KIND, mission))?
        .map(|a| a.revision);
    let announced = log
        .iter()
        .rev()
        .find(|e| e.kind.starts_with("mission."))
        .and_then(|e| e.aggregate_revision);
    if stored != announced {
        return Err(HarnessError::check(format!(
            "Mission {mission} is at revision {stored:?}, its last Event announced {announced:?}"
        )));
    }
    Ok(())
}
