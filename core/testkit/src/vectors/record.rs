//! A small ordered object builder for vector records (member order is irrelevant on disk: every
//! record is written in RFC 8785 form).

use missionweaveprotocol::json::{Number, Object, Value};

/// Builds one JSON object.
#[derive(Debug, Default)]
pub struct Rec(Object);

impl Rec {
    /// An empty object.
    pub fn new() -> Self {
        Self(Object::new())
    }

    /// A string member.
    pub fn str(mut self, name: &str, text: impl Into<String>) -> Self {
        self.0.insert(name, Value::string(text));
        self
    }

    /// A string member, or `null`.
    pub fn opt_str(self, name: &str, text: Option<impl Into<String>>) -> Self {
        match text {
            Some(text) => self.str(name, text),
            None => self.value(name, Value::Null),
        }
    }

    /// An unsigned integer member.
    pub fn num(mut self, name: &str, n: u64) -> Self {
        self.0.insert(name, Value::Number(Number::from_u64(n)));
        self
    }

    /// A signed integer member.
    pub fn int(mut self, name: &str, n: i64) -> Self {
        self.0.insert(name, Value::Number(Number::from_i64(n)));
        self
    }

    /// A boolean member.
    pub fn bool(mut self, name: &str, flag: bool) -> Self {
        self.0.insert(name, Value::Bool(flag));
        self
    }

    /// Any member.
    pub fn value(mut self, name: &str, value: Value) -> Self {
        self.0.insert(name, value);
        self
    }

    /// An array of strings.
    pub fn strings<'a>(self, name: &str, items: impl IntoIterator<Item = &'a str>) -> Self {
        let items = items.into_iter().map(Value::string).collect();
        self.value(name, Value::Array(items))
    }

    /// The object.
    pub fn build(self) -> Value {
        Value::Object(self.0)
    }
}
