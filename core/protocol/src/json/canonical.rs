//! RFC 8785 (JCS) output from the lossless value. Values outside the I-JSON data model
//! (non-finite binary64 numbers, unpaired surrogates) fail here: stage 5 of §6.4.

use std::cmp::Ordering;
use std::fmt;

use sha2::{Digest, Sha256};

use super::document::Document;
use super::value::Value;
use super::view::{NumberRef, ObjectView, Str, View};

/// Why a value cannot be canonicalized (§2 data model; §6.4 stage 5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CanonicalError {
    /// A number that does not round to a finite binary64 value (e.g. `1e400`).
    NonFiniteNumber(String),
    /// A string or member name holding an unpaired UTF-16 surrogate.
    UnpairedSurrogate,
    /// A host-language value with no JSON form (a binding's input: a naive datetime, a
    /// non-finite float, a non-string key, …); the text says which.
    NotJson(String),
}

impl fmt::Display for CanonicalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NonFiniteNumber(text) => {
                write!(f, "number {text} is outside finite IEEE 754 binary64")
            }
            Self::UnpairedSurrogate => f.write_str("string holds an unpaired UTF-16 surrogate"),
            Self::NotJson(text) => write!(f, "value has no JSON form: {text}"),
        }
    }
}

impl std::error::Error for CanonicalError {}

/// The RFC 8785 canonical bytes of `value`.
///
/// ```
/// use missionweaveprotocol::json::{canonical_bytes, parse};
///
/// let value = parse(br#"{ "b": 1e3, "a": [true, null, "\u00e9"] }"#)?;
/// assert_eq!(canonical_bytes(&value)?, "{\"a\":[true,null,\"é\"],\"b\":1000}".as_bytes());
/// // A number outside IEEE 754 doubles has no canonical form (§6.4 stage 5).
/// assert!(canonical_bytes(&parse(b"1e400")?).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn canonical_bytes(value: &Value) -> Result<Vec<u8>, CanonicalError> {
    let mut out = Vec::with_capacity(1024);
    write_canonical(value, &mut out)?;
    Ok(out)
}

/// `sha256:` + lowercase hex SHA-256 of the canonical bytes.
pub fn canonical_hash(value: &Value) -> Result<String, CanonicalError> {
    Ok(sha256_prefixed(&canonical_bytes(value)?))
}

/// `sha256:` + lowercase hex SHA-256 of `bytes`.
pub fn sha256_prefixed(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut text = String::with_capacity(7 + 64);
    text.push_str("sha256:");
    for byte in digest {
        text.push(char::from(HEX[usize::from(byte >> 4)]));
        text.push(char::from(HEX[usize::from(byte & 0x0F)]));
    }
    text
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Appends the canonical form of `value` to `out`.
pub fn write_canonical(value: &Value, out: &mut Vec<u8>) -> Result<(), CanonicalError> {
    write_view(value.view(), out)
}

/// Appends the canonical form of a [`View`] (a tree value or a parsed [`Document`]'s node) to
/// `out`. Besides the output, it allocates 4 bytes per member of the object being written.
///
/// [`Document`]: super::Document
pub fn write_view(value: View<'_>, out: &mut Vec<u8>) -> Result<(), CanonicalError> {
    match value {
        View::Null => out.extend_from_slice(b"null"),
        View::Bool(true) => out.extend_from_slice(b"true"),
        View::Bool(false) => out.extend_from_slice(b"false"),
        View::Number(number) => {
            if let Some(text) = short_integer(number.as_text()) {
                out.extend_from_slice(text.as_bytes());
                return Ok(());
            }
            let float = number.as_f64();
            if !float.is_finite() {
                return Err(CanonicalError::NonFiniteNumber(number.as_text().to_owned()));
            }
            // ECMAScript Number::toString (RFC 8785 §3.2.2.3); -0 serializes as 0.
            let mut buffer = ryu_js::Buffer::new();
            out.extend_from_slice(buffer.format_finite(float).as_bytes());
        }
        View::String(text) => write_string(text, out)?,
        View::Array(items) => {
            out.push(b'[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                write_view(item, out)?;
            }
            out.push(b']');
        }
        View::Object(object) => write_object(object, None, out)?,
    }
    Ok(())
}

/// Whether `text` (a number the grammar accepted) is written as RFC 8785 writes its value.
pub(crate) fn number_is_canonical(text: &str) -> bool {
    if let Some(short) = short_integer(text) {
        return short.len() == text.len();
    }
    let float = NumberRef::new(text).as_f64();
    float.is_finite() && ryu_js::Buffer::new().format_finite(float) == text
}

/// The canonical text of a number written as an integer of at most 15 digits: exactly
/// representable, so ECMAScript prints its digits unchanged (and `-0` as `0`), without the
/// round trip through binary64.
fn short_integer(text: &str) -> Option<&str> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || digits.len() > 15 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(if digits == "0" { digits } else { text })
}

