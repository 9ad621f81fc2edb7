//! The strict parser of §6.4 stage 1 (and §17.4): exactly one UTF-8 JSON value; no byte-order
//! mark, no trailing data, no duplicate decoded member names; only `[ \t\n\r]` as whitespace.
//! Numbers keep their text and unpaired surrogate escapes are kept, so that both reach stage 5.

use std::collections::HashSet;
use std::fmt;

use super::value::{JsonString, Number, Object, Value};

/// Maximum nesting of arrays and objects. Deeper input is a clean error, never a stack overflow.
pub const MAX_DEPTH: usize = 128;

/// Objects with more members than this switch from a linear scan to a (DoS-resistant) hash set
/// for duplicate detection; protocol documents have fewer, and short-name compares are cheap.
const LINEAR_DUPLICATE_SCAN: usize = 32;

/// Bytes that end the unescaped run of a string: `"`, `\` and the controls below 0x20.
const STRING_STOP: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = true;
        byte += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// Why strict parsing failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseErrorKind {
    ByteOrderMark,
    InvalidUtf8,
    UnexpectedEnd,
    UnexpectedCharacter(char),
    InvalidLiteral,
    InvalidNumber,
    InvalidEscape,
    ControlCharacterInString,
    DuplicateMember(String),
    TrailingData,
    TooDeep,
}

/// A stage-1 failure with the byte offset where it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub kind: ParseErrorKind,
    pub offset: usize,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ParseErrorKind::ByteOrderMark => write!(f, "byte-order mark at byte {}", self.offset),
            ParseErrorKind::InvalidUtf8 => write!(f, "invalid UTF-8 at byte {}", self.offset),
            ParseErrorKind::UnexpectedEnd => {
                write!(f, "unexpected end of input at byte {}", self.offset)
            }
            ParseErrorKind::UnexpectedCharacter(c) => {
                write!(f, "unexpected character {c:?} at byte {}", self.offset)
            }
            ParseErrorKind::InvalidLiteral => write!(f, "invalid literal at byte {}", self.offset),
            ParseErrorKind::InvalidNumber => write!(f, "invalid number at byte {}", self.offset),
            ParseErrorKind::InvalidEscape => write!(f, "invalid escape at byte {}", self.offset),
            ParseErrorKind::ControlCharacterInString => {
                write!(
                    f,
                    "unescaped control character in string at byte {}",
                    self.offset
                )
            }
            ParseErrorKind::DuplicateMember(name) => {
                write!(f, "duplicate member name {name:?} at byte {}", self.offset)
            }
            ParseErrorKind::TrailingData => write!(f, "trailing data at byte {}", self.offset),
            ParseErrorKind::TooDeep => {
                write!(f, "nesting deeper than {MAX_DEPTH} at byte {}", self.offset)
            }
        }
    }
}

impl std::error::Error for ParseError {}

/// Strictly parses exactly one JSON value.
///
/// Numbers keep their text; duplicate member names, a byte-order mark, invalid UTF-8 and
/// trailing content are refused (§2, §6.4 stage 1).
///
/// ```
/// use missionweaveprotocol::json::{Value, parse};
///
/// let value = parse(br#"{"amount": 1.50, "tags": ["a"]}"#)?;
/// assert_eq!(value.pointer("/tags/0").and_then(Value::as_str), Some("a"));
/// assert!(parse(br#"{"a": 1, "a": 2}"#).is_err(), "duplicate member");
/// assert!(parse(b"[1] [2]").is_err(), "trailing content");
/// # Ok::<(), missionweaveprotocol::json::ParseError>(())
/// ```
pub fn parse(bytes: &[u8]) -> Result<Value, ParseError> {
    let mut parser = Parser::new(bytes, false)?;
    parser.document()
}

/// Strictly parses one value and returns, for a top-level object, the byte span of each
/// member's value in member order (used to keep the exact bytes of a nested Command, §17).
pub fn parse_with_member_spans(bytes: &[u8]) -> Result<(Value, Vec<(usize, usize)>), ParseError> {
    let mut parser = Parser::new(bytes, true)?;
    let value = parser.document()?;
    Ok((value, parser.spans))
}

struct Parser<'a> {
    bytes: &'a [u8],
    text: &'a str,
    pos: usize,
    depth: usize,
    record_spans: bool,
    spans: Vec<(usize, usize)>,
}

