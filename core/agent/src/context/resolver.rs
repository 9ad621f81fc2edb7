//! The one-key Registry a service verifies its own documents with (reference
//! `ContextPackageService.verify`, `SnapshotArchive.verify`: "the service's public key").

use std::sync::Arc;

use missionweaveprotocol::Principal;
use missionweaveprotocol::registry::{KeyRegistrySnapshot, RegistryBuilder};

use super::error::ContextError;

/// The Organization ID of a one-key Registry: it is evidence for one binding, not an
/// Organization's Registry.
pub const LOCAL_ORGANIZATION: &str = "urn:missionweaveprotocol:organization:local";

/// A Registry binding only `key_id` to `principal` with `public_key`, valid since the epoch.
/// A weak or malformed key is refused here, as a Registry would refuse it.
pub fn single_key_resolver(
    principal: Principal,
    key_id: &str,
    public_key: &[u8],
) -> Result<Arc<KeyRegistrySnapshot>, ContextError> {
    let mut builder = RegistryBuilder::new(LOCAL_ORGANIZATION);
    builder
        .add_key(key_id, principal, public_key, "1970-01-01T00:00:00Z")
        .map_err(|e| ContextError::InvalidArgument(format!("public key: {e}")))?;
    let (_, snapshot) = builder
        .build()
        .map_err(|e| ContextError::InvalidArgument(format!("public key: {e}")))?;
    Ok(Arc::new(snapshot))
}
