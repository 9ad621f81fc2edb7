//! The one shape every raw call returns: `{"ok": value}` or `{"error": {...}}`, as RFC 8785 text.
//! Both bindings hand this string to the same JavaScript wrapper (`js/src/api.mjs`), which turns
//! it into typed objects and `Error` subclasses. Nothing is thrown across the boundary.

use missionweaveprotocol::json::{Number, Object, Value, canonical_bytes};
use missionweaveprotocol::{ArgumentError, DescribeError, FieldValue, Stage};

/// A raw-call failure, already in its JavaScript form.
#[derive(Debug, Clone)]
pub struct Failure(Object);

/// The raw-call result.
pub type Outcome = Result<Value, Failure>;

/// Small object builder.
#[derive(Debug, Default)]
pub struct Obj(Object);

impl Obj {
    pub fn new() -> Self {
        Self(Object::new())
    }

    pub fn str(mut self, name: &str, text: impl Into<String>) -> Self {
        self.0.insert(name, Value::string(text));
        self
    }

    pub fn opt_str(mut self, name: &str, text: Option<impl Into<String>>) -> Self {
        self.0
            .insert(name, text.map_or(Value::Null, |t| Value::string(t)));
        self
    }

    pub fn num(mut self, name: &str, number: u64) -> Self {
        self.0.insert(name, Value::Number(Number::from_u64(number)));
        self
    }

    pub fn int(mut self, name: &str, number: i64) -> Self {
        self.0.insert(name, Value::Number(Number::from_i64(number)));
        self
    }

    pub fn bool(mut self, name: &str, flag: bool) -> Self {
        self.0.insert(name, Value::Bool(flag));
        self
    }

    pub fn value(mut self, name: &str, value: Value) -> Self {
        self.0.insert(name, value);
        self
    }

    pub fn strings<'a>(self, name: &str, items: impl IntoIterator<Item = &'a str>) -> Self {
        let array = items.into_iter().map(Value::string).collect();
        self.value(name, Value::Array(array))
    }

    pub fn build(self) -> Value {
        Value::Object(self.0)
    }
}

/// Serializes an outcome. The envelope holds only strings, booleans, small integers and values
/// that were already canonicalized, so serialization cannot fail; if it ever did, the caller
/// still gets a well-formed `INTERNAL_ERROR` envelope.
pub fn finish(outcome: Outcome) -> String {
    let envelope = match outcome {
        Ok(value) => Obj::new().value("ok", value).build(),
        Err(Failure(error)) => Obj::new().value("error", Value::Object(error)).build(),
    };
    match canonical_bytes(&envelope) {
        Ok(bytes) => String::from_utf8(bytes).unwrap_or_else(|_| internal_envelope()),
        Err(_) => internal_envelope(),
    }
}

/// A direct writer for hot-path `ok` envelopes made of string members only (no tree, no key
/// sorting): `{"ok":{"name":"value",…}}`. JavaScript parses it; it need not be canonical.
#[derive(Debug)]
pub struct FlatOk(String);

