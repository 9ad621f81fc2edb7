//! The strict parser of §6.4 stage 1 (and §17.4): exactly one UTF-8 JSON value; no byte-order
//! mark, no trailing data, no duplicate decoded member names; only `[ \t\n\r]` as whitespace.
//! Numbers keep their text and unpaired surrogate escapes are kept, so that both reach stage 5.
//!
//! Memory is bounded by construction: a first pass checks the grammar, the limits and member
//! uniqueness while only counting, and a second pass writes the [`Document`] tape into buffers
//! allocated once at their exact size, so no buffer ever grows by doubling (see `docs/limits.md`
//! for the bound per shape). A small document (up to 256 values) is written during the first
//! pass into fixed buffers on the stack and copied out at its exact size once it has passed:
//! one pass, and still nothing allocated for the document before every check is done.

use std::cmp::Ordering;
use std::fmt;

use super::document::{Document, Slot, Tape};
use super::limits::{Limit, ParseLimits};
use super::value::{JsonString, Number, Object, Value};

/// Maximum nesting of arrays and objects. Deeper input is a clean error, never a stack overflow.
pub const MAX_DEPTH: usize = 128;

/// Objects with more members than this check uniqueness once, when they close, by sorting their
/// names (O(n log n), no hashing to flood); smaller ones compare each new name with the others.
const LINEAR_DUPLICATE_SCAN: usize = 32;

/// The largest offset a tape slot can hold.
const MAX_OFFSET: usize = u32::MAX as usize;

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

/// The offset of the first byte of `bytes` in [`STRING_STOP`]. Eight bytes at a time: a string
/// is most of a document's bytes, and its unescaped runs are long.
pub(crate) fn string_stop(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut chunks = bytes.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut chunks {
        let word = <[u8; 8]>::try_from(chunk).map_or(0, u64::from_le_bytes);
        let quote = word ^ (ONES * u64::from(b'"'));
        let backslash = word ^ (ONES * u64::from(b'\\'));
        // A byte's high bit is set where it is zero after the XOR (`"`, `\`) or below 0x20;
        // a borrow can only mark bytes above the first true one, so the lowest mark is exact.
        let marks = ((quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash)
            | (word.wrapping_sub(ONES * 0x20) & !word))
            & HIGH;
        if marks != 0 {
            return Some(offset + (marks.trailing_zeros() / 8) as usize);
        }
        offset += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| STRING_STOP[usize::from(b)])
        .map(|index| offset + index)
}

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
    /// A [`ParseLimits`] limit was exceeded; `maximum` is the configured value.
    LimitExceeded {
        limit: Limit,
        maximum: usize,
    },
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
            ParseErrorKind::LimitExceeded { limit, maximum } => match limit {
                Limit::DocumentBytes => write!(f, "document larger than {maximum} bytes"),
                Limit::ContainerEntries => write!(
                    f,
                    "container with more than {maximum} entries at byte {}",
                    self.offset
                ),
                Limit::StringBytes => write!(
                    f,
                    "string longer than {maximum} bytes at byte {}",
                    self.offset
                ),
                Limit::NumberChars => write!(
                    f,
                    "number longer than {maximum} characters at byte {}",
                    self.offset
                ),
            },
        }
    }
}

impl std::error::Error for ParseError {}

/// Strictly parses exactly one JSON value into the owned tree, within [`ParseLimits::STATE`].
///
/// Numbers keep their text; duplicate member names, a byte-order mark, invalid UTF-8 and
/// trailing content are refused (§2, §6.4 stage 1). Untrusted input that only needs to be read
/// should use [`Document::parse`], whose memory is bounded by a small multiple of the input.
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
    parse_with_limits(bytes, &ParseLimits::DOCUMENT)
}

/// [`parse`] under the [`ParseLimits::STATE`] limits: for state the program itself stored and
/// reloads (aggregates, snapshots, Registry evidence an operator installs), never for bytes a
/// peer sent. The explicit choice of the larger limits (§6.4 stage 1 bounds apply to received
/// documents).
pub fn parse_state(bytes: &[u8]) -> Result<Value, ParseError> {
    parse_with_limits(bytes, &ParseLimits::STATE)
}

/// [`parse`] with explicit limits.
///
/// The owned tree is built during the checking pass itself, each value after the checks of
/// its token (its limits included) and before the next token is read; no tape is built.
pub fn parse_with_limits(bytes: &[u8], limits: &ParseLimits) -> Result<Value, ParseError> {
    let text = prepare(bytes, limits)?;
    let mut counts = Counts::default();
    let mut tree = TreeBuilder::default();
    let mut parser = Parser::new(text, limits, Pass::Count(&mut counts));
    parser.tree = Some(&mut tree);
    parser.document()?;
    Ok(tree.root.unwrap_or(Value::Null))
}

