//! Byte-level mutation: bit flips, JSON-significant tokens, deletions, duplications, truncation.

use super::Rng;

/// Tokens that exercise the strict parser (surrogates, huge exponents, BOM, bad UTF-8, deep
/// nesting).
const TOKENS: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b"\\u",
    b"\\ud800",
    b"\\udc00",
    b"1e400",
    b",",
    b":",
    b"\xEF\xBB\xBF",
    b"\x80",
    b"\xC0\xAF",
    b"-0",
    b"null",
    b"0.1e-9999",
    b"[[[[[[[[",
    b"\\u0000",
    b"99999999999999999999999",
    b" ",
    b"\t",
];

/// Applies one to four byte-level edits to `input`.
pub fn mutate(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..=rng.below(4) {
        let at = rng.below(out.len() + 1);
        match rng.below(6) {
            0 if !out.is_empty() => {
                let i = at.min(out.len() - 1);
                out[i] ^= 1 << rng.below(8);
            }
            1 => {
                let token = *rng.pick(TOKENS);
                out.splice(at..at, token.iter().copied());
            }
            2 => {
                let end = (at + 1 + rng.below(16)).min(out.len());
                if at < end {
                    out.drain(at..end);
                }
            }
            3 if !out.is_empty() => {
                // Duplicate a slice elsewhere (repeats members, brackets, escapes).
                let start = rng.below(out.len());
                let end = (start + 1 + rng.below(32)).min(out.len());
                let piece = out[start..end].to_vec();
                out.splice(at..at, piece);
            }
            4 if !out.is_empty() => {
                let i = at.min(out.len() - 1);
                out[i] = *rng.pick(b"0123456789aZ\"\\{}[],:-.eE+ \n");
            }
            _ => out.truncate(at),
        }
    }
    out
}
