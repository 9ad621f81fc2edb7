//! The WebAssembly build: registers the shared conversions of `missionweaveprotocol-ffi`
//! (core/ffi) with wasm-bindgen. Every function returns an envelope string (`{"ok":…}` /
//! `{"error":…}`) that the package's JavaScript wrapper turns into typed objects and `Error`
//! subclasses; nothing throws here.
//!
//! Feature `full` (default) adds admission, the embedded conformance bundles, the bounded
//! authority objects, the Core, and the sans-IO Agent side (`policy`, `auth`, `context`,
//! control) with `crypto.getRandomValues` as the host's randomness. Without it this crate is the verify-only build for pages that only check
//! signatures (`bindings/wasm-verify`, package entry `missionweaveprotocol/verify`).

use wasm_bindgen::prelude::*;

/// `#[wasm_bindgen]` methods of a class holding a `Held` ffi object: each hands its string
/// arguments (a JSON argument array, or nothing) to the ffi method `name` and answers its
/// envelope, exported as `js`. One line per operation; an operation the ffi object lacks does
/// not compile.
#[cfg(feature = "full")]
macro_rules! ops {
    ($class:ident { $($name:ident as $js:ident ( $($arg:ident),* );)* }) => {
        #[wasm_bindgen]
        impl $class {
            $(
                #[wasm_bindgen(js_name = $js)]
                pub fn $name(&mut self, $($arg: &str),*) -> String {
                    self.0.with_mut(|held| held.$name($($arg),*))
                }
            )*
        }
    };
}

#[cfg(feature = "full")]
mod admission;
#[cfg(feature = "full")]
mod auth;
#[cfg(feature = "full")]
mod authority;
#[cfg(feature = "full")]
mod authority_core;
#[cfg(feature = "full")]
mod bundle;
#[cfg(feature = "full")]
mod client;
mod keys;
#[cfg(feature = "full")]
mod policy;
#[cfg(feature = "full")]
mod random;

#[cfg(feature = "full")]
pub use admission::*;
#[cfg(feature = "full")]
pub use auth::*;
#[cfg(feature = "full")]
pub use authority::*;
#[cfg(feature = "full")]
pub use authority_core::*;
#[cfg(feature = "full")]
pub use bundle::*;
#[cfg(feature = "full")]
pub use client::*;
pub use keys::*;
#[cfg(feature = "full")]
pub use policy::*;

/// A Registry snapshot, validated once; a rejected snapshot fails verification at stage 4.
#[wasm_bindgen]
#[derive(Debug)]
pub struct Registry(missionweaveprotocol_ffi::RegistryHandle);

#[wasm_bindgen]
impl Registry {
    #[wasm_bindgen(constructor)]
    pub fn new(bytes: &[u8]) -> Self {
        Self(missionweaveprotocol_ffi::RegistryHandle::new(bytes))
    }

    pub fn info(&self) -> String {
        self.0.info()
    }

    pub fn binding(&self, key_id: &str) -> String {
        self.0.binding(key_id)
    }
}

#[wasm_bindgen]
pub fn canonicalize(bytes: &[u8], limits: Option<String>) -> String {
    missionweaveprotocol_ffi::canonicalize(bytes, limits.as_deref().unwrap_or_default())
}

#[wasm_bindgen(js_name = canonicalHash)]
pub fn canonical_hash(bytes: &[u8], limits: Option<String>) -> String {
    missionweaveprotocol_ffi::canonical_hash_of(bytes, limits.as_deref().unwrap_or_default())
}

/// The envelope for a use of a freed object (the core's text; the JS wrapper throws it).
#[wasm_bindgen(js_name = freedError)]
pub fn freed_error(class: &str) -> String {
    missionweaveprotocol_ffi::freed(class)
}

