//! One builder per operation. The request is one JSON object (the bindings pass it as they
//! queried it; absent options are absent or `null`):
//!
//! ```json
//! {"operation": "approve", "humanId": "…", "actionId": "…", "issuedAt": "…",
//!  "mission": {mission.schema.json}, "group": {group.schema.json},
//!  "membership": {membership.schema.json} | null, "events": [Event, …],
//!  "coordinatorCard": {agent-card.schema.json} | null, "args": {…}}
//! ```
//!
//! Members each Command kind carries are the engine's (`docs/engine.md` "Payloads",
//! `message/payload.rs`, `approval/grant.rs`); defaults are derived, never random, so the same
//! request builds the same Command.

use missionweaveprotocol::json::{Number, Object, Value};

use super::approval::latest_submission;
use super::error::ControlError;

/// The wire Command of `request` (unsigned), or why it cannot be built.
pub fn build(request: &Value) -> Result<Value, ControlError> {
    let operation = text(request, "operation")?;
    let args = match request.get("args") {
        None | Some(Value::Null) => &Value::Object(Object::new()),
        Some(v @ Value::Object(_)) => v,
        Some(_) => return Err(ControlError::invalid("args", "an object")),
    };
    let r = Request { request, args };
    match operation {
        "create" => r.create(),
        "direct" => r.direct(),
        "request_changes" => r.request_changes(),
        "approve" => r.approve(),
        "approve_execution" => r.approve_execution(),
        "cancel" => r.cancel(),
        "replace_coordinator" => r.replace_coordinator(),
        other => Err(ControlError::UnknownOperation(other.to_owned())),
    }
}

/// The default lease ID of Coordinator Epoch `epoch` (§7.2: each assignment needs a new one).
fn lease_id(mission_id: &str, epoch: u64) -> String {
    format!("{mission_id}:coordinator-lease:{epoch}")
}

struct Request<'a> {
    request: &'a Value,
    args: &'a Value,
}

