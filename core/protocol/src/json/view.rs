//! One read-only view over both JSON representations: the owned [`Value`] tree and the
//! [`Document`] tape. The schema validator, the canonical writer and the verifier read through
//! it, so they serve constructed values and bounded parsed input with the same code.

use std::borrow::Cow;
use std::fmt;

use super::decimal::Decimal;
use super::document::Document;
use super::value::{JsonString, Object, Value};

/// A JSON value seen through either representation.
#[derive(Clone, Copy)]
pub enum View<'a> {
    Null,
    Bool(bool),
    Number(NumberRef<'a>),
    String(Str<'a>),
    Array(ArrayView<'a>),
    Object(ObjectView<'a>),
}

/// A number's exact source text (JSON grammar already checked).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct NumberRef<'a>(&'a str);

impl<'a> NumberRef<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Self(text)
    }

    /// The exact source text.
    pub fn as_text(&self) -> &'a str {
        self.0
    }

    /// The nearest binary64 value (may be infinite for `1e400`).
    pub fn as_f64(&self) -> f64 {
        // The JSON grammar is a subset of what `f64::from_str` accepts, so this cannot fail.
        self.0.parse::<f64>().unwrap_or(f64::NAN)
    }

    /// The exact decimal value.
    pub fn decimal(&self) -> Decimal {
        Decimal::from_json_number(self.0)
    }

    /// The value as an `i64`, if it is mathematically an integer in range.
    pub fn as_i64(&self) -> Option<i64> {
        self.decimal().to_i64()
    }

    /// The value as a `u64`, if it is mathematically a non-negative integer in range.
    pub fn as_u64(&self) -> Option<u64> {
        self.as_i64().and_then(|v| u64::try_from(v).ok())
    }
}

/// A string: valid Unicode text, or the exact UTF-16 code units when it holds an unpaired
/// surrogate (kept so stage 5 can refuse it, §6.4).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Str<'a> {
    Text(&'a str),
    Wide(&'a [u16]),
}

impl<'a> Str<'a> {
    /// The text if the string is valid Unicode.
    pub fn as_str(&self) -> Option<&'a str> {
        match self {
            Self::Text(text) => Some(text),
            Self::Wide(_) => None,
        }
    }

    /// The text with each unpaired surrogate replaced by U+FFFD.
    pub fn to_lossy(&self) -> Cow<'a, str> {
        match self {
            Self::Text(text) => Cow::Borrowed(text),
            Self::Wide(units) => Cow::Owned(String::from_utf16_lossy(units)),
        }
    }

    /// Length in code points, an unpaired surrogate counting as one (JSON Schema `minLength`).
    pub fn char_count(&self) -> usize {
        match self {
            Self::Text(text) => text.chars().count(),
            Self::Wide(units) => char::decode_utf16(units.iter().copied()).count(),
        }
    }

    /// Whether this string holds an unpaired surrogate (outside I-JSON).
    pub fn has_unpaired_surrogate(&self) -> bool {
        matches!(self, Self::Wide(_))
    }

    /// Equality of the decoded code-unit sequences.
    pub fn same_units(&self, other: &Self) -> bool {
        // Text never decodes to an unpaired surrogate, so it cannot equal a Wide.
        self == other
    }
}

impl<'a> From<&'a JsonString> for Str<'a> {
    fn from(text: &'a JsonString) -> Self {
        match text {
            JsonString::Text(text) => Self::Text(text),
            JsonString::Wtf16(units) => Self::Wide(units),
        }
    }
}

#[derive(Clone, Copy)]
enum Repr<'a, T> {
    Tree(T),
    Tape(&'a Document<'a>, u32),
}

/// An array.
#[derive(Clone, Copy)]
pub struct ArrayView<'a>(Repr<'a, &'a [Value]>);

impl<'a> ArrayView<'a> {
    pub(crate) fn tape(document: &'a Document<'a>, index: u32) -> Self {
        Self(Repr::Tape(document, index))
    }

    /// Number of items (counted on the tape: O(items)).
    pub fn len(&self) -> usize {
        match self.0 {
            Repr::Tree(items) => items.len(),
            Repr::Tape(document, index) => document.count_children(index, false),
        }
    }

