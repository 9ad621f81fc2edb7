//! Canonical unpadded base64url (§2): alphabet `A–Z a–z 0–9 - _`, no padding, no whitespace,
//! and zero unused bits, so that every byte string has exactly one accepted spelling.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn sextet(byte: u8) -> Option<u32> {
    match byte {
        b'A'..=b'Z' => Some(u32::from(byte - b'A')),
        b'a'..=b'z' => Some(u32::from(byte - b'a') + 26),
        b'0'..=b'9' => Some(u32::from(byte - b'0') + 52),
        b'-' => Some(62),
        b'_' => Some(63),
        _ => None,
    }
}

/// Decodes canonical unpadded base64url. `None` for an empty string, a character outside the
/// alphabet (including `=`), an impossible length, or nonzero unused bits.
pub fn decode_base64url(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    if bytes.is_empty() || bytes.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let mut accumulator: u32 = 0;
        for &byte in chunk {
            accumulator = (accumulator << 6) | sextet(byte)?;
        }
        match chunk.len() {
            4 => out.extend_from_slice(&[
                (accumulator >> 16) as u8,
                (accumulator >> 8) as u8,
                accumulator as u8,
            ]),
            3 => {
                // 18 bits carry 16: the low 2 bits must be zero (canonical form).
                if accumulator & 0b11 != 0 {
                    return None;
                }
                out.extend_from_slice(&[(accumulator >> 10) as u8, (accumulator >> 2) as u8]);
            }
            2 => {
                // 12 bits carry 8: the low 4 bits must be zero.
                if accumulator & 0b1111 != 0 {
                    return None;
                }
                out.push((accumulator >> 4) as u8);
            }
            _ => return None,
        }
    }
    Some(out)
}

/// Encodes bytes as unpadded base64url.
pub fn encode_base64url(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let mut accumulator: u32 = 0;
        for &byte in chunk {
            accumulator = (accumulator << 8) | u32::from(byte);
        }
        let bits = chunk.len() * 8;
        accumulator <<= (6 - bits % 6) % 6;
        let count = bits.div_ceil(6);
        for index in (0..count).rev() {
            out.push(char::from(
                ALPHABET[((accumulator >> (index * 6)) & 63) as usize],
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for length in 0..40u8 {
            let bytes: Vec<u8> = (0..length)
                .map(|i| i.wrapping_mul(37).wrapping_add(5))
                .collect();
            let text = encode_base64url(&bytes);
            if bytes.is_empty() {
                assert_eq!(decode_base64url(&text), None);
            } else {
                assert_eq!(decode_base64url(&text), Some(bytes));
            }
        }
    }

    #[test]
    fn rejects_noncanonical_spellings() {
        assert_eq!(decode_base64url("AA"), Some(vec![0]));
        assert_eq!(decode_base64url("AB"), None, "nonzero unused bits");
        assert_eq!(decode_base64url("AAA"), Some(vec![0, 0]));
        assert_eq!(decode_base64url("AAB"), None);
        assert_eq!(decode_base64url("AA=="), None, "padding");
        assert_eq!(decode_base64url("A"), None, "impossible length");
        assert_eq!(decode_base64url("AA+/"), None, "standard alphabet");
        assert_eq!(decode_base64url("AA A"), None, "whitespace");
        assert_eq!(decode_base64url("-_-_"), Some(vec![0xfb, 0xff, 0xbf]));
    }
}