/// The parse-limit profiles (`{"document": …, "state": …}` envelope).
#[wasm_bindgen(js_name = parseLimitProfiles)]
pub fn parse_limit_profiles() -> String {
    missionweaveprotocol_ffi::limits::parse_limit_profiles()
}

#[wasm_bindgen(js_name = checkJson)]
pub fn check_json(bytes: &[u8]) -> String {
    missionweaveprotocol_ffi::check_json(bytes)
}

#[wasm_bindgen(js_name = validateSchema)]
pub fn validate_schema(name: &str, bytes: &[u8]) -> String {
    missionweaveprotocol_ffi::validate_schema(name, bytes)
}

#[wasm_bindgen(js_name = schemaNames)]
pub fn schema_names() -> String {
    missionweaveprotocol_ffi::schema_names()
}

#[wasm_bindgen]
pub fn sign(kind: &str, unsigned: &[u8], key_id: &str, seed: &[u8]) -> String {
    missionweaveprotocol_ffi::sign(kind, unsigned, key_id, seed, None)
}

/// Signs, then verifies the produced bytes through all six stages against `registry`.
#[wasm_bindgen(js_name = signAndVerify)]
pub fn sign_and_verify(
    kind: &str,
    unsigned: &[u8],
    key_id: &str,
    seed: &[u8],
    registry: &Registry,
) -> String {
    missionweaveprotocol_ffi::sign(kind, unsigned, key_id, seed, Some(&registry.0))
}

#[wasm_bindgen]
pub fn verify(kind: &str, bytes: &[u8], registry: &Registry, limits: Option<String>) -> String {
    missionweaveprotocol_ffi::verify(
        kind,
        bytes,
        &registry.0,
        limits.as_deref().unwrap_or_default(),
    )
}

#[wasm_bindgen(js_name = verifyMany)]
pub fn verify_many(
    kinds: &str,
    lengths: &[u32],
    data: &[u8],
    registry: &Registry,
    threads: u32,
    limits: Option<String>,
) -> String {
    missionweaveprotocol_ffi::verify_many(
        kinds,
        lengths,
        data,
        &registry.0,
        threads,
        limits.as_deref().unwrap_or_default(),
    )
}

#[wasm_bindgen(js_name = signingPreview)]
pub fn signing_preview(bytes: &[u8]) -> String {
    missionweaveprotocol_ffi::signing_preview(bytes)
}

#[wasm_bindgen(js_name = detectKinds)]
pub fn detect_kinds(bytes: &[u8]) -> String {
    missionweaveprotocol_ffi::detect_kinds(bytes)
}

/// The §19 wire codes an unchanged retry can succeed on (the core's `retryable_wire_code`).
#[wasm_bindgen(js_name = retryableWireCodes)]
pub fn retryable_wire_codes() -> String {
    missionweaveprotocol_ffi::retryable_wire_codes()
}

#[wasm_bindgen(js_name = sourceCommit)]
pub fn source_commit() -> String {
    missionweaveprotocol_ffi::source_commit()
}

#[wasm_bindgen(js_name = parseFrame)]
pub fn parse_frame(bytes: &[u8]) -> String {
    missionweaveprotocol_ffi::parse_frame(bytes)
}

#[wasm_bindgen(js_name = parseReceivedFrame)]
pub fn parse_received_frame(bytes: &[u8]) -> String {
    missionweaveprotocol_ffi::parse_received_frame(bytes)
}

#[wasm_bindgen(js_name = encodeFrame)]
pub fn encode_frame(bytes: &[u8]) -> String {
    missionweaveprotocol_ffi::encode_frame(bytes)
}

#[wasm_bindgen(js_name = errorFrame)]
pub fn error_frame(
    frame_id: &str,
    code: &str,
    message: &str,
    occurred_at: &str,
    related_frame_id: Option<String>,
) -> String {
    missionweaveprotocol_ffi::error_frame(
        frame_id,
        code,
        message,
        occurred_at,
        related_frame_id.as_deref(),
    )
}
