//! Command builders and setup steps of the DSL. A builder is evaluated when the step runs, so
//! Worker Commands cite the WorkItem's Ownership Epoch and lease as stored at that moment.

use missionweaveprotocol::SignedDocumentKind;
use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol::schema_formats::encode_base64url;
use missionweaveprotocol_engine::organization::{AGENT_CARD_REGISTER, SESSION_OPEN};
use missionweaveprotocol_engine::store::{AggregateKey, Store};
use missionweaveprotocol_engine::work::{AGGREGATE_KIND, WorkItem};

use crate::payloads::{self, W1};
use crate::scenario::{Build, Step};
use crate::world::{COORDINATOR, FOLLOW_UP_GROUP, IDENTITY, OWNER, WORKER, World};

/// `ext.missionweaveprotocol.core.resource_usage_record` (§12, digest A.3).
pub const RESOURCE_USAGE_RECORD: &str = "ext.missionweaveprotocol.core.resource_usage_record";

/// `kind` by `actor` with envelope members `extra` and `payload`.
pub fn by(
    actor: &'static str,
    kind: &'static str,
    extra: &str,
    payload: impl Into<String>,
) -> Build {
    let (extra, payload) = (extra.to_owned(), payload.into());
    Box::new(move |w: &World| w.command(kind, actor, &extra, &payload))
}

/// `kind` by the Coordinator at Coordinator Epoch 1 (the current one).
pub fn coordinator(kind: &'static str, payload: impl Into<String>) -> Build {
    coordinator_at(1, kind, payload)
}

/// `kind` by the Coordinator presenting Coordinator Epoch `epoch`.
pub fn coordinator_at(epoch: u64, kind: &'static str, payload: impl Into<String>) -> Build {
    by(
        COORDINATOR,
        kind,
        &format!(r#""coordinatorEpoch": {epoch}"#),
        payload,
    )
}

/// `mission.create_follow_up` of the Mission by `actor`, in its own new Group.
pub fn follow_up(actor: &'static str) -> Build {
    Box::new(move |w: &World| {
        w.command_in(
            FOLLOW_UP_GROUP,
            "mission.create_follow_up",
            actor,
            "",
            &payloads::follow_up(crate::world::FOLLOW_UP),
        )
    })
}

/// Which lease a Worker Command cites (§11.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lease {
    /// The ownership (or blocked) lease: `work.start`.
    Ownership,
    /// The Execution Lease: renewal, checkpoint, block, submit, Worker-reported fail.
    Execution,
}

/// The stored WorkItem `item`.
pub fn work_item(w: &World, item: &str) -> Result<Option<WorkItem>, String> {
    let stored = w
        .engine()
        .store()
        .aggregate(&AggregateKey::new(AGGREGATE_KIND, item))
        .map_err(|e| format!("reading {item}: {e}"))?;
    stored
        .map(|a| WorkItem::from_json(&a.value).map_err(|e| format!("stored {item}: {e}")))
        .transpose()
}

/// The owner's Ownership Epoch and the ID of the `lease` it holds on `item`.
pub fn claim(w: &World, item: &str, lease: Lease) -> Result<(u64, String), String> {
    let stored = work_item(w, item)?.ok_or_else(|| format!("{item} does not exist"))?;
    let epoch = stored
        .owner
        .as_ref()
        .map(|o| o.ownership_epoch)
        .ok_or_else(|| format!("{item} has no owner"))?;
    let held = match lease {
        Lease::Ownership => stored.ownership_lease.as_ref(),
        Lease::Execution => stored.execution_lease.as_ref(),
    };
    let lease = held.ok_or_else(|| format!("{item} holds no {lease:?} lease"))?;
    Ok((epoch, lease.lease_id().to_owned()))
}

/// A Worker Command on `item` citing its current claim (Ownership Epoch + `epoch_shift`, and
/// the `lease` it holds), with further payload `members` (JSON members text, may be empty).
pub fn worker(
    kind: &'static str,
    item: &'static str,
    lease: Lease,
    epoch_shift: i64,
    members: impl Into<String>,
) -> Build {
    let members = members.into();
    Box::new(move |w: &World| {
        let (epoch, lease_id) = claim(w, item, lease)?;
        let epoch = epoch
            .checked_add_signed(epoch_shift)
            .ok_or("epoch out of range")?;
        let members = if members.is_empty() {
            String::new()
        } else {
            format!(",{members}")
        };
        w.command(
            kind,
            crate::world::WORKER,
            "",
            &format!(
                r#"{{"workItemId":"{item}","ownershipEpoch":{epoch},"leaseId":"{lease_id}"{members}}}"#
            ),
        )
    })
}

