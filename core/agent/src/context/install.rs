//! Verifying a Context Package and what an Agent runtime installs from it (reference
//! `ContextPackageService.verify` / `install`).

use missionweaveprotocol::json::{Number, Value, canonical_bytes, sha256_prefixed};
use missionweaveprotocol::registry::KeyResolver;
use missionweaveprotocol::{SignedDocumentCodec, SignedDocumentKind};

use super::error::ContextError;
use super::package::check;

/// A Context Package whose bytes and rules were verified.
#[derive(Clone, Debug, PartialEq)]
pub struct VerifiedContextPackage {
    /// The document (signature included).
    pub document: Value,
    /// `sha256:` of its canonical bytes (`contextPackageHash`).
    pub package_hash: String,
}

/// Verifies a package's bytes (§6.4's six stages against `resolver`), then [`check`]s its rules
/// and, when given, its generator.
pub fn verify(
    bytes: &[u8],
    resolver: &dyn KeyResolver,
    expected_generator: Option<&str>,
) -> Result<VerifiedContextPackage, ContextError> {
    let verified = SignedDocumentCodec::new()
        .verify(SignedDocumentKind::ContextPackage, bytes, resolver)
        .map_err(|e| ContextError::Verification(Box::new(e)))?;
    check(verified.document(), expected_generator)?;
    let canonical = canonical_bytes(verified.document())
        .map_err(|e| ContextError::InvalidArgument(e.to_string()))?;
    Ok(VerifiedContextPackage {
        package_hash: sha256_prefixed(&canonical),
        document: verified.into_document(),
    })
}

/// What an Agent runtime installs for a verified package (reference
/// `ContextPackageService.install`): `(group_id, revision, values)` — the package's Group, its
/// version as the revision, and its members without the signature plus `contextPackageHash`.
/// A package of another Mission than `expected_mission_id` is refused.
pub fn install_values(
    package: &VerifiedContextPackage,
    expected_mission_id: &str,
) -> Result<(String, u64, Value), ContextError> {
    let member = |name: &str| {
        package
            .document
            .get(name)
            .ok_or_else(|| ContextError::InvalidArgument(format!("{name} is missing")))
    };
    let mission = member("missionId")?.as_str().unwrap_or_default();
    if mission != expected_mission_id {
        return Err(ContextError::ScopeMismatch {
            member: "mission",
            expected: expected_mission_id.to_owned(),
            found: mission.to_owned(),
        });
    }
    let group = member("groupId")?.as_str().unwrap_or_default().to_owned();
    let version = member("version")?
        .as_number()
        .and_then(Number::as_u64)
        .unwrap_or_default();
    let mut values = package.document.as_object().cloned().unwrap_or_default();
    values.remove("signature");
    values.insert("contextPackageHash", Value::string(&package.package_hash));
    Ok((group, version, Value::Object(values)))
}
