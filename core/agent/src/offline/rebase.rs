//! Reading the binding off a Command, signing, and rebasing on reconnect (§11.5).

use missionweaveprotocol::crypto::Signer;
use missionweaveprotocol::json::{Object, Value};
use missionweaveprotocol::{SignedDocumentCodec, SignedDocumentKind};

use missionweaveprotocol_kernel::offline::{
    OFFLINE_EXECUTION_EXTENSION, OFFLINE_EXECUTION_EXTENSION_VERSION, is_reversible,
};
use missionweaveprotocol_kernel::offline::{
    OfflineError, OfflineProgressBinding, offline_binding_of,
};
use missionweaveprotocol_kernel::resources::MAX_SAFE_INTEGER;
use missionweaveprotocol_kernel::snapshot_json::num_u;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// `command` with the binding attached as the critical extension.
pub(crate) fn with_binding(
    command: &Object,
    binding: &OfflineProgressBinding,
) -> Result<Object, OfflineError> {
    let mut envelope = Object::new();
    envelope.insert(
        "version",
        Value::string(OFFLINE_EXECUTION_EXTENSION_VERSION),
    );
    envelope.insert("critical", Value::Bool(true));
    envelope.insert("data", binding.to_value()?);
    let mut extensions = command
        .get("extensions")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    extensions.insert(OFFLINE_EXECUTION_EXTENSION, Value::Object(envelope));
    let mut out = command.clone();
    out.insert("extensions", Value::Object(extensions));
    Ok(out)
}

/// Signs `command` (any `signature` member is dropped first) as a normative Command (§6.4).
pub(crate) fn sign(command: Object, signer: &dyn Signer) -> Result<Value, OfflineError> {
    let mut unsigned = command;
    unsigned.remove("signature");
    SignedDocumentCodec::new()
        .sign(
            SignedDocumentKind::Command,
            &Value::Object(unsigned),
            signer,
        )
        .map(|signed| signed.document)
        .map_err(|e| OfflineError::Signing {
            detail: e.to_string(),
        })
}

/// The current session a buffered Command is rebased onto (§11.5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RebaseInput<'a> {
    /// The current Session Epoch.
    pub session_epoch: u64,
    /// The current Membership Epoch.
    pub membership_epoch: u64,
    /// The new `issuedAt` (also the signature's `createdAt`).
    pub issued_at: UnixMillis,
    /// For `work.checkpoint`: the current Execution Lease the checkpoint now cites (the
    /// binding keeps the historical one).
    pub execution_lease_id: Option<&'a str>,
}

/// Rebases a buffered Command onto the current session (§11.5): keeps the binding unchanged,
/// sets `issuedAt`, `sessionEpoch` and `membershipEpoch` (and, for a checkpoint, the current
/// `leaseId`), and re-signs with `signer`, whose Agent must be the binding's.
pub fn rebase_offline_command(
    command: &Value,
    signer: &dyn Signer,
    input: &RebaseInput<'_>,
) -> Result<Value, OfflineError> {
    let object = command
        .as_object()
        .ok_or(OfflineError::InvalidArgument("command"))?;
    let kind = object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !is_reversible(kind) {
        return Err(OfflineError::NotReversible {
            kind: kind.to_owned(),
        });
    }
    let binding = offline_binding_of(command)?
        .ok_or_else(|| OfflineError::binding("the Command carries no offline binding"))?;
    if command.pointer("/actor/id").and_then(Value::as_str) != Some(binding.agent_id.as_str()) {
        return Err(OfflineError::OutsideAssignment { member: "actor" });
    }
    for (name, epoch) in [
        ("session_epoch", input.session_epoch),
        ("membership_epoch", input.membership_epoch),
    ] {
        if epoch == 0 || epoch > MAX_SAFE_INTEGER {
            return Err(OfflineError::InvalidArgument(name));
        }
    }
    if input.session_epoch < binding.session_epoch {
        return Err(OfflineError::InvalidArgument("session_epoch"));
    }
    let issued_at = input
        .issued_at
        .to_rfc3339()
        .ok_or(OfflineError::InvalidArgument("issued_at"))?;
    let mut out = object.clone();
    out.insert("issuedAt", Value::string(issued_at));
    out.insert("sessionEpoch", num_u(input.session_epoch));
    out.insert("membershipEpoch", num_u(input.membership_epoch));
    if let Some(lease_id) = input.execution_lease_id {
        if kind != "work.checkpoint" {
            return Err(OfflineError::InvalidArgument("execution_lease_id"));
        }
        if lease_id.trim().is_empty() {
            return Err(OfflineError::InvalidArgument("execution_lease_id"));
        }
        let mut payload = out
            .get("payload")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        payload.insert("leaseId", Value::string(lease_id));
        out.insert("payload", Value::Object(payload));
    }
    sign(out, signer)
}
