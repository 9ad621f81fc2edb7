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
    ///
    /// ```
    /// use missionweaveprotocol::registry::AgentRegistryKeyResolver;
    /// use missionweaveprotocol::{SignedDocumentCodec, SignedDocumentKind, Stage};
    ///
    /// # use missionweaveprotocol::crypto::SigningKey;
    /// # use missionweaveprotocol::registry::RegistryBuilder;
    /// # use missionweaveprotocol::{Principal, PrincipalType};
    /// # let key = SigningKey::from_seed("urn:missionweaveprotocol:key:planner-1", &[7; 32]);
    /// # let mut builder = RegistryBuilder::new("urn:missionweaveprotocol:organization:acme");
    /// # builder.add_key(
    /// #     key.key_id(),
    /// #     Principal::new(PrincipalType::Agent, "urn:missionweaveprotocol:agent:planner"),
    /// #     &key.public_key_bytes(),
    /// #     "2026-01-01T00:00:00Z",
    /// # )?;
    /// # let (registry_bytes, _) = builder.build()?;
    /// # let command = missionweaveprotocol::json::parse_state(br#"{"protocolVersion": "0.1",
    /// #     "actionId": "urn:uuid:0b6d1c1e-6f0a-4b7e-9a53-2f1f0c9e7d11",
    /// #     "actor": {"type": "agent", "id": "urn:missionweaveprotocol:agent:planner"},
    /// #     "sessionEpoch": 3, "membershipEpoch": 1, "groupId": "urn:missionweaveprotocol:group:finance",
    /// #     "kind": "work.checkpoint", "correlationId": "urn:uuid:5e0c2a4b-1d3f-4e6a-8b7c-9d0e1f2a3b4c",
    /// #     "issuedAt": "2026-07-15T09:30:00Z", "payload": {"step": 1}}"#)?;
    /// # let received = SignedDocumentCodec::new()
    /// #     .sign(SignedDocumentKind::Command, &command, &key)?
    /// #     .bytes;
    /// let codec = SignedDocumentCodec::new();
    /// let resolver = AgentRegistryKeyResolver::new(&registry_bytes);
    /// let damaged = &received[..10];
    /// let items = [
    ///     (SignedDocumentKind::Command, received.as_slice()),
    ///     (SignedDocumentKind::Command, damaged),
    ///     (SignedDocumentKind::Command, received.as_slice()),
    /// ];
    /// let results = codec.verify_many(&items, &resolver, 2);
    /// assert!(results[0].is_ok() && results[2].is_ok());
    /// assert_eq!(results[1].as_ref().unwrap_err().stage, Stage::Parse);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
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
