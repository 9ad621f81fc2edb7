#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The memory bound of parsing untrusted JSON (issue 9, item 1), measured with an allocation
//! counter: the peak of live bytes this thread allocated during the call, whatever the shape.
//! Bound: a parsed [`Document`] costs at most 4 × the input + 16 bytes; a whole `verify` at
//! most 6 × the input + 64 KiB (tape, canonical signing bytes, schema bookkeeping).

use missionweaveprotocol::json::{
    Document, Limit, ParseErrorKind, ParseLimits, check_limits, parse_state,
};
use missionweaveprotocol::registry::AgentRegistryKeyResolver;
use missionweaveprotocol::{SignedDocumentCodec, SignedDocumentKind, Stage, WireCode};
use mwp_alloc_count::{Counting, peak_of};

mod common;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// `[` + `item` repeated, comma-separated, to about `target` bytes + `]`.
fn array_of(item: &str, target: usize) -> Vec<u8> {
    let count = target / (item.len() + 1);
    let mut text = String::with_capacity(target + 2);
    text.push('[');
    for index in 0..count {
        if index > 0 {
            text.push(',');
        }
        text.push_str(item);
    }
    text.push(']');
    text.into_bytes()
}

/// An object of `count` members with distinct short names, each holding `value`.
fn object_of(value: &str, count: usize) -> Vec<u8> {
    let mut text = String::from("{");
    for index in 0..count {
        if index > 0 {
            text.push(',');
        }
        text.push_str(&format!("\"{index:x}\":{value}"));
    }
    text.push('}');
    text.into_bytes()
}