    /// Whether there are no items.
    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }

    /// The items in order.
    pub fn iter(&self) -> ArrayIter<'a> {
        match self.0 {
            Repr::Tree(items) => ArrayIter(IterRepr::Tree(items.iter())),
            Repr::Tape(document, index) => ArrayIter(IterRepr::Tape(
                document,
                TapeCursor {
                    next: index + 1,
                    end: document.end_of(index),
                },
            )),
        }
    }
}

#[derive(Clone, Copy)]
enum IterRepr<'a, T> {
    Tree(T),
    Tape(&'a Document<'a>, TapeCursor),
}

#[derive(Clone, Copy)]
struct TapeCursor {
    next: u32,
    end: u32,
}

/// Iterator over an array's items.
pub struct ArrayIter<'a>(IterRepr<'a, std::slice::Iter<'a, Value>>);

impl<'a> Iterator for ArrayIter<'a> {
    type Item = View<'a>;

    fn next(&mut self) -> Option<View<'a>> {
        match &mut self.0 {
            IterRepr::Tree(items) => items.next().map(Value::view),
            IterRepr::Tape(document, cursor) => {
                if cursor.next >= cursor.end {
                    return None;
                }
                let view = document.view_at(cursor.next);
                cursor.next = document.skip(cursor.next);
                Some(view)
            }
        }
    }
}

/// An object: members in source order, names unique.
#[derive(Clone, Copy)]
pub struct ObjectView<'a>(Repr<'a, &'a Object>);

impl<'a> ObjectView<'a> {
    pub(crate) fn tape(document: &'a Document<'a>, index: u32) -> Self {
        Self(Repr::Tape(document, index))
    }

    /// The parsed document and slot this view reads, when it reads a tape.
    pub(crate) fn tape_slot(&self) -> Option<(&'a Document<'a>, u32)> {
        match self.0 {
            Repr::Tree(_) => None,
            Repr::Tape(document, index) => Some((document, index)),
        }
    }

    /// Number of members (counted on the tape: O(members)).
    pub fn len(&self) -> usize {
        match self.0 {
            Repr::Tree(object) => object.len(),
            Repr::Tape(document, index) => document.count_children(index, true),
        }
    }

    /// Whether there are no members.
    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }

    /// Members in source order.
    pub fn iter(&self) -> ObjectIter<'a> {
        match self.0 {
            Repr::Tree(object) => ObjectIter(IterRepr::Tree(object.members().iter())),
            Repr::Tape(document, index) => ObjectIter(IterRepr::Tape(
                document,
                TapeCursor {
                    next: index + 1,
                    end: document.end_of(index),
                },
            )),
        }
    }

    /// The member named `name`.
    pub fn get(&self, name: &str) -> Option<View<'a>> {
        match self.0 {
            Repr::Tree(object) => object.get(name).map(Value::view),
            // On the tape only the names are read until one matches.
            Repr::Tape(document, index) => {
                let end = document.end_of(index);
                let mut child = index + 1;
                while child < end {
                    if document.string_is(child, name) {
                        return Some(document.view_at(child + 1));
                    }
                    child = document.skip(child + 1);
                }
                None
            }
        }
    }

    /// Whether a member named `name` exists.
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// A handle per member, in source order (4 bytes each), for sorting members without
    /// copying them.
    pub(crate) fn handles(&self) -> Vec<u32> {
        match self.0 {
            Repr::Tree(object) => (0..object.len() as u32).collect(),
            Repr::Tape(document, index) => {
                let mut handles = Vec::with_capacity(self.len());
                let end = document.end_of(index);
                let mut child = index + 1;
                while child < end {
                    handles.push(child);
                    child = document.skip(child + 1);
                }
                handles
            }
        }
    }

    /// The name of the member a handle from [`Self::handles`] names.
    pub(crate) fn name(&self, handle: u32) -> Str<'a> {
        match self.0 {
            Repr::Tree(object) => Str::from(&object.members()[handle as usize].0),
            Repr::Tape(document, _) => document.string_at(handle),
        }
    }

    /// The handles of [`Self::handles`] written into `buffer`, when they fit (`None` if not).
    pub(crate) fn handles_into(&self, buffer: &mut [u32]) -> Option<usize> {
        let mut count = 0;
        match self.0 {
            Repr::Tree(object) => {
                for handle in 0..object.len() as u32 {
                    *buffer.get_mut(count)? = handle;
                    count += 1;
                }
            }
            Repr::Tape(document, index) => {
                let end = document.end_of(index);
                let mut child = index + 1;
                while child < end {
                    *buffer.get_mut(count)? = child;
                    count += 1;
                    child = document.skip(child + 1);
                }
            }
        }
        Some(count)
    }

    /// The value of the member a handle from [`Self::handles`] names.
    pub(crate) fn value(&self, handle: u32) -> View<'a> {
        match self.0 {
            Repr::Tree(object) => object.members()[handle as usize].1.view(),
            Repr::Tape(document, _) => document.view_at(handle + 1),
        }
    }

    /// The member a handle from [`Self::handles`] names.
    pub(crate) fn member(&self, handle: u32) -> (Str<'a>, View<'a>) {
        match self.0 {
            Repr::Tree(object) => {
                let (name, value) = &object.members()[handle as usize];
                (Str::from(name), value.view())
            }
            Repr::Tape(document, _) => (document.string_at(handle), document.view_at(handle + 1)),
        }
    }
}

