//! Random Event IDs for deployments: `urn:uuid:` + an RFC 9562 version 4 UUID drawn from the
//! host's [`RandomSource`] (§16: recipients deduplicate by Event ID, so IDs must be unique
//! within the Organization; 122 random bits make a collision negligible). The engine never
//! reads an OS source itself: the host injects one (`missionweaveprotocol_host::OsRandom`, a
//! browser's `crypto.getRandomValues`).

use missionweaveprotocol_kernel::random::RandomSource;

use super::event_id::EventIdSource;

/// How many IDs' worth of randomness one call to the source fetches (one call per 64 Events).
const BATCH: usize = 64;

/// `urn:uuid:<v4 UUID>` Event IDs from the host's randomness.
///
/// If the source fails, the ID is empty: the Event then fails its schema when signed, the
/// Command is refused `INTERNAL_ERROR` and nothing is applied — never a guessable or repeated
/// ID.
#[derive(Debug)]
pub struct RandomEventIds<R = Box<dyn RandomSource>> {
    source: R,
    buffer: Vec<u8>,
    used: usize,
}

impl<R: RandomSource> RandomEventIds<R> {
    /// IDs drawn from `source` (the buffer is filled on first use).
    pub fn new(source: R) -> Self {
        Self {
            source,
            buffer: vec![0; 16 * BATCH],
            used: BATCH,
        }
    }

    fn next_bytes(&mut self) -> Option<[u8; 16]> {
        if self.used == BATCH {
            self.source.fill(&mut self.buffer).ok()?;
            self.used = 0;
        }
        let start = self.used * 16;
        self.used += 1;
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(&self.buffer[start..start + 16]);
        // Used randomness is not kept around.
        self.buffer[start..start + 16].fill(0);
        Some(bytes)
    }
}

/// `urn:uuid:` + the version 4, variant 10 UUID of `bytes` (RFC 9562 §5.4), lowercase.
pub fn uuid_v4_urn(mut bytes: [u8; 16]) -> String {
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let mut out = String::with_capacity(45);
    out.push_str("urn:uuid:");
    for (i, b) in bytes.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0x0f)]));
    }
    out
}

const HEX: &[u8; 16] = b"0123456789abcdef";

impl<R: RandomSource> EventIdSource for RandomEventIds<R> {
    fn next_event_id(&mut self) -> String {
        self.next_bytes().map(uuid_v4_urn).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use missionweaveprotocol_kernel::random::RandomUnavailable;

    /// A deterministic stand-in: a counter spread over the buffer (tests only).
    #[derive(Debug, Default)]
    struct Counter(u64);

    impl RandomSource for Counter {
        fn fill(&mut self, out: &mut [u8]) -> Result<(), RandomUnavailable> {
            for chunk in out.chunks_mut(8) {
                self.0 += 1;
                let bytes = self.0.to_le_bytes();
                chunk.copy_from_slice(&bytes[..chunk.len()]);
            }
            Ok(())
        }
    }

    #[derive(Debug)]
    struct Broken;

    impl RandomSource for Broken {
        fn fill(&mut self, _: &mut [u8]) -> Result<(), RandomUnavailable> {
            Err(RandomUnavailable)
        }
    }

    #[test]
    fn version_and_variant_bits_are_set() {
        assert_eq!(
            uuid_v4_urn([0xff; 16]),
            "urn:uuid:ffffffff-ffff-4fff-bfff-ffffffffffff"
        );
        assert_eq!(
            uuid_v4_urn([0; 16]),
            "urn:uuid:00000000-0000-4000-8000-000000000000"
        );
    }

    #[test]
    fn ids_are_distinct_well_formed_urns() {
        let mut ids = RandomEventIds::new(Counter::default());
        let mut seen = std::collections::HashSet::new();
        for _ in 0..(3 * BATCH + 5) {
            let id = ids.next_event_id();
            assert_eq!(id.len(), 45, "{id}");
            assert!(id.starts_with("urn:uuid:"));
            assert_eq!(&id[23..24], "4", "version nibble: {id}");
            assert!(
                matches!(&id[28..29], "8" | "9" | "a" | "b"),
                "variant: {id}"
            );
            assert!(
                missionweaveprotocol::schema_formats::is_protocol_uri(&id),
                "{id} is an absolute URI"
            );
            assert!(seen.insert(id), "IDs never repeat");
        }
    }

    #[test]
    fn a_failing_source_gives_no_id_rather_than_a_guessable_one() {
        let mut ids = RandomEventIds::new(Broken);
        assert_eq!(ids.next_event_id(), "");
    }
}
