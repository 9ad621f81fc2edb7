//! `canonical.jsonl`: a seeded corpus of JSON texts and their RFC 8785 form (§3.3), or the
//! typed error strict parsing or canonicalization reports. The texts are generated here by a
//! fixed-seed SplitMix64, so the corpus is identical on every machine and every run; they are
//! included in the file because they exist nowhere else.
//!
//! The generator aims at what RFC 8785 implementations get wrong: UTF-16 member order (astral
//! characters sort by surrogate, not by code point), ECMAScript number form (exponents,
//! `-0`, the 1e21 switch, shortest round trip, integers beyond 2^53), string escapes (control
//! characters, `\u2028`, `/`), insignificant whitespace, and nesting. About one text in ten
//! is refused: a duplicate member, a lone surrogate or a non-finite number (stage
//! `canonicalization` in §6.4 terms for the last two), or malformed JSON (stage `parse`).

use missionweaveprotocol::Stage;
use missionweaveprotocol::json::{canonical_bytes, canonical_hash, parse_state};

use super::Rec;

/// How many texts the corpus holds.
pub const COUNT: usize = 500;
/// The corpus seed (any change rewrites the whole file).
pub const SEED: u64 = 0x4d57_5052_4643_3837; // "MWPRFC87"

/// SplitMix64: tiny, well distributed, and trivially reproducible in any language.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "1",
    "-1",
    "1.0",
    "1.50",
    "0.1",
    "-0.000001",
    "0.0000001",
    "1e2",
    "1E+2",
    "1e-7",
    "123e-2",
    "1e21",
    "1e20",
    "999999999999999999999",
    "9007199254740991",
    "9007199254740993",
    "-9007199254740993",
    "123456789012345678901234567890",
    "5e-324",
    "2.2250738585072014e-308",
    "1.7976931348623157e308",
    "4.35",
    "0.30000000000000004",
    "100000000000000000000.5",
    "1.0000000000000002",
    "3.141592653589793238462643383279",
    "-1.5e-10",
    "0.00000000000000000000000000000000000000000000000000012345678901234567890e-250",
];

/// String pieces, as they appear inside the quotes of the input text.
const PIECES: &[&str] = &[
    "a",
    "Z",
    "mission",
    " ",
    "é",
    "\\u00e9",
    "ü",
    "€",
    "\\u20ac",
    "日本",
    "😀",
    "\\ud83d\\ude00",
    "\\uD834\\uDD1E",
    "\u{10ffff}",
    "\\n",
    "\\t",
    "\\r",
    "\\b",
    "\\f",
    "\\u0000",
    "\\u001f",
    "\\u007f",
    "\\\"",
    "\\\\",
    "\\/",
    "/",
    "\\u2028",
    "\u{2029}",
    "\u{feff}",
    "\\u0041",
];

const KEYS: &[&str] = &[
    "a",
    "b",
    "A",
    "aa",
    "",
    "1",
    "10",
    "2",
    "é",
    "e\\u0301",
    "\u{ff61}",
    "😀",
    "\\ud83d\\ude03",
    "\u{e000}",
    "€",
    "_",
    "~",
    "signature",
    "protocolVersion",
    "\\u0000",
];

/// Whitespace the parser must ignore.
const SPACE: &[&str] = &["", "", "", " ", "\n", "\t", "\r\n", "  "];

fn ws(rng: &mut Rng, out: &mut String) {
    out.push_str(rng.pick(SPACE));
}

fn string(rng: &mut Rng, out: &mut String) {
    out.push('"');
    for _ in 0..rng.below(5) {
        out.push_str(rng.pick(PIECES));
    }
    out.push('"');
}

fn value(rng: &mut Rng, depth: usize, out: &mut String) {
    let choice = if depth >= 4 {
        rng.below(6)
    } else {
        rng.below(9)
    };
    match choice {
        0 => out.push_str(rng.pick(&["true", "false", "null"])),
        1 | 2 => out.push_str(rng.pick(NUMBERS)),
        3..=5 => string(rng, out),
        6 => {
            out.push('[');
            for i in 0..rng.below(4) {
                if i > 0 {
                    out.push(',');
                }
                ws(rng, out);
                value(rng, depth + 1, out);
                ws(rng, out);
            }
            out.push(']');
        }
        _ => {
            out.push('{');
            // Distinct keys (a duplicate is a separate, deliberate defect).
            let mut keys: Vec<&str> = Vec::new();
            for _ in 0..rng.below(5) {
                let key = rng.pick(KEYS);
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
            for (i, key) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                ws(rng, out);
                out.push('"');
                out.push_str(key);
                out.push('"');
                ws(rng, out);
                out.push(':');
                ws(rng, out);
                value(rng, depth + 1, out);
                ws(rng, out);
            }
            out.push('}');
        }
    }
}

/// A text with one deliberate defect.
fn defective(rng: &mut Rng) -> String {
    let mut inner = String::new();
    value(rng, 3, &mut inner);
    match rng.below(10) {
        0 => format!("{{\"a\":{inner},\"a\":{inner}}}"),
        1 => format!("[{inner},\"\\ud800\"]"),
        2 => format!("{{\"\\udc00x\":{inner}}}"),
        3 => format!("[{inner},1e400]"),
        4 => format!("[{inner},-2e308]"),
        5 => format!("[{inner},]"),
        6 => format!("{{\"n\":01,\"v\":{inner}}}"),
        7 => format!("[\"tab\there\",{inner}]"),
        8 => format!("{}{}", "[".repeat(129), "]".repeat(129)),
        _ => format!("{inner} {inner}"),
    }
}

fn text(rng: &mut Rng) -> String {
    if rng.below(10) == 0 {
        return defective(rng);
    }
    let mut out = String::new();
    ws(rng, &mut out);
    value(rng, 0, &mut out);
    ws(rng, &mut out);
    out
}

pub(super) fn records() -> Vec<missionweaveprotocol::json::Value> {
    let mut rng = Rng(SEED);
    (0..COUNT)
        .map(|i| {
            let input = text(&mut rng);
            let record = Rec::new()
                .str("area", "canonical")
                .str("id", format!("canonical-{i:03}"))
                .str("input", input.clone());
            let error = |stage: Stage| {
                Rec::new()
                    .str("code", stage.wire_code().as_str())
                    .str("stage", stage.as_str())
                    .build()
            };
            match parse_state(input.as_bytes()) {
                Err(_) => record.value("error", error(Stage::Parse)),
                Ok(value) => match (canonical_bytes(&value), canonical_hash(&value)) {
                    (Ok(bytes), Ok(hash)) => record
                        .str("canonical", String::from_utf8_lossy(&bytes))
                        .str("hash", hash),
                    _ => record.value("error", error(Stage::Canonicalization)),
                },
            }
            .build()
        })
        .collect()
}