/// Iterator over an object's members.
pub struct ObjectIter<'a>(IterRepr<'a, std::slice::Iter<'a, (JsonString, Value)>>);

impl<'a> Iterator for ObjectIter<'a> {
    type Item = (Str<'a>, View<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            IterRepr::Tree(members) => members
                .next()
                .map(|(name, value)| (Str::from(name), value.view())),
            IterRepr::Tape(document, cursor) => {
                if cursor.next >= cursor.end {
                    return None;
                }
                let name = document.string_at(cursor.next);
                let value = document.view_at(cursor.next + 1);
                cursor.next = document.skip(cursor.next + 1);
                Some((name, value))
            }
        }
    }
}

impl<'a> View<'a> {
    /// The JSON type name (`object`, `array`, `string`, `number`, `boolean`, `null`).
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::Null => "null",
            Self::Bool(_) => "boolean",
            Self::Number(_) => "number",
            Self::String(_) => "string",
            Self::Array(_) => "array",
            Self::Object(_) => "object",
        }
    }

    /// The text of a valid-Unicode string.
    pub fn as_str(&self) -> Option<&'a str> {
        match self {
            Self::String(text) => text.as_str(),
            _ => None,
        }
    }

    /// The object, if this is one.
    pub fn as_object(&self) -> Option<ObjectView<'a>> {
        match self {
            Self::Object(object) => Some(*object),
            _ => None,
        }
    }

    /// The array, if this is one.
    pub fn as_array(&self) -> Option<ArrayView<'a>> {
        match self {
            Self::Array(items) => Some(*items),
            _ => None,
        }
    }

    /// The number, if this is one.
    pub fn as_number(&self) -> Option<NumberRef<'a>> {
        match self {
            Self::Number(number) => Some(*number),
            _ => None,
        }
    }

    /// Member lookup on an object (None for other kinds).
    pub fn get(&self, name: &str) -> Option<View<'a>> {
        self.as_object().and_then(|object| object.get(name))
    }

    /// RFC 6901 JSON Pointer lookup.
    pub fn pointer(&self, pointer: &str) -> Option<View<'a>> {
        if pointer.is_empty() {
            return Some(*self);
        }
        let rest = pointer.strip_prefix('/')?;
        let mut current = *self;
        for raw in rest.split('/') {
            let token = raw.replace("~1", "/").replace("~0", "~");
            current = match current {
                Self::Object(object) => object.get(&token)?,
                Self::Array(items) => items.iter().nth(array_index(&token)?)?,
                _ => return None,
            };
        }
        Some(current)
    }

    /// An owned copy.
    pub fn to_value(&self) -> Value {
        match self {
            Self::Null => Value::Null,
            Self::Bool(value) => Value::Bool(*value),
            Self::Number(number) => {
                Value::Number(super::value::Number::from_grammar_checked(number.as_text()))
            }
            Self::String(Str::Text(text)) => Value::String(JsonString::Text((*text).into())),
            Self::String(Str::Wide(units)) => Value::String(JsonString::Wtf16((*units).into())),
            Self::Array(items) => {
                let mut values = Vec::with_capacity(items.len());
                values.extend(items.iter().map(|item| item.to_value()));
                Value::Array(values)
            }
            Self::Object(object) => {
                let mut members = Vec::with_capacity(object.len());
                members.extend(object.iter().map(|(name, value)| {
                    let name = match name {
                        Str::Text(text) => JsonString::Text(text.into()),
                        Str::Wide(units) => JsonString::Wtf16(units.into()),
                    };
                    (name, value.to_value())
                }));
                Value::Object(Object::from_members(members))
            }
        }
    }

    /// JSON Schema equality: numbers by mathematical value, objects regardless of member order.
    pub fn json_eq(&self, other: &View<'_>) -> bool {
        match (self, other) {
            (Self::Null, View::Null) => true,
            (Self::Bool(a), View::Bool(b)) => a == b,
            (Self::Number(a), View::Number(b)) => {
                a.as_text() == b.as_text() || a.decimal() == b.decimal()
            }
            (Self::String(a), View::String(b)) => match (a, b) {
                (Str::Text(a), Str::Text(b)) => a == b,
                (Str::Wide(a), Str::Wide(b)) => a == b,
                _ => false,
            },
            (Self::Array(a), View::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| x.json_eq(&y))
            }
            (Self::Object(a), View::Object(b)) => {
                a.len() == b.len()
                    && a.iter().all(|(key, value)| {
                        b.iter()
                            .find(|(other_key, _)| match (key, other_key) {
                                (Str::Text(x), Str::Text(y)) => x == *y,
                                (Str::Wide(x), Str::Wide(y)) => x == *y,
                                _ => false,
                            })
                            .is_some_and(|(_, other_value)| value.json_eq(&other_value))
                    })
            }
            _ => false,
        }
    }
}

