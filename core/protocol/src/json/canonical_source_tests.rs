//! The canonical-source shortcut of stage 5 (§6.4): a source the parser found to be its own
//! RFC 8785 form gives the signing input by cutting out `signature`; it must equal what the
//! member-by-member writer produces, wherever the member sits.

#![allow(clippy::unwrap_used, clippy::panic)]

use proptest::prelude::*;

use super::canonical::write_object;
use super::{Document, Object, ParseLimits, Value, View, canonical_bytes};

fn arbitrary_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| Value::Number(super::Number::from_i64(n))),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| super::parse(format!("{f:e}").as_bytes()).unwrap()),
        "[a-z\"\\\\\n\u{1}\u{1f}\u{7f}é😀\u{E000}/]{0,8}".prop_map(Value::string),
    ];
    leaf.prop_recursive(3, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map("[a-zé😀\u{E000}]{0,4}", inner, 0..5)
                .prop_map(|members| object(members.into_iter())),
        ]
    })
}

fn object(members: impl Iterator<Item = (String, Value)>) -> Value {
    let mut object = Object::new();
    for (name, value) in members {
        object.insert(&name, value);
    }
    Value::Object(object)
}

/// The generic writer's signing input of a parsed document.
fn written_without_signature(document: &Document<'_>) -> Vec<u8> {
    let View::Object(root) = document.root() else {
        panic!("not an object")
    };
    // Through a tree, so that the tape writer is not what the shortcut is compared with.
    let value = document.to_value();
    let View::Object(tree) = value.view() else {
        panic!("not an object")
    };
    let mut from_tree = Vec::new();
    write_object(tree, Some("signature"), &mut from_tree).unwrap();
    let mut from_tape = Vec::new();
    write_object(root, Some("signature"), &mut from_tape).unwrap();
    assert_eq!(
        from_tape, from_tree,
        "the tape writer equals the tree writer"
    );
    from_tree
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Every RFC 8785 output is recognized as canonical, and cutting `signature` out of it
    /// (first, in the middle, last or alone) is the canonical form of the rest.
    #[test]
    fn a_signature_cut_from_a_canonical_source_is_the_written_signing_input(
        members in prop::collection::btree_map("[a-z]{1,3}", arbitrary_value(), 0..6),
        signature in arbitrary_value(),
        signature_name in prop_oneof![Just("signature"), Just("a"), Just("sig"), Just("zz")],
    ) {
        let mut members: Vec<(String, Value)> = members.into_iter().collect();
        members.push(("signature".into(), signature));
        if signature_name != "signature" {
            // No `signature` member at all: the whole source is the signing input.
            members.retain(|(name, _)| name != "signature");
        }
        let value = object(members.into_iter());
        let text = canonical_bytes(&value).unwrap();
        let document = Document::parse(&text, &ParseLimits::STATE).unwrap();
        prop_assert!(document.is_canonical());
        let cut = document.canonical_without("signature").unwrap();
        prop_assert_eq!(cut, written_without_signature(&document));
    }

    /// Whatever the parser calls canonical is: its RFC 8785 form is the source itself. Inputs
    /// are canonical texts spoiled in the ways a sender might (spacing, escapes, number forms,
    /// member order) and random JSON-like text.
    #[test]
    fn a_source_called_canonical_is_its_own_canonical_form(
        value in arbitrary_value(),
        spoil in 0usize..8,
    ) {
        let canonical = String::from_utf8(canonical_bytes(&value).unwrap()).unwrap();
        let text = match spoil {
            0 => canonical.clone(),
            1 => canonical.replacen(',', ", ", 1),
            2 => canonical.replacen('a', "\\u0061", 1),
            3 => canonical.replacen('/', "\\/", 1),
            4 => canonical.replacen("\\n", "\\u000a", 1),
            5 => canonical.replacen('1', "1.0", 1),
            6 => canonical.replacen("\\u001f", "\\u001F", 1),
            _ => canonical.replacen("0", "0e0", 1),
        };
        if let Ok(document) = Document::parse(text.as_bytes(), &ParseLimits::STATE) {
            if document.is_canonical() {
                let value = document.to_value();
                prop_assert_eq!(canonical_bytes(&value).unwrap(), text.as_bytes());
            } else {
                prop_assert_ne!(text.as_str(), canonical.as_str());
            }
        }
    }

    #[test]
    fn json_like_text_called_canonical_is(text in "[\\[\\]{}\",:0-9eE.+\\-a-c\\\\u ]{0,48}") {
        if let Ok(document) = Document::parse(text.as_bytes(), &ParseLimits::STATE)
            && document.is_canonical()
            && let Ok(bytes) = canonical_bytes(&document.to_value())
        {
            prop_assert_eq!(bytes, text.as_bytes());
        }
    }
}

#[test]
fn canonical_sources_are_recognized() {
    for text in [
        r#"{}"#,
        r#"[]"#,
        r#"0"#,
        r#"-12"#,
        r#"{"a":[1,2.5,1e+21,-3,true,false,null],"b":"x"}"#,
        r#"["\n\t\b\f\r\"\\","\u001f\u0000","é😀/"]"#,
        r#"{"\u0001":1,"a":{"b":{}}}"#,
        // UTF-16 order: U+E000 sorts after U+1F600 (a surrogate pair), unlike in UTF-8.
        "{\"😀\":1,\"\u{E000}\":2}",
        r#"1234567890123456"#,
    ] {
        let document = Document::parse(text.as_bytes(), &ParseLimits::STATE).unwrap();
        assert!(document.is_canonical(), "{text}");
    }
}

#[test]
fn sources_that_are_not_their_canonical_form_are_not_called_canonical() {
    for text in [
        r#" {}"#,
        "{}\n",
        r#"{"a": 1}"#,
        r#"[1, 2]"#,
        r#"{"b":1,"a":2}"#,
        "{\"\u{E000}\":2,\"😀\":1}",
        r#"["\/"]"#,
        r#"["\u0061"]"#,
        r#"["\u000a"]"#,
        r#"["\u001F"]"#,
        r#"["\ud800"]"#,
        r#"[1.0]"#,
        r#"[1E3]"#,
        r#"[-0]"#,
        r#"[0.10]"#,
        r#"[1e400]"#,
        r#"[12345678901234567890]"#,
    ] {
        let document = Document::parse(text.as_bytes(), &ParseLimits::STATE).unwrap();
        assert!(!document.is_canonical(), "{text}");
        assert_eq!(document.canonical_without("signature"), None);
    }
}

#[test]
fn the_cut_handles_every_position_of_the_member() {
    for (text, expected) in [
        (r#"{"signature":{"v":1}}"#, "{}"),
        (r#"{"a":1,"signature":[2]}"#, r#"{"a":1}"#),
        (r#"{"signature":"s","z":[1,{}]}"#, r#"{"z":[1,{}]}"#),
        (
            r#"{"a":{"signature":1},"signature":2,"z":3}"#,
            r#"{"a":{"signature":1},"z":3}"#,
        ),
        (r#"{"a":1}"#, r#"{"a":1}"#),
    ] {
        let document = Document::parse(text.as_bytes(), &ParseLimits::STATE).unwrap();
        assert!(document.is_canonical(), "{text}");
        let cut = document.canonical_without("signature").unwrap();
        assert_eq!(String::from_utf8(cut).unwrap(), expected);
        assert_eq!(written_without_signature(&document), expected.as_bytes());
    }
    let array = Document::parse(b"[1]", &ParseLimits::STATE).unwrap();
    assert_eq!(array.canonical_without("signature"), None, "not an object");
}
