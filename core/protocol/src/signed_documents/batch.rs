//! Bulk verification: one call for many documents, so that crossing a language boundary costs
//! little, spread over up to `threads` OS threads where the `threads` feature is on.

use super::SignedDocumentCodec;
use super::error::VerificationError;
use super::kind::SignedDocumentKind;
use super::verify::VerifiedSignedDocument;
use crate::registry::KeyResolver;

/// One item of a batch: the kind and the exact received bytes.
pub type BatchItem<'b> = (SignedDocumentKind, &'b [u8]);

impl SignedDocumentCodec<'_> {
    /// Verifies every item; results are in input order. `threads` is a maximum (0 or 1 means
    /// the calling thread only).
    pub fn verify_many(
        &self,
        items: &[BatchItem<'_>],
        resolver: &(dyn KeyResolver + Sync),
        threads: usize,
    ) -> Vec<Result<VerifiedSignedDocument, VerificationError>> {
        let threads = threads.clamp(1, items.len().max(1));
        if threads == 1 || !cfg!(feature = "threads") {
            return items
                .iter()
                .map(|(kind, bytes)| self.verify(*kind, bytes, resolver))
                .collect();
        }
        self.verify_parallel(items, resolver, threads)
    }

    #[cfg(feature = "threads")]
    fn verify_parallel(
        &self,
        items: &[BatchItem<'_>],
        resolver: &(dyn KeyResolver + Sync),
        threads: usize,
    ) -> Vec<Result<VerifiedSignedDocument, VerificationError>> {
        let chunk = items.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let handles: Vec<_> = items
                .chunks(chunk)
                .map(|part| {
                    scope.spawn(move || {
                        part.iter()
                            .map(|(kind, bytes)| self.verify(*kind, bytes, resolver))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            let mut results = Vec::with_capacity(items.len());
            for (handle, part) in handles.into_iter().zip(items.chunks(chunk)) {
                match handle.join() {
                    Ok(part_results) => results.extend(part_results),
                    // A worker cannot panic on any input; if one did, verify its part here.
                    Err(_) => results.extend(
                        part.iter()
                            .map(|(kind, bytes)| self.verify(*kind, bytes, resolver)),
                    ),
                }
            }
            results
        })
    }

    #[cfg(not(feature = "threads"))]
    fn verify_parallel(
        &self,
        items: &[BatchItem<'_>],
        resolver: &(dyn KeyResolver + Sync),
        _threads: usize,
    ) -> Vec<Result<VerifiedSignedDocument, VerificationError>> {
        items
            .iter()
            .map(|(kind, bytes)| self.verify(*kind, bytes, resolver))
            .collect()
    }
}
