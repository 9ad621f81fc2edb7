//! The Command and Event kinds the matrix must cover, read from the embedded pinned schemas
//! (`command.schema.json` `$defs/coreCommandKind` and `$defs/organizationScopedKind`,
//! `event.schema.json` `kind` enum and its Organization-scoped conditional), plus the `ext.`
//! kinds the spec names only in prose and the `ext.` Event kinds the engine emits beyond them.

use missionweaveprotocol::bundle;
use missionweaveprotocol::json::{self, Value};

/// `ext.` Command kinds named by the spec outside the schemas' enums (digest Appendix A.3):
/// the resource-usage record and the Group archive (§7.4, §12), and the two Commands §15.2
/// implies but leaves unnamed, under the reference runtime's names (digest §8 item 6).
pub const PROSE_EXT_COMMANDS: [&str; 4] = [
    "ext.missionweaveprotocol.core.resource_usage_record",
    "ext.missionweaveprotocol.core.group_archive",
    "ext.missionweaveprotocol.core.work_execution_lease_renew",
    "ext.missionweaveprotocol.core.work_dependency_add",
];

/// `ext.` Event kinds named only in prose (digest Appendix A.3).
pub const PROSE_EXT_EVENTS: [&str; 1] = ["ext.missionweaveprotocol.core.resource_usage_recorded"];

/// `ext.` Event kinds the engine emits that neither the schemas nor the prose name: the lease
/// revocation of a Session replacement (§11.3 requires the revocation but names no Event; the
/// reference's `EXECUTION_LEASE_REVOKED`, `docs/engine.md`).
pub const ENGINE_EXT_EVENTS: [&str; 1] =
    ["ext.missionweaveprotocol.core.work_execution_lease_revoked"];

/// Every Command and Event kind, in schema order (core first, then `ext.`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindCatalogue {
    pub commands: Vec<String>,
    pub events: Vec<String>,
}

fn schema(name: &str) -> Result<Value, String> {
    let (_, bytes) = bundle::schema_files()
        .find(|(path, _)| path.ends_with(name))
        .ok_or_else(|| format!("{name} is not embedded"))?;
    json::parse_state(bytes).map_err(|e| format!("{name}: {e}"))
}

fn strings(document: &Value, pointer: &str, name: &str) -> Result<Vec<String>, String> {
    document
        .pointer(pointer)
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{name} has no {pointer}"))?
        .iter()
        .map(|v| {
            v.as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("{name} {pointer}: a kind is not a string"))
        })
        .collect()
}

impl KindCatalogue {
    /// Reads the pinned schemas embedded in the binary.
    pub fn embedded() -> Result<Self, String> {
        let command = schema("command.schema.json")?;
        let event = schema("event.schema.json")?;
        let mut commands = strings(&command, "/$defs/coreCommandKind/enum", "command schema")?;
        commands.extend(strings(
            &command,
            "/$defs/organizationScopedKind/enum",
            "command schema",
        )?);
        commands.extend(PROSE_EXT_COMMANDS.iter().map(|k| (*k).to_owned()));
        let mut events = strings(&event, "/properties/kind/anyOf/0/enum", "event schema")?;
        events.extend(strings(
            &event,
            "/allOf/0/if/properties/kind/enum",
            "event schema",
        )?);
        events.extend(PROSE_EXT_EVENTS.iter().map(|k| (*k).to_owned()));
        events.extend(ENGINE_EXT_EVENTS.iter().map(|k| (*k).to_owned()));
        Ok(Self { commands, events })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_pinned_schemas_name_38_commands_and_40_events() {
        let kinds = KindCatalogue::embedded().unwrap();
        assert_eq!(kinds.commands.len(), 32 + 2 + 4);
        assert_eq!(kinds.events.len(), 36 + 2 + 1 + 1);
        assert!(kinds.commands.iter().any(|k| k == "mission.create_child"));
        assert!(
            kinds
                .events
                .iter()
                .any(|k| k == "ext.missionweaveprotocol.identity.session_opened")
        );
    }
}
