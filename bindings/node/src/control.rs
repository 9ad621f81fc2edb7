//! The human control interface (`missionweaveprotocol_ffi::control`, reference §1.6): the
//! Command and Approval Decision builders, the signature check and the default key ID.

use missionweaveprotocol_ffi::control;
use napi_derive::napi;

/// `[request]` → the unsigned wire Command.
#[napi(catch_unwind)]
pub fn control_command(args: String) -> String {
    control::command(&args)
}

/// `[{command, event, mission}]` → the unsigned Approval Decision document.
#[napi(catch_unwind)]
pub fn control_approval(args: String) -> String {
    control::approval(&args)
}

/// `[humanId, events]` → `{mission, membership}` from the Group's Events alone.
#[napi(catch_unwind)]
pub fn control_view(args: String) -> String {
    control::view(&args)
}

/// `[command, keyId, publicKey]` → whether the signature holds.
#[napi(catch_unwind)]
pub fn control_verify(args: String) -> String {
    control::verify(&args)
}

/// `<humanId>:signing-key`, the core's default key ID of a new human key.
#[napi(catch_unwind)]
pub fn control_default_key_id(human_id: String) -> String {
    control::default_key_id(&human_id)
}
