//! Arguments of the stateful objects (leases, ledger, grants, retries, scheduler) as they cross
//! the boundary: one JSON array per call, made by the JavaScript wrapper with `JSON.stringify`
//! (times already converted to integer milliseconds). Reading is strict: wrong types, unknown
//! members and out-of-range integers are `ArgumentError` failures (`PROTOCOL_VIOLATION`, reason `invalid-argument`) that name the path.

use missionweaveprotocol::json::{Object, Value, parse};
use missionweaveprotocol_authority::capability_version::CapabilityRef;
use missionweaveprotocol_authority::resources::{Currency, Dimension, MAX_SAFE_INTEGER, Resources};
use missionweaveprotocol_authority::snapshot_json::dimension_member;
use missionweaveprotocol_authority::unix_millis::UnixMillis;

use crate::envelope::Failure;

pub type Res<T> = Result<T, Failure>;

fn bad<T>(path: &str, message: &str) -> Res<T> {
    Err(Failure::argument(format!("{path}: {message}")))
}

fn integer(value: &Value, path: &str) -> Res<i64> {
    match value.as_number() {
        Some(n) if n.decimal().is_integer() => match n.as_i64() {
            Some(i) => Ok(i),
            None => bad(path, "integer out of range"),
        },
        _ => bad(path, "expected an integer"),
    }
}

/// Milliseconds since the epoch within ±(2^53 − 1) (what a JavaScript number holds exactly).
pub fn millis(value: &Value, path: &str) -> Res<UnixMillis> {
    let v = integer(value, path)?;
    if v.unsigned_abs() > MAX_SAFE_INTEGER {
        return bad(path, "time out of the safe integer range");
    }
    Ok(UnixMillis(v))
}

pub fn uint(value: &Value, path: &str, max: u64) -> Res<u64> {
    match u64::try_from(integer(value, path)?) {
        Ok(v) if v <= max => Ok(v),
        _ => bad(path, &format!("expected an integer in 0..={max}")),
    }
}

pub fn string<'a>(value: &'a Value, path: &str) -> Res<&'a str> {
    value
        .as_str()
        .map_or_else(|| bad(path, "expected a string"), Ok)
}

pub fn boolean(value: &Value, path: &str) -> Res<bool> {
    value
        .as_bool()
        .map_or_else(|| bad(path, "expected a boolean"), Ok)
}

pub fn array<'a>(value: &'a Value, path: &str) -> Res<&'a [Value]> {
    value
        .as_array()
        .map_or_else(|| bad(path, "expected an array"), Ok)
}

/// The positional arguments of one call.
#[derive(Debug)]
pub struct Args {
    items: Vec<Value>,
}

impl Args {
    pub fn parse(text: &str) -> Res<Self> {
        let value = parse(text.as_bytes()).map_err(|e| Failure::error(&e))?;
        match value {
            Value::Array(items) => Ok(Self { items }),
            _ => bad("arguments", "expected an array"),
        }
    }

    pub fn get(&self, index: usize) -> &Value {
        self.items.get(index).unwrap_or(&Value::Null)
    }

    pub fn is_null(&self, index: usize) -> bool {
        matches!(self.get(index), Value::Null)
    }

    pub fn str(&self, index: usize, name: &str) -> Res<&str> {
        string(self.get(index), name)
    }

    pub fn millis(&self, index: usize, name: &str) -> Res<UnixMillis> {
        millis(self.get(index), name)
    }

    pub fn uint(&self, index: usize, name: &str, max: u64) -> Res<u64> {
        uint(self.get(index), name, max)
    }

    pub fn reader(&self, index: usize, name: &str) -> Res<Reader<'_>> {
        Reader::new(self.get(index), name)
    }
}

/// A strict reader over one object: optional members may be absent or `null`; members that
/// were never read are rejected by [`Reader::finish`].
#[derive(Debug)]
pub struct Reader<'a> {
    object: &'a Object,
    path: String,
    seen: Vec<&'static str>,
}

impl<'a> Reader<'a> {
    pub fn new(value: &'a Value, path: &str) -> Res<Self> {
        match value.as_object() {
            Some(object) => Ok(Self {
                object,
                path: path.to_owned(),
                seen: Vec::new(),
            }),
            None => bad(path, "expected an object"),
        }
    }

    pub fn at(&self, name: &str) -> String {
        format!("{}.{name}", self.path)
    }

