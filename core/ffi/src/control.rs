//! The human control interface (`missionweaveprotocol_engine::control`, reference §1.6) for
//! the npm package's `HumanControl` and `HumanIdentity` on both backends (napi and
//! WebAssembly), one function per operation: the request and Command are JSON documents read
//! by the core's lossless parser; refusals are the core's `ControlError` (`ArgumentError`).

use missionweaveprotocol::json::{Value, parse};
use missionweaveprotocol::schema_formats::decode_base64url;
use missionweaveprotocol_engine::control;
use serde_json::value::RawValue;

use crate::envelope::{Failure, finish};
use crate::shapes::{Call, Res, run};

fn document(a: &Call<'_>, index: usize, name: &str) -> Res<Value> {
    let raw: Box<RawValue> = a.arg(index, name)?;
    parse(raw.get().as_bytes()).map_err(|e| Failure::error(&e))
}

/// `[request]`: the unsigned wire Command.
pub fn command(args: &str) -> String {
    run(args, |a| {
        control::build(&document(a, 0, "request")?).map_err(|e| Failure::error(&e))
    })
}

/// `[{command, event, mission}]`: the unsigned Approval Decision document.
pub fn approval(args: &str) -> String {
    run(args, |a| {
        control::approval_document(&document(a, 0, "request")?).map_err(|e| Failure::error(&e))
    })
}

/// `[humanId, events]`: `{mission, membership}` from the Group's Event documents alone
/// (`control::view`: what the MissionOwner's page passes to [`command`]).
pub fn view(args: &str) -> String {
    run(args, |a| {
        let human_id: String = a.arg(0, "humanId")?;
        let events = match document(a, 1, "events")? {
            Value::Array(events) => events,
            _ => {
                return Err(Failure::argument(
                    "events: expected a list of Event documents",
                ));
            }
        };
        control::view(&human_id, &events).map_err(|e| Failure::error(&e))
    })
}

/// `[command, keyId, publicKey (base64url)]`: whether the signature holds.
pub fn verify(args: &str) -> String {
    run(args, |a| {
        let command = document(a, 0, "command")?;
        let key_id: String = a.arg(1, "keyId")?;
        let public: String = a.arg(2, "publicKey")?;
        let public = decode_base64url(&public)
            .ok_or_else(|| Failure::argument("publicKey: expected base64url text"))?;
        Ok(Value::Bool(control::verify_signature(
            &command, &key_id, &public,
        )))
    })
}

/// The key ID a new human key gets when none is given (the reference's `<humanId>:signing-key`,
/// `control::default_key_id`).
pub fn default_key_id(human_id: &str) -> String {
    finish(Ok(Value::string(control::default_key_id(human_id))))
}
