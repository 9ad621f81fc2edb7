//! The `context` module (Context Packages, knowledge publications, Group Snapshots, §13.3,
//! §7.4): one function per operation of `missionweaveprotocol_ffi::context`; a signing one
//! takes the key as `keyId` and seed (empty: no key).

use missionweaveprotocol_ffi::context;
use napi_derive::napi;

#[napi(catch_unwind)]
pub fn context_publish(args: String, key_id: String, seed: &[u8]) -> String {
    context::publish(&args, &key_id, seed)
}

#[napi(catch_unwind)]
pub fn context_verify(args: String) -> String {
    context::verify(&args)
}

#[napi(catch_unwind)]
pub fn context_install(args: String) -> String {
    context::install(&args)
}

#[napi(catch_unwind)]
pub fn context_knowledge_publish(args: String, key_id: String, seed: &[u8]) -> String {
    context::knowledge_publish(&args, &key_id, seed)
}

#[napi(catch_unwind)]
pub fn context_knowledge_verify(args: String) -> String {
    context::knowledge_verify(&args)
}

#[napi(catch_unwind)]
pub fn context_snapshot_archive(args: String, key_id: String, seed: &[u8]) -> String {
    context::snapshot_archive(&args, &key_id, seed)
}

#[napi(catch_unwind)]
pub fn context_snapshot_verify(args: String) -> String {
    context::snapshot_verify(&args)
}
