//! The strict reader behind the JSON forms of the persisted snapshots
//! ([`crate::budget::BudgetLedgerSnapshot`], [`crate::scheduler::SchedulerSnapshot`]) and the
//! JSON form of [`Resources`].
//!
//! Bindings and stores persist these as ordinary JSON objects (camelCase members, like the
//! reference's snapshot models). Reading is strict: every required member must be present with
//! the right type, unknown members are rejected, and integers must be exact. A well-formed
//! document can still describe an inconsistent ledger or queue; [`BudgetLedger::rebuild`] and
//! [`Scheduler::restore`] check that.
//!
//! Integers are exact JSON numbers (within ±(2^53 − 1)) except the Scheduler's 128-bit stride passes
//! (`pass`, `virtualTime`), which are decimal strings because they exceed 2^53.
//!
//! [`BudgetLedger::rebuild`]: crate::budget::BudgetLedger::rebuild
//! [`Scheduler::restore`]: crate::scheduler::Scheduler::restore

use missionweaveprotocol::WireCode;
use missionweaveprotocol::json::{Number, Object, Value};

use crate::resources::{Dimension, MAX_SAFE_INTEGER, Resources};

/// A snapshot document that does not have the expected shape. `path` is a JSON Pointer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotFormatError {
    /// Where (JSON Pointer into the document).
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl SnapshotFormatError {
    /// The §19 wire code: a snapshot is local persisted state, so a bad one is an internal fault.
    pub const fn code(&self) -> WireCode {
        WireCode::InternalError
    }
}

pub(crate) type Result<T> = core::result::Result<T, SnapshotFormatError>;

pub(crate) fn fail<T>(path: &str, message: impl Into<String>) -> Result<T> {
    Err(SnapshotFormatError {
        path: path.to_owned(),
        message: message.into(),
    })
}

