//! Frame IDs and nonces from the host's randomness (no clock, no OS source: `docs/design.md`,
//! "Randomness is injected by the host").

use missionweaveprotocol::schema_formats::encode_base64url;
use missionweaveprotocol_kernel::random::{RandomSource, RandomUnavailable};

/// Fresh frame IDs for one connection: `urn:missionweaveprotocol:frame:<32 hex>:<n>`, a random
/// 128-bit prefix drawn once and a counter. Unique without drawing randomness per frame (an
/// `EVENT` stream would otherwise cost one host call per frame); frame IDs identify, they do
/// not authenticate.
#[derive(Debug, Clone)]
pub struct FrameIds {
    hex: String,
    next: u64,
}

impl FrameIds {
    /// A generator whose prefix is drawn from `random`.
    pub fn new(random: &mut dyn RandomSource) -> Result<Self, RandomUnavailable> {
        let mut bytes = [0u8; 16];
        random.fill(&mut bytes)?;
        let mut hex = String::with_capacity(32);
        for byte in bytes {
            hex.push(char::from(HEX[usize::from(byte >> 4)]));
            hex.push(char::from(HEX[usize::from(byte & 15)]));
        }
        Ok(Self { hex, next: 1 })
    }

    fn counter(&mut self) -> u64 {
        let n = self.next;
        self.next = self.next.wrapping_add(1);
        n
    }

    /// The next frame ID.
    pub fn next_id(&mut self) -> String {
        let n = self.counter();
        format!("urn:missionweaveprotocol:frame:{}:{n}", self.hex)
    }

    /// A fresh Action ID for a Command this connection's side issues itself (the gateway's
    /// `session_open`, §6.3): `urn:missionweaveprotocol:action:<32 hex>:<n>`, unique like the
    /// frame IDs.
    pub fn next_action_id(&mut self) -> String {
        let n = self.counter();
        format!("urn:missionweaveprotocol:action:{}:{n}", self.hex)
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// A nonce: the unpadded base64url of 16 random bytes (`common.schema.json` `base64url`).
pub fn random_nonce(random: &mut dyn RandomSource) -> Result<String, RandomUnavailable> {
    let mut bytes = [0u8; 16];
    random.fill(&mut bytes)?;
    Ok(encode_base64url(&bytes))
}