/// The owned tree, built from the checking pass's slots: containers open and close, and in an
/// object strings alternate between member name and value.
#[derive(Default)]
struct TreeBuilder {
    open: Vec<Frame>,
    root: Option<Value>,
}

enum Frame {
    Array(Vec<Value>),
    Object(Vec<(JsonString, Value)>, Option<JsonString>),
}

impl TreeBuilder {
    fn add(&mut self, value: Value) {
        match self.open.last_mut() {
            None => self.root = Some(value),
            Some(Frame::Array(items)) => items.push(value),
            Some(Frame::Object(members, name)) => {
                if let Some(name) = name.take() {
                    members.push((name, value));
                }
            }
        }
    }

    fn string(&mut self, text: JsonString) {
        match self.open.last_mut() {
            Some(Frame::Object(_, name @ None)) => *name = Some(text),
            _ => self.add(Value::String(text)),
        }
    }

    /// The value a slot opens or is, read from its first byte.
    fn slot(&mut self, text: &str, start: usize, aux: u32) {
        match text.as_bytes()[start] {
            b'{' => self.open.push(Frame::Object(Vec::new(), None)),
            b'[' => self.open.push(Frame::Array(Vec::new())),
            b'"' => self.string(JsonString::Text(
                text[start + 1..start + 1 + aux as usize].into(),
            )),
            b't' => self.add(Value::Bool(true)),
            b'f' => self.add(Value::Bool(false)),
            b'n' => self.add(Value::Null),
            _ => self.add(Value::Number(Number::from_grammar_checked(
                &text[start..start + aux as usize],
            ))),
        }
    }

    fn close(&mut self) {
        let value = match self.open.pop() {
            Some(Frame::Array(items)) => Value::Array(items),
            Some(Frame::Object(members, _)) => Value::Object(Object::from_members(members)),
            None => return,
        };
        self.add(value);
    }
}

/// Strictly parses one value and returns, for a top-level object, the byte span of each
/// member's value in member order (used to keep the exact bytes of a nested Command, §17).
pub fn parse_with_member_spans(bytes: &[u8]) -> Result<(Value, Vec<(usize, usize)>), ParseError> {
    let (document, spans) = build(bytes, &ParseLimits::DOCUMENT, true)?;
    Ok((document.to_value(), spans))
}

/// Sizes counted by the first pass, so the second allocates each buffer once.
#[derive(Default)]
struct Counts {
    slots: usize,
    escaped: usize,
    decoded_bytes: usize,
    wide: usize,
    wide_units: usize,
}

/// Fixed-size buffers, on the stack, for the tape of a small document (a Signed Document is
/// typically under 200 values): the checking pass writes into them while they last.
struct Scratch {
    slots: [Slot; SCRATCH_SLOTS],
    slot_count: usize,
    decoded: [u8; SCRATCH_DECODED],
    decoded_len: usize,
    spans: [(u32, u32); SCRATCH_SPANS],
    span_count: usize,
    wide: [u16; SCRATCH_WIDE],
    wide_len: usize,
    /// Something did not fit: the document takes the two-pass path.
    full: bool,
}

const SCRATCH_SLOTS: usize = 256;
const SCRATCH_DECODED: usize = 512;
const SCRATCH_SPANS: usize = 32;
const SCRATCH_WIDE: usize = 64;

impl Scratch {
    const fn new() -> Self {
        Self {
            slots: [Slot::new(0, 0); SCRATCH_SLOTS],
            slot_count: 0,
            decoded: [0; SCRATCH_DECODED],
            decoded_len: 0,
            spans: [(0, 0); SCRATCH_SPANS],
            span_count: 0,
            wide: [0; SCRATCH_WIDE],
            wide_len: 0,
            full: false,
        }
    }

    /// Empty again, for the next document (the buffers' old contents are never read: only
    /// what the counts cover is).
    fn clear(&mut self) {
        self.slot_count = 0;
        self.decoded_len = 0;
        self.span_count = 0;
        self.wide_len = 0;
        self.full = false;
    }

    fn push(&mut self, slot: Slot) {
        match self.slots.get_mut(self.slot_count) {
            Some(free) if !self.full => {
                *free = slot;
                self.slot_count += 1;
            }
            _ => self.full = true,
        }
    }

