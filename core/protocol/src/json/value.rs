//! The lossless JSON value: exact number text, strings that may hold unpaired surrogates, member
//! order kept. `1e400` and `"\ud800"` must survive stage 1 and fail at stage 5 (§6.4).

use std::borrow::Cow;
use std::fmt;

use super::decimal::Decimal;
use super::view::{NumberRef, Str};

/// A JSON string. Almost always valid Unicode; an unpaired surrogate escape keeps the exact
/// UTF-16 code units instead, so stage 5 can reject it while earlier stages still see a string.
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum JsonString {
    Text(Box<str>),
    Wtf16(Box<[u16]>),
}

/// The methods read through [`Str`], the borrowed form the parsed tape shares, so there is one
/// definition of each.
impl JsonString {
    /// The text if the string is valid Unicode.
    pub fn as_str(&self) -> Option<&str> {
        Str::from(self).as_str()
    }

    /// The text with each unpaired surrogate replaced by U+FFFD (one code point for one).
    pub fn to_lossy(&self) -> Cow<'_, str> {
        Str::from(self).to_lossy()
    }

    /// Length in code points, an unpaired surrogate counting as one (JSON Schema `minLength`).
    pub fn char_count(&self) -> usize {
        Str::from(self).char_count()
    }

    /// Whether this is an unpaired-surrogate string (outside I-JSON).
    pub fn has_unpaired_surrogate(&self) -> bool {
        Str::from(self).has_unpaired_surrogate()
    }

    /// Equality of the decoded code-unit sequences (duplicate-member detection).
    pub fn same_units(&self, other: &Self) -> bool {
        Str::from(self).same_units(&Str::from(other))
    }
}

impl fmt::Debug for JsonString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.to_lossy(), f)
    }
}

impl From<&str> for JsonString {
    fn from(text: &str) -> Self {
        Self::Text(text.into())
    }
}

impl From<String> for JsonString {
    fn from(text: String) -> Self {
        Self::Text(text.into_boxed_str())
    }
}

/// A JSON number kept as its exact source text (RFC 8259 grammar, already checked).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Number(Box<str>);

impl Number {
    /// Wraps text that the caller guarantees follows the JSON number grammar.
    pub(crate) fn from_grammar_checked(text: &str) -> Self {
        Self(text.into())
    }

    /// A number from an integer.
    pub fn from_i64(value: i64) -> Self {
        Self(value.to_string().into_boxed_str())
    }

    /// A number from an unsigned integer.
    pub fn from_u64(value: u64) -> Self {
        Self(value.to_string().into_boxed_str())
    }

    /// The exact source text.
    pub fn as_text(&self) -> &str {
        &self.0
    }

    /// The nearest binary64 value (may be infinite for `1e400`).
    pub fn as_f64(&self) -> f64 {
        NumberRef::new(&self.0).as_f64()
    }

    /// The exact decimal value.
    pub fn decimal(&self) -> Decimal {
        NumberRef::new(&self.0).decimal()
    }

    /// The value as an `i64`, if it is mathematically an integer in range.
    pub fn as_i64(&self) -> Option<i64> {
        NumberRef::new(&self.0).as_i64()
    }

    /// The value as a `u64`, if it is mathematically a non-negative integer in range.
    pub fn as_u64(&self) -> Option<u64> {
        NumberRef::new(&self.0).as_u64()
    }
}

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A JSON object: members in source order, names unique (the parser rejects duplicates).
#[derive(Clone, Default, PartialEq)]
pub struct Object {
    members: Vec<(JsonString, Value)>,
}

impl Object {
    /// An empty object.
    pub fn new() -> Self {
        Self::default()
    }

    pub(crate) fn from_members(members: Vec<(JsonString, Value)>) -> Self {
        Self { members }
    }

    pub(crate) fn members(&self) -> &[(JsonString, Value)] {
        &self.members
    }

    /// The member named `name`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.members
            .iter()
            .find(|(key, _)| key.as_str() == Some(name))
            .map(|(_, value)| value)
    }

    /// Whether a member named `name` exists.
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Members in source order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&JsonString, &Value)> {
        self.members.iter().map(|(key, value)| (key, value))
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether there are no members.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Sets `name` to `value`, replacing an existing member in place or appending.
    pub fn insert(&mut self, name: &str, value: Value) {
        if let Some(slot) = self
            .members
            .iter_mut()
            .find(|(key, _)| key.as_str() == Some(name))
        {
            slot.1 = value;
        } else {
            self.members.push((JsonString::from(name), value));
        }
    }

    /// Removes and returns the member named `name`.
    pub fn remove(&mut self, name: &str) -> Option<Value> {
        let index = self
            .members
            .iter()
            .position(|(key, _)| key.as_str() == Some(name))?;
        Some(self.members.remove(index).1)
    }
}

impl fmt::Debug for Object {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.members.iter().map(|(k, v)| (k, v)))
            .finish()
    }
}

/// A lossless JSON value.
#[derive(Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(Number),
    String(JsonString),
    Array(Vec<Value>),
    Object(Object),
}

impl Value {
    /// A string value.
    pub fn string(text: impl Into<String>) -> Self {
        Self::String(JsonString::from(text.into()))
    }

    /// The object, if this is one.
    pub fn as_object(&self) -> Option<&Object> {
        match self {
            Self::Object(object) => Some(object),
            _ => None,
        }
    }

    /// The array, if this is one.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Self::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The text of a valid-Unicode string value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::String(text) => text.as_str(),
            _ => None,
        }
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Self::Bool(value) => Some(*value),
            _ => None,
        }
    }

    /// The number, if this is one.
    pub fn as_number(&self) -> Option<&Number> {
        match self {
            Self::Number(number) => Some(number),
            _ => None,
        }
    }

    /// Member lookup on an object (None for other kinds).
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.as_object().and_then(|object| object.get(name))
    }

    /// RFC 6901 JSON Pointer lookup.
    pub fn pointer(&self, pointer: &str) -> Option<&Value> {
        if pointer.is_empty() {
            return Some(self);
        }
        let rest = pointer.strip_prefix('/')?;
        let mut current = self;
        for raw in rest.split('/') {
            let token = raw.replace("~1", "/").replace("~0", "~");
            current = match current {
                Self::Object(object) => object.get(&token)?,
                Self::Array(items) => {
                    if token.len() > 1 && token.starts_with('0') {
                        return None;
                    }
                    items.get(token.parse::<usize>().ok()?)?
                }
                _ => return None,
            };
        }
        Some(current)
    }

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

    /// JSON Schema equality: numbers by mathematical value, objects regardless of member order.
    pub fn json_eq(&self, other: &Self) -> bool {
        self.view().json_eq(&other.view())
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Null => f.write_str("null"),
            Self::Bool(value) => write!(f, "{value}"),
            Self::Number(number) => fmt::Debug::fmt(number, f),
            Self::String(text) => fmt::Debug::fmt(text, f),
            Self::Array(items) => f.debug_list().entries(items).finish(),
            Self::Object(object) => fmt::Debug::fmt(object, f),
        }
    }
}

impl From<Object> for Value {
    fn from(object: Object) -> Self {
        Self::Object(object)
    }
}
