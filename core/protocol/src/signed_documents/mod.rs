//! The v0.1 Signed Document Verification Profile (§6.4): six-stage verification and strict
//! signing for the nine signature-required kinds.

mod batch;
mod error;
mod kind;
mod sign;
#[cfg(test)]
mod uniform_rejection_tests;
mod verify;

pub use batch::BatchItem;
pub use error::{SigningError, VerificationError, WIRE_MESSAGE};
pub use kind::{ExpectedSignerRule, SignedDocumentKind};
pub use sign::SignedDocument;
pub use verify::{VerifiedSignedDocument, signing_bytes, signing_bytes_of};

use crate::json::ParseLimits;
use crate::schema::SchemaCatalog;

/// Signs and verifies Signed Documents against a schema catalog compiled once.
#[derive(Debug, Clone, Copy)]
pub struct SignedDocumentCodec<'c> {
    catalog: &'c SchemaCatalog,
    limits: ParseLimits,
}

impl Default for SignedDocumentCodec<'static> {
    fn default() -> Self {
        Self::new()
    }
}

impl SignedDocumentCodec<'static> {
    /// A codec over the embedded, pinned schemas.
    pub fn new() -> Self {
        Self {
            catalog: SchemaCatalog::embedded(),
            limits: ParseLimits::DOCUMENT,
        }
    }
}

impl<'c> SignedDocumentCodec<'c> {
    /// The kinds whose schema `document` satisfies (usually one; none for a document that is
    /// no Signed Document). Useful for tools that accept a document of unknown kind.
    pub fn detect_kinds(&self, document: &crate::json::Value) -> Vec<SignedDocumentKind> {
        self.detect_kinds_of(document.view())
    }

    /// [`Self::detect_kinds`] of a [`View`](crate::json::View) (a parsed document's root).
    pub fn detect_kinds_of(&self, document: crate::json::View<'_>) -> Vec<SignedDocumentKind> {
        SignedDocumentKind::ALL
            .into_iter()
            .filter(|kind| self.catalog.is_valid_view(kind.schema_file(), document))
            .collect()
    }

    /// A codec over another catalog (e.g. a bundle given with `--root`).
    pub fn with_catalog(catalog: &'c SchemaCatalog) -> Self {
        Self {
            catalog,
            limits: ParseLimits::DOCUMENT,
        }
    }

    /// The same codec parsing received bytes within `limits` (default
    /// [`ParseLimits::DOCUMENT`]); a document over a limit is a stage-1 rejection.
    pub fn with_limits(mut self, limits: ParseLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The parse limits in use.
    pub fn limits(&self) -> &ParseLimits {
        &self.limits
    }

    /// The catalog in use.
    pub fn catalog(&self) -> &'c SchemaCatalog {
        self.catalog
    }
}