/// An RFC 6901 array index: `0` or digits without a leading zero.
fn array_index(token: &str) -> Option<usize> {
    if token.is_empty() || (token.len() > 1 && token.starts_with('0')) {
        return None;
    }
    token.bytes().try_fold(0usize, |index, byte| {
        if !byte.is_ascii_digit() {
            return None;
        }
        index.checked_mul(10)?.checked_add(usize::from(byte - b'0'))
    })
}

impl Object {
    /// This object as an [`ObjectView`].
    pub fn view(&self) -> ObjectView<'_> {
        ObjectView(Repr::Tree(self))
    }
}

impl Value {
    /// This value as a [`View`].
    pub fn view(&self) -> View<'_> {
        match self {
            Self::Null => View::Null,
            Self::Bool(value) => View::Bool(*value),
            Self::Number(number) => View::Number(NumberRef(number.as_text())),
            Self::String(text) => View::String(Str::from(text)),
            Self::Array(items) => View::Array(ArrayView(Repr::Tree(items))),
            Self::Object(object) => View::Object(ObjectView(Repr::Tree(object))),
        }
    }
}

impl fmt::Debug for Str<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.to_lossy(), f)
    }
}

impl fmt::Debug for View<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Null => f.write_str("null"),
            Self::Bool(value) => write!(f, "{value}"),
            Self::Number(number) => f.write_str(number.as_text()),
            Self::String(text) => fmt::Debug::fmt(text, f),
            Self::Array(items) => f.debug_list().entries(items.iter()).finish(),
            Self::Object(object) => f.debug_map().entries(object.iter()).finish(),
        }
    }
}

impl fmt::Debug for NumberRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl fmt::Debug for ArrayView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&View::Array(*self), f)
    }
}

impl fmt::Debug for ObjectView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&View::Object(*self), f)
    }
}

impl fmt::Debug for ArrayIter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ArrayIter")
    }
}

impl fmt::Debug for ObjectIter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ObjectIter")
    }
}