/// Writes an object's canonical form, leaving out the top-level member named `omit` (the
/// `signature` member of a Signed Document, §6.4 stage 5).
pub(crate) fn write_object(
    object: ObjectView<'_>,
    omit: Option<&str>,
    out: &mut Vec<u8>,
) -> Result<(), CanonicalError> {
    match object.tape_slot() {
        Some((document, index)) => write_tape_object(document, index, omit, out),
        None => write_members(object, omit, out),
    }
}

/// The canonical form of the value at slot `index` of a parsed document, read from the tape
/// directly: a string without escapes in the source has no `"`, `\` or control character (the
/// parser refuses them raw), so RFC 8785 writes it exactly as it appears there, and it is
/// copied without being scanned again.
fn write_tape(
    document: &Document<'_>,
    index: u32,
    out: &mut Vec<u8>,
) -> Result<(), CanonicalError> {
    match document.lead_byte(index) {
        b'{' => write_tape_object(document, index, None, out),
        b'[' => {
            out.push(b'[');
            let end = document.end_of(index);
            let mut child = index + 1;
            while child < end {
                if child > index + 1 {
                    out.push(b',');
                }
                write_tape(document, child, out)?;
                child = document.skip(child);
            }
            out.push(b']');
            Ok(())
        }
        b'"' => match document.raw_string(index) {
            Some(raw) => {
                write_raw(raw, out);
                Ok(())
            }
            None => write_string(document.string_at(index), out),
        },
        _ => write_view(document.view_at(index), out),
    }
}

/// A string that needs no escape, quoted.
fn write_raw(raw: &str, out: &mut Vec<u8>) {
    out.reserve(raw.len() + 2);
    out.push(b'"');
    out.extend_from_slice(raw.as_bytes());
    out.push(b'"');
}

/// [`write_object`] on the tape: names read once, members sorted on the stack.
fn write_tape_object(
    document: &Document<'_>,
    index: u32,
    omit: Option<&str>,
    out: &mut Vec<u8>,
) -> Result<(), CanonicalError> {
    // (name, the name's slot, whether the name is written as it appears in the source)
    let mut members = [("", 0u32, false); SMALL_OBJECT];
    let mut kept = 0;
    let end = document.end_of(index);
    let mut child = index + 1;
    while child < end {
        let (name, raw) = match document.raw_string(child) {
            Some(raw) => (raw, true),
            None => match document.string_at(child).as_str() {
                Some(decoded) => (decoded, false),
                None => return Err(CanonicalError::UnpairedSurrogate),
            },
        };
        if Some(name) != omit {
            let Some(free) = members.get_mut(kept) else {
                // More members than fit on the stack: sorted on the heap.
                return write_members(ObjectView::tape(document, index), omit, out);
            };
            *free = (name, child, raw);
            kept += 1;
        }
        child = document.skip(child + 1);
    }
    let members = &mut members[..kept];
    sort_small_by_name(members, |member| member.0);
    out.push(b'{');
    for (position, &(name, slot, raw)) in members.iter().enumerate() {
        if position > 0 {
            out.push(b',');
        }
        if raw {
            write_raw(name, out);
        } else {
            write_text(name, out);
        }
        out.push(b':');
        write_tape(document, slot + 1, out)?;
    }
    out.push(b'}');
    Ok(())
}

/// [`write_object`] through the view's accessors (a tree, or a tape object too large for the
/// stack).
fn write_members(
    object: ObjectView<'_>,
    omit: Option<&str>,
    out: &mut Vec<u8>,
) -> Result<(), CanonicalError> {
    // A small object (most are) is sorted on the stack with its names read once; a larger one
    // sorts 4-byte handles on the heap, reading names as it compares.
    let mut handles = [0u32; SMALL_OBJECT];
    if let Some(count) = object.handles_into(&mut handles) {
        let mut members = [("", 0u32); SMALL_OBJECT];
        let mut kept = 0;
        for &handle in &handles[..count] {
            let Some(name) = object.name(handle).as_str() else {
                return Err(CanonicalError::UnpairedSurrogate);
            };
            if Some(name) != omit {
                members[kept] = (name, handle);
                kept += 1;
            }
        }
        let members = &mut members[..kept];
        sort_small_by_name(members, |member| member.0);
        out.push(b'{');
        for (index, &(name, handle)) in members.iter().enumerate() {
            if index > 0 {
                out.push(b',');
            }
            write_text(name, out);
            out.push(b':');
            write_view(object.value(handle), out)?;
        }
        out.push(b'}');
        return Ok(());
    }
    let mut handles = object.handles();
    let mut kept = 0;
    for index in 0..handles.len() {
        let handle = handles[index];
        let Some(name) = object.name(handle).as_str() else {
            return Err(CanonicalError::UnpairedSurrogate);
        };
        if Some(name) != omit {
            handles[kept] = handle;
            kept += 1;
        }
    }
    handles.truncate(kept);
    let name = |handle| object.name(handle).as_str().unwrap_or_default();
    super::sort_indices(&mut handles, &|a, b| utf16_order(name(a), name(b)));
    out.push(b'{');
    for (index, handle) in handles.into_iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        let (name, value) = object.member(handle);
        write_text(name.as_str().unwrap_or_default(), out);
        out.push(b':');
        write_view(value, out)?;
    }
    out.push(b'}');
    Ok(())
}

