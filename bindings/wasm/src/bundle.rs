//! The embedded protocol bundle: files, integrity checks, conformance runs.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(js_name = bundleFile)]
pub fn bundle_file(path: &str) -> Option<Vec<u8>> {
    missionweaveprotocol_ffi::bundle_file(path)
}

#[wasm_bindgen(js_name = bundlePaths)]
pub fn bundle_paths() -> String {
    missionweaveprotocol_ffi::bundle_paths()
}

#[wasm_bindgen(js_name = verifyCryptographyBundle)]
pub fn verify_cryptography_bundle() -> String {
    missionweaveprotocol_ffi::verify_cryptography_bundle()
}

#[wasm_bindgen(js_name = verifyAdmissionBundle)]
pub fn verify_admission_bundle() -> String {
    missionweaveprotocol_ffi::verify_admission_bundle()
}

#[wasm_bindgen(js_name = runConformance)]
pub fn run_conformance(bundles: &str) -> String {
    missionweaveprotocol_ffi::run_conformance(bundles)
}