/// `artifact.publish` by `actor` of the manifest produced by `producer` (signed with the
/// producer's key), citing `W1`'s Execution Lease.
pub fn publish(actor: &'static str, producer: &'static str) -> Build {
    Box::new(move |w: &World| {
        let created = w.now().to_rfc3339().ok_or("clock out of range")?;
        let unsigned = json::parse_state(payloads::manifest(producer, &created).as_bytes())
            .map_err(|e| format!("manifest JSON: {e}"))?;
        let signed = w.sign_artifact(&unsigned, producer)?;
        let text = json::canonical_bytes(&signed)
            .map_err(|e| format!("manifest JCS: {e}"))
            .and_then(|b| String::from_utf8(b).map_err(|e| e.to_string()))?;
        let (epoch, lease) = claim(w, W1, Lease::Execution)?;
        w.command(
            "artifact.publish",
            actor,
            "",
            &format!(r#"{{"manifest":{text},"ownershipEpoch":{epoch},"leaseId":"{lease}"}}"#),
        )
    })
}

fn step(build: Build) -> Step {
    Step::Perform(build)
}

// ---- Setup steps: the Mission ----------------------------------------------------------------

/// The Mission submitted for approval (Mission revision 2).
pub fn awaiting() -> Vec<Step> {
    vec![step(coordinator(
        "mission.submit_for_approval",
        payloads::submission(),
    ))]
}

/// The Mission approved (terminal).
pub fn approved() -> Vec<Step> {
    let mut steps = awaiting();
    steps.push(step(by(
        OWNER,
        "mission.approve",
        "",
        payloads::approval(2),
    )));
    steps
}

// ---- Setup steps: a WorkItem ---------------------------------------------------------------

/// `item` authorized: `open`.
pub fn authorized(item: &'static str) -> Vec<Step> {
    vec![step(coordinator(
        "work.authorize",
        payloads::authorize(item, &[]),
    ))]
}

/// … offered to the Worker: `offered`.
pub fn offered(item: &'static str) -> Vec<Step> {
    let mut steps = authorized(item);
    steps.push(step(coordinator("work.offer", payloads::offer(item, "r1"))));
    steps
}

/// … accepted: `queued`, owned by the Worker at Ownership Epoch 1.
pub fn queued(item: &'static str) -> Vec<Step> {
    let mut steps = offered(item);
    steps.push(step(by(
        crate::world::WORKER,
        "work.accept_offer",
        "",
        payloads::accept_offer(item),
    )));
    steps
}

/// … started: `active`, with an Execution Lease.
pub fn active(item: &'static str) -> Vec<Step> {
    let mut steps = queued(item);
    steps.push(step(worker("work.start", item, Lease::Ownership, 0, "")));
    steps
}

/// … blocked: `blocked`, with a live blocked lease.
pub fn blocked(item: &'static str) -> Vec<Step> {
    let mut steps = active(item);
    steps.push(step(worker(
        "work.block",
        item,
        Lease::Execution,
        0,
        format!(
            r#""reason":"needs the bank statement",{}"#,
            payloads::CHECKPOINT
        ),
    )));
    steps
}

/// [`W1`] active, and the Worker has published Artifact A for it (§13.1): a submission may
/// cite only content published for its WorkItem.
pub fn active_with_artifact() -> Vec<Step> {
    let mut steps = active(W1);
    steps.push(step(publish(crate::world::WORKER, crate::world::WORKER)));
    steps
}

/// … submitted: `submitted` (only [`W1`] has a manifest to publish).
pub fn submitted(item: &'static str) -> Vec<Step> {
    let mut steps = if item == W1 {
        active_with_artifact()
    } else {
        active(item)
    };
    steps.push(step(worker(
        "work.submit",
        item,
        Lease::Execution,
        0,
        payloads::submit_members(item),
    )));
    steps
}

/// … accepted: `verified` (terminal for this revision).
pub fn verified(item: &'static str) -> Vec<Step> {
    let mut steps = submitted(item);
    steps.push(step(coordinator(
        "work.accept_result",
        payloads::accept_result(item),
    )));
    steps
}

/// The Coordinator renews its lease for an hour, so it outlives a lapse of the Worker's leases.
pub fn coordinator_for_an_hour() -> Vec<Step> {
    vec![step(coordinator(
        "mission.renew_coordinator",
        r#"{"leaseSeconds": 3600}"#,
    ))]
}

/// Time passes.
pub fn elapse(ms: u64) -> Vec<Step> {
    vec![Step::Elapse(ms)]
}

// ---- Organization-scoped service Commands (§15.1, §6.3) ---------------------------------------

/// `ext.missionweaveprotocol.identity.session_open` of `agent` by the identity service,
/// with envelope members `extra` (e.g. `expectedRevision`).
pub fn session_open(agent: &'static str, extra: &'static str) -> Build {
    Box::new(move |w: &World| {
        w.organization_command(
            SESSION_OPEN,
            IDENTITY,
            extra,
            &payloads::session_open(agent),
        )
    })
}

/// `agent` opens a replacement Session (§6.3: its Session Epoch grows by one).
pub fn replace_session(agent: &'static str) -> Vec<Step> {
    vec![step(session_open(agent, ""))]
}

/// `kind` by `actor` presenting Session Epoch `session` (a runtime of a replaced Session),
/// citing `item`'s current claim like [`worker`].
pub fn worker_at_session(
    session: u64,
    kind: &'static str,
    item: &'static str,
    lease: Lease,
) -> Build {
    Box::new(move |w: &World| {
        let (epoch, lease_id) = claim(w, item, lease)?;
        w.command_at_session(
            kind,
            crate::world::WORKER,
            session,
            "",
            &format!(
                r#"{{"workItemId":"{item}","ownershipEpoch":{epoch},"leaseId":"{lease_id}"}}"#
            ),
        )
    })
}

/// The Worker's Agent Card at `version`, signed by the identity service (§6.4: an Agent Card
/// is signed by a `service` principal) and registered by it; `tamper` may change one member
/// after signing.
pub fn register_card(
    version: u64,
    name: &'static str,
    tamper: Option<(&'static str, &'static str)>,
) -> Build {
    card_command(IDENTITY, version, name, tamper)
}

/// As [`register_card`], but the Command is sent by `sender`.
pub fn register_card_by(sender: &'static str, version: u64, name: &'static str) -> Build {
    card_command(sender, version, name, None)
}

fn card_command(
    sender: &'static str,
    version: u64,
    name: &'static str,
    tamper: Option<(&'static str, &'static str)>,
) -> Build {
    Box::new(move |w: &World| {
        let (key_id, public_key) = w.public_key(WORKER)?;
        let unsigned = payloads::agent_card(
            WORKER,
            version,
            name,
            &key_id,
            &encode_base64url(&public_key),
        );
        let unsigned =
            json::parse_state(unsigned.as_bytes()).map_err(|e| format!("Agent Card JSON: {e}"))?;
        let mut card = w.sign_document(SignedDocumentKind::AgentCard, &unsigned, IDENTITY)?;
        if let (Some((member, value)), Value::Object(members)) = (tamper, &mut card) {
            members.insert(member, Value::string(value));
        }
        let text = json::canonical_bytes(&card)
            .map_err(|e| format!("Agent Card JCS: {e}"))
            .and_then(|b| String::from_utf8(b).map_err(|e| e.to_string()))?;
        w.organization_command(
            AGENT_CARD_REGISTER,
            sender,
            "",
            &format!(r#"{{"agentCard": {text}}}"#),
        )
    })
}

/// The Worker's Agent Card registered at `version`.
pub fn card_registered(version: u64) -> Vec<Step> {
    vec![step(register_card(version, "Worker", None))]
}

/// The Worker records `tool_calls` tool calls against `item` under its Execution Lease (§12).
pub fn record_usage(item: &'static str, tool_calls: u64) -> Build {
    worker(
        RESOURCE_USAGE_RECORD,
        item,
        Lease::Execution,
        0,
        payloads::usage_delta(tool_calls),
    )
}

/// `tool_calls` tool calls recorded against `item`.
pub fn usage_recorded(item: &'static str, tool_calls: u64) -> Vec<Step> {
    vec![step(record_usage(item, tool_calls))]
}

/// The MissionOwner re-appoints the Coordinator under a new lease (§7.2): Coordinator Epoch
/// 1 → 2, so a scenario can present an older epoch (1) as well as a newer one (3).
pub fn coordinator_epoch_2() -> Vec<Step> {
    vec![Step::Perform(by(
        OWNER,
        "mission.assign_coordinator",
        "",
        format!(
            r#"{{"agentId": "{COORDINATOR}", "agentCardVersion": 1, "leaseId": "{}-2"}}"#,
            payloads::COORDINATOR_LEASE
        ),
    ))]
}

/// The Worker's Membership added, then changed (§8): Membership Epoch 2, so a scenario can
/// present an older epoch (1) as well as a newer one (3).
pub fn worker_membership_epoch_2() -> Vec<Step> {
    ["worker", "reviewer"]
        .into_iter()
        .map(|role| {
            Step::Perform(by(
                OWNER,
                "membership.change",
                "",
                format!(
                    r#"{{"member": {{"type": "agent", "id": "{WORKER}"}}, "role": "{role}", "scopes": ["work:execute"]}}"#
                ),
            ))
        })
        .collect()
}

/// `kind` by `actor` presenting Membership Epoch `epoch` (§8, §15.1).
pub fn at_membership(
    epoch: u64,
    actor: &'static str,
    kind: &'static str,
    payload: impl Into<String>,
) -> Build {
    let payload = payload.into();
    Box::new(move |w: &World| w.command_at_membership(kind, actor, epoch, &payload))
}
