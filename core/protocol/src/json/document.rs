//! The parsed form of untrusted JSON: one 8-byte slot per value, in document order, over the
//! source text, which it borrows. Unescaped strings and numbers are read from the source;
//! only strings holding escapes are decoded, into one buffer. Every buffer is allocated once at
//! its exact size by the two-pass parser, so the whole costs at most 4 × the input plus 16
//! bytes (`docs/limits.md` gives the figure per shape; `tests/json_memory.rs` measures it).

use std::borrow::Cow;

use super::limits::ParseLimits;
use super::parse::{ParseError, build};
use super::value::Value;
use super::view::{ArrayView, ObjectView, Str, View};

/// Longest string a slot can describe (30 bits).
pub(crate) const MAX_STRING: usize = (1 << 30) - 1;
/// Slot flag: the string's decoded text is in `decoded`, at `spans[aux & PAYLOAD]`.
const ESCAPED: u32 = 1 << 31;
/// Slot flag: the string holds an unpaired surrogate; its code units are in `wide`.
const WIDE: u32 = 1 << 30;
const PAYLOAD: u32 = WIDE - 1;

/// One value: the offset of its first byte (which tells its kind) and a word whose meaning
/// depends on the kind: the index after the last descendant (containers), the byte length
/// (numbers, unescaped strings) or a flagged index into the spans (escaped strings).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Slot {
    start: u32,
    aux: u32,
}

impl Slot {
    pub(crate) const fn new(start: usize, aux: u32) -> Self {
        Self {
            start: start as u32,
            aux,
        }
    }

    pub(crate) fn escaped(start: usize, span: usize) -> Self {
        Self::new(start, ESCAPED | span as u32)
    }

    pub(crate) fn wide(start: usize, span: usize) -> Self {
        Self::new(start, ESCAPED | WIDE | span as u32)
    }

    pub(crate) fn set_aux(&mut self, aux: u32) {
        self.aux = aux;
    }
}

/// The buffers the second pass fills.
pub(crate) struct Tape {
    pub(crate) slots: Vec<Slot>,
    pub(crate) decoded: String,
    pub(crate) spans: Vec<(u32, u32)>,
    pub(crate) wide: Vec<u16>,
}

/// A parsed JSON document that borrows its source.
///
/// ```
/// use missionweaveprotocol::json::{Document, ParseLimits, View};
///
/// let document = Document::parse(br#"{"kind":"command","n":[1,2]}"#, &ParseLimits::DOCUMENT)?;
/// let root = document.root();
/// assert_eq!(root.get("kind").and_then(|kind| kind.as_str()), Some("command"));
/// assert!(matches!(root.get("n"), Some(View::Array(items)) if items.len() == 2));
/// # Ok::<(), missionweaveprotocol::json::ParseError>(())
/// ```
#[derive(Clone)]
pub struct Document<'s> {
    /// Borrowed from the caller, or owned by a document kept past its input
    /// ([`Self::into_owned`]).
    text: Cow<'s, str>,
    slots: Box<[Slot]>,
    decoded: Box<str>,
    spans: Box<[(u32, u32)]>,
    wide: Box<[u16]>,
    /// The source is its own RFC 8785 form (found by the parser's checking pass).
    canonical: bool,
}

impl<'s> Document<'s> {
    /// Strictly parses `bytes` (§6.4 stage 1) within `limits`.
    pub fn parse(bytes: &'s [u8], limits: &ParseLimits) -> Result<Self, ParseError> {
        Ok(build(bytes, limits, false)?.0)
    }

    /// [`Self::parse`], also returning for a top-level object the byte span of each member's
    /// value in member order (to keep the exact bytes of a nested Command, §17).
    pub fn parse_with_member_spans(
        bytes: &'s [u8],
        limits: &ParseLimits,
    ) -> Result<(Self, Vec<(usize, usize)>), ParseError> {
        build(bytes, limits, true)
    }

    pub(crate) fn from_tape(text: &'s str, tape: Tape, canonical: bool) -> Self {
        Self {
            text: Cow::Borrowed(text),
            slots: tape.slots.into_boxed_slice(),
            decoded: tape.decoded.into_boxed_str(),
            spans: tape.spans.into_boxed_slice(),
            wide: tape.wide.into_boxed_slice(),
            canonical,
        }
    }

    /// Whether the source bytes are exactly the RFC 8785 form of the document: no whitespace,
    /// members in UTF-16 order of their names, numbers as ECMAScript prints them, and only the
    /// escapes RFC 8785 writes (§3.2.2.2; any `\/` or other `\u` escape, however valid, makes
    /// a source that is not canonical). A Signed Document's signer sends its JCS bytes, so
    /// this usually holds for received documents.
    ///
    /// ```
    /// use missionweaveprotocol::json::{Document, ParseLimits};
    ///
    /// let canonical = Document::parse(br#"{"a":[1,"\n"],"b":1.5}"#, &ParseLimits::DOCUMENT)?;
    /// assert!(canonical.is_canonical());
    /// let spaced = Document::parse(br#"{"a": 1}"#, &ParseLimits::DOCUMENT)?;
    /// assert!(!spaced.is_canonical());
    /// let unsorted = Document::parse(br#"{"b":1,"a":2}"#, &ParseLimits::DOCUMENT)?;
    /// assert!(!unsorted.is_canonical());
    /// # Ok::<(), missionweaveprotocol::json::ParseError>(())
    /// ```
    pub fn is_canonical(&self) -> bool {
        self.canonical
    }

