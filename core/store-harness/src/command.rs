//! Signed wire Commands: [`WireCommand`] (the bytes and what the harness needs to find their
//! effect in a store) and [`CommandSigner`], which builds the §15.1 envelope each actor type
//! carries and signs it (Command profile, §6.4).
//!
//! Every Command is issued at the one fixed instant [`ISSUED_AT`] and performed at [`NOW`]:
//! with Ed25519's deterministic signatures, the same inputs give the same bytes in every
//! process, every time (a re-sent Command is byte-identical, §15.1 idempotency).

use missionweaveprotocol::json;
use missionweaveprotocol::{Principal, PrincipalType, SignedDocumentCodec, SignedDocumentKind};
use missionweaveprotocol_engine::store::ReceiptKey;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

use crate::error::HarnessError;
use crate::keys::Keys;

/// 2026-07-15T09:30:00Z: the `now` every harness Command is performed at.
pub const NOW: UnixMillis = UnixMillis(1_784_107_800_000);
/// [`NOW`] as the `issuedAt` of every harness Command (fresh at `NOW`, §6.4 freshness).
pub const ISSUED_AT: &str = "2026-07-15T09:30:00Z";

/// One signed wire Command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireCommand {
    /// The Command kind.
    pub kind: String,
    /// The signer (`actor`).
    pub actor: Principal,
    /// Its Action ID (the idempotency key with the actor, §15.1).
    pub action_id: String,
    /// The Group it is addressed to; `None` for an Organization-scoped service Command.
    pub group: Option<String>,
    /// The signed wire bytes (`perform_bytes` input).
    pub bytes: Vec<u8>,
}

impl WireCommand {
    /// The deduplication receipt key the store records for it (§15.1).
    pub fn receipt_key(&self) -> ReceiptKey {
        ReceiptKey::new(self.actor.kind.as_str(), &self.actor.id, &self.action_id)
    }
}

/// Signs harness Commands with the harness keys.
#[derive(Debug, Clone, Copy)]
pub struct CommandSigner<'k> {
    keys: &'k Keys,
}

impl<'k> CommandSigner<'k> {
    /// A signer over `keys`.
    pub fn new(keys: &'k Keys) -> Self {
        Self { keys }
    }

    /// The Group Command `kind` by `actor` in `group` with `payload` (JSON object text) and
    /// further envelope members `extra` (JSON members text, may be empty). Agents carry
    /// Session Epoch 1 (the setup opens each Agent's first Session, §6.3) and Membership Epoch
    /// 1; humans Membership Epoch 1 except on the creation kinds (§15.1).
    pub fn group_command(
        &self,
        group: &str,
        kind: &str,
        actor: &str,
        action_id: &str,
        extra: &str,
        payload: &str,
    ) -> Result<WireCommand, HarnessError> {
        let (principal, _) = self.keys.principal(actor)?;
        let creation = kind == "mission.create" || kind == "mission.create_follow_up";
        let epochs = match principal.kind {
            PrincipalType::Agent => r#""sessionEpoch": 1, "membershipEpoch": 1,"#,
            PrincipalType::Human if !creation => r#""membershipEpoch": 1,"#,
            _ => "",
        };
        let members = format!(r#"{epochs} {} "groupId": "{group}","#, members(extra));
        self.sign(kind, actor, action_id, Some(group), &members, payload)
    }

    /// An Organization-scoped service Command (§15.1, digest A.1): no `groupId`, no epochs.
    pub fn organization_command(
        &self,
        kind: &str,
        actor: &str,
        action_id: &str,
        payload: &str,
    ) -> Result<WireCommand, HarnessError> {
        self.sign(kind, actor, action_id, None, "", payload)
    }

    /// Signs `document` (e.g. an Artifact manifest) as a `kind` signed document with
    /// `signer`'s key; the signed document's canonical JSON text.
    pub fn signed_document(
        &self,
        kind: SignedDocumentKind,
        document: &str,
        signer: &str,
    ) -> Result<String, HarnessError> {
        let (_, key) = self.keys.principal(signer)?;
        let value = json::parse_state(document.as_bytes())
            .map_err(|e| HarnessError::workload(format!("{kind:?} document JSON: {e}")))?;
        let signed = SignedDocumentCodec::new()
            .sign(kind, &value, key)
            .map_err(|e| HarnessError::workload(format!("{kind:?} signing refused: {e}")))?;
        String::from_utf8(signed.bytes)
            .map_err(|e| HarnessError::workload(format!("{kind:?} bytes: {e}")))
    }

    fn sign(
        &self,
        kind: &str,
        actor: &str,
        action_id: &str,
        group: Option<&str>,
        members: &str,
        payload: &str,
    ) -> Result<WireCommand, HarnessError> {
        let (principal, key) = self.keys.principal(actor)?;
        let text = format!(
            r#"{{"protocolVersion": "0.1", "actionId": "{action_id}",
            "actor": {{"type": "{}", "id": "{actor}"}}, {members}
            "kind": "{kind}", "correlationId": "urn:missionweaveprotocol:correlation:harness",
            "issuedAt": "{ISSUED_AT}", "payload": {payload}}}"#,
            principal.kind.as_str()
        );
        let unsigned = json::parse_state(text.as_bytes())
            .map_err(|e| HarnessError::workload(format!("{kind}: unsigned JSON: {e}")))?;
        let bytes = SignedDocumentCodec::new()
            .sign(SignedDocumentKind::Command, &unsigned, key)
            .map_err(|e| HarnessError::workload(format!("{kind}: signing refused: {e}")))?
            .bytes;
        Ok(WireCommand {
            kind: kind.to_owned(),
            actor: principal.clone(),
            action_id: action_id.to_owned(),
            group: group.map(str::to_owned),
            bytes,
        })
    }
}

/// `extra` envelope members followed by a comma, or nothing.
fn members(extra: &str) -> String {
    if extra.is_empty() {
        String::new()
    } else {
        format!("{extra},")
    }
}
