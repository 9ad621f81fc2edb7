//! The one shape every raw call returns: `{"ok": value}` or `{"error": {...}}`, as RFC 8785 text.
//! Both bindings hand this string to the same JavaScript wrapper (`js/src/api.mjs`), which turns
//! it into typed objects and `Error` subclasses. Nothing is thrown across the boundary.

use missionweaveprotocol::admission::AdmissionError;
use missionweaveprotocol::bundle::BundleVerificationError;
use missionweaveprotocol::json::{
    CanonicalError, Number, Object, ParseError, Value, canonical_bytes,
};
use missionweaveprotocol::registry::RegistryError;
use missionweaveprotocol::schema::SchemaIssue;
use missionweaveprotocol::signed_documents::{SigningError, VerificationError};
use missionweaveprotocol::wire::FrameError;
use missionweaveprotocol::{Stage, WireCode};

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

/// Appends `text` as a JSON string.
pub(crate) fn escape_into(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if u32::from(c) < 0x20 => {
                let code = u32::from(c);
                let hex = b"0123456789abcdef";
                out.push_str("\\u00");
                out.push(char::from(hex[(code >> 4) as usize]));
                out.push(char::from(hex[(code & 15) as usize]));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn internal_envelope() -> String {
    r#"{"error":{"class":"MwpError","code":"INTERNAL_ERROR","detail":"the binding could not encode its result","stage":null}}"#.to_owned()
}

fn failure(class: &str, code: WireCode, stage: Option<Stage>, detail: impl Into<String>) -> Obj {
    Obj::new()
        .str("class", class)
        .str("code", code.as_str())
        .opt_str("stage", stage.map(Stage::as_str))
        .str("detail", detail)
}

impl Failure {
    /// API misuse: unknown kind, wrong seed length, unknown schema name. Not a wire event.
    pub fn argument(detail: impl Into<String>) -> Self {
        Self(
            Obj::new()
                .str("class", "ArgumentError")
                .str("code", "INVALID_ARGUMENT")
                .value("stage", Value::Null)
                .str("detail", detail)
                .into_object(),
        )
    }

    pub fn parse(error: &ParseError) -> Self {
        Self(
            failure(
                "ParseError",
                WireCode::ProtocolViolation,
                Some(Stage::Parse),
                error.to_string(),
            )
            .num("offset", error.offset as u64)
            .into_object(),
        )
    }

    pub fn canonical(error: &CanonicalError) -> Self {
        Self(
            failure(
                "CanonicalizationError",
                WireCode::ProtocolViolation,
                Some(Stage::Canonicalization),
                error.to_string(),
            )
            .into_object(),
        )
    }

    /// A stage-5 failure reported by the core's signing-bytes function, shaped like
    /// [`Failure::canonical`].
    pub fn canonical_stage(error: &VerificationError) -> Self {
        Self(
            failure(
                "CanonicalizationError",
                WireCode::ProtocolViolation,
                Some(Stage::Canonicalization),
                error.detail.clone(),
            )
            .into_object(),
        )
    }

    pub fn schema(issue: &SchemaIssue) -> Self {
        Self(
            failure(
                "SchemaValidationError",
                WireCode::SchemaValidationFailed,
                Some(Stage::Schema),
                issue.to_string(),
            )
            .str("instancePath", issue.instance_path.clone())
            .str("schemaLocation", issue.schema_location.clone())
            .str("keyword", issue.keyword)
            .into_object(),
        )
    }

    /// Six-stage failure: the wire view (code, fixed message) and the protected view.
    pub fn verification(error: &VerificationError) -> Self {
        Self(
            failure(
                "VerificationError",
                error.wire_code(),
                Some(error.stage),
                error.detail.clone(),
            )
            .num("stageNumber", u64::from(error.stage.number()))
            .str("reason", error.reason)
            .str("wireMessage", error.wire_message())
            .into_object(),
        )
    }

    pub fn signing(error: &SigningError) -> Self {
        Self(
            failure(
                "SigningError",
                error.stage.wire_code(),
                Some(error.stage),
                error.detail.clone(),
            )
            .into_object(),
        )
    }

    pub fn registry(error: &RegistryError) -> Self {
        Self(
            failure(
                "RegistryError",
                Stage::KeyResolution.wire_code(),
                Some(Stage::KeyResolution),
                error.detail.clone(),
            )
            .str("reason", error.reason.as_str())
            .into_object(),
        )
    }

    pub fn admission(error: &AdmissionError) -> Self {
        Self(
            failure(
                "AdmissionError",
                error.wire_code(),
                Some(error.stage()),
                error.detail.clone(),
            )
            .str("reason", error.reason.as_str())
            .str(
                "wireMessage",
                missionweaveprotocol::signed_documents::WIRE_MESSAGE,
            )
            .into_object(),
        )
    }

    pub fn frame(error: &FrameError) -> Self {
        Self(failure("FrameError", error.code, None, error.detail.clone()).into_object())
    }

    pub fn bundle(error: &BundleVerificationError) -> Self {
        Self(
            failure(
                "BundleError",
                WireCode::InternalError,
                None,
                error.problems.join("; "),
            )
            .strings("problems", error.problems.iter().map(String::as_str))
            .into_object(),
        )
    }
}

impl Obj {
    fn into_object(self) -> Object {
        self.0
    }
}

impl Failure {
    /// A typed failure of the stateful objects (leases, ledger, grants, retries, scheduler):
    /// `{class, code, stage: null, detail, …}` built by the caller.
    pub fn typed(class: &str, code: &str, detail: impl Into<String>, extra: Obj) -> Self {
        let mut object = extra.into_object();
        object.insert("class", Value::string(class));
        object.insert("code", Value::string(code));
        object.insert("stage", Value::Null);
        object.insert("detail", Value::string(detail));
        Self(object)
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
            Some("INVALID_ARGUMENT")
        );
        assert_eq!(value.pointer("/error/stage"), Some(&Value::Null));
    }
}
