//! Native matchers for the `pattern`s every protocol document meets many times (each
//! identifier's two, `base64url`, `sha256:` digests). A schema stays the one source of each
//! rule: a matcher is chosen by the exact pattern text, and the tests below hold each one equal
//! to the compiled ECMA-262 expression (`regress`, Unicode mode) on generated strings.

/// A whole-string verdict equal to an unanchored `regress` search for the pattern.
pub(crate) type Matcher = fn(&str) -> bool;

/// The native matcher for a pattern's exact text, if there is one.
pub(crate) fn native(source: &str) -> Option<Matcher> {
    Some(match source {
        "^[A-Za-z][A-Za-z0-9+.-]*:" => uri_scheme_prefix,
        r"[^A-Za-z0-9._~:/?#\[\]@!$&'()*+,;=%-]" => has_non_uri_character,
        "^[A-Za-z0-9_-]+$" => base64url_alphabet,
        "^sha256:[0-9a-f]{64}$" => sha256_digest,
        _ => return None,
    })
}

/// `^[A-Za-z][A-Za-z0-9+.-]*:`: the class excludes `:`, so the greedy run must end at one.
fn uri_scheme_prefix(text: &str) -> bool {
    let bytes = text.as_bytes();
    if !bytes.first().is_some_and(u8::is_ascii_alphabetic) {
        return false;
    }
    bytes[1..]
        .iter()
        .find(|&&b| !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'.' | b'-')))
        == Some(&b':')
}

/// `[^A-Za-z0-9._~:/?#\[\]@!$&'()*+,;=%-]`: some character outside the URI characters (any
/// non-ASCII character is outside).
fn has_non_uri_character(text: &str) -> bool {
    !text.bytes().all(|b| URI_CHARACTER[usize::from(b)])
}

/// The class of [`has_non_uri_character`], as a table.
const URI_CHARACTER: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 128 {
        let b = byte as u8;
        table[byte] = b.is_ascii_alphanumeric();
        byte += 1;
    }
    let others = b"._~:/?#[]@!$&'()*+,;=%-";
    let mut index = 0;
    while index < others.len() {
        table[others[index] as usize] = true;
        index += 1;
    }
    table
};

/// `^[A-Za-z0-9_-]+$` (`$` without the `m` flag is the end of the input).
fn base64url_alphabet(text: &str) -> bool {
    !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// `^sha256:[0-9a-f]{64}$`.
fn sha256_digest(text: &str) -> bool {
    text.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use proptest::prelude::*;

    const SOURCES: [&str; 4] = [
        "^[A-Za-z][A-Za-z0-9+.-]*:",
        r"[^A-Za-z0-9._~:/?#\[\]@!$&'()*+,;=%-]",
        "^[A-Za-z0-9_-]+$",
        "^sha256:[0-9a-f]{64}$",
    ];

    fn agrees(text: &str) {
        for source in SOURCES {
            let regex = regress::Regex::with_flags(source, "u").unwrap();
            let native = super::native(source).unwrap();
            assert_eq!(
                native(text),
                regex.find(text).is_some(),
                "{source:?} on {text:?}"
            );
        }
    }

    #[test]
    fn each_matcher_is_its_pattern_on_chosen_strings() {
        let digest = format!("sha256:{}", "0123456789abcdef".repeat(4));
        for text in [
            "",
            ":",
            "a:",
            "urn:uuid:1",
            "1a:",
            "a+b.c-d:rest",
            "a b:",
            "abc",
            "ab\n:",
            "x:\n",
            "AZaz09_-",
            "AZaz09_-\n",
            "é",
            "a:é",
            digest.as_str(),
            &digest[..70],
            &format!("{digest}0"),
            &digest.to_uppercase(),
            "urn:x:[]@!$&'()*+,;=%-._~/?#",
            "urn:x:\"",
            "urn:x:{}",
            "urn:x:\\",
            "\u{FFFD}",
        ] {
            agrees(text);
        }
    }

    proptest! {
        #[test]
        fn each_matcher_is_its_pattern(text in "[a-zA-Z0-9:+.\\-_~/?#@!$&'()*,;=%\\[\\]\" \n\\\\é😀]{0,80}") {
            agrees(&text);
        }

        #[test]
        fn digests_agree(hex in "[0-9a-gA-F]{62,66}", prefix in "(sha256:|sha256|sha512:|)") {
            agrees(&format!("{prefix}{hex}"));
        }
    }
}
