//! Random Event IDs for deployments: `urn:uuid:` + an RFC 9562 version 4 UUID drawn from the
//! operating system's random source (§16: recipients deduplicate by Event ID, so IDs must be
//! unique within the Organization; 122 random bits make a collision negligible).
//!
//! Not on `wasm32-unknown-unknown`: there is no OS source there without a JavaScript shim
//! (a browser host injects its own [`EventIdSource`] backed by `crypto.getRandomValues`).

use super::event_id::EventIdSource;

/// How many IDs' worth of randomness one OS call fetches (one syscall per 64 Events).
const BATCH: usize = 64;

/// `urn:uuid:<v4 UUID>` Event IDs from OS randomness.
///
/// If the OS source fails (it does not on supported platforms once seeded), the ID is empty:
/// the Event then fails its schema when signed, the Command is refused `INTERNAL_ERROR` and
/// nothing is applied — never a guessable or repeated ID.
#[derive(Debug, Clone)]
pub struct RandomEventIds {
    buffer: Vec<u8>,
    used: usize,
}

impl RandomEventIds {
    /// A source with an empty buffer (filled on first use).
    pub fn new() -> Self {
        Self {
            buffer: vec![0; 16 * BATCH],
            used: BATCH,
        }
    }

    fn next_bytes(&mut self) -> Option<[u8; 16]> {
        if self.used == BATCH {
            getrandom::fill(&mut self.buffer).ok()?;
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

impl Default for RandomEventIds {
    fn default() -> Self {
        Self::new()
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

impl EventIdSource for RandomEventIds {
    fn next_event_id(&mut self) -> String {
        self.next_bytes().map(uuid_v4_urn).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let mut ids = RandomEventIds::new();
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
}
