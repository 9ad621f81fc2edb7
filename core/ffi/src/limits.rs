//! Parse limits (docs/limits.md) crossing from JavaScript as JSON text: `""` for the call's
//! default profile, or `{"maxDocumentBytes": …, "maxContainerEntries": …, "maxStringBytes": …,
//! "maxNumberChars": …}` with every member a positive safe integer. Read with the core's own
//! parser (no serde: this module is in the verify-only WebAssembly build too).

use missionweaveprotocol::json::{Object, ParseLimits, Value, parse};

use crate::envelope::{Failure, finish};

const MEMBERS: [&str; 4] = [
    "maxDocumentBytes",
    "maxContainerEntries",
    "maxStringBytes",
    "maxNumberChars",
];

/// The limits a call was given, or `default` for `""`.
pub fn limits_arg(text: &str, default: ParseLimits) -> Result<ParseLimits, Failure> {
    if text.is_empty() {
        return Ok(default);
    }
    let value = parse(text.as_bytes()).map_err(|_| Failure::argument("limits: not JSON"))?;
    let object = value
        .as_object()
        .ok_or_else(|| Failure::argument("limits: expected an object"))?;
    for (name, _) in object.iter() {
        let known = name.as_str().is_some_and(|name| MEMBERS.contains(&name));
        if !known {
            return Err(Failure::argument(format!(
                "limits: unknown member {:?} (expected {})",
                name.to_lossy(),
                MEMBERS.join(", ")
            )));
        }
    }
    let member = |name: &str| -> Result<usize, Failure> {
        let count = object
            .get(name)
            .and_then(|value| value.as_number())
            .and_then(|number| number.as_u64())
            .filter(|count| *count < (1 << 53))
            .ok_or_else(|| {
                Failure::argument(format!("limits.{name}: expected a positive safe integer"))
            })?;
        usize::try_from(count)
            .map_err(|_| Failure::argument(format!("limits.{name}: too large for this platform")))
    };
    // The core's rule for caller-chosen limits (each at least 1), reported with the JS name.
    ParseLimits::checked(
        member(MEMBERS[0])?,
        member(MEMBERS[1])?,
        member(MEMBERS[2])?,
        member(MEMBERS[3])?,
    )
    .map_err(|e| {
        // The core names the limit in Rust's spelling; JavaScript callers know it in camelCase.
        let name = e
            .argument
            .as_deref()
            .map_or_else(String::new, crate::envelope::camel);
        Failure::argument(format!("limits.{name}: {}", e.detail))
    })
}

fn profile(limits: &ParseLimits) -> Value {
    let mut object = Object::new();
    let values = [
        limits.max_document_bytes,
        limits.max_container_entries,
        limits.max_string_bytes,
        limits.max_number_chars,
    ];
    for (name, value) in MEMBERS.iter().zip(values) {
        object.insert(
            name,
            Value::Number(missionweaveprotocol::json::Number::from_u64(value as u64)),
        );
    }
    Value::Object(object)
}

/// The two profiles as an envelope: `{"document": {…}, "state": {…}}` (the JS `ParseLimits`).
pub fn parse_limit_profiles() -> String {
    let mut object = Object::new();
    object.insert("document", profile(&ParseLimits::DOCUMENT));
    object.insert("state", profile(&ParseLimits::STATE));
    finish(Ok(Value::Object(object)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn limits_read_back_and_refuse_bad_members() {
        assert_eq!(
            limits_arg("", ParseLimits::DOCUMENT).unwrap(),
            ParseLimits::DOCUMENT
        );
        let text = r#"{"maxDocumentBytes":10,"maxContainerEntries":2,"maxStringBytes":3,"maxNumberChars":4}"#;
        let limits = limits_arg(text, ParseLimits::DOCUMENT).unwrap();
        assert_eq!(
            (
                limits.max_document_bytes,
                limits.max_container_entries,
                limits.max_string_bytes,
                limits.max_number_chars
            ),
            (10, 2, 3, 4)
        );
        for bad in [
            "[]",
            "{",
            r#"{"maxDocumentBytes":10,"maxContainerEntries":2,"maxStringBytes":3}"#,
            r#"{"maxDocumentBytes":0,"maxContainerEntries":2,"maxStringBytes":3,"maxNumberChars":4}"#,
            r#"{"maxDocumentBytes":1.5,"maxContainerEntries":2,"maxStringBytes":3,"maxNumberChars":4}"#,
            r#"{"maxDocumentBytes":1,"maxContainerEntries":2,"maxStringBytes":3,"maxNumberChars":4,"x":1}"#,
        ] {
            assert!(limits_arg(bad, ParseLimits::DOCUMENT).is_err(), "{bad}");
        }
        let profiles = parse_limit_profiles();
        assert!(
            profiles.contains("\"maxDocumentBytes\":4194304"),
            "{profiles}"
        );
    }
}