impl<'a> Parser<'a> {
    fn new(bytes: &'a [u8], record_spans: bool) -> Result<Self, ParseError> {
        if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
            return Err(ParseError {
                kind: ParseErrorKind::ByteOrderMark,
                offset: 0,
            });
        }
        let text = std::str::from_utf8(bytes).map_err(|error| ParseError {
            kind: ParseErrorKind::InvalidUtf8,
            offset: error.valid_up_to(),
        })?;
        Ok(Self {
            bytes,
            text,
            pos: 0,
            depth: 0,
            record_spans,
            spans: Vec::new(),
        })
    }

    fn error<T>(&self, kind: ParseErrorKind) -> Result<T, ParseError> {
        Err(ParseError {
            kind,
            offset: self.pos,
        })
    }

    fn unexpected<T>(&self) -> Result<T, ParseError> {
        match self
            .text
            .get(self.pos..)
            .and_then(|rest| rest.chars().next())
        {
            Some(c) => self.error(ParseErrorKind::UnexpectedCharacter(c)),
            None => self.error(ParseErrorKind::UnexpectedEnd),
        }
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    fn document(&mut self) -> Result<Value, ParseError> {
        self.skip_whitespace();
        let value = self.value()?;
        self.skip_whitespace();
        if self.pos != self.bytes.len() {
            return self.error(ParseErrorKind::TrailingData);
        }
        Ok(value)
    }

    fn value(&mut self) -> Result<Value, ParseError> {
        match self.bytes.get(self.pos) {
            None => self.error(ParseErrorKind::UnexpectedEnd),
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => Ok(Value::String(self.string()?)),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => self.unexpected(),
        }
    }

    fn literal(&mut self, word: &str, value: Value) -> Result<Value, ParseError> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            self.error(ParseErrorKind::InvalidLiteral)
        }
    }

    fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return self.error(ParseErrorKind::TooDeep);
        }
        Ok(())
    }

    fn object(&mut self) -> Result<Value, ParseError> {
        self.enter()?;
        let top_level = self.depth == 1 && self.record_spans;
        self.pos += 1;
        let mut members: Vec<(JsonString, Value)> = Vec::with_capacity(8);
        let mut seen: Option<HashSet<JsonString>> = None;
        self.skip_whitespace();
        if self.bytes.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            self.depth -= 1;
            return Ok(Value::Object(Object::from_members(members)));
        }
        loop {
            self.skip_whitespace();
            if self.bytes.get(self.pos) != Some(&b'"') {
                return self.unexpected();
            }
            let name_offset = self.pos;
            let name = self.string()?;
            let duplicate = match &mut seen {
                Some(set) => !set.insert(name.clone()),
                None => {
                    let duplicate = members.iter().any(|(key, _)| key.same_units(&name));
                    if members.len() >= LINEAR_DUPLICATE_SCAN {
                        let mut set: HashSet<JsonString> =
                            members.iter().map(|(key, _)| key.clone()).collect();
                        set.insert(name.clone());
                        seen = Some(set);
                    }
                    duplicate
                }
            };
            if duplicate {
                return Err(ParseError {
                    kind: ParseErrorKind::DuplicateMember(name.to_lossy().into_owned()),
                    offset: name_offset,
                });
            }
            self.skip_whitespace();
            if self.bytes.get(self.pos) != Some(&b':') {
                return self.unexpected();
            }
            self.pos += 1;
            self.skip_whitespace();
            let start = self.pos;
            let value = self.value()?;
            if top_level {
                self.spans.push((start, self.pos));
            }
            members.push((name, value));
            self.skip_whitespace();
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    self.depth -= 1;
                    return Ok(Value::Object(Object::from_members(members)));
                }
                _ => return self.unexpected(),
            }
        }
    }

    fn array(&mut self) -> Result<Value, ParseError> {
        self.enter()?;
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_whitespace();
        if self.bytes.get(self.pos) == Some(&b']') {
            self.pos += 1;
            self.depth -= 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.skip_whitespace();
            items.push(self.value()?);
            self.skip_whitespace();
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    self.depth -= 1;
                    return Ok(Value::Array(items));
                }
                _ => return self.unexpected(),
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while self.bytes.get(self.pos).is_some_and(u8::is_ascii_digit) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<Value, ParseError> {
        let start = self.pos;
        if self.bytes[self.pos] == b'-' {
            self.pos += 1;
        }
        match self.bytes.get(self.pos) {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return self.error(ParseErrorKind::InvalidNumber),
        }
        if self.bytes.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return self.error(ParseErrorKind::InvalidNumber);
            }
        }
        if let Some(b'e' | b'E') = self.bytes.get(self.pos) {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.bytes.get(self.pos) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return self.error(ParseErrorKind::InvalidNumber);
            }
        }
        Ok(Value::Number(Number::from_grammar_checked(
            &self.text[start..self.pos],
        )))
    }

    fn hex4(&mut self) -> Result<u16, ParseError> {
        let Some(digits) = self.bytes.get(self.pos..self.pos + 4) else {
            return self.error(ParseErrorKind::InvalidEscape);
        };
        let mut value: u16 = 0;
        for &digit in digits {
            let nibble = match digit {
                b'0'..=b'9' => digit - b'0',
                b'a'..=b'f' => digit - b'a' + 10,
                b'A'..=b'F' => digit - b'A' + 10,
                _ => return self.error(ParseErrorKind::InvalidEscape),
            };
            value = (value << 4) | u16::from(nibble);
        }
        self.pos += 4;
        Ok(value)
    }

    fn string(&mut self) -> Result<JsonString, ParseError> {
        self.pos += 1;
        let start = self.pos;
        // Fast path: no escapes.
        let rest = &self.bytes[self.pos..];
        let stop = rest.iter().position(|&b| STRING_STOP[usize::from(b)]);
        match stop.map(|offset| (offset, rest[offset])) {
            None => {
                self.pos = self.bytes.len();
                return self.error(ParseErrorKind::UnexpectedEnd);
            }
            Some((offset, b'"')) => {
                let text = &self.text[start..start + offset];
                self.pos = start + offset + 1;
                return Ok(JsonString::Text(text.into()));
            }
            Some((offset, b'\\')) => self.pos = start + offset,
            Some((offset, _)) => {
                self.pos = start + offset;
                return self.error(ParseErrorKind::ControlCharacterInString);
            }
        }
        let mut units: Vec<u16> = self.text[start..self.pos].encode_utf16().collect();
        loop {
            match self.bytes.get(self.pos) {
                None => return self.error(ParseErrorKind::UnexpectedEnd),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(if has_unpaired_surrogate(&units) {
                        JsonString::Wtf16(units.into_boxed_slice())
                    } else {
                        // No unpaired surrogate was seen, so this decodes exactly.
                        JsonString::Text(String::from_utf16_lossy(&units).into_boxed_str())
                    });
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let escape = self.bytes.get(self.pos).copied();
                    self.pos += 1;
                    match escape {
                        Some(b'"') => units.push(u16::from(b'"')),
                        Some(b'\\') => units.push(u16::from(b'\\')),
                        Some(b'/') => units.push(u16::from(b'/')),
                        Some(b'b') => units.push(0x08),
                        Some(b'f') => units.push(0x0C),
                        Some(b'n') => units.push(0x0A),
                        Some(b'r') => units.push(0x0D),
                        Some(b't') => units.push(0x09),
                        Some(b'u') => {
                            let unit = self.hex4()?;
                            units.push(unit);
                        }
                        _ => {
                            self.pos -= 1;
                            return self.error(ParseErrorKind::InvalidEscape);
                        }
                    }
                }
                Some(&byte) if byte < 0x20 => {
                    return self.error(ParseErrorKind::ControlCharacterInString);
                }
                Some(_) => {
                    // Copy one run of unescaped characters.
                    let run_start = self.pos;
                    while let Some(&byte) = self.bytes.get(self.pos) {
                        if STRING_STOP[usize::from(byte)] {
                            break;
                        }
                        self.pos += 1;
                    }
                    units.extend(self.text[run_start..self.pos].encode_utf16());
                }
            }
        }
    }
}

/// Whether the UTF-16 code units hold a surrogate that is not part of a high-low pair.
fn has_unpaired_surrogate(units: &[u16]) -> bool {
    char::decode_utf16(units.iter().copied()).any(|decoded| decoded.is_err())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn trailing_high_surrogate_is_unpaired_at_end() {
        let value = parse(br#""\ud800""#).unwrap();
        assert!(matches!(value, Value::String(JsonString::Wtf16(_))));
        let value = parse(br#""\ud83d\ude00""#).unwrap();
        assert_eq!(value.as_str(), Some("\u{1F600}"));
    }
}