/// Strict reader over one JSON object: tracks which members were read and rejects the rest.
pub(crate) struct Reader<'a> {
    object: &'a Object,
    path: String,
    seen: Vec<&'static str>,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(value: &'a Value, path: &str) -> Result<Self> {
        match value.as_object() {
            Some(object) => Ok(Reader {
                object,
                path: path.to_owned(),
                seen: Vec::new(),
            }),
            None => fail(
                path,
                format!("expected an object, found {}", value.type_name()),
            ),
        }
    }

    pub(crate) fn at(&self, name: &str) -> String {
        format!("{}/{name}", self.path)
    }

    pub(crate) fn opt(&mut self, name: &'static str) -> Option<&'a Value> {
        self.seen.push(name);
        self.object.get(name).filter(|v| !matches!(v, Value::Null))
    }

    pub(crate) fn req(&mut self, name: &'static str) -> Result<&'a Value> {
        match self.opt(name) {
            Some(v) => Ok(v),
            None => fail(&self.at(name), "required member missing"),
        }
    }

    pub(crate) fn string(&mut self, name: &'static str) -> Result<String> {
        let v = self.req(name)?;
        as_string(v, &self.at(name))
    }

    pub(crate) fn opt_string(&mut self, name: &'static str) -> Result<Option<String>> {
        match self.opt(name) {
            Some(v) => as_string(v, &self.at(name)).map(Some),
            None => Ok(None),
        }
    }

    pub(crate) fn int(&mut self, name: &'static str) -> Result<i64> {
        let v = self.req(name)?;
        as_i64(v, &self.at(name))
    }

    pub(crate) fn opt_int(&mut self, name: &'static str) -> Result<Option<i64>> {
        match self.opt(name) {
            Some(v) => as_i64(v, &self.at(name)).map(Some),
            None => Ok(None),
        }
    }

    pub(crate) fn uint(&mut self, name: &'static str, max: u64) -> Result<u64> {
        let path = self.at(name);
        let v = self.int(name)?;
        match u64::try_from(v) {
            Ok(u) if u <= max => Ok(u),
            _ => fail(&path, format!("expected an integer in 0..={max}")),
        }
    }

    pub(crate) fn boolean(&mut self, name: &'static str) -> Result<bool> {
        let path = self.at(name);
        match self.req(name)?.as_bool() {
            Some(b) => Ok(b),
            None => fail(&path, "expected a boolean"),
        }
    }

    pub(crate) fn big(&mut self, name: &'static str) -> Result<u128> {
        let path = self.at(name);
        let text = self.string(name)?;
        if text.is_empty()
            || (text.len() > 1 && text.starts_with('0'))
            || !text.bytes().all(|b| b.is_ascii_digit())
        {
            return fail(&path, "expected a decimal integer string");
        }
        text.parse()
            .or_else(|_| fail(&path, "integer out of the 128-bit range"))
    }

    pub(crate) fn array(&mut self, name: &'static str) -> Result<&'a [Value]> {
        let path = self.at(name);
        match self.req(name)?.as_array() {
            Some(items) => Ok(items),
            None => fail(&path, "expected an array"),
        }
    }

    pub(crate) fn resources(&mut self, name: &'static str) -> Result<Resources> {
        let path = self.at(name);
        resources_from_value(self.req(name)?, &path)
    }

    /// Rejects members that were never read.
    pub(crate) fn finish(self) -> Result<()> {
        for (key, _) in self.object.iter() {
            let known = key.as_str().is_some_and(|k| self.seen.contains(&k));
            if !known {
                return fail(
                    &self.path,
                    format!("unknown member {:?}", key.to_lossy().as_ref()),
                );
            }
        }
        Ok(())
    }
}

pub(crate) fn as_string(v: &Value, path: &str) -> Result<String> {
    match v.as_str() {
        Some(s) => Ok(s.to_owned()),
        None => fail(path, "expected a string"),
    }
}

/// An exact JSON integer: within ±(2^53 − 1), the range every JSON reader and the RFC 8785
/// writer represent exactly (§2, I-JSON). A larger one would be read here but written back
/// rounded (`9007199254740993` → `…992`), so a restored state would not survive its own
/// snapshot (found by the `scheduler` fuzz target).
pub(crate) fn as_i64(v: &Value, path: &str) -> Result<i64> {
    match v.as_number() {
        Some(n) if n.decimal().is_integer() => match n.as_i64() {
            Some(i) if i.unsigned_abs() <= MAX_SAFE_INTEGER => Ok(i),
            _ => fail(path, "integer outside the exact JSON range ±(2^53 - 1)"),
        },
        _ => fail(path, "expected an integer"),
    }
}

pub fn num_u(v: u64) -> Value {
    Value::Number(Number::from_u64(v))
}

pub(crate) fn num_i(v: i64) -> Value {
    Value::Number(Number::from_i64(v))
}

/// The camelCase JSON member name of a dimension (the reference's `ResourceUsage` fields).
pub const fn dimension_member(d: Dimension) -> &'static str {
    match d {
        Dimension::Financial => "financialMicrounits",
        Dimension::ModelTokens => "modelTokens",
        Dimension::ToolCalls => "toolCalls",
        Dimension::ComputeSeconds => "computeSeconds",
        Dimension::WallClockSeconds => "wallClockSeconds",
        Dimension::ExternalSideEffects => "externalActions",
    }
}

/// `{"financialMicrounits": …, …}` with all six members.
pub fn resources_to_value(r: &Resources) -> Value {
    let mut o = Object::new();
    for d in Dimension::ALL {
        o.insert(dimension_member(d), num_u(r.get(d)));
    }
    Value::Object(o)
}

/// Reads all six members (each 0..=2^53 − 1); no others.
pub fn resources_from_value(value: &Value, path: &str) -> Result<Resources> {
    let mut r = Reader::new(value, path)?;
    let mut out = Resources::ZERO;
    for d in Dimension::ALL {
        out.set(d, r.uint(dimension_member(d), MAX_SAFE_INTEGER)?);
    }
    r.finish()?;
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::budget::BudgetLedgerSnapshot;
    use missionweaveprotocol::json::{canonical_bytes, parse_state};

    #[test]
    fn resources_round_trip_and_reject_bad_members() {
        let r = Resources::new(1, 2, 3, 4, 5, MAX_SAFE_INTEGER);
        assert_eq!(
            resources_from_value(&resources_to_value(&r), "").unwrap(),
            r
        );
        for bad in [
            r#"{"financialMicrounits":1}"#,
            r#"{"financialMicrounits":1,"modelTokens":0,"toolCalls":0,"computeSeconds":0,"wallClockSeconds":0,"externalActions":-1}"#,
            r#"{"financialMicrounits":1.5,"modelTokens":0,"toolCalls":0,"computeSeconds":0,"wallClockSeconds":0,"externalActions":0}"#,
            r#"{"financialMicrounits":9007199254740992,"modelTokens":0,"toolCalls":0,"computeSeconds":0,"wallClockSeconds":0,"externalActions":0}"#,
            r#"{"financialMicrounits":0,"modelTokens":0,"toolCalls":0,"computeSeconds":0,"wallClockSeconds":0,"externalActions":0,"x":0}"#,
            r#"[]"#,
        ] {
            assert!(
                resources_from_value(&parse_state(bad.as_bytes()).unwrap(), "").is_err(),
                "{bad}"
            );
        }
        // 1.0 is an exact integer.
        let one = r#"{"financialMicrounits":1.0,"modelTokens":0,"toolCalls":0,"computeSeconds":0,"wallClockSeconds":0,"externalActions":0}"#;
        assert_eq!(
            resources_from_value(&parse_state(one.as_bytes()).unwrap(), "")
                .unwrap()
                .get(Dimension::Financial),
            1
        );
    }

    #[test]
    fn errors_carry_a_json_pointer() {
        let doc =
            br#"{"version":1,"missions":[{"missionId":"m","limit":{},"usage":{}}],"workItems":[]}"#;
        let err = BudgetLedgerSnapshot::from_value(&parse_state(doc).unwrap()).unwrap_err();
        assert_eq!(err.path, "/missions/0/limit/financialMicrounits");
        assert_eq!(err.code(), WireCode::InternalError);
        let doc = br#"{"version":2,"missions":[],"workItems":[]}"#;
        assert_eq!(
            BudgetLedgerSnapshot::from_value(&parse_state(doc).unwrap())
                .unwrap_err()
                .path,
            "/version"
        );
        // Canonical output is stable (members are strings and safe integers).
        let empty = BudgetLedgerSnapshot::default().to_value();
        assert_eq!(
            canonical_bytes(&empty).unwrap(),
            br#"{"missions":[],"version":1,"workItems":[]}"#
        );
    }
}