    fn close(&mut self, index: usize, end: usize) {
        if let Some(slot) = self.slots[..self.slot_count].get_mut(index) {
            slot.set_aux(end as u32);
        }
    }

    /// Records an escaped string's decoded text (or code units) and its slot.
    fn escaped(&mut self, open: usize, units: StringUnits<'_>, unpaired: bool) {
        if self.full || self.span_count == SCRATCH_SPANS {
            self.full = true;
            return;
        }
        let span_index = self.span_count;
        if unpaired {
            let from = self.wide_len;
            for unit in units {
                let Some(free) = self.wide.get_mut(self.wide_len) else {
                    self.full = true;
                    return;
                };
                *free = unit;
                self.wide_len += 1;
            }
            self.spans[span_index] = (from as u32, (self.wide_len - from) as u32);
            self.push(Slot::wide(open, span_index));
        } else {
            let from = self.decoded_len;
            for decoded in char::decode_utf16(units) {
                let c = decoded.unwrap_or(char::REPLACEMENT_CHARACTER);
                let Some(free) = self
                    .decoded
                    .get_mut(self.decoded_len..self.decoded_len + c.len_utf8())
                else {
                    self.full = true;
                    return;
                };
                c.encode_utf8(free);
                self.decoded_len += c.len_utf8();
            }
            self.spans[span_index] = (from as u32, (self.decoded_len - from) as u32);
            self.push(Slot::escaped(open, span_index));
        }
        self.span_count += 1;
    }

    /// The tape at its exact size, when everything fitted.
    fn tape(&self) -> Option<Tape> {
        if self.full {
            return None;
        }
        Some(Tape {
            slots: self.slots[..self.slot_count].to_vec(),
            // Whole characters were encoded, so this is valid UTF-8 and borrowed, not replaced.
            decoded: String::from_utf8_lossy(&self.decoded[..self.decoded_len]).into_owned(),
            spans: self.spans[..self.span_count].to_vec(),
            wide: self.wide[..self.wide_len].to_vec(),
        })
    }
}

/// Checks that `bytes` are one strict JSON value within `limits` — exactly what a verifier's
/// stage 1 accepts (§6.4) — without building anything: the counting pass alone, no allocation
/// proportional to the input beyond the open objects' member names. Signers run it over what
/// they produced, so nothing is emitted that a receiver's limits would refuse.
pub fn check_limits(bytes: &[u8], limits: &ParseLimits) -> Result<(), ParseError> {
    let text = prepare(bytes, limits)?;
    let mut counts = Counts::default();
    Parser::new(text, limits, Pass::Count(&mut counts)).document()
}

/// The document-size, byte-order-mark and UTF-8 checks both entry points start with.
fn prepare<'s>(bytes: &'s [u8], limits: &ParseLimits) -> Result<&'s str, ParseError> {
    // Offsets on the tape are u32; on 32-bit targets (wasm32) `usize` is no wider, so the cap
    // is a no-op there and clippy says so.
    #[cfg_attr(target_pointer_width = "32", allow(clippy::unnecessary_min_or_max))]
    let max_bytes = limits.max_document_bytes.min(MAX_OFFSET);
    if bytes.len() > max_bytes {
        return Err(ParseError {
            kind: ParseErrorKind::LimitExceeded {
                limit: Limit::DocumentBytes,
                maximum: limits.max_document_bytes,
            },
            offset: 0,
        });
    }
    if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        return Err(ParseError {
            kind: ParseErrorKind::ByteOrderMark,
            offset: 0,
        });
    }
    std::str::from_utf8(bytes).map_err(|error| ParseError {
        kind: ParseErrorKind::InvalidUtf8,
        offset: error.valid_up_to(),
    })
}

/// Both passes, returning the document and (when asked) the top-level member spans.
pub(crate) fn build<'s>(
    bytes: &'s [u8],
    limits: &ParseLimits,
    record_spans: bool,
) -> Result<(Document<'s>, Vec<(usize, usize)>), ParseError> {
    let text = prepare(bytes, limits)?;
    // A small document's tape is written during the checking pass into fixed buffers (the
    // thread's, reused, so they are not zeroed for every document; fresh ones on the stack if
    // they are in use); the heap is touched only once the whole document has passed, to copy
    // the tape out at its exact size. A larger one falls back to the filling pass below.
    SCRATCH.with(|shared| match shared.try_borrow_mut() {
        Ok(mut scratch) => {
            scratch.clear();
            build_with(text, limits, record_spans, &mut scratch)
        }
        Err(_) => build_with(text, limits, record_spans, &mut Scratch::new()),
    })
}