impl<'a> Request<'a> {
    fn arg(&self, name: &str) -> Option<&'a Value> {
        present(self.args, name)
    }

    fn arg_text(&self, name: &str) -> Result<&'a str, ControlError> {
        text_of(self.arg(name), &format!("args.{name}"))
    }

    fn opt_arg_text(&self, name: &str) -> Result<Option<&'a str>, ControlError> {
        self.arg(name)
            .map(|v| text_of(Some(v), &format!("args.{name}")))
            .transpose()
    }

    fn opt_arg_u64(&self, name: &str) -> Result<Option<u64>, ControlError> {
        self.arg(name)
            .map(|v| u64_of(Some(v), &format!("args.{name}")))
            .transpose()
    }

    fn projection(&self, name: &str) -> Result<&'a Value, ControlError> {
        match present(self.request, name) {
            Some(v @ Value::Object(_)) => Ok(v),
            Some(_) => Err(ControlError::invalid(name, "an object")),
            None => Err(ControlError::missing(name)),
        }
    }

    /// The envelope every operation shares: the human actor, the Action ID, `issuedAt`.
    fn envelope(
        &self,
        kind: &str,
        correlation: &str,
        payload: Object,
    ) -> Result<Object, ControlError> {
        let mut actor = Object::new();
        actor.insert("type", Value::string("human"));
        actor.insert("id", Value::string(text(self.request, "humanId")?));
        let mut command = Object::new();
        command.insert("protocolVersion", Value::string("0.1"));
        command.insert("actionId", Value::string(text(self.request, "actionId")?));
        command.insert("actor", Value::Object(actor));
        command.insert("kind", Value::string(kind));
        command.insert("correlationId", Value::string(correlation));
        command.insert("issuedAt", Value::string(text(self.request, "issuedAt")?));
        command.insert("payload", Value::Object(payload));
        Ok(command)
    }

    /// A Command in the Mission's Group: `groupId`, the human's current Membership Epoch (§8:
    /// a Group-scoped human Command carries it) and, for Mission kinds, `expectedRevision` =
    /// the Mission revision read (§15.3; the engine compares it).
    fn in_mission(
        &self,
        kind: &str,
        payload: Object,
        revision: bool,
    ) -> Result<Value, ControlError> {
        let mission = self.projection("mission")?;
        let mission_id = text_of(mission.get("missionId"), "mission.missionId")?;
        let mut command = self.envelope(kind, mission_id, payload)?;
        command.insert(
            "groupId",
            Value::string(text_of(mission.get("groupId"), "mission.groupId")?),
        );
        if let Some(membership) = present(self.request, "membership") {
            let epoch = u64_of(
                membership.get("membershipEpoch"),
                "membership.membershipEpoch",
            )?;
            command.insert("membershipEpoch", num(epoch));
        }
        if revision {
            command.insert("expectedRevision", num(mission_revision(mission)?));
        }
        Ok(Value::Object(command))
    }

    fn create(&self) -> Result<Value, ControlError> {
        let mission_id = self.arg_text("missionId")?;
        let group_id = self.arg_text("groupId")?;
        let coordinator_id = self.arg_text("coordinatorId")?;
        let title = self.arg_text("title")?;
        let budget = match self.arg("budget") {
            None => return Err(ControlError::BudgetRequired),
            Some(b @ Value::Object(_)) => b.clone(),
            Some(_) => return Err(ControlError::invalid("args.budget", "an object")),
        };
        let mut coordinator = Object::new();
        coordinator.insert("agentId", Value::string(coordinator_id));
        coordinator.insert("agentCardVersion", num(card_version(self.request)?));
        let lease = match self.opt_arg_text("coordinatorLeaseId")? {
            Some(lease) => lease.to_owned(),
            None => lease_id(mission_id, 1),
        };
        coordinator.insert("leaseId", Value::string(lease));
        let mut p = Object::new();
        p.insert("missionId", Value::string(mission_id));
        p.insert("groupId", Value::string(group_id));
        p.insert("objective", Value::string(self.arg_text("objective")?));
        p.insert(
            "definitionOfDone",
            definition_of_done(self.arg("definitionOfDone"))?,
        );
        p.insert("budget", budget);
        p.insert("deadline", Value::string(self.arg_text("deadline")?));
        p.insert(
            "approvalPolicy",
            match self.arg("approvalPolicy") {
                Some(policy) => policy.clone(),
                // A root Mission needs the MissionOwner's final approval (mission.schema.json).
                None => {
                    let mut policy = Object::new();
                    policy.insert("finalHumanApproval", Value::Bool(true));
                    policy.insert("highRiskExecutionApproval", Value::Bool(true));
                    Value::Object(policy)
                }
            },
        );
        p.insert("coordinator", Value::Object(coordinator));
        let conversation = match self.opt_arg_text("mainConversationId")? {
            Some(c) => c.to_owned(),
            None => format!("{mission_id}:conversation:main"),
        };
        p.insert("mainConversationId", Value::string(conversation));
        p.insert(
            "coordinatorLeaseSeconds",
            num(self.opt_arg_u64("coordinatorLeaseSeconds")?.unwrap_or(300)),
        );
        let mut command = self.envelope("mission.create", mission_id, p)?;
        command.insert("groupId", Value::string(group_id));
        // The reference's `title` and `permissions` have no member in mission.schema.json; they
        // travel as a noncritical extension the engine relays into the Event (§18), never lost.
        let mut data = Object::new();
        data.insert("title", Value::string(title));
        let permissions = match self.arg("permissions") {
            None => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|i| text_of(Some(i), "args.permissions[]").map(Value::string))
                .collect::<Result<_, _>>()?,
            Some(_) => {
                return Err(ControlError::invalid(
                    "args.permissions",
                    "an array of strings",
                ));
            }
        };
        data.insert("permissions", Value::Array(permissions));
        let mut extension = Object::new();
        extension.insert("version", Value::string("1.0.0"));
        extension.insert("critical", Value::Bool(false));
        extension.insert("data", Value::Object(data));
        let mut extensions = Object::new();
        extensions.insert(CREATE_EXTENSION, Value::Object(extension));
        command.insert("extensions", Value::Object(extensions));
        Ok(Value::Object(command))
    }

    fn direct(&self) -> Result<Value, ControlError> {
        let conversation = match self.opt_arg_text("conversationId")? {
            Some(c) => c.to_owned(),
            None => {
                let group = self.projection("group")?;
                text_of(group.get("mainConversationId"), "group.mainConversationId")?.to_owned()
            }
        };
        let message_id = match self.opt_arg_text("messageId")? {
            Some(m) => m.to_owned(),
            None => format!("{}:message", text(self.request, "actionId")?),
        };
        // §9: content is a list of parts; a text is one `text` part, kept exactly (gap 18).
        let content = match self.arg("content") {
            Some(Value::String(_)) => {
                let mut part = Object::new();
                part.insert("type", Value::string("text"));
                part.insert("text", Value::string(self.arg_text("content")?));
                Value::Array(vec![Value::Object(part)])
            }
            Some(parts @ Value::Array(_)) => parts.clone(),
            Some(_) => {
                return Err(ControlError::invalid(
                    "args.content",
                    "a string or a list of parts",
                ));
            }
            None => return Err(ControlError::missing("args.content")),
        };
        let mut p = Object::new();
        p.insert("messageId", Value::string(message_id));
        p.insert("conversationId", Value::string(conversation));
        p.insert("content", content);
        match self.arg("mentions") {
            None => {}
            Some(Value::Array(items)) if items.is_empty() => {}
            Some(Value::Array(items)) => {
                for item in items {
                    if missionweaveprotocol::Principal::from_value(item).is_none() {
                        return Err(ControlError::invalid(
                            "args.mentions[]",
                            "a Principal {type, id}",
                        ));
                    }
                }
                p.insert("mentions", Value::Array(items.clone()));
            }
            Some(_) => {
                return Err(ControlError::invalid(
                    "args.mentions",
                    "a list of Principals",
                ));
            }
        }
        self.in_mission("message.post", p, false)
    }

    /// The submission an approval decision binds: the Mission must await approval (the
    /// reference's "nothing submitted" `ValueError` otherwise).
    fn submitted(&self, need_log: bool) -> Result<(u64, Vec<String>), ControlError> {
        let mission = self.projection("mission")?;
        let mission_id = text_of(mission.get("missionId"), "mission.missionId")?;
        let state = text_of(mission.get("state"), "mission.state")?;
        let nothing = || ControlError::NothingSubmitted {
            mission_id: mission_id.to_owned(),
            state: state.to_owned(),
        };
        if state != "awaiting_approval" {
            return Err(nothing());
        }
        if !need_log {
            return Ok((0, Vec::new()));
        }
        let events = match present(self.request, "events") {
            Some(Value::Array(events)) => events.as_slice(),
            Some(_) => return Err(ControlError::invalid("events", "a list of Event documents")),
            None => &[],
        };
        let found = latest_submission(mission_id, events).ok_or_else(nothing)?;
        Ok((found.mission_revision, found.artifact_hashes))
    }

    fn request_changes(&self) -> Result<Value, ControlError> {
        let given = self.opt_arg_u64("missionRevision")?;
        let (submitted, _) = self.submitted(given.is_none())?;
        let mut p = Object::new();
        p.insert("missionRevision", num(given.unwrap_or(submitted)));
        p.insert("feedback", Value::string(self.arg_text("feedback")?));
        self.in_mission("mission.request_changes", p, true)
    }

    fn approve(&self) -> Result<Value, ControlError> {
        let given_revision = self.opt_arg_u64("missionRevision")?;
        let given_hashes = match self.arg("artifactHashes") {
            None => None,
            Some(Value::Array(items)) => Some(
                items
                    .iter()
                    .map(|i| text_of(Some(i), "args.artifactHashes[]").map(str::to_owned))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            Some(_) => {
                return Err(ControlError::invalid(
                    "args.artifactHashes",
                    "a list of sha256 hashes",
                ));
            }
        };
        let need_log = given_revision.is_none() || given_hashes.is_none();
        let (revision, hashes) = self.submitted(need_log)?;
        let approval_id = match self.opt_arg_text("approvalId")? {
            Some(a) => a.to_owned(),
            None => format!("{}:approval", text(self.request, "actionId")?),
        };
        let mut p = Object::new();
        p.insert("approvalId", Value::string(approval_id));
        p.insert("missionRevision", num(given_revision.unwrap_or(revision)));
        let hashes = given_hashes.unwrap_or(hashes);
        p.insert(
            "artifactHashes",
            Value::Array(hashes.into_iter().map(Value::string).collect()),
        );
        p.insert(
            "acceptancePolicyVersion",
            Value::string(
                self.opt_arg_text("acceptancePolicyVersion")?
                    .unwrap_or("1.0.0"),
            ),
        );
        if let Some(comments) = self.opt_arg_text("comments")? {
            p.insert("comments", Value::string(comments));
        }
        self.in_mission("mission.approve", p, true)
    }

    fn approve_execution(&self) -> Result<Value, ControlError> {
        let approval_id = match self.opt_arg_text("approvalId")? {
            Some(a) => a.to_owned(),
            None => format!("{}:approval", text(self.request, "actionId")?),
        };
        let mut p = Object::new();
        p.insert("approvalId", Value::string(approval_id));
        p.insert("workItemId", Value::string(self.arg_text("workItemId")?));
        p.insert(
            "ownershipEpoch",
            num(u64_of(self.arg("ownershipEpoch"), "args.ownershipEpoch")?),
        );
        for name in ["operations", "resources"] {
            match self.arg(name) {
                Some(list @ Value::Array(_)) => p.insert(name, list.clone()),
                None if name == "resources" => p.insert(name, Value::Array(Vec::new())),
                None => return Err(ControlError::missing(format!("args.{name}"))),
                Some(_) => {
                    return Err(ControlError::invalid(
                        format!("args.{name}"),
                        "a list of strings",
                    ));
                }
            }
        }
        if let Some(budget) = self.arg("budget") {
            p.insert("budget", budget.clone());
        }
        p.insert(
            "expiresInSeconds",
            num(self.opt_arg_u64("expiresInSeconds")?.unwrap_or(300)),
        );
        if let Some(comments) = self.opt_arg_text("comments")? {
            p.insert("comments", Value::string(comments));
        }
        self.in_mission("approval.grant_execution", p, false)
    }

    fn cancel(&self) -> Result<Value, ControlError> {
        let mut p = Object::new();
        p.insert("reason", Value::string(self.arg_text("reason")?));
        self.in_mission("mission.cancel", p, true)
    }

    fn replace_coordinator(&self) -> Result<Value, ControlError> {
        let mission = self.projection("mission")?;
        let mission_id = text_of(mission.get("missionId"), "mission.missionId")?;
        let epoch = u64_of(
            mission
                .get("coordinator")
                .and_then(|c| c.get("coordinatorEpoch")),
            "mission.coordinator.coordinatorEpoch",
        )?;
        let version = match self.opt_arg_u64("agentCardVersion")? {
            Some(v) => v,
            None => card_version(self.request)?,
        };
        let lease = match self.opt_arg_text("leaseId")? {
            Some(lease) => lease.to_owned(),
            None => lease_id(mission_id, epoch.saturating_add(1)),
        };
        let mut p = Object::new();
        p.insert("agentId", Value::string(self.arg_text("coordinatorId")?));
        p.insert("agentCardVersion", num(version));
        p.insert("leaseId", Value::string(lease));
        p.insert(
            "leaseSeconds",
            num(self.opt_arg_u64("leaseSeconds")?.unwrap_or(300)),
        );
        self.in_mission("mission.assign_coordinator", p, true)
    }
}

