//! The plain inputs of one Event (`event.schema.json`, §15.2).

use missionweaveprotocol::Principal;
use missionweaveprotocol::json::{Object, Value};

use crate::ingress::VerifiedCommand;

/// What caused an Event (§15.2: "Automatic Events MAY be caused by a Command, Event, timer or
/// policy").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CauseType {
    Command,
    Event,
    Timer,
    Policy,
}

impl CauseType {
    /// The wire spelling (`cause.type`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Command => "command",
            Self::Event => "event",
            Self::Timer => "timer",
            Self::Policy => "policy",
        }
    }
}

/// `cause`: its type and the causing object's ID (a Command's Action ID, an Event ID, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    pub kind: CauseType,
    pub id: String,
}

/// The Group-order members every Group Event carries (§15.2). Organization-scoped Events
/// (`…agent_card_registered`, `…session_opened`) carry none of them (`event.schema.json`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupPosition {
    pub group_id: String,
    /// The Group sequence: contiguous from 1, assigned by the Group Authority (§15.2).
    pub sequence: u64,
    /// The revision of the aggregate the Event changes, after the change (§15.3).
    pub aggregate_revision: u64,
}

/// One Event before its ID, time and signature.
#[derive(Debug, Clone, PartialEq)]
pub struct EventDraft {
    pub kind: String,
    pub actor: Principal,
    pub cause: Cause,
    pub correlation_id: String,
    /// `None` only for the Organization-scoped kinds.
    pub position: Option<GroupPosition>,
    pub conversation_id: Option<String>,
    pub work_item_id: Option<String>,
    /// The payload object.
    pub payload: Object,
    /// `sha256:` of the causing Command's signing input.
    pub command_hash: Option<String>,
    /// Relayed extension members (§18, §21).
    pub extensions: Option<Object>,
}

impl EventDraft {
    /// The draft of an Event caused by `command`: its actor, `cause {command, actionId}`,
    /// correlation, Conversation and WorkItem IDs, `commandHash` = the Command's signing hash
    /// (the verified hash idempotency compares, §15.1), and its noncritical extensions relayed
    /// unchanged (§18: "an unknown noncritical extension MAY be kept and relayed"; §21: preserved
    /// byte-equivalently). Critical extensions are interpreted by the engine, not relayed.
    pub fn for_command(
        command: &VerifiedCommand,
        kind: impl Into<String>,
        payload: Object,
    ) -> Self {
        Self {
            kind: kind.into(),
            actor: command.actor().clone(),
            cause: Cause {
                kind: CauseType::Command,
                id: command.action_id().to_owned(),
            },
            correlation_id: command.correlation_id().to_owned(),
            position: None,
            conversation_id: command.conversation_id().map(str::to_owned),
            work_item_id: command.work_item_id().map(str::to_owned),
            payload,
            command_hash: Some(command.signing_hash().to_owned()),
            extensions: noncritical_extensions(command.extensions()),
        }
    }

    /// The same draft placed in a Group's order.
    pub fn at(
        mut self,
        group_id: impl Into<String>,
        sequence: u64,
        aggregate_revision: u64,
    ) -> Self {
        self.position = Some(GroupPosition {
            group_id: group_id.into(),
            sequence,
            aggregate_revision,
        });
        self
    }
}

/// The members of `extensions` whose `critical` is `false`, values untouched; `None` if none.
pub(crate) fn noncritical_extensions(extensions: Option<&Value>) -> Option<Object> {
    let mut kept = Object::new();
    for (name, value) in extensions?.as_object()?.iter() {
        let critical = value.get("critical").and_then(Value::as_bool);
        // The schema makes every name an ASCII URI and `critical` a boolean.
        if let (Some(name), Some(false)) = (name.as_str(), critical) {
            kept.insert(name, value.clone());
        }
    }
    (!kept.is_empty()).then_some(kept)
}