thread_local! {
    /// Each thread's [`Scratch`] (about 3 KiB, in the thread's static storage, not the heap).
    static SCRATCH: std::cell::RefCell<Scratch> = const { std::cell::RefCell::new(Scratch::new()) };
}

fn build_with<'s>(
    text: &'s str,
    limits: &ParseLimits,
    record_spans: bool,
    scratch: &mut Scratch,
) -> Result<(Document<'s>, Vec<(usize, usize)>), ParseError> {
    let mut counts = Counts::default();
    let canonical = {
        let mut first = Parser::new(text, limits, Pass::Count(&mut counts));
        if !record_spans {
            first.scratch = Some(scratch);
        }
        first.document()?;
        first.canonical
    };
    if !record_spans && let Some(tape) = scratch.tape() {
        return Ok((Document::from_tape(text, tape, canonical), Vec::new()));
    }
    let mut tape = Tape {
        slots: Vec::with_capacity(counts.slots),
        decoded: String::with_capacity(counts.decoded_bytes),
        spans: Vec::with_capacity(counts.escaped + counts.wide),
        wide: Vec::with_capacity(counts.wide_units),
    };
    let mut spans = Vec::new();
    {
        let mut second = Parser::new(text, limits, Pass::Fill(&mut tape));
        if record_spans {
            second.spans = Some(&mut spans);
        }
        second.document()?;
    }
    Ok((Document::from_tape(text, tape, canonical), spans))
}

