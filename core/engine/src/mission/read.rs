//! What a Mission decision reads: the Group, its Mission, and for a follow-up the Mission it
//! follows (§7.1). Reads are plain store reads; the decision names every one of them in its
//! write set, so a concurrent change makes the commit fail and the engine decide again.

use missionweaveprotocol::json::Value;

use super::aggregate::{GROUP_KIND, MISSION_DEFINITION_KIND, MISSION_KIND, Mission};
use crate::error::EngineError;
use crate::ingress::VerifiedCommand;
use crate::input;
use crate::store::decoded::decode_shared;
use crate::store::{AggregateKey, Store};
use crate::stored::parsed;

/// A stored Group: its revision and `group.schema.json` document.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupRead {
    pub revision: u64,
    pub document: Value,
}

impl GroupRead {
    /// The Mission of this Group (§4.1: one Mission, one primary Group).
    pub fn mission_id(&self) -> Option<&str> {
        self.document.get("missionId").and_then(Value::as_str)
    }
}

/// Everything a Mission decision may look at.
#[derive(Debug, Clone, PartialEq)]
pub struct MissionRead {
    /// The Command's Group ID.
    pub group_id: String,
    /// The Group, if it exists.
    pub group: Option<GroupRead>,
    /// The Group's Mission, if the Group exists.
    pub mission: Option<Mission>,
    /// For `mission.create`/`create_follow_up`: a Mission already stored under the payload's
    /// `missionId`, if any.
    pub same_id: Option<Mission>,
    /// For `mission.create_follow_up`: the Mission it follows, if it exists.
    pub followed: Option<Mission>,
    /// For `mission.cancel` / `mission.terminate`: the Mission's WorkItems with their store
    /// revisions, in ID order (§10.2 row 18 propagates the closure to the unfinished ones).
    pub work_items: Vec<(u64, crate::work::state::WorkItem)>,
    /// For `mission.create_child`: the parent WorkItem and what creation checks (§14).
    pub child: Option<Box<super::child::ChildRead>>,
    /// For `mission.cancel` / `mission.terminate` / `mission.approve`: the part of the Mission
    /// tree the Command may change (§7.1 propagation, §10.2 rows 16, 17).
    pub family: Option<Box<super::cascade::Family>>,
}

fn read_mission(store: &dyn Store, id: &str) -> Result<Option<Mission>, EngineError> {
    let key = AggregateKey::new(MISSION_KIND, id);
    match store.aggregate(&key)? {
        None => Ok(None),
        // Decoded once per stored revision (the store's memo, when it keeps one): every
        // Command of a Group reads its Mission, which changes far more rarely.
        Some(stored) => {
            decode_shared(store, &key, &stored, |s| Mission::from_stored(&key, s))
                .map(|mission| Some(Mission::clone(&mission)))
        }
    }
}

/// Reads what `command` (a `mission.*` kind) needs.
pub fn read(store: &dyn Store, command: &VerifiedCommand) -> Result<MissionRead, EngineError> {
    let group_id = command
        .group_id()
        .ok_or_else(|| EngineError::invalid("missing_group", "a Mission Command needs groupId"))?
        .to_owned();
    let key = AggregateKey::new(GROUP_KIND, &group_id);
    let group = match store.aggregate(&key)? {
        None => None,
        // Parsed once per stored revision (the store's memo): the Group rarely changes.
        Some(stored) => Some(GroupRead {
            revision: stored.revision,
            document: parsed(store, &key, &stored)?.0.clone(),
        }),
    };
    let mission = match group.as_ref().and_then(GroupRead::mission_id) {
        Some(id) => read_mission(store, id)?,
        None => None,
    };
    let creating = matches!(
        command.kind(),
        "mission.create" | "mission.create_follow_up"
    );
    let same_id = match creating {
        true => match input::opt_text(command.payload(), "missionId")? {
            Some(id) => read_mission(store, id)?,
            None => None,
        },
        false => None,
    };
    let followed = match command.kind() {
        "mission.create_follow_up" => {
            match input::opt_text(command.payload(), "followUpToMissionId")? {
                Some(id) => read_mission(store, id)?,
                None => None,
            }
        }
        _ => None,
    };
    let work_items = match (command.kind(), &mission) {
        ("mission.cancel" | "mission.terminate", Some(m)) => {
            crate::work::read::mission_items(store, m.mission_id())?
        }
        _ => Vec::new(),
    };
    let child = match command.kind() {
        "mission.create_child" => Some(Box::new(super::child::read(store, command)?)),
        _ => None,
    };
    let family = match (command.kind(), &mission) {
        ("mission.cancel" | "mission.terminate" | "mission.approve", Some(m)) => {
            Some(Box::new(super::cascade::read(store, m, command.kind())?))
        }
        _ => None,
    };
    Ok(MissionRead {
        child,
        family,
        group_id,
        group,
        mission,
        same_id,
        followed,
        work_items,
    })
}

/// The whole `mission.schema.json` document of `mission`: its stored part joined with the
/// immutable definition members kept apart since creation (`MISSION_DEFINITION_KIND`). A
/// Mission stored before they were kept apart already holds them.
pub fn full_document(store: &dyn Store, mission: &Mission) -> Result<Value, EngineError> {
    let Value::Object(mut document) = mission.document() else {
        return Ok(mission.document());
    };
    let key = AggregateKey::new(MISSION_DEFINITION_KIND, mission.mission_id());
    if let Some(stored) = store.aggregate(&key)? {
        let definition = parsed(store, &key, &stored)?;
        let Value::Object(members) = &definition.0 else {
            return Err(EngineError::Corrupt {
                key,
                detail: "the definition is not an object".into(),
            });
        };
        for (name, value) in members.iter() {
            if let Some(name) = name.as_str() {
                document.insert(name, value.clone());
            }
        }
    }
    Ok(Value::Object(document))
}