/// The extension carrying the reference's `title` and `permissions` of `create`.
pub const CREATE_EXTENSION: &str = "urn:missionweaveprotocol:extension:human-control-create";

/// The registered Agent Card's `cardVersion`, else 1 (the first version; the engine does not
/// require a registered card to name a Coordinator).
fn card_version(request: &Value) -> Result<u64, ControlError> {
    match present(request, "coordinatorCard") {
        None => Ok(1),
        Some(card) => u64_of(card.get("cardVersion"), "coordinatorCard.cardVersion"),
    }
}

fn definition_of_done(value: Option<&Value>) -> Result<Value, ControlError> {
    let items = match value {
        Some(Value::Array(items)) => items,
        Some(_) => {
            return Err(ControlError::invalid(
                "args.definitionOfDone",
                "a list of criteria (strings or acceptance criteria)",
            ));
        }
        None => return Err(ControlError::missing("args.definitionOfDone")),
    };
    if items.is_empty() {
        return Err(ControlError::EmptyDefinitionOfDone);
    }
    // A plain text becomes an acceptance criterion reviewed by the human (§7.3).
    let criteria = items
        .iter()
        .enumerate()
        .map(|(i, item)| match item {
            Value::String(_) => {
                let mut c = Object::new();
                c.insert("criterionId", Value::string(format!("criterion-{}", i + 1)));
                c.insert("description", item.clone());
                c.insert(
                    "evidenceRequired",
                    Value::Array(vec![Value::string("human_review")]),
                );
                Ok(Value::Object(c))
            }
            Value::Object(_) => Ok(item.clone()),
            _ => Err(ControlError::invalid(
                "args.definitionOfDone[]",
                "a string or an acceptance criterion",
            )),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Value::Array(criteria))
}

fn mission_revision(mission: &Value) -> Result<u64, ControlError> {
    u64_of(mission.get("revision"), "mission.revision")
}

/// A member that is present and not `null`.
fn present<'a>(value: &'a Value, name: &str) -> Option<&'a Value> {
    value.get(name).filter(|v| !matches!(v, Value::Null))
}

fn text<'a>(value: &'a Value, name: &str) -> Result<&'a str, ControlError> {
    text_of(present(value, name), name)
}

fn text_of<'a>(value: Option<&'a Value>, name: &str) -> Result<&'a str, ControlError> {
    match value {
        None | Some(Value::Null) => Err(ControlError::missing(name)),
        Some(v) => v
            .as_str()
            .filter(|s| !s.is_empty())
            .ok_or_else(|| ControlError::invalid(name, "a non-empty string")),
    }
}

fn u64_of(value: Option<&Value>, name: &str) -> Result<u64, ControlError> {
    match value {
        None | Some(Value::Null) => Err(ControlError::missing(name)),
        Some(v) => v
            .as_number()
            .and_then(Number::as_u64)
            .ok_or_else(|| ControlError::invalid(name, "a non-negative integer")),
    }
}

fn num(n: u64) -> Value {
    Value::Number(Number::from_u64(n))
}
