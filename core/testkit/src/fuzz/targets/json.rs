//! Target `json`: the strict parser of §6.4 stage 1 itself (`json::Document::parse`), which every
//! other entry point runs first.
//!
//! Oracles: no panic; a refusal is a typed stage-1 error (`PROTOCOL_VIOLATION`); an accepted
//! document holds at most 4 × its input + 16 bytes (`Document::heap_bytes`, the bound of
//! docs/limits.md, checked on the result and, where the counting allocator is installed, as the
//! peak of the parse); the RFC 8785 bytes written from the tape equal those written from the owned tree
//! (the two representations the `View` serves agree), and canonical bytes parse back to
//! themselves.

use missionweaveprotocol::json::{Document, ParseLimits, canonical_bytes, write_view};
use missionweaveprotocol::{DescribeError, WireCode};

use super::super::{OracleFailure, Outcome, Rng, Target, Verdict, typed_error};
use super::{bundle_file, mutate_json_or_bytes};

/// The JSON target.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonTarget;

/// The first pass's names stack for the smallest objects (4 entries of 4 bytes), which it
/// frees before the second pass allocates the tape.
const PASS_SLACK: usize = 16;

/// Bytes a parsed document may hold: 4 × the input + 16 (docs/limits.md). The peak of the
/// parse (measured with the counting allocator where it is installed: `mwp-fuzz` and the
/// corpus memory test) is held to it too.
pub fn document_bound(len: usize) -> usize {
    4 * len + 16
}

impl Target for JsonTarget {
    fn name(&self) -> &'static str {
        "json"
    }

    fn buckets(&self) -> &'static [&'static str] {
        &["1-refused", "5-outside-i-json", "accepted"]
    }

    fn seeds(&self) -> Vec<Vec<u8>> {
        let mut seeds = vec![
            bundle_file("cryptography/vectors/signed-documents/valid/command.json"),
            bundle_file("conformance/vectors/valid/lease.json"),
            bundle_file("cryptography/keys/registry-valid.json"),
        ];
        for shape in ["{}", "[]", "0", "\"\"", "\"\\n\"", "\"\\ud800\"", "[[0]]"] {
            let items = vec![shape; 400].join(",");
            seeds.push(format!("[{items}]").into_bytes());
        }
        seeds.push(br#"{"a":{"b":[1e400,-0.0,"\u00e9",true,null]}}"#.to_vec());
        seeds
    }

    fn mutate(&self, rng: &mut Rng, base: &[u8]) -> Vec<u8> {
        mutate_json_or_bytes(rng, base, 60)
    }

    fn memory_bounded(&self) -> bool {
        // The call also builds the owned tree for the agreement oracle; the parse alone is
        // measured inside `execute`, against its own bound.
        false
    }

    fn execute(&self, input: &[u8]) -> Verdict {
        let (peak, parsed) =
            mwp_alloc_count::peak_of(|| Document::parse(input, &ParseLimits::STATE));
        if peak > document_bound(input.len()) + PASS_SLACK {
            return Err(OracleFailure(format!(
                "json: parsing {} bytes peaked at {peak} bytes (bound 4 x len + 16, + {PASS_SLACK})",
                input.len()
            )));
        }
        let document = match parsed {
            Ok(document) => document,
            Err(error) => {
                let reason = typed_error("json", &error, &[WireCode::ProtocolViolation])?;
                return Ok(Outcome {
                    bucket: 0,
                    signal: format!("0:{reason}"),
                });
            }
        };
        if document.heap_bytes() > document_bound(input.len()) {
            return Err(OracleFailure(format!(
                "json: a document of {} bytes holds {} bytes (bound 4 x len + 16)",
                input.len(),
                document.heap_bytes()
            )));
        }
        let mut from_tape = Vec::new();
        let tape = write_view(document.root(), &mut from_tape);
        let tree = canonical_bytes(&document.to_value());
        match (tape, tree) {
            (Ok(()), Ok(from_tree)) => {
                if from_tape != from_tree {
                    return Err(OracleFailure(
                        "json: canonical bytes from the tape and from the tree differ".into(),
                    ));
                }
                let again = Document::parse(&from_tape, &ParseLimits::STATE).map_err(|e| {
                    OracleFailure(format!("json: canonical bytes do not parse: {e}"))
                })?;
                let mut twice = Vec::new();
                write_view(again.root(), &mut twice)
                    .map_err(|e| OracleFailure(format!("json: canonical bytes refused: {e}")))?;
                if twice != from_tape {
                    return Err(OracleFailure(
                        "json: canonicalization is not idempotent".into(),
                    ));
                }
                Ok(Outcome {
                    bucket: 2,
                    signal: format!("2:{}", document.root().type_name()),
                })
            }
            (Err(a), Err(b)) if a == b => {
                let reason = typed_error("json", &a, &[WireCode::ProtocolViolation])?;
                Ok(Outcome {
                    bucket: 1,
                    signal: format!("1:{reason}:{}", a.reason()),
                })
            }
            (tape, tree) => Err(OracleFailure(format!(
                "json: tape and tree disagree on canonicalization: {tape:?} vs {tree:?}"
            ))),
        }
    }
}
