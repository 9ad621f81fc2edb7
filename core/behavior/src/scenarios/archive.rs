//! Retention and archival scenarios (§7.4, §15.2, §16; digest 2.8): `…core.group_archive`
//! with a Group Snapshot signed by the snapshot authority (the Group Authority) covering the
//! Group's Events `1..head`, emitting `group.snapshot.created` and `group.archived` together.

use missionweaveprotocol::json::{self, Object, Value};
use missionweaveprotocol::{Principal, PrincipalType, SignedDocumentKind, WireCode};
use missionweaveprotocol_engine::archive::{
    GROUP_ARCHIVE, SNAPSHOT_KIND, SnapshotDraft, group_event_ids,
};
use missionweaveprotocol_engine::mission::GROUP_KIND;
use missionweaveprotocol_engine::store::{AggregateKey, Store};

use crate::payloads::HASH_A;
use crate::scenario::{Build, Scenario, Step, Watch};
use crate::steps::{self, by};
use crate::world::{AUTHORITY, GROUP, MISSION, OWNER, SERVICE, WORKER, World};

/// How the act's snapshot departs from a faithful one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Forgery {
    None,
    /// Signed by the policy service for itself: not the snapshot authority.
    OtherSigner,
    /// Leaves out the Group's last Event (a stale head).
    StaleHead,
}

fn policy_log() -> Result<Value, String> {
    json::parse_state(
        format!(
            r#"{{"entryId": "urn:missionweaveprotocol:policy-log:behavior-1",
            "decision": "verified the exact signed human decision before archiving",
            "actor": {{"type": "service", "id": "{AUTHORITY}"}},
            "occurredAt": "2026-07-15T09:30:00Z", "details": {{}}}}"#
        )
        .as_bytes(),
    )
    .map_err(|e| e.to_string())
}

/// `…core.group_archive` by `SERVICE` of the Group as it is when the act runs.
fn archive(forgery: Forgery) -> Build {
    Box::new(move |w: &World| {
        let mut event_ids =
            group_event_ids(w.engine().store(), GROUP).map_err(|e| e.to_string())?;
        if forgery == Forgery::StaleHead {
            event_ids.pop();
        }
        let draft = SnapshotDraft {
            snapshot_id: "urn:missionweaveprotocol:snapshot:behavior".into(),
            group_id: GROUP.into(),
            event_ids,
            state_hash: HASH_A.into(),
            policy_log: vec![policy_log()?],
            created_at: w.now(),
        };
        let signer = match forgery {
            Forgery::OtherSigner => SERVICE,
            _ => AUTHORITY,
        };
        let unsigned = draft.document(&Principal::new(PrincipalType::Service, signer));
        let snapshot = w.sign_document(SignedDocumentKind::GroupSnapshot, &unsigned, signer)?;
        let mut payload = Object::new();
        payload.insert("snapshot", snapshot);
        let payload = json::canonical_bytes(&Value::Object(payload)).map_err(|e| e.to_string())?;
        let payload = String::from_utf8(payload).map_err(|e| e.to_string())?;
        w.command(GROUP_ARCHIVE, SERVICE, "", &payload)
    })
}

fn group_state(w: &World) -> Result<String, String> {
    let stored = w
        .engine()
        .store()
        .aggregate(&AggregateKey::new(GROUP_KIND, GROUP))
        .map_err(|e| e.to_string())?
        .ok_or("no Group")?;
    let group = json::parse_state(&stored.value).map_err(|e| e.to_string())?;
    Ok(group
        .get("state")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned())
}

fn snapshot_stored(w: &World) -> Result<bool, String> {
    w.engine()
        .store()
        .aggregate(&AggregateKey::new(SNAPSHOT_KIND, GROUP))
        .map(|a| a.is_some())
        .map_err(|e| e.to_string())
}

fn still_active(w: &World) -> Result<(), String> {
    match (group_state(w)?.as_str(), snapshot_stored(w)?) {
        ("active", false) => Ok(()),
        (state, stored) => Err(format!("the Group is {state}, snapshot stored: {stored}")),
    }
}

fn worker_membership() -> String {
    format!(
        r#"{{"member": {{"type": "agent", "id": "{WORKER}"}}, "role": "worker", "scopes": ["work:execute"]}}"#
    )
}

fn cancelled() -> Vec<Step> {
    vec![Step::Perform(by(
        OWNER,
        "mission.cancel",
        "",
        r#"{"reason": "The quarter was restated"}"#,
    ))]
}

pub fn scenarios() -> Vec<Scenario> {
    let m = Watch::Mission(MISSION);
    vec![
        Scenario::new("group_archive: an approved Mission's Group is archived")
            .given(steps::approved())
            .when(archive(Forgery::None))
            .watch(m)
            .emits(&["group.snapshot.created", "group.archived"])
            .moves("approved", "approved")
            .check("the Group is archived with its snapshot", |w| {
                match (group_state(w)?.as_str(), snapshot_stored(w)?) {
                    ("archived", true) => Ok(()),
                    (state, stored) => Err(format!("Group {state}, snapshot stored: {stored}")),
                }
            })
            .check("the archived history left the online log", |w| {
                let head = w.engine().store().head(GROUP).map_err(|e| e.to_string())?;
                match head.snapshot {
                    Some(_) if head.first_online + 1 == head.next_sequence - 1 => Ok(()),
                    _ => Err(format!("online from {}", head.first_online)),
                }
            }),
        Scenario::new("group_archive: an active Mission's Group is not archived")
            .when(archive(Forgery::None))
            .watch(m)
            .refused(WireCode::InvalidStateTransition)
            .moves("active", "active")
            .check("the Group stays active", still_active),
        Scenario::new("group_archive: a snapshot not signed by the snapshot authority")
            .given(cancelled())
            .when(archive(Forgery::OtherSigner))
            .watch(m)
            .refused(WireCode::AuthForbidden)
            .check("the Group stays active", still_active),
        Scenario::new("group_archive: a snapshot that misses the Group's last Event")
            .given(cancelled())
            .when(archive(Forgery::StaleHead))
            .watch(m)
            .refused(WireCode::RevisionConflict)
            .check("the Group stays active", still_active),
        Scenario::new("membership.change: a cancelled Mission's Group still takes one")
            .given(cancelled())
            .when(by(OWNER, "membership.change", "", worker_membership()))
            .emits(&["membership.changed"]),
        Scenario::new("membership.change: an archived Group accepts no further Command")
            .given(cancelled())
            .given(vec![Step::Perform(archive(Forgery::None))])
            .when(by(OWNER, "membership.change", "", worker_membership()))
            .refused(WireCode::InvalidStateTransition),
    ]
}
