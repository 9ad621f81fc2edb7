#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! §6.4 stage 1 and §17.4: strict parsing, positive and negative, plus properties.

use missionweaveprotocol::json::{
    Document, JsonString, MAX_DEPTH, ParseErrorKind, ParseLimits, Value, canonical_bytes, parse,
    parse_with_member_spans, write_indented, write_view,
};
use proptest::prelude::*;

fn kind(bytes: &[u8]) -> ParseErrorKind {
    parse(bytes).unwrap_err().kind
}

#[test]
fn accepts_one_value_with_json_whitespace() {
    for text in [
        "{}",
        " \t\r\n[1, 2.5e-3, -0, \"x\", true, false, null]\n",
        "\"\\u00e9\\n\"",
        "0",
        "-1.0E+2",
    ] {
        assert!(parse(text.as_bytes()).is_ok(), "{text}");
    }
}

#[test]
fn rejects_byte_order_mark_invalid_utf8_and_trailing_data() {
    assert_eq!(kind(b"\xEF\xBB\xBF{}"), ParseErrorKind::ByteOrderMark);
    let error = parse(b"{\"a\":\"\x80\"}").unwrap_err();
    assert_eq!((error.kind, error.offset), (ParseErrorKind::InvalidUtf8, 6));
    assert_eq!(
        kind(b"{\"a\":\"\xED\xA0\x80\"}"),
        ParseErrorKind::InvalidUtf8,
        "a raw surrogate is not UTF-8"
    );
    assert_eq!(kind(b"{}{}"), ParseErrorKind::TrailingData);
    assert_eq!(kind(b"{} x"), ParseErrorKind::TrailingData);
    assert_eq!(kind(b""), ParseErrorKind::UnexpectedEnd);
    assert_eq!(kind(b"   "), ParseErrorKind::UnexpectedEnd);
}