fn shapes() -> Vec<(&'static str, Vec<u8>)> {
    const SIZE: usize = 1 << 20;
    vec![
        ("[{},{},…]", array_of("{}", SIZE)),
        ("[[],[],…]", array_of("[]", SIZE)),
        ("[\"\",\"\",…]", array_of("\"\"", SIZE)),
        ("[0,0,…]", array_of("0", SIZE)),
        ("[1234567,…]", array_of("1234567", SIZE)),
        ("[true,…]", array_of("true", SIZE)),
        ("[null,…]", array_of("null", SIZE)),
        ("[[0],[0],…]", array_of("[0]", SIZE)),
        ("[[[0]],…]", array_of("[[0]]", SIZE)),
        ("[\"\\n\",…]", array_of("\"\\n\"", SIZE)),
        ("[\"\\ud800\",…]", array_of("\"\\ud800\"", SIZE)),
        ("[{\"a\":0},…]", array_of("{\"a\":0}", SIZE)),
        ("[{\"\\n\":{}},…]", array_of("{\"\\n\":{}}", SIZE)),
        ("{\"0\":0,…}", object_of("0", 100_000)),
        ("{\"0\":[],…}", object_of("[]", 100_000)),
        (
            "one string",
            format!("\"{}\"", "x".repeat(SIZE)).into_bytes(),
        ),
        (
            "one escaped string",
            format!("\"{}\"", "\\t".repeat(SIZE / 2)).into_bytes(),
        ),
        (
            "nested",
            format!("{}0{}", "[".repeat(128), "]".repeat(128)).into_bytes(),
        ),
        ("scalar", b"0".to_vec()),
        ("small object", br#"{"a":[1,2,{"b":null}]}"#.to_vec()),
    ]
}

#[test]
fn a_parsed_document_costs_at_most_four_times_its_input() {
    for (shape, input) in shapes() {
        let (peak, document) = peak_of(|| Document::parse(&input, &ParseLimits::STATE));
        let document = document.unwrap_or_else(|e| panic!("{shape}: {e}"));
        let bound = 4 * input.len() + 16;
        let (tree_peak, _) = peak_of(|| parse_state(&input));
        eprintln!(
            "{shape:>16}: {:>8} input bytes, tape peak {:.2}×, owned tree {:.2}×",
            input.len(),
            peak as f64 / input.len() as f64,
            tree_peak as f64 / input.len() as f64
        );
        assert!(
            peak <= bound,
            "{shape}: peak {peak} bytes for {} input bytes ({:.2}×), bound {bound}",
            input.len(),
            peak as f64 / input.len() as f64
        );
        assert!(
            document.heap_bytes() <= peak,
            "{shape}: heap_bytes is what stays"
        );
        // The same document through the owned tree: the bound is what the tape buys.
        assert_eq!(document.to_value(), parse_state(&input).unwrap(), "{shape}");
    }
}

#[test]
fn the_owned_tree_would_break_the_bound_so_the_test_can_fail() {
    // The negative control: the previous representation (an owned tree) of the first shape
    // costs far more than 4 × — the assertion above is not vacuous.
    let input = array_of("{}", 1 << 20);
    let (peak, value) = peak_of(|| parse_state(&input));
    value.unwrap();
    assert!(peak > 4 * input.len(), "tree peak {peak}");
}

#[test]
fn verify_costs_at_most_six_times_its_input() {
    let fixture = common::signing_fixture();
    // Roomy limits, so the hostile shapes are parsed and the ratio, not a limit, is tested.
    let codec = SignedDocumentCodec::new().with_limits(ParseLimits::STATE);
    let resolver = AgentRegistryKeyResolver::new(&fixture.registry);
    for (shape, payload) in [
        ("[{},…]", array_of("{}", 1 << 20)),
        ("[0,…]", array_of("0", 1 << 20)),
        ("{\"0\":0,…}", object_of("0", 60_000)),
    ] {
        // A Command whose payload is the hostile shape, validly signed: it passes every stage,
        // so every stage's work is in the peak (the owned tree of the accepted document is
        // built after the peak of verification; it is measured apart).
        let signed = fixture.sign_command_with_payload(&payload);
        let (peak, result) = peak_of(|| {
            codec
                .verify(SignedDocumentKind::Command, &signed, &resolver)
                .map(|verified| verified.signing_hash)
        });
        result.unwrap_or_else(|e| panic!("{shape}: {e:?}"));
        let bound = 6 * signed.len() + (64 << 10);
        eprintln!(
            "verify {shape}: {} bytes, peak {:.2}×",
            signed.len(),
            peak as f64 / signed.len() as f64
        );
        let tree = parse_state(&signed).unwrap();
        let tree_bytes = approximate_tree_bytes(&tree);
        assert!(
            peak <= bound + tree_bytes,
            "{shape}: verify peak {peak} for {} bytes, bound {bound} + tree {tree_bytes}",
            signed.len()
        );
        // Rejected documents never build the tree: the peak of a stage-6 rejection is within
        // the bound alone.
        let tampered = tamper_payload(&signed);
        let (peak, result) =
            peak_of(|| codec.verify(SignedDocumentKind::Command, &tampered, &resolver));
        assert_eq!(
            result.err().map(|e| e.stage),
            Some(Stage::Signature),
            "{shape}: tampered payload"
        );
        eprintln!(
            "verify {shape}, rejected at stage 6: peak {:.2}×",
            peak as f64 / signed.len() as f64
        );
        assert!(
            peak <= bound,
            "{shape}: rejected verify peak {peak} for {} bytes, bound {bound}",
            signed.len()
        );
    }
}

/// The signed bytes with one payload item changed (same length, same schema): the signature
/// no longer holds, so verification does every stage and rejects at stage 6.
fn tamper_payload(signed: &[u8]) -> Vec<u8> {
    let text = std::str::from_utf8(signed).unwrap();
    let data = text.find("\"data\":").unwrap();
    let mut tampered = signed.to_vec();
    // The first item of the payload's array or object, a few bytes after `"data":`.
    let head = &text[data..data + 16];
    if let Some(at) = head.find("{}") {
        tampered[data + at] = b'[';
        tampered[data + at + 1] = b']';
    } else {
        tampered[data + head.rfind('0').unwrap()] = b'1';
    }
    tampered
}

/// The tree an accepted document keeps, measured the same way.
fn approximate_tree_bytes(value: &missionweaveprotocol::json::Value) -> usize {
    let (peak, clone) = peak_of(|| value.clone());
    drop(clone);
    peak
}

#[test]
fn each_limit_is_a_typed_stage_one_error_before_the_work() {
    let limits = ParseLimits {
        max_document_bytes: 1 << 16,
        max_container_entries: 100,
        max_string_bytes: 50,
        max_number_chars: 20,
    };
    let cases: Vec<(Vec<u8>, Limit, usize)> = vec![
        (array_of("0", 1 << 17), Limit::DocumentBytes, 0),
        (array_of("0", 300), Limit::ContainerEntries, 201),
        (
            object_of("0", 101),
            Limit::ContainerEntries,
            1 + 100 * 7 - 1,
        ),
        (
            format!("[\"{}\"]", "x".repeat(51)).into_bytes(),
            Limit::StringBytes,
            1,
        ),
        (
            format!("{{\"{}\":0}}", "k".repeat(51)).into_bytes(),
            Limit::StringBytes,
            1,
        ),
        (
            format!("[{}]", "9".repeat(21)).into_bytes(),
            Limit::NumberChars,
            1,
        ),
    ];
    for (input, limit, offset) in cases {
        let (peak, result) = peak_of(|| Document::parse(&input, &limits));
        let error = result
            .err()
            .unwrap_or_else(|| panic!("{limit:?} must be refused"));
        let ParseErrorKind::LimitExceeded {
            limit: found,
            maximum,
        } = error.kind
        else {
            panic!("{limit:?}: {error:?}");
        };
        assert_eq!(found, limit);
        assert_eq!(maximum, limit_value(&limits, limit));
        if limit != Limit::ContainerEntries || input[0] == b'[' {
            assert_eq!(error.offset, offset, "{limit:?}: {error}");
        }
        // Refused in the counting pass: nothing proportional to the input was allocated.
        assert!(
            peak <= 4096,
            "{limit:?}: {peak} bytes allocated before refusing"
        );
    }
    // At the limit exactly, accepted.
    assert!(Document::parse(format!("[{}]", "9".repeat(20)).as_bytes(), &limits).is_ok());
    assert!(Document::parse(format!("[\"{}\"]", "x".repeat(50)).as_bytes(), &limits).is_ok());
    assert!(Document::parse(&array_of("0", 200), &limits).is_ok());
}

fn limit_value(limits: &ParseLimits, limit: Limit) -> usize {
    match limit {
        Limit::DocumentBytes => limits.max_document_bytes,
        Limit::ContainerEntries => limits.max_container_entries,
        Limit::StringBytes => limits.max_string_bytes,
        Limit::NumberChars => limits.max_number_chars,
    }
}

#[test]
fn verify_refuses_a_document_over_the_profile_limit_at_stage_one() {
    let fixture = common::signing_fixture();
    let resolver = AgentRegistryKeyResolver::new(&fixture.registry);
    let huge = array_of("{}", ParseLimits::DOCUMENT.max_document_bytes + 10);
    let (peak, result) = peak_of(|| {
        SignedDocumentCodec::new().verify(SignedDocumentKind::Command, &huge, &resolver)
    });
    let error = result.unwrap_err();
    assert_eq!(
        (error.stage, error.reason, error.wire_code()),
        (Stage::Parse, "limit-exceeded", WireCode::ProtocolViolation)
    );
    assert!(peak <= 4096, "refused before any work: {peak} bytes");
    // A codec with larger limits accepts the same size for parsing (then fails the schema).
    let roomy = SignedDocumentCodec::new().with_limits(ParseLimits::STATE);
    let error = roomy
        .verify(SignedDocumentKind::Command, &huge, &resolver)
        .unwrap_err();
    assert_eq!(error.stage, Stage::Schema);
}

#[test]
fn checking_limits_costs_at_most_one_and_a_half_times_the_input_and_gives_the_parsers_verdict() {
    // `json::check_limits` runs the counting pass alone: its only allocation is the names of
    // open objects (4 bytes a member while the object is open, at most 8 with the vector's
    // growth; a member takes at least 6 input bytes), so the bound is 1.5 × input + 64 KiB;
    // its verdict is the parser's under the same limits.
    let small = ParseLimits::checked(64, 4, 8, 3).unwrap();
    for (shape, input) in shapes() {
        let (peak, verdict) = peak_of(|| check_limits(&input, &ParseLimits::STATE));
        verdict.unwrap_or_else(|e| panic!("{shape}: {e}"));
        assert!(
            peak <= input.len() * 3 / 2 + (64 << 10),
            "{shape}: check_limits peak {peak} for {} input bytes",
            input.len()
        );
        let tight = check_limits(&input, &small).err().map(|e| e.kind);
        let parsed = Document::parse(&input, &small).err().map(|e| e.kind);
        assert_eq!(tight, parsed, "{shape}: the same verdict as the parser");
    }
    assert!(check_limits(b"[1,2", &ParseLimits::DOCUMENT).is_err());
    assert!(check_limits(b"{\"a\":1,\"a\":2}", &ParseLimits::DOCUMENT).is_err());
}
