//! Indented JSON output (two-space style, `": "` separators), used for human-facing output and
//! for First-Admission Record fixtures. Strings are escaped exactly as in canonical form.

use super::canonical::write_text;
use super::value::Value;

/// Writes `value` with `indent` spaces per level. Unpaired surrogates are written as `\uXXXX`.
pub fn write_indented(value: &Value, indent: usize, out: &mut Vec<u8>) {
    write_level(value, indent, 0, out);
}

fn newline(indent: usize, level: usize, out: &mut Vec<u8>) {
    out.push(b'\n');
    out.extend(std::iter::repeat_n(b' ', indent * level));
}

fn write_level(value: &Value, indent: usize, level: usize, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Number(number) => out.extend_from_slice(number.as_text().as_bytes()),
        Value::String(text) => write_json_string(text, out),
        Value::Array(items) if items.is_empty() => out.extend_from_slice(b"[]"),
        Value::Array(items) => {
            out.push(b'[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                newline(indent, level + 1, out);
                write_level(item, indent, level + 1, out);
            }
            newline(indent, level, out);
            out.push(b']');
        }
        Value::Object(object) if object.is_empty() => out.extend_from_slice(b"{}"),
        Value::Object(object) => {
            out.push(b'{');
            for (index, (key, member)) in object.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                newline(indent, level + 1, out);
                write_json_string(key, out);
                out.extend_from_slice(b": ");
                write_level(member, indent, level + 1, out);
            }
            newline(indent, level, out);
            out.push(b'}');
        }
    }
}

fn write_json_string(text: &super::value::JsonString, out: &mut Vec<u8>) {
    match text {
        super::value::JsonString::Text(text) => write_text(text, out),
        super::value::JsonString::Wtf16(units) => {
            out.push(b'"');
            for decoded in char::decode_utf16(units.iter().copied()) {
                match decoded {
                    Ok(c) => {
                        let mut buffer = [0u8; 4];
                        let encoded = c.encode_utf8(&mut buffer);
                        let mut escaped = Vec::new();
                        write_text(encoded, &mut escaped);
                        out.extend_from_slice(&escaped[1..escaped.len() - 1]);
                    }
                    Err(error) => out.extend_from_slice(
                        format!("\\u{:04x}", error.unpaired_surrogate()).as_bytes(),
                    ),
                }
            }
            out.push(b'"');
        }
    }
}