/// Objects up to this many members are sorted on the stack.
const SMALL_OBJECT: usize = 32;

/// Sorts the members of a small object (at most [`SMALL_OBJECT`], on the stack) by name in
/// UTF-16 order: an insertion sort, which for a few dozen mostly ordered names beats a general
/// sort and allocates nothing.
fn sort_small_by_name<T>(members: &mut [T], name: impl Fn(&T) -> &str) {
    for end in 1..members.len() {
        let mut at = end;
        while at > 0 && utf16_order(name(&members[at]), name(&members[at - 1])).is_lt() {
            members.swap(at, at - 1);
            at -= 1;
        }
    }
}

/// RFC 8785 §3.2.3: member names sort by their UTF-16 code units.
fn utf16_order(a: &str, b: &str) -> Ordering {
    // UTF-8 byte order is code point order, which is UTF-16 order unless the first difference
    // is between two non-ASCII characters (U+E000..U+FFFF sort after supplementary ones in
    // UTF-16): only then are the code units compared.
    match a.bytes().zip(b.bytes()).find(|(x, y)| x != y) {
        None => a.len().cmp(&b.len()),
        Some((x, y)) if x < 0x80 || y < 0x80 => x.cmp(&y),
        Some(_) => a.encode_utf16().cmp(b.encode_utf16()),
    }
}

fn write_string(text: Str<'_>, out: &mut Vec<u8>) -> Result<(), CanonicalError> {
    match text.as_str() {
        Some(text) => {
            write_text(text, out);
            Ok(())
        }
        None => Err(CanonicalError::UnpairedSurrogate),
    }
}

/// Where escaped string output goes: bytes (canonical documents) or text (the bindings'
/// hand-written JSON). Escapes are ASCII, and they only ever split the input at ASCII bytes, so
/// every run handed to [`Sink::text`] is a whole `str` slice.
trait Sink {
    fn text(&mut self, text: &str);
    fn ascii(&mut self, bytes: &[u8]);
}

impl Sink for Vec<u8> {
    fn text(&mut self, text: &str) {
        self.extend_from_slice(text.as_bytes());
    }
    fn ascii(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

impl Sink for String {
    fn text(&mut self, text: &str) {
        self.push_str(text);
    }
    fn ascii(&mut self, bytes: &[u8]) {
        self.extend(bytes.iter().map(|&b| char::from(b)));
    }
}

/// RFC 8785 §3.2.2.2: escape only `"`, `\` and controls; short forms where JSON has them,
/// otherwise `\u00xx` in lowercase hex; everything else as raw UTF-8.
fn escape<S: Sink>(text: &str, out: &mut S) {
    out.ascii(b"\"");
    let bytes = text.as_bytes();
    let mut run_start = 0;
    // The bytes to escape are the parser's string stops: jump from one to the next.
    while let Some(offset) = super::parse::string_stop(&bytes[run_start..]) {
        let index = run_start + offset;
        let byte = bytes[index];
        let escape: Option<&[u8]> = match byte {
            b'"' => Some(b"\\\""),
            b'\\' => Some(b"\\\\"),
            0x08 => Some(b"\\b"),
            0x09 => Some(b"\\t"),
            0x0A => Some(b"\\n"),
            0x0C => Some(b"\\f"),
            0x0D => Some(b"\\r"),
            _ => None,
        };
        out.text(&text[run_start..index]);
        match escape {
            Some(short) => out.ascii(short),
            None => out.ascii(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0x0F)],
            ]),
        }
        run_start = index + 1;
    }
    out.text(&text[run_start..]);
    out.ascii(b"\"");
}

pub(crate) fn write_text(text: &str, out: &mut Vec<u8>) {
    escape(text, out);
}

/// Appends `text` as a JSON string with the RFC 8785 escapes: the one string escaper of the
/// project (the bindings' hand-written JSON uses it too).
pub fn write_json_string(out: &mut String, text: &str) {
    escape(text, out);
}