    /// For a canonical document whose root is an object, the RFC 8785 form of that object
    /// without its member named `omit`: the source with that member cut out (the canonical
    /// form of a member set is the canonical form of the whole, minus that member and one
    /// comma). `None` when the source is not canonical or the root is not an object.
    pub(crate) fn canonical_without(&self, omit: &str) -> Option<Vec<u8>> {
        if !self.canonical || self.lead_byte(0) != b'{' {
            return None;
        }
        let text = self.text.as_bytes();
        let end = self.end_of(0);
        let mut name = 1;
        while name < end {
            let next = self.skip(name + 1);
            if self.string_is(name, omit) {
                let from = self.slots[name as usize].start as usize;
                // A canonical source has no whitespace: the next member's name follows the
                // comma, and the last member's value ends just before the final brace.
                let (cut_from, cut_to) = if next < end {
                    (from, self.slots[next as usize].start as usize)
                } else if from > 1 {
                    (from - 1, text.len() - 1)
                } else {
                    (from, text.len() - 1)
                };
                let mut out = Vec::with_capacity(text.len() - (cut_to - cut_from));
                out.extend_from_slice(&text[..cut_from]);
                out.extend_from_slice(&text[cut_to..]);
                return Some(out);
            }
            name = next;
        }
        Some(text.to_vec())
    }

    /// The source text.
    pub fn source(&self) -> &str {
        &self.text
    }

    /// The same document owning a copy of its source: one allocation of the input's size, the
    /// tape moved, not rebuilt (a verified document keeps it so that its owned tree is built
    /// only if asked for).
    pub fn into_owned(self) -> Document<'static> {
        Document {
            text: Cow::Owned(self.text.into_owned()),
            slots: self.slots,
            decoded: self.decoded,
            spans: self.spans,
            wide: self.wide,
            canonical: self.canonical,
        }
    }

    /// The top-level value.
    pub fn root(&self) -> View<'_> {
        self.view_at(0)
    }

    /// The owned tree of the whole document.
    pub fn to_value(&self) -> Value {
        self.root().to_value()
    }

    /// Bytes this document holds on the heap (its own: the source's only once owned).
    pub fn heap_bytes(&self) -> usize {
        let source = match &self.text {
            Cow::Borrowed(_) => 0,
            Cow::Owned(text) => text.len(),
        };
        source
            + self.slots.len() * size_of::<Slot>()
            + self.decoded.len()
            + self.spans.len() * size_of::<(u32, u32)>()
            + self.wide.len() * size_of::<u16>()
    }

    pub(crate) fn lead_byte(&self, index: u32) -> u8 {
        self.text.as_bytes()[self.slots[index as usize].start as usize]
    }

    /// The index after slot `index` and all its descendants.
    pub(crate) fn skip(&self, index: u32) -> u32 {
        match self.lead_byte(index) {
            b'{' | b'[' => self.slots[index as usize].aux,
            _ => index + 1,
        }
    }

    /// The number of items (or, `members` set, of name-value pairs) of container slot
    /// `index`, counted by skipping over them without reading them.
    pub(crate) fn count_children(&self, index: u32, members: bool) -> usize {
        let end = self.end_of(index);
        let mut child = index + 1;
        let mut count = 0;
        while child < end {
            count += 1;
            child = self.skip(child + u32::from(members));
        }
        count
    }

    /// The index after the last descendant of container slot `index`.
    pub(crate) fn end_of(&self, index: u32) -> u32 {
        self.slots[index as usize].aux
    }

    pub(crate) fn string_at(&self, index: u32) -> Str<'_> {
        let slot = self.slots[index as usize];
        if slot.aux & ESCAPED == 0 {
            let start = slot.start as usize + 1;
            return Str::Text(&self.text[start..start + slot.aux as usize]);
        }
        let (from, len) = self.spans[(slot.aux & PAYLOAD) as usize];
        let range = from as usize..(from + len) as usize;
        if slot.aux & WIDE == 0 {
            Str::Text(&self.decoded[range])
        } else {
            Str::Wide(&self.wide[range])
        }
    }

    /// The source text between the quotes of the string at `index` when it holds no escape.
    #[inline(always)]
    pub(crate) fn raw_string(&self, index: u32) -> Option<&str> {
        let slot = self.slots[index as usize];
        if slot.aux & ESCAPED != 0 {
            return None;
        }
        let start = slot.start as usize + 1;
        self.text.get(start..start + slot.aux as usize)
    }

    /// Whether the string at `index` is `name`; an unescaped one (almost every member name)
    /// is compared on its source bytes, its length first.
    #[inline(always)]
    pub(crate) fn string_is(&self, index: u32, name: &str) -> bool {
        let slot = self.slots[index as usize];
        if slot.aux & ESCAPED == 0 {
            let start = slot.start as usize + 1;
            return slot.aux as usize == name.len()
                && self.text.as_bytes().get(start..start + name.len()) == Some(name.as_bytes());
        }
        self.string_at(index).as_str() == Some(name)
    }

    pub(crate) fn view_at(&self, index: u32) -> View<'_> {
        let slot = self.slots[index as usize];
        let start = slot.start as usize;
        match self.text.as_bytes()[start] {
            b'{' => View::Object(ObjectView::tape(self, index)),
            b'[' => View::Array(ArrayView::tape(self, index)),
            b'"' => View::String(self.string_at(index)),
            b't' => View::Bool(true),
            b'f' => View::Bool(false),
            b'n' => View::Null,
            _ => View::Number(super::view::NumberRef::new(
                &self.text[start..start + slot.aux as usize],
            )),
        }
    }
}

impl std::fmt::Debug for Document<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.root(), f)
    }
}