enum Pass<'o> {
    /// Checks everything and counts; keeps the names of open objects for duplicate checks.
    Count(&'o mut Counts),
    /// Writes the tape; the grammar is already known to be good.
    Fill(&'o mut Tape),
}

/// A scanned string: byte range of its content (between the quotes) and whether it holds an
/// escape.
#[derive(Clone, Copy)]
struct Scanned {
    start: usize,
    end: usize,
    escaped: bool,
}

struct Parser<'a, 'o> {
    bytes: &'a [u8],
    text: &'a str,
    pos: usize,
    depth: usize,
    limits: ParseLimits,
    pass: Pass<'o>,
    /// Pass 1: opening-quote offsets of the member names of every open object.
    names: Vec<u32>,
    spans: Option<&'o mut Vec<(usize, usize)>>,
    /// Pass 1 of a document that may be small: where its tape is written meanwhile.
    scratch: Option<&'o mut Scratch>,
    /// Pass 1 of [`parse_with_limits`]: the owned tree it builds instead of a tape.
    tree: Option<&'o mut TreeBuilder>,
    /// Pass 1: nothing seen so far differs from RFC 8785 output — no whitespace, member names
    /// in UTF-16 order, numbers and escapes as ECMAScript writes them — so the source is its
    /// own canonical form ([`Document::is_canonical`]). Each check runs only where the
    /// grammar already branches (whitespace, escapes, numbers, a second member name).
    canonical: bool,
}

impl<'a, 'o> Parser<'a, 'o> {
    fn new(text: &'a str, limits: &ParseLimits, pass: Pass<'o>) -> Self {
        let mut limits = *limits;
        // A slot keeps a string's length in 30 bits.
        limits.max_string_bytes = limits.max_string_bytes.min(super::document::MAX_STRING);
        // Enough for the members of a typical document's open objects without regrowing (a
        // member takes at least 6 bytes, so this stays within the input's size).
        let names = match pass {
            Pass::Count(_) => Vec::with_capacity((text.len() / 8).min(32)),
            Pass::Fill(_) => Vec::new(),
        };
        Self {
            bytes: text.as_bytes(),
            text,
            pos: 0,
            depth: 0,
            limits,
            pass,
            names,
            spans: None,
            scratch: None,
            tree: None,
            canonical: true,
        }
    }

    fn error<T>(&self, kind: ParseErrorKind) -> Result<T, ParseError> {
        Err(ParseError {
            kind,
            offset: self.pos,
        })
    }

    fn limit<T>(&self, limit: Limit, offset: usize) -> Result<T, ParseError> {
        Err(ParseError {
            kind: ParseErrorKind::LimitExceeded {
                limit,
                maximum: limit.maximum(&self.limits),
            },
            offset,
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
        // The flag is written once per run of whitespace, not once per byte.
        if let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.canonical = false;
            self.pos += 1;
            while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
                self.pos += 1;
            }
        }
    }

    fn document(&mut self) -> Result<(), ParseError> {
        self.skip_whitespace();
        self.value()?;
        self.skip_whitespace();
        if self.pos != self.bytes.len() {
            return self.error(ParseErrorKind::TrailingData);
        }
        Ok(())
    }

    /// Adds a slot (pass 2) or counts one (pass 1); returns its index in pass 2.
    fn push_slot(&mut self, start: usize, aux: u32) -> usize {
        match &mut self.pass {
            Pass::Count(counts) => {
                counts.slots += 1;
                if let Some(scratch) = self.scratch.as_deref_mut() {
                    scratch.push(Slot::new(start, aux));
                }
                if let Some(tree) = self.tree.as_deref_mut() {
                    tree.slot(self.text, start, aux);
                }
                counts.slots - 1
            }
            Pass::Fill(tape) => {
                tape.slots.push(Slot::new(start, aux));
                tape.slots.len() - 1
            }
        }
    }

    fn value(&mut self) -> Result<(), ParseError> {
        let start = self.pos;
        match self.bytes.get(self.pos) {
            None => self.error(ParseErrorKind::UnexpectedEnd),
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => {
                let scanned = self.scan_string()?;
                self.string_slot(scanned);
                Ok(())
            }
            Some(b't') => self.literal("true"),
            Some(b'f') => self.literal("false"),
            Some(b'n') => self.literal("null"),
            Some(b'-' | b'0'..=b'9') => {
                self.number()?;
                if self.canonical {
                    self.canonical =
                        super::canonical::number_is_canonical(&self.text[start..self.pos]);
                }
                let length = (self.pos - start) as u32;
                self.push_slot(start, length);
                Ok(())
            }
            Some(_) => self.unexpected(),
        }
    }

    fn literal(&mut self, word: &str) -> Result<(), ParseError> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.push_slot(self.pos, 0);
            self.pos += word.len();
            Ok(())
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

    /// Closes a container slot opened at `index` (pass 2): its aux is the index after its last
    /// descendant.
    fn close_slot(&mut self, index: usize) {
        match &mut self.pass {
            Pass::Fill(tape) => {
                let end = tape.slots.len() as u32;
                tape.slots[index].set_aux(end);
            }
            Pass::Count(counts) => {
                if let Some(scratch) = self.scratch.as_deref_mut() {
                    scratch.close(index, counts.slots);
                }
                if let Some(tree) = self.tree.as_deref_mut() {
                    tree.close();
                }
            }
        }
    }

    fn count_entry(&self, entries: &mut usize, offset: usize) -> Result<(), ParseError> {
        *entries += 1;
        if *entries > self.limits.max_container_entries {
            return self.limit(Limit::ContainerEntries, offset);
        }
        Ok(())
    }

    fn object(&mut self) -> Result<(), ParseError> {
        self.enter()?;
        let top_level = self.depth == 1 && self.spans.is_some();
        let index = self.push_slot(self.pos, 0);
        self.pos += 1;
        let names_base = self.names.len();
        let mut entries = 0;
        self.skip_whitespace();
        if self.bytes.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            self.depth -= 1;
            self.close_slot(index);
            return Ok(());
        }
        loop {
            self.skip_whitespace();
            if self.bytes.get(self.pos) != Some(&b'"') {
                return self.unexpected();
            }
            let name_offset = self.pos;
            self.count_entry(&mut entries, name_offset)?;
            let name = self.scan_string()?;
            if matches!(self.pass, Pass::Count(_)) {
                // RFC 8785 §3.2.3: members in ascending UTF-16 order of their names.
                if self.canonical
                    && let Some(&previous) = self.names.get(names_base..).and_then(<[u32]>::last)
                {
                    self.canonical =
                        compare_names(self.text, previous as usize, name_offset).is_lt();
                }
                self.check_new_name(names_base, name_offset)?;
            }
            self.string_slot(name);
            self.skip_whitespace();
            if self.bytes.get(self.pos) != Some(&b':') {
                return self.unexpected();
            }
            self.pos += 1;
            self.skip_whitespace();
            let start = self.pos;
            self.value()?;
            if top_level && let Some(spans) = self.spans.as_deref_mut() {
                spans.push((start, self.pos));
            }
            self.skip_whitespace();
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    if matches!(self.pass, Pass::Count(_)) {
                        self.check_closed_names(names_base)?;
                    }
                    self.names.truncate(names_base);
                    self.pos += 1;
                    self.depth -= 1;
                    self.close_slot(index);
                    return Ok(());
                }
                _ => return self.unexpected(),
            }
        }
    }

    /// Pass 1: a small object compares each new name with the previous ones, so the first
    /// repeated name in document order is reported; a large one defers to
    /// [`Self::check_closed_names`].
    fn check_new_name(&mut self, base: usize, offset: usize) -> Result<(), ParseError> {
        let seen = self.names.len() - base;
        // Names whose first bytes differ, neither an escape, differ: most pairs end there.
        let bytes = self.bytes;
        let first = bytes.get(offset + 1).copied();
        let may_equal = |other: usize| {
            let other_first = bytes.get(other + 1).copied();
            other_first == first || other_first == Some(b'\\') || first == Some(b'\\')
        };
        if seen < LINEAR_DUPLICATE_SCAN
            && self.names[base..].iter().any(|&other| {
                may_equal(other as usize)
                    && compare_names(self.text, other as usize, offset).is_eq()
            })
        {
            return Err(self.duplicate(offset));
        }
        self.names.push(offset as u32);
        Ok(())
    }

    /// Pass 1, when an object with many members closes: sorts its names (equal names by their
    /// offset, so each group is in document order) and reports the earliest second occurrence.
    fn check_closed_names(&mut self, base: usize) -> Result<(), ParseError> {
        if self.names.len() - base <= LINEAR_DUPLICATE_SCAN {
            return Ok(());
        }
        let text = self.text;
        let names = &mut self.names[base..];
        super::sort_indices(names, &|a, b| {
            compare_names(text, a as usize, b as usize).then(a.cmp(&b))
        });
        let repeated = names
            .windows(2)
            .filter(|pair| compare_names(text, pair[0] as usize, pair[1] as usize).is_eq())
            .map(|pair| pair[1])
            .min();
        match repeated {
            Some(offset) => Err(self.duplicate(offset as usize)),
            None => Ok(()),
        }
    }

    fn duplicate(&self, offset: usize) -> ParseError {
        let units: Vec<u16> = StringUnits::at(self.text, offset).collect();
        ParseError {
            kind: ParseErrorKind::DuplicateMember(String::from_utf16_lossy(&units)),
            offset,
        }
    }

    fn array(&mut self) -> Result<(), ParseError> {
        self.enter()?;
        let index = self.push_slot(self.pos, 0);
        self.pos += 1;
        let mut entries = 0;
        self.skip_whitespace();
        if self.bytes.get(self.pos) == Some(&b']') {
            self.pos += 1;
            self.depth -= 1;
            self.close_slot(index);
            return Ok(());
        }
        loop {
            self.skip_whitespace();
            self.count_entry(&mut entries, self.pos)?;
            self.value()?;
            self.skip_whitespace();
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    self.depth -= 1;
                    self.close_slot(index);
                    return Ok(());
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

    fn number(&mut self) -> Result<(), ParseError> {
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
        if self.pos - start > self.limits.max_number_chars {
            return self.limit(Limit::NumberChars, start);
        }
        Ok(())
    }

    fn hex4(&mut self) -> Result<(), ParseError> {
        let Some(digits) = self.bytes.get(self.pos..self.pos + 4) else {
            return self.error(ParseErrorKind::InvalidEscape);
        };
        if !digits.iter().all(u8::is_ascii_hexdigit) {
            return self.error(ParseErrorKind::InvalidEscape);
        }
        self.pos += 4;
        Ok(())
    }

    /// Checks one string's grammar and length; allocates nothing.
    fn scan_string(&mut self) -> Result<Scanned, ParseError> {
        let open = self.pos;
        self.pos += 1;
        let start = self.pos;
        let mut escaped = false;
        loop {
            let rest = &self.bytes[self.pos..];
            let Some(offset) = string_stop(rest) else {
                if self.bytes.len() - start > self.limits.max_string_bytes {
                    return self.limit(Limit::StringBytes, open);
                }
                self.pos = self.bytes.len();
                return self.error(ParseErrorKind::UnexpectedEnd);
            };
            self.pos += offset;
            if self.pos - start > self.limits.max_string_bytes {
                return self.limit(Limit::StringBytes, open);
            }
            match self.bytes[self.pos] {
                b'"' => {
                    self.pos += 1;
                    return Ok(Scanned {
                        start,
                        end: self.pos - 1,
                        escaped,
                    });
                }
                b'\\' => {
                    escaped = true;
                    self.pos += 1;
                    let escape = self.bytes.get(self.pos).copied();
                    self.pos += 1;
                    match escape {
                        Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') => {}
                        Some(b'/') => {
                            self.canonical = false;
                        }
                        Some(b'u') => {
                            self.hex4()?;
                            if self.canonical {
                                self.canonical =
                                    canonical_unicode_escape(&self.bytes[self.pos - 4..self.pos]);
                            }
                        }
                        _ => {
                            self.pos -= 1;
                            return self.error(ParseErrorKind::InvalidEscape);
                        }
                    }
                }
                _ => return self.error(ParseErrorKind::ControlCharacterInString),
            }
        }
    }

    /// Counts (pass 1) or writes (pass 2) the slot and decoded form of a scanned string.
    fn string_slot(&mut self, scanned: Scanned) {
        let open = scanned.start - 1;
        let raw_len = scanned.end - scanned.start;
        if !scanned.escaped {
            self.push_slot(open, raw_len as u32);
            return;
        }
        let text = self.text;
        let units = || StringUnits::at(text, open);
        let unpaired = char::decode_utf16(units()).any(|decoded| decoded.is_err());
        match &mut self.pass {
            Pass::Count(counts) => {
                counts.slots += 1;
                if let Some(scratch) = self.scratch.as_deref_mut() {
                    scratch.escaped(open, units(), unpaired);
                }
                if let Some(tree) = self.tree.as_deref_mut() {
                    tree.string(if unpaired {
                        JsonString::Wtf16(units().collect())
                    } else {
                        JsonString::Text(
                            char::decode_utf16(units())
                                .map(|decoded| decoded.unwrap_or(char::REPLACEMENT_CHARACTER))
                                .collect::<String>()
                                .into_boxed_str(),
                        )
                    });
                }
                if unpaired {
                    counts.wide += 1;
                    counts.wide_units += units().count();
                } else {
                    counts.escaped += 1;
                    counts.decoded_bytes += char::decode_utf16(units())
                        .map(|decoded| decoded.map_or(3, char::len_utf8))
                        .sum::<usize>();
                }
            }
            Pass::Fill(tape) => {
                let span_index = tape.spans.len();
                if unpaired {
                    let from = tape.wide.len();
                    tape.wide.extend(units());
                    tape.spans
                        .push((from as u32, (tape.wide.len() - from) as u32));
                    tape.slots.push(Slot::wide(open, span_index));
                } else {
                    let from = tape.decoded.len();
                    tape.decoded.extend(
                        char::decode_utf16(units())
                            .map(|decoded| decoded.unwrap_or(char::REPLACEMENT_CHARACTER)),
                    );
                    tape.spans
                        .push((from as u32, (tape.decoded.len() - from) as u32));
                    tape.slots.push(Slot::escaped(open, span_index));
                }
            }
        }
    }
}

/// Whether the four hex digits of a `\\u` escape are the form RFC 8785 §3.2.2.2 writes: only a
/// control character without a short escape, as `\\u00` and two lowercase hex digits.
fn canonical_unicode_escape(digits: &[u8]) -> bool {
    match digits {
        [b'0', b'0', high @ (b'0' | b'1'), low] => {
            let lower_hex = low.is_ascii_digit() || (b'a'..=b'f').contains(low);
            let unit = (high - b'0') << 4 | (*low as char).to_digit(16).unwrap_or(0) as u8;
            lower_hex && !matches!(unit, 0x08 | 0x09 | 0x0A | 0x0C | 0x0D)
        }
        _ => false,
    }
}

/// The UTF-16 code units of a string whose grammar was already checked, decoded from its
/// source text starting at the opening quote.
pub(crate) struct StringUnits<'a> {
    rest: std::str::Chars<'a>,
    pending_low: Option<u16>,
}