#[test]
fn rejects_duplicate_decoded_member_names() {
    assert_eq!(
        kind(br#"{"a":1,"a":2}"#),
        ParseErrorKind::DuplicateMember("a".into())
    );
    assert_eq!(
        kind(br#"{"payload":1,"pay\u006coad":2}"#),
        ParseErrorKind::DuplicateMember("payload".into())
    );
    assert_eq!(
        kind(br#"{"x":{"\ud800":1,"\ud800":2}}"#),
        ParseErrorKind::DuplicateMember("\u{FFFD}".into())
    );
    // Many members take the hash-set path.
    let mut text = String::from("{");
    for i in 0..40 {
        text.push_str(&format!("\"k{i}\":{i},"));
    }
    text.push_str("\"k7\":0}");
    assert_eq!(
        kind(text.as_bytes()),
        ParseErrorKind::DuplicateMember("k7".into())
    );
    // Same names in different objects are fine.
    assert!(parse(br#"{"a":{"a":1},"b":{"a":2}}"#).is_ok());
}

#[test]
fn rejects_non_json_tokens() {
    for text in [
        "NaN",
        "Infinity",
        "-Infinity",
        "01",
        "1.",
        ".5",
        "+1",
        "1e",
        "-",
        "tru",
        "nul",
        "'a'",
        "[1,]",
        "{\"a\":1,}",
        "{a:1}",
        "[1 2]",
        "\"\\x\"",
        "\"\\u12G4\"",
        "\u{a0}1",
        "\x0c1",
    ] {
        assert!(parse(text.as_bytes()).is_err(), "{text:?} must be rejected");
    }
    assert_eq!(kind(b"\"a\tb\""), ParseErrorKind::ControlCharacterInString);
    assert_eq!(kind(b"\"a\\qb\""), ParseErrorKind::InvalidEscape);
}

#[test]
fn keeps_out_of_model_values_for_stage_five() {
    let value = parse(br#"{"large":1e400,"s":"\ud800","pair":"\ud83d\ude00"}"#).unwrap();
    assert_eq!(
        value.get("large").unwrap().as_number().unwrap().as_text(),
        "1e400"
    );
    assert!(matches!(
        value.get("s"),
        Some(Value::String(JsonString::Wtf16(_)))
    ));
    assert_eq!(value.get("pair").unwrap().as_str(), Some("😀"));
    assert!(canonical_bytes(&value).is_err());
}

#[test]
fn bounds_nesting_depth() {
    let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    assert!(parse(ok.as_bytes()).is_ok());
    let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
    assert_eq!(kind(deep.as_bytes()), ParseErrorKind::TooDeep);
    let hostile = "[{\"a\":".repeat(200_000);
    assert_eq!(kind(hostile.as_bytes()), ParseErrorKind::TooDeep);
}

#[test]
fn keeps_member_order_and_spans() {
    let bytes = br#" {"b": [1, 2] ,"a":{"x":"y"}} "#;
    let (value, spans) = parse_with_member_spans(bytes).unwrap();
    let names: Vec<_> = value
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, _)| k.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["b", "a"]);
    assert_eq!(&bytes[spans[0].0..spans[0].1], b"[1, 2]");
    assert_eq!(&bytes[spans[1].0..spans[1].1], br#"{"x":"y"}"#);
}

fn arbitrary_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| Value::Number(missionweaveprotocol::json::Number::from_i64(n))),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| parse(format!("{f:e}").as_bytes()).unwrap()),
        "\\PC{0,12}".prop_map(Value::string),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("\\PC{0,6}", inner, 0..6).prop_map(|members| {
                let mut object = missionweaveprotocol::json::Object::new();
                for (key, value) in members {
                    object.insert(&key, value);
                }
                Value::Object(object)
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn never_panics_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = parse(&bytes);
    }

    #[test]
    fn never_panics_on_json_like_bytes(text in "[\\[\\]{}\",:0-9eE.+\\-a-z\\\\ ]{0,64}") {
        let _ = parse(text.as_bytes());
    }

    #[test]
    fn indented_output_parses_back_equal(value in arbitrary_value()) {
        let mut out = Vec::new();
        write_indented(&value, 2, &mut out);
        prop_assert_eq!(parse(&out).unwrap(), value);
    }

    /// `parse` builds the tree in its checking pass; the tape's tree must be the same value,
    /// and both must refuse the same inputs with the same error.
    #[test]
    fn the_direct_tree_is_the_tapes_tree(value in arbitrary_value(), escape in any::<bool>()) {
        let mut out = Vec::new();
        write_indented(&value, 2, &mut out);
        let mut text = String::from_utf8(out).unwrap();
        if escape {
            // Escaped spellings and unpaired surrogates reach the decoding paths too.
            text = text.replace('a', "\\u0061").replace('b', "\\ud800");
        }
        let tape = Document::parse(text.as_bytes(), &ParseLimits::DOCUMENT)
            .map(|document| document.to_value());
        prop_assert_eq!(parse(text.as_bytes()), tape);
    }

    #[test]
    fn the_direct_tree_fails_as_the_tape_does(text in "[\\[\\]{}\",:0-9eE.+\\-a-z\\\\ ]{0,64}") {
        let tape = Document::parse(text.as_bytes(), &ParseLimits::DOCUMENT)
            .map(|document| document.to_value());
        prop_assert_eq!(parse(text.as_bytes()), tape);
    }

    #[test]
    fn canonical_form_is_a_fixed_point(value in arbitrary_value()) {
        let once = canonical_bytes(&value).unwrap();
        let twice = canonical_bytes(&parse(&once).unwrap()).unwrap();
        prop_assert_eq!(once, twice);
    }
}

/// The naive rule (§2, §6.4 stage 1): the first member, in document order, whose decoded name
/// an earlier member of the same object already has.
fn first_repeated(names: &[String]) -> Option<&str> {
    names
        .iter()
        .enumerate()
        .find(|(i, name)| names[..*i].contains(name))
        .map(|(_, name)| name.as_str())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Small objects compare names as they come, large ones sort them when they close; both must
    /// report what the naive rule reports, with escaped spellings of the same name counting as
    /// the same name.
    #[test]
    fn duplicate_names_are_found_in_objects_of_any_size(
        distinct in prop::collection::btree_set("[a-z]{1,3}", 1..80),
        repeats in prop::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>()), 0..4),
        escape in any::<bool>(),
    ) {
        // Distinct names, shuffled by their set order, then a few repeats of earlier names
        // inserted later on: past the 32nd member they are found by the sorting check.
        let mut names: Vec<String> = distinct.into_iter().collect();
        for (from, to) in repeats {
            let source = from.index(names.len());
            let at = source + 1 + to.index(names.len() - source);
            let name = names[source].clone();
            names.insert(at, name);
        }
        let mut text = String::from("{");
        for (i, name) in names.iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            let spelled = if escape && i % 2 == 1 {
                name.chars().map(|c| format!("\\u{:04x}", c as u32)).collect::<String>()
            } else {
                name.clone()
            };
            text.push_str(&format!("\"{spelled}\":{i}"));
        }
        text.push('}');
        match (parse(text.as_bytes()), first_repeated(&names)) {
            (Ok(value), None) => prop_assert_eq!(value.as_object().unwrap().len(), names.len()),
            (Err(error), Some(name)) => {
                prop_assert_eq!(error.kind, ParseErrorKind::DuplicateMember(name.to_owned()));
            }
            (result, expected) => prop_assert!(false, "{result:?} vs {expected:?}"),
        }
    }

    /// The tape and the owned tree are two forms of one value: the same canonical bytes, and the
    /// same tree back.
    #[test]
    fn the_tape_and_the_tree_agree(value in arbitrary_value()) {
        let mut text = Vec::new();
        write_indented(&value, 1, &mut text);
        let document = Document::parse(&text, &ParseLimits::STATE).unwrap();
        prop_assert_eq!(document.to_value(), value.clone());
        let mut from_tape = Vec::new();
        write_view(document.root(), &mut from_tape).unwrap();
        prop_assert_eq!(from_tape, canonical_bytes(&value).unwrap());
        prop_assert!(document.heap_bytes() <= 4 * text.len() + 16);
    }
}
