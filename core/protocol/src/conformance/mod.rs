//! Runners for the three conformance bundles (§22), following each manifest exactly: the 58
//! structural vectors, the 62 cryptography evaluations and the 30 admission evaluations.

pub(crate) mod admission;
pub(crate) mod cryptography;
mod integrity;
mod read_error;
mod report;
pub mod root_pin;
mod source;
mod structural;

pub use admission::run_admission_bundle;
pub use cryptography::run_cryptography_bundle;
pub use read_error::{BundleReadError, MAX_BUNDLE_FILE_BYTES};
pub use report::{BundleKind, BundleReport, ConformanceReport, EvaluationFailure};
pub use source::{BundleSource, EmbeddedBundle};
pub use structural::{STRUCTURAL_MANIFEST, run_structural_bundle, run_structural_manifest};

pub use crate::schema::SchemaCatalog;

/// Runs the selected bundles from `source`.
pub fn run(source: &dyn BundleSource, bundles: &[BundleKind]) -> ConformanceReport {
    let reports = bundles
        .iter()
        .map(|kind| match kind {
            BundleKind::Structural => run_structural_bundle(source),
            BundleKind::Cryptography => run_cryptography_bundle(source),
            BundleKind::Admission => run_admission_bundle(source),
        })
        .collect();
    ConformanceReport { reports }
}
