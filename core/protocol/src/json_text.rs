//! Tiny JSON text writer for the schema-shaped projections of this crate's records.
//!
//! Strings are escaped exactly as RFC 8785 (JCS) requires — only `"`, `\` and controls below
//! 0x20 are escaped, with the `\b \t \n \f \r` short forms and lower-case `\u00xx` otherwise — so
//! the output of [`ObjectWriter`] with keys added in UTF-16 order is already canonical.

use core::fmt::Write as _;

/// Appends `s` as a JSON string literal (RFC 8785 escaping) to `out`.
pub(crate) fn push_json_string(out: &mut String, s: &str) {
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{08}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{0C}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Writes one flat JSON object, member by member, in the order the caller adds them.
#[derive(Debug)]
pub(crate) struct ObjectWriter {
    out: String,
    first: bool,
}

impl ObjectWriter {
    pub(crate) fn new() -> Self {
        ObjectWriter {
            out: String::from("{"),
            first: true,
        }
    }

    fn key(&mut self, key: &str) {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        push_json_string(&mut self.out, key);
        self.out.push(':');
    }

    pub(crate) fn string(&mut self, key: &str, value: &str) -> &mut Self {
        self.key(key);
        push_json_string(&mut self.out, value);
        self
    }

    pub(crate) fn uint(&mut self, key: &str, value: u64) -> &mut Self {
        self.key(key);
        let _ = write!(self.out, "{value}");
        self
    }

    pub(crate) fn finish(mut self) -> String {
        self.out.push('}');
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_like_rfc8785() {
        let mut s = String::new();
        push_json_string(&mut s, "a\"b\\c\u{08}\t\n\u{0C}\r\u{01}\u{1f}\u{7f}é€😀/");
        assert_eq!(s, "\"a\\\"b\\\\c\\b\\t\\n\\f\\r\\u0001\\u001f\u{7f}é€😀/\"");
    }

    #[test]
    fn writes_objects() {
        let mut w = ObjectWriter::new();
        w.string("a", "x").uint("b", 7);
        assert_eq!(w.finish(), r#"{"a":"x","b":7}"#);
        assert_eq!(ObjectWriter::new().finish(), "{}");
    }
}