impl FlatOk {
    pub fn new(capacity: usize) -> Self {
        let mut out = String::with_capacity(capacity);
        out.push_str(r#"{"ok":{"#);
        Self(out)
    }

    fn name(&mut self, name: &str) {
        if !self.0.ends_with('{') {
            self.0.push(',');
        }
        self.0.push('"');
        self.0.push_str(name);
        self.0.push_str("\":");
    }

    pub fn str(mut self, name: &str, value: &str) -> Self {
        self.name(name);
        escape_into(&mut self.0, value);
        self
    }

    pub fn opt_str(mut self, name: &str, value: Option<&str>) -> Self {
        match value {
            Some(value) => self.str(name, value),
            None => {
                self.name(name);
                self.0.push_str("null");
                self
            }
        }
    }

    /// A nested object of string members.
    pub fn object(mut self, name: &str, members: &[(&str, &str)]) -> Self {
        self.name(name);
        self.0.push('{');
        for (index, (member, value)) in members.iter().enumerate() {
            if index > 0 {
                self.0.push(',');
            }
            escape_into(&mut self.0, member);
            self.0.push(':');
            escape_into(&mut self.0, value);
        }
        self.0.push('}');
        self
    }

    pub fn finish(mut self) -> String {
        self.0.push_str("}}");
        self.0
    }
}

/// Appends `text` as a JSON string (the core's one escaper).
pub(crate) fn escape_into(out: &mut String, text: &str) {
    missionweaveprotocol::json::write_json_string(out, text);
}

fn internal_envelope() -> String {
    r#"{"error":{"class":"MwpError","code":"INTERNAL_ERROR","detail":"the binding could not encode its result","fields":{},"message":"the binding could not encode its result","reason":"encoding-failed","retryable":true,"stage":null}}"#.to_owned()
}

/// `snake_case` → `camelCase`: JavaScript shows the core's field names in its own style.
pub(crate) fn camel(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn field_value(value: &FieldValue) -> Value {
    match value {
        FieldValue::Text(text) => Value::string(text.clone()),
        FieldValue::Integer(n) => Value::Number(Number::from_i64(*n)),
        FieldValue::Bool(flag) => Value::Bool(*flag),
        FieldValue::Texts(items) => {
            Value::Array(items.iter().map(|t| Value::string(t.clone())).collect())
        }
        FieldValue::Account { kind, id } => {
            Obj::new().str("kind", *kind).str("id", id.clone()).build()
        }
    }
}

impl Failure {
    /// Any core error, described by the core itself ([`DescribeError`]): `{class, code,
    /// stage, reason, message, detail, retryable, fields}`. The JavaScript wrapper builds the
    /// `Error` subclass named by `class` from this one shape; nothing here depends on the
    /// error's type.
    pub fn error(error: &dyn DescribeError) -> Self {
        let mut fields = Object::new();
        for (name, value) in error.fields().iter() {
            fields.insert(&camel(name), field_value(value));
        }
        Self(
            Obj::new()
                .str("class", error.class().js_name())
                .str("code", error.wire_code().as_str())
                .opt_str("stage", error.stage().map(Stage::as_str))
                .str("reason", error.reason())
                .str("message", error.to_string())
                .str("detail", error.detail())
                .bool("retryable", error.retryable())
                .value("fields", Value::Object(fields))
                .into_object(),
        )
    }

    /// The same failure with one more string member (the Core's ErrorCode `family`).
    pub fn with_str(mut self, name: &str, text: &str) -> Self {
        self.0.insert(name, Value::string(text));
        self
    }

    /// API misuse: unknown kind, wrong seed length, unknown schema name (`PROTOCOL_VIOLATION`,
    /// reason `invalid-argument`: see [`ArgumentError`]).
    pub fn argument(detail: impl Into<String>) -> Self {
        Self::error(&ArgumentError::general(detail))
    }
}

impl Obj {
    fn into_object(self) -> Object {
        self.0
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::expect_used)]

    use super::*;
    use missionweaveprotocol::json::parse;

    #[test]
    fn flat_ok_round_trips_every_escape() {
        let tricky = "quote \" backslash \\ newline \n tab \t nul \u{0} unit \u{1f} é 😀 \u{2028}";
        let text = FlatOk::new(16)
            .str("a", tricky)
            .opt_str("b", None)
            .object("c", &[("type", "agent"), ("id", tricky)])
            .finish();
        assert!(
            !text.contains('\n'),
            "no raw line feed: the signing bytes follow one"
        );
        let value = parse(text.as_bytes()).expect("strict JSON");
        assert_eq!(value.pointer("/ok/a").and_then(Value::as_str), Some(tricky));
        assert_eq!(value.pointer("/ok/b"), Some(&Value::Null));
        assert_eq!(
            value.pointer("/ok/c/id").and_then(Value::as_str),
            Some(tricky)
        );
    }

    #[test]
    fn failures_carry_class_code_and_stage() {
        let text = finish(Err(Failure::argument("bad")));
        let value = parse(text.as_bytes()).expect("strict JSON");
        assert_eq!(
            value.pointer("/error/code").and_then(Value::as_str),
            Some("PROTOCOL_VIOLATION")
        );
        assert_eq!(
            value.pointer("/error/reason").and_then(Value::as_str),
            Some("invalid-argument")
        );
        assert_eq!(
            value.pointer("/error/class").and_then(Value::as_str),
            Some("ArgumentError")
        );
        assert_eq!(value.pointer("/error/stage"), Some(&Value::Null));
    }

    #[test]
    fn field_names_become_camel_case() {
        assert_eq!(camel("instance_path"), "instancePath");
        assert_eq!(camel("current_generation"), "currentGeneration");
        assert_eq!(camel("dimension"), "dimension");
    }
}
