//! The control-plane relay of human Commands (§15: "A control plane may authenticate, relay,
//! and validate `mission.create`, but the signed Command actor and resulting root MissionOwner
//! remain that human") and of Organization service Commands (§15.2).
//!
//! A human MissionOwner holds no Agent session (§6.3: human Commands carry no Session Epoch and
//! MUST NOT invent one), so the WebSocket, whose every Command must be its authenticated
//! Agent's, cannot carry them; nor can it carry an Organization-owned Command signed by a
//! service (§15.2, e.g. the archival service's `…core.group_archive`). The relay takes one
//! signed Command, verifies it exactly as the WebSocket does (six stages against the
//! Organization Registry, freshness, the authorizer — which admits a service only when it is
//! one of the Core's configured policy services and the kind one Organization policy may
//! sign), accepts it only when its actor is a **human** or a **service**, and performs it on
//! the Core. The Command's own signature is the authentication: the relay never signs, never
//! chooses an actor, and an Agent's Command is refused (`AUTH_FORBIDDEN`: Agents are fenced by
//! their session, which the relay does not have). Sans-IO: the server moves the bytes
//! (`POST /control`).

use missionweaveprotocol::{PrincipalType, WireCode};
use missionweaveprotocol_engine::Performed;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

use super::command::{heads_moved, raw_id};
use super::{GatewayCore, GroupMoved, errors};
use crate::frames::ErrorBody;

/// The largest Command body the relay reads (the strict parser's document limit is larger; a
/// human control Command is a few KiB).
pub const MAX_CONTROL_BYTES: usize = 1 << 20;

/// A relayed Command's outcome: its Events (the original ones for a duplicate, §15.1) and the
/// Group heads it moved (one per Group), for the host to wake subscribers (and `NOTIFY` other
/// processes).
#[derive(Debug, Clone, PartialEq)]
pub struct Relayed {
    /// What the Core performed.
    pub performed: Performed,
    /// Head moves, one per Event with a Group position.
    pub moved: Vec<GroupMoved>,
}

/// The refusal of a control Command over [`MAX_CONTROL_BYTES`] (a host that sees the length
/// before reading the body answers it without reading).
pub fn control_too_large() -> ErrorBody {
    ErrorBody::new(
        WireCode::ProtocolViolation,
        format!("a control Command is at most {MAX_CONTROL_BYTES} bytes"),
    )
}

/// Verifies and performs one human (or Organization service) Command's exact bytes, or the refusal (`error.schema.json`
/// body: the wire code, `relatedActionId`, `groupId`; boxed: it is large), with nothing applied.
pub fn relay_human_command(
    core: &dyn GatewayCore,
    bytes: &[u8],
    now: UnixMillis,
) -> Result<Relayed, Box<ErrorBody>> {
    let related = |mut body: ErrorBody, action: Option<String>| {
        body.related_action_id = action;
        Box::new(body)
    };
    if bytes.len() > MAX_CONTROL_BYTES {
        return Err(Box::new(control_too_large()));
    }
    let verified = core.verify(bytes, now).map_err(|error| {
        let group = raw_id(bytes, "groupId");
        related(
            errors::core_error(&error, group.as_deref()),
            raw_id(bytes, "actionId"),
        )
    })?;
    let action = Some(verified.action_id().to_owned());
    let group = verified.group_id().map(str::to_owned);
    if !matches!(
        verified.actor().kind,
        PrincipalType::Human | PrincipalType::Service
    ) {
        let mut body = ErrorBody::new(
            WireCode::AuthForbidden,
            "the control plane relays human and Organization service Commands only; an Agent sends its Commands on its authenticated WebSocket",
        );
        body.group_id = group;
        return Err(related(body, action));
    }
    let performed = core
        .perform(&verified, now)
        .map_err(|error| related(errors::core_error(&error, group.as_deref()), action))?;
    let moved = heads_moved(&performed);
    Ok(Relayed { performed, moved })
}