    pub fn opt(&mut self, name: &'static str) -> Option<&'a Value> {
        self.seen.push(name);
        self.object.get(name).filter(|v| !matches!(v, Value::Null))
    }

    pub fn req(&mut self, name: &'static str) -> Res<&'a Value> {
        match self.opt(name) {
            Some(v) => Ok(v),
            None => bad(&self.at(name), "required"),
        }
    }

    pub fn string(&mut self, name: &'static str) -> Res<&'a str> {
        let v = self.req(name)?;
        string(v, &self.at(name))
    }

    pub fn opt_string(&mut self, name: &'static str) -> Res<Option<&'a str>> {
        match self.opt(name) {
            Some(v) => string(v, &self.at(name)).map(Some),
            None => Ok(None),
        }
    }

    pub fn uint(&mut self, name: &'static str, max: u64) -> Res<u64> {
        let v = self.req(name)?;
        uint(v, &self.at(name), max)
    }

    pub fn uint_or(&mut self, name: &'static str, max: u64, default: u64) -> Res<u64> {
        match self.opt(name) {
            Some(v) => uint(v, &self.at(name), max),
            None => Ok(default),
        }
    }

    /// Any 64-bit integer (the range is the caller's core rule), or `default` when absent.
    pub fn int_or(&mut self, name: &'static str, default: i64) -> Res<i64> {
        match self.opt(name) {
            Some(v) => integer(v, &self.at(name)),
            None => Ok(default),
        }
    }

    pub fn int_in(&mut self, name: &'static str, min: i64, max: i64, default: i64) -> Res<i64> {
        match self.opt(name) {
            Some(v) => {
                let i = integer(v, &self.at(name))?;
                if !(min..=max).contains(&i) {
                    return bad(
                        &self.at(name),
                        &format!("expected an integer in {min}..={max}"),
                    );
                }
                Ok(i)
            }
            None => Ok(default),
        }
    }

    pub fn millis(&mut self, name: &'static str) -> Res<UnixMillis> {
        let v = self.req(name)?;
        millis(v, &self.at(name))
    }

    pub fn opt_millis(&mut self, name: &'static str) -> Res<Option<UnixMillis>> {
        match self.opt(name) {
            Some(v) => millis(v, &self.at(name)).map(Some),
            None => Ok(None),
        }
    }

    pub fn bool_or(&mut self, name: &'static str, default: bool) -> Res<bool> {
        match self.opt(name) {
            Some(v) => boolean(v, &self.at(name)),
            None => Ok(default),
        }
    }

    pub fn array(&mut self, name: &'static str) -> Res<&'a [Value]> {
        match self.opt(name) {
            Some(v) => array(v, &self.at(name)),
            None => Ok(&[]),
        }
    }

    pub fn currency(&mut self, name: &'static str) -> Res<Option<Currency>> {
        let path = self.at(name);
        match self.opt_string(name)? {
            Some(text) => Currency::parse(text)
                .map(Some)
                .map_or_else(|| bad(&path, "expected three upper-case letters"), Ok),
            None => Ok(None),
        }
    }

    pub fn resources(&mut self, name: &'static str) -> Res<Resources> {
        let path = self.at(name);
        match self.opt(name) {
            Some(v) => resources(v, &path),
            None => Ok(Resources::ZERO),
        }
    }

    pub fn capabilities(&mut self, name: &'static str) -> Res<Vec<CapabilityRef>> {
        let path = self.at(name);
        capabilities(self.array(name)?, &path)
    }

    /// The object's members, for maps keyed by identifier.
    pub fn entries(&self) -> impl Iterator<Item = (String, &'a Value)> + 'a {
        self.object
            .iter()
            .map(|(k, v)| (k.to_lossy().into_owned(), v))
    }

    /// Rejects members that were never read.
    pub fn finish(self) -> Res<()> {
        for (key, _) in self.object.iter() {
            if !key.as_str().is_some_and(|k| self.seen.contains(&k)) {
                return bad(
                    &self.path,
                    &format!("unknown member {:?}", key.to_lossy().as_ref()),
                );
            }
        }
        Ok(())
    }
}

/// A `ResourceUsage` object: the six members of the snapshot form, each optional (0), each a
/// safe non-negative integer; financial in micro-units.
pub fn resources(value: &Value, path: &str) -> Res<Resources> {
    let mut r = Reader::new(value, path)?;
    let mut out = Resources::ZERO;
    for d in Dimension::ALL {
        out.set(d, r.uint_or(dimension_member(d), MAX_SAFE_INTEGER, 0)?);
    }
    r.finish()?;
    Ok(out)
}

/// `[{id, version}]` with semantic versions.
pub fn capabilities(items: &[Value], path: &str) -> Res<Vec<CapabilityRef>> {
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let mut c = Reader::new(item, &format!("{path}[{i}]"))?;
            let id = c.string("id")?;
            let version_path = c.at("version");
            let version = c.string("version")?;
            c.finish()?;
            CapabilityRef::new(id, version)
                .map_or_else(|| bad(&version_path, "not a semantic version"), Ok)
        })
        .collect()
}
