//! Conversations and Messages (§9, §9.1 last paragraph, digest 2.14): the Message aggregate,
//! the pure decisions of `message.post`, `message.correct`, `message.retract` and
//! `message.redact`, and the engine-wide rule that a Message never authorizes an action
//! (§4 invariant 2).
//!
//! See `decide.rs` (rows and Events), `eligibility.rs` (senders, mentions, Conversations),
//! `payload.rs` (members), `authority.rs` (the non-authority guard) and `docs/messages.md`.

pub(crate) mod aggregate;
mod authority;
mod decide;
mod eligibility;
mod payload;

pub use aggregate::{MESSAGE_KIND, MessageState, StoredMessage, message_key};
pub use authority::{cited_authorities, claims_authority, refuse_message_authority};
pub use payload::MAX_MENTIONS;

use crate::decision::Decision;
use crate::error::EngineError;
use crate::ingress::VerifiedCommand;
use crate::store::Store;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The Command kinds this module decides.
pub const KINDS: [&str; 4] = [
    "message.post",
    "message.correct",
    "message.retract",
    "message.redact",
];

/// Whether [`decide`] handles `kind`.
pub fn handles(kind: &str) -> bool {
    KINDS.contains(&kind)
}

/// The decision for a `message.*` Command: reads the Group, its Mission, the sender's and the
/// mentioned Principals' Memberships and the Messages involved, then decides purely.
pub fn decide(
    store: &dyn Store,
    command: &VerifiedCommand,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    match command.kind() {
        "message.post" => decide::post(store, command, now),
        "message.correct" | "message.retract" | "message.redact" => {
            decide::amend(store, command, now)
        }
        other => Err(EngineError::invalid(
            "unsupported_kind",
            format!("{other} is not a Message Command"),
        )),
    }
}
