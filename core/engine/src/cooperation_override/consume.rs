//! The use of a Cooperation Override Grant by its target Command (§20, digest 2.13 rows 2–5).
//!
//! Before the target transition is accepted the cited Grant must exist, be unexpired and
//! unconsumed, and match the Command's Group (hence Mission), actor (the beneficiary), kind and
//! Action ID; anything else is `AUTH_FORBIDDEN` with nothing applied (`unknown_override_grant`,
//! `override_grant_expired`, `override_grant_consumed`, `override_grant_mismatch`). Only when
//! the limit it names is the one exceeded is it consumed, atomically with the accepted
//! transition; a Grant naming another policy lifts nothing. An idempotent retry of the accepted
//! Command answers with its first Event before any of this runs (§15.1).

use missionweaveprotocol::Principal;
use missionweaveprotocol::json::{Object, Value};

use super::stored::StoredOverride;
use crate::decision::Decision;
use crate::error::EngineError;
use crate::ingress::VerifiedCommand;
use crate::input::rfc3339;
use crate::store::Store;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// A cited Grant that passed every check but the exceeded policy.
#[derive(Debug, Clone)]
pub(crate) struct Cited {
    grant_id: String,
    stored: StoredOverride,
}

impl Cited {
    /// The Grant `command` cites in `cooperationOverrideGrantId`, checked against the
    /// Command (`None`: it cites none).
    pub(crate) fn read(
        store: &dyn Store,
        command: &VerifiedCommand,
        now: UnixMillis,
    ) -> Result<Option<Self>, EngineError> {
        let Some(grant_id) = command.cooperation_override_grant_id() else {
            return Ok(None);
        };
        let Some(stored) = StoredOverride::read(store, grant_id)? else {
            return Err(EngineError::forbidden(
                "unknown_override_grant",
                format!("no Cooperation Override Grant {grant_id} exists"),
            ));
        };
        if stored.consumed.is_some() {
            return Err(EngineError::forbidden(
                "override_grant_consumed",
                format!("Cooperation Override Grant {grant_id} was already used (one-shot)"),
            ));
        }
        if now.0 >= stored.expires_at().0 {
            return Err(EngineError::forbidden(
                "override_grant_expired",
                format!("Cooperation Override Grant {grant_id} has expired"),
            ));
        }
        let beneficiary = stored
            .grant
            .get("beneficiary")
            .and_then(Principal::from_value);
        let mismatch = if Some(stored.text("groupId")) != command.group_id() {
            Some("Group")
        } else if beneficiary.as_ref() != Some(command.actor()) {
            Some("actor")
        } else if stored.text("targetCommandKind") != command.kind() {
            Some("Command kind")
        } else if stored.text("targetActionId") != command.action_id() {
            Some("Action ID")
        } else {
            None
        };
        if let Some(what) = mismatch {
            return Err(EngineError::forbidden(
                "override_grant_mismatch",
                format!("Cooperation Override Grant {grant_id} binds another {what}"),
            ));
        }
        Ok(Some(Self {
            grant_id: grant_id.to_owned(),
            stored,
        }))
    }

    /// The §20 policy the Grant lifts.
    pub(crate) fn policy(&self) -> &str {
        self.stored.text("policyName")
    }

    /// Consumes the Grant in `decision` (the target transition, accepted without the lifted
    /// limit): the Grant is written consumed over the revision read, and the accepted Event
    /// names it.
    pub(crate) fn consume(
        mut self,
        command: &VerifiedCommand,
        mut decision: Decision,
        now: UnixMillis,
    ) -> Result<Decision, EngineError> {
        let mut consumed = Object::new();
        consumed.insert("actionId", Value::string(command.action_id()));
        consumed.insert("actor", command.actor().to_value());
        consumed.insert("consumedAt", Value::string(rfc3339(now)));
        self.stored.consumed = Some(Value::Object(consumed));
        let mut link = Object::new();
        link.insert("grantId", Value::string(&self.grant_id));
        link.insert("policyName", Value::string(self.policy()));
        if let Some(first) = decision.events.first_mut() {
            first
                .draft
                .payload
                .insert("cooperationOverride", Value::Object(link));
        }
        let key = StoredOverride::key(&self.grant_id);
        let blob = self.stored.to_blob()?;
        decision = decision.put(key, self.stored.revision, blob);
        Ok(decision)
    }
}
