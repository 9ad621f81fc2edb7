//! The stored bytes type.

use std::sync::Arc;

/// Opaque stored bytes (canonical JSON): shared, so that replay hands out Events without
/// copying them.
pub type Blob = Arc<[u8]>;
