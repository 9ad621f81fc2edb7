#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! RFC 8785 (§2, §6.4 stage 5): the RFC's own examples, the bundle's `.jcs` files, and the
//! I-JSON limits.

mod common;

use missionweaveprotocol::bundle::embedded_files;
use missionweaveprotocol::json::{CanonicalError, canonical_bytes, canonical_hash, parse};

fn jcs(text: &str) -> String {
    String::from_utf8(canonical_bytes(&parse(text.as_bytes()).unwrap()).unwrap()).unwrap()
}

#[test]
fn numbers_use_the_ecmascript_form() {
    for (input, expected) in [
        ("-0.0", "0"),
        ("-0", "0"),
        ("1e+30", "1e+30"),
        ("1e-07", "1e-7"),
        ("4.50", "4.5"),
        ("2e-3", "0.002"),
        ("0.000000000000000000000000001", "1e-27"),
        ("333333333.33333329", "333333333.3333333"),
        ("9007199254740991", "9007199254740991"),
        ("9007199254740993", "9007199254740992"),
        ("1E21", "1e+21"),
        ("1e20", "100000000000000000000"),
        ("5e-324", "5e-324"),
        ("1.7976931348623157e308", "1.7976931348623157e+308"),
        ("123456789012345678901234567890", "1.2345678901234568e+29"),
    ] {
        assert_eq!(jcs(input), expected, "{input}");
    }
}

#[test]
fn rfc8785_section_3_2_2_example() {
    let input = r#"{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/","literals":[null,true,false]}"#;
    assert_eq!(
        jcs(input),
        "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],\"string\":\"€$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}"
    );
}

#[test]
fn members_sort_by_utf16_code_units() {
    // U+1F600 is D83D DE00 in UTF-16, so it sorts before U+E000 although its UTF-8 is larger.
    assert_eq!(
        jcs("{\"\u{E000}\":1,\"😀\":2,\"a\":3,\"\":4}"),
        "{\"\":4,\"a\":3,\"😀\":2,\"\u{E000}\":1}"
    );
    assert_eq!(
        jcs(r#"{"b":1,"a":{"d":1,"c":2}}"#),
        r#"{"a":{"c":2,"d":1},"b":1}"#
    );
}

#[test]
fn small_and_large_objects_sort_alike() {
    // Up to 32 members are sorted on the stack, more through heap handles: the same order, on
    // the owned tree and on the parsed tape, with names that differ only past a shared
    // non-ASCII prefix, by UTF-16 order against UTF-8 order, and by length.
    let names = [
        "\u{E000}",
        "😀",
        "a",
        "",
        "é",
        "éa",
        "é😀",
        "é\u{E000}",
        "ab",
        "b",
        "\\",
        "\"",
    ];
    for count in [3, 12, 31, 32, 33, 40, 200] {
        let members: Vec<String> = (0..count)
            .map(|index| format!("{}{index}", names[index % names.len()]))
            .collect();
        let mut sorted = members.clone();
        sorted.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
        let text = |order: &[String]| {
            let body: Vec<String> = order
                .iter()
                .map(|name| {
                    let mut member = String::new();
                    missionweaveprotocol::json::write_json_string(&mut member, name);
                    format!(
                        "{member}:{}",
                        members.iter().position(|m| m == name).unwrap()
                    )
                })
                .collect();
            format!("{{{}}}", body.join(","))
        };
        let input = text(&members.iter().rev().cloned().collect::<Vec<_>>());
        let expected = text(&sorted);
        assert_eq!(jcs(&input), expected, "{count} members (tree)");
        let document = missionweaveprotocol::json::Document::parse(
            input.as_bytes(),
            &missionweaveprotocol::json::ParseLimits::DOCUMENT,
        )
        .unwrap();
        let mut out = Vec::new();
        missionweaveprotocol::json::write_view(document.root(), &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            expected,
            "{count} members (tape)"
        );
    }
}

#[test]
fn escapes_only_what_rfc8785_escapes() {
    assert_eq!(
        jcs(r#""\u0008\u0009\u000a\u000c\u000d\u001f\u007f/é""#),
        "\"\\b\\t\\n\\f\\r\\u001f\u{7f}/é\""
    );
}

#[test]
fn rejects_values_outside_i_json() {
    assert_eq!(
        canonical_bytes(&parse(b"[1e400]").unwrap()),
        Err(CanonicalError::NonFiniteNumber("1e400".into()))
    );
    assert_eq!(
        canonical_bytes(&parse(b"[-1e400]").unwrap()),
        Err(CanonicalError::NonFiniteNumber("-1e400".into()))
    );
    assert_eq!(
        canonical_bytes(&parse(br#"["\udc00"]"#).unwrap()),
        Err(CanonicalError::UnpairedSurrogate)
    );
    assert_eq!(
        canonical_bytes(&parse(br#"{"\ud800x":1}"#).unwrap()),
        Err(CanonicalError::UnpairedSurrogate)
    );
    assert!(canonical_bytes(&parse(b"[1e308]").unwrap()).is_ok());
}

#[test]
fn every_bundle_jcs_file_is_reproduced() {
    // RFC 8785 input/output pair.
    let input =
        common::file("cryptography/vectors/canonicalization/rfc8785-section-3.2.2-input.json");
    let expected = common::file("cryptography/vectors/canonicalization/rfc8785-section-3.2.2.jcs");
    assert_eq!(canonical_bytes(&parse(input).unwrap()).unwrap(), expected);
    assert_eq!(
        canonical_hash(&parse(input).unwrap()).unwrap(),
        "sha256:2d5e01a318d0f0879ab568c4be289c8b1f64ef8921a53c6277d5e069978baacb"
    );
    // Each `<name>.signing.jcs` is the signing input of `valid/<name>.json`.
    let mut checked = 0;
    for (path, bytes) in embedded_files() {
        let Some(name) = path
            .strip_prefix("cryptography/vectors/canonicalization/")
            .and_then(|n| n.strip_suffix(".signing.jcs"))
        else {
            continue;
        };
        let source = match name {
            "command-lowercase-t-alternate-serialization" => "command-alternate-json-serialization",
            other => other,
        };
        let document = common::unsigned(&common::json(&format!(
            "cryptography/vectors/signed-documents/valid/{source}.json"
        )));
        assert_eq!(canonical_bytes(&document).unwrap(), bytes, "{path}");
        checked += 1;
    }
    assert_eq!(checked, 11);
}

#[test]
fn the_one_string_escaper_round_trips_and_matches_the_canonical_form() {
    use missionweaveprotocol::json::{Value, canonical_bytes, parse, write_json_string};
    for text in [
        "",
        "plain",
        "quote \" backslash \\ newline \n tab \t nul \u{0} unit \u{1f} bell \u{7}",
        "é 😀 \u{2028} \u{7f}",
    ] {
        let mut out = String::from("[");
        write_json_string(&mut out, text);
        out.push(']');
        // Same bytes as the canonical writer, and the strict parser reads the text back.
        let canonical = canonical_bytes(&Value::Array(vec![Value::string(text)])).unwrap();
        assert_eq!(out.as_bytes(), canonical.as_slice(), "{text:?}");
        assert_eq!(
            parse(out.as_bytes()).unwrap(),
            Value::Array(vec![Value::string(text)])
        );
    }
}