impl<'a> StringUnits<'a> {
    pub(crate) fn at(text: &'a str, open_quote: usize) -> Self {
        Self {
            rest: text[open_quote + 1..].chars(),
            pending_low: None,
        }
    }
}

impl Iterator for StringUnits<'_> {
    type Item = u16;

    fn next(&mut self) -> Option<u16> {
        if let Some(low) = self.pending_low.take() {
            return Some(low);
        }
        match self.rest.next()? {
            '"' => None,
            '\\' => Some(match self.rest.next()? {
                'b' => 0x08,
                'f' => 0x0C,
                'n' => 0x0A,
                'r' => 0x0D,
                't' => 0x09,
                'u' => {
                    let mut unit = 0u16;
                    for _ in 0..4 {
                        let digit = self.rest.next()?.to_digit(16)?;
                        unit = (unit << 4) | digit as u16;
                    }
                    unit
                }
                other => other as u16,
            }),
            c => {
                let mut buffer = [0u16; 2];
                let encoded = c.encode_utf16(&mut buffer);
                if encoded.len() == 2 {
                    self.pending_low = Some(encoded[1]);
                }
                Some(encoded[0])
            }
        }
    }
}

/// Orders two member names (given by their opening quotes) by decoded code units; only
/// equality matters to callers, the order just has to be total.
fn compare_names(text: &str, a: usize, b: usize) -> Ordering {
    // Fast path on the source bytes while neither name shows an escape: equal bytes up to both
    // closing quotes are equal names; a first difference where one side is ASCII (or a closing
    // quote) orders the code units the same way. Anything else decodes both names.
    let bytes = text.as_bytes();
    let (mut i, mut j) = (a + 1, b + 1);
    while let (Some(&x), Some(&y)) = (bytes.get(i), bytes.get(j)) {
        if x == b'\\' || y == b'\\' {
            break;
        }
        if x == y {
            if x == b'"' {
                return Ordering::Equal;
            }
        } else if x == b'"' {
            return Ordering::Less;
        } else if y == b'"' {
            return Ordering::Greater;
        } else if x < 0x80 || y < 0x80 {
            return x.cmp(&y);
        } else {
            break;
        }
        i += 1;
        j += 1;
    }
    StringUnits::at(text, a).cmp(StringUnits::at(text, b))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::json::JsonString;

    /// The one-pass tape of a small document (built on the stack) equals the two-pass tape,
    /// and a document that outgrows any stack buffer takes the two-pass path with the same
    /// result: record_spans forces the two passes.
    #[test]
    fn one_pass_and_two_passes_build_the_same_tape() {
        let escaped = format!("[{}]", vec![r#""a\nb""#; 40].join(","));
        let wide = format!("[{}]", vec![r#""\ud800x""#; 20].join(","));
        let long_escape = format!(r#"["{}"]"#, r"é".repeat(300));
        let many = format!("[{}]", vec!["{\"k\":[1,true,null]}"; 100].join(","));
        let inputs: Vec<&[u8]> = vec![
            b"0",
            br#"{"a":[1,2,{"b":null}],"c":"\u00e9\ud83d\ude00","d":"\ud800"}"#,
            br#"{"\u0061":1,"b":{"\n":[]}}"#,
            escaped.as_bytes(),
            wide.as_bytes(),
            long_escape.as_bytes(),
            many.as_bytes(),
        ];
        for input in inputs {
            let (one, _) = build(input, &ParseLimits::DOCUMENT, false).unwrap();
            let (two, _) = build(input, &ParseLimits::DOCUMENT, true).unwrap();
            assert_eq!(one.to_value(), two.to_value());
            assert_eq!(one.heap_bytes(), two.heap_bytes(), "exact sizes both ways");
        }
    }

    proptest::proptest! {
        #[test]
        fn string_stop_finds_the_first_stop(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40)) {
            let expected = bytes.iter().position(|&b| STRING_STOP[usize::from(b)]);
            proptest::prop_assert_eq!(string_stop(&bytes), expected);
        }

        #[test]
        fn names_compare_as_their_code_units(a in "[ab\\\\é😀\u{E000}]{0,6}", b in "[ab\\\\é😀\u{E000}]{0,6}", escape_a: bool, escape_b: bool) {
            // Each name written raw or with its first character as a \u escape.
            let spell = |name: &str, escape: bool| match name.chars().next() {
                Some(first) if escape => {
                    let mut units = [0u16; 2];
                    let escapes: String = first.encode_utf16(&mut units).iter().map(|u| format!("\\u{u:04x}")).collect();
                    format!("\"{escapes}{}\"", name[first.len_utf8()..].replace('\\', "\\\\"))
                }
                _ => format!("\"{}\"", name.replace('\\', "\\\\")),
            };
            let text = format!("{} {}", spell(&a, escape_a), spell(&b, escape_b));
            let second = spell(&a, escape_a).len() + 1;
            let expected = a.encode_utf16().cmp(b.encode_utf16());
            proptest::prop_assert_eq!(compare_names(&text, 0, second), expected);
        }
    }

    #[test]
    fn trailing_high_surrogate_is_unpaired_at_end() {
        let value = parse(br#""\ud800""#).unwrap();
        assert!(matches!(value, Value::String(JsonString::Wtf16(_))));
        let value = parse(br#""\ud83d\ude00""#).unwrap();
        assert_eq!(value.as_str(), Some("\u{1F600}"));
    }
}
