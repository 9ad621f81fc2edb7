//! §4 invariant 2 on every Command: "A Message, mention, summary, Context Package, or model
//! output MUST NOT by itself authorize a tool call, business action, WorkItem assignment,
//! budget expenditure, or permission grant" (§9: "To act, an authorized actor must create or
//! authorize a WorkItem through a Command"; §18: no extension may weaken the rule).
//!
//! A Command cites its authority by ID: the envelope's `cooperationOverrideGrantId` (§20) and
//! the payload members named `…GrantId`, `…ApprovalId` or `…AuthorizationId` (a Delegation
//! Grant, §9.1; an Execution Approval, §12). Whatever kind decides the Command, one of those
//! naming a Message of the Command's Group is refused `AUTH_FORBIDDEN`
//! (`message_is_not_authority`) before the kind's decision reads anything: a Message confers
//! no permission, whatever it says. (The conformance vector `message-authorizes-action` is the
//! Message-side floor: a Message with `authority: true` never commits, `payload.rs`.)

use missionweaveprotocol::json::Value;

use super::aggregate::StoredMessage;
use crate::error::EngineError;
use crate::ingress::VerifiedCommand;
use crate::store::Store;

/// The camelCase suffixes of payload members that cite an authorization by ID.
const CITATION_SUFFIXES: [&str; 3] = ["GrantId", "ApprovalId", "AuthorizationId"];

/// The IDs `command` cites as its authority: `(member, id)`.
pub fn cited_authorities(command: &VerifiedCommand) -> Vec<(String, &str)> {
    let mut cited = Vec::new();
    if let Some(id) = command.cooperation_override_grant_id() {
        cited.push(("cooperationOverrideGrantId".to_owned(), id));
    }
    if let Some(payload) = command.payload().as_object() {
        for (name, value) in payload.iter() {
            let name = name.to_lossy();
            let cites = CITATION_SUFFIXES.iter().any(|s| name.ends_with(s));
            if let (true, Some(id)) = (cites, value.as_str()) {
                cited.push((name.into_owned(), id));
            }
        }
    }
    cited
}

/// Refuses `command` if it cites a Message of its Group as its authority.
pub fn refuse_message_authority(
    store: &dyn Store,
    command: &VerifiedCommand,
) -> Result<(), EngineError> {
    let Some(group_id) = command.group_id() else {
        return Ok(());
    };
    for (member, id) in cited_authorities(command) {
        if StoredMessage::read(store, group_id, id)?.is_some() {
            return Err(EngineError::forbidden(
                "message_is_not_authority",
                format!(
                    "{member} names Message {id}: a Message never authorizes an action (§4 invariant 2, §9)"
                ),
            ));
        }
    }
    Ok(())
}

/// Whether `value` is a Message document claiming authority (`authority` other than `false`).
pub fn claims_authority(value: &Value) -> bool {
    !matches!(value.get("authority"), None | Some(Value::Bool(false)))
}
