//! Evaluation of compiled nodes against a lossless value. The first failing keyword is
//! reported with its instance path; subschemas under `anyOf`, `oneOf`, `not` and `if` are
//! evaluated without recording.

use std::collections::HashSet;

use super::SchemaIssue;
use super::node::{Format, Node, NodeId, types};
use crate::json::{ArrayView, Str, View};
use crate::schema_formats::{Timestamp, is_protocol_uri};

/// Arrays longer than this check `uniqueItems` through a hash set of normalized keys.
const QUADRATIC_UNIQUE_LIMIT: usize = 16;

#[derive(Clone, Copy)]
enum Segment<'v> {
    Key(&'v str),
    Index(usize),
}

pub(crate) struct Validator<'s> {
    nodes: &'s [Node],
}

struct Recorder<'v> {
    path: Vec<Segment<'v>>,
    issue: Option<SchemaIssue>,
}

impl<'v> Recorder<'v> {
    fn fail(&mut self, node: &Node, keyword: &'static str, message: String) {
        if self.issue.is_none() {
            let mut pointer = String::new();
            for segment in &self.path {
                pointer.push('/');
                match segment {
                    Segment::Key(key) => {
                        pointer.push_str(&key.replace('~', "~0").replace('/', "~1"))
                    }
                    Segment::Index(index) => pointer.push_str(&index.to_string()),
                }
            }
            self.issue = Some(SchemaIssue {
                instance_path: pointer,
                schema_location: node.location.to_string(),
                keyword,
                message,
            });
        }
    }
}

fn type_matches(set: u8, value: View<'_>) -> bool {
    match value {
        View::Null => set & types::NULL != 0,
        View::Bool(_) => set & types::BOOLEAN != 0,
        View::Object(_) => set & types::OBJECT != 0,
        View::Array(_) => set & types::ARRAY != 0,
        View::String(_) => set & types::STRING != 0,
        View::Number(number) => {
            set & types::NUMBER != 0 || (set & types::INTEGER != 0 && number.decimal().is_integer())
        }
    }
}

fn format_matches(format: Format, text: Str<'_>) -> bool {
    let Some(text) = text.as_str() else {
        // An unpaired surrogate is neither a timestamp nor a URI.
        return false;
    };
    match format {
        Format::DateTime => Timestamp::parse(text).is_ok(),
        Format::Uri => is_protocol_uri(text),
    }
}

/// A byte key equal for JSON-Schema-equal values (numbers by value, objects unordered).
fn unique_key(value: View<'_>, out: &mut Vec<u8>) {
    match value {
        View::Null => out.push(b'n'),
        View::Bool(b) => out.extend_from_slice(if b { b"t" } else { b"f" }),
        View::Number(number) => {
            out.push(b'#');
            out.extend_from_slice(format!("{:?}", number.decimal()).as_bytes());
        }
        View::String(text) => {
            out.push(b's');
            let lossy = text.to_lossy();
            out.extend_from_slice(&(lossy.len() as u64).to_le_bytes());
            out.extend_from_slice(lossy.as_bytes());
            out.push(u8::from(text.has_unpaired_surrogate()));
        }
        View::Array(items) => {
            out.push(b'[');
            out.extend_from_slice(&(items.len() as u64).to_le_bytes());
            for item in items.iter() {
                unique_key(item, out);
            }
        }
        View::Object(object) => {
            let mut members: Vec<Vec<u8>> = object
                .iter()
                .map(|(key, value)| {
                    let mut member = Vec::new();
                    unique_key(View::String(key), &mut member);
                    unique_key(value, &mut member);
                    member
                })
                .collect();
            members.sort();
            out.push(b'{');
            out.extend_from_slice(&(members.len() as u64).to_le_bytes());
            for member in members {
                out.extend_from_slice(&member);
            }
        }
    }
}

fn all_unique(items: ArrayView<'_>) -> bool {
    let count = items.len();
    if count <= QUADRATIC_UNIQUE_LIMIT {
        return items
            .iter()
            .enumerate()
            .all(|(i, a)| items.iter().skip(i + 1).all(|b| !a.json_eq(&b)));
    }
    let mut seen = HashSet::with_capacity(count);
    items.iter().all(|item| {
        let mut key = Vec::new();
        unique_key(item, &mut key);
        seen.insert(key)
    })
}

impl<'s> Validator<'s> {
    pub fn new(nodes: &'s [Node]) -> Self {
        Self { nodes }
    }

    /// Validates and returns the first issue found.
    pub fn validate(&self, root: NodeId, value: View<'_>) -> Result<(), SchemaIssue> {
        let mut recorder = Recorder {
            path: Vec::with_capacity(16),
            issue: None,
        };
        if self.eval(root, value, &mut Some(&mut recorder)) {
            Ok(())
        } else {
            Err(recorder.issue.unwrap_or_else(|| SchemaIssue {
                instance_path: String::new(),
                schema_location: self.nodes[root].location.to_string(),
                keyword: "schema",
                message: "instance does not match".into(),
            }))
        }
    }

    /// Whether `value` is valid, without recording an issue.
    pub fn is_valid(&self, root: NodeId, value: View<'_>) -> bool {
        self.eval(root, value, &mut None)
    }

    fn eval<'v>(&self, id: NodeId, value: View<'v>, rec: &mut Option<&mut Recorder<'v>>) -> bool {
        let node = &self.nodes[id];
        macro_rules! fail {
            ($keyword:expr, $($message:tt)+) => {{
                if let Some(recorder) = rec.as_deref_mut() {
                    recorder.fail(node, $keyword, format!($($message)+));
                }
                return false;
            }};
        }
        if let Some(always) = node.always {
            if !always {
                fail!("false", "no value is allowed here");
            }
            return true;
        }
        if let Some(reference) = node.reference
            && !self.eval(reference, value, rec)
        {
            return false;
        }
        if let Some(set) = node.types
            && !type_matches(set, value)
        {
            fail!("type", "{} is not of the required type", value.type_name());
        }
        if let Some(constant) = &node.constant
            && !constant.view().json_eq(&value)
        {
            fail!("const", "value is not the required constant");
        }
        if let Some(options) = &node.enumeration
            && !options.iter().any(|option| option.view().json_eq(&value))
        {
            fail!("enum", "value is not one of the allowed values");
        }
        match value {
            View::Object(object) => {
                for name in &node.required {
                    if !object.contains(name) {
                        fail!("required", "required member {name:?} is missing");
                    }
                }
                let checks_members = !node.properties.is_empty()
                    || node.additional_properties.is_some()
                    || node.property_names.is_some();
                let declared_only =
                    node.additional_properties.is_none() && node.property_names.is_none();
                if checks_members && declared_only && rec.is_none() {
                    // Only a verdict is wanted and undeclared members are free: look up the
                    // declared properties (an `if` names one or two) rather than walking every
                    // member. Names are unique, so this checks the same members.
                    for (name, property) in &node.properties {
                        if let Some(member) = object.get(name)
                            && !self.eval(*property, member, rec)
                        {
                            return false;
                        }
                    }
                } else if checks_members {
                    for (key, member) in object.iter() {
                        let lossy = key.to_lossy();
                        let declared = key
                            .as_str()
                            .and_then(|name| node.properties.iter().find(|(p, _)| &**p == name));
                        let Some(name) = key.as_str() else {
                            // Member names with unpaired surrogates match no declared property.
                            if let Some(additional) = node.additional_properties
                                && !self.is_valid(additional, member)
                            {
                                fail!("additionalProperties", "member {lossy:?} is not allowed");
                            }
                            continue;
                        };
                        if let Some(recorder) = rec.as_deref_mut() {
                            recorder.path.push(Segment::Key(name));
                        }
                        let ok = match declared {
                            Some(&(_, property)) => self.eval(property, member, rec),
                            None => match node.additional_properties {
                                Some(additional) => {
                                    if self.nodes[additional].always == Some(false) {
                                        if let Some(recorder) = rec.as_deref_mut() {
                                            recorder.path.pop();
                                        }
                                        fail!(
                                            "additionalProperties",
                                            "member {name:?} is not allowed"
                                        );
                                    }
                                    self.eval(additional, member, rec)
                                }
                                None => true,
                            },
                        };
                        let name_ok = node
                            .property_names
                            .is_none_or(|names| self.is_valid(names, View::String(key)));
                        if let Some(recorder) = rec.as_deref_mut() {
                            recorder.path.pop();
                        }
                        if !ok {
                            return false;
                        }
                        if !name_ok {
                            fail!("propertyNames", "member name {name:?} is not allowed");
                        }
                    }
                }
            }
            View::Array(items) => {
                let count = items.len();
                if let Some(min) = node.min_items
                    && count < min
                {
                    fail!("minItems", "array has {count} items, fewer than {min}");
                }
                if let Some(max) = node.max_items
                    && count > max
                {
                    fail!("maxItems", "array has {count} items, more than {max}");
                }
                for (index, item) in items.iter().enumerate() {
                    let schema = match node.prefix_items.get(index) {
                        Some(&prefix) => Some(prefix),
                        None => node.items,
                    };
                    if let Some(schema) = schema {
                        if let Some(recorder) = rec.as_deref_mut() {
                            recorder.path.push(Segment::Index(index));
                        }
                        let ok = self.eval(schema, item, rec);
                        if let Some(recorder) = rec.as_deref_mut() {
                            recorder.path.pop();
                        }
                        if !ok {
                            return false;
                        }
                    }
                }
                if node.unique_items && !all_unique(items) {
                    fail!("uniqueItems", "array items are not unique");
                }
            }
            View::String(text) => {
                if node.min_length.is_some() || node.max_length.is_some() {
                    let length = text.char_count();
                    if let Some(min) = node.min_length
                        && length < min
                    {
                        fail!("minLength", "string is shorter than {min}");
                    }
                    if let Some(max) = node.max_length
                        && length > max
                    {
                        fail!("maxLength", "string is longer than {max}");
                    }
                }
                if let Some(pattern) = &node.pattern
                    && !pattern.is_match(&text.to_lossy())
                {
                    fail!("pattern", "string does not match {}", pattern.source);
                }
                if let Some(format) = node.format
                    && !format_matches(format, text)
                {
                    fail!(
                        "format",
                        "string is not a valid {}",
                        match format {
                            Format::DateTime => "date-time",
                            Format::Uri => "uri",
                        }
                    );
                }
            }
            View::Number(number) => {
                if node.minimum.is_some() || node.maximum.is_some() {
                    let decimal = number.decimal();
                    if let Some(min) = &node.minimum
                        && decimal < *min
                    {
                        fail!("minimum", "{} is below the minimum", number.as_text());
                    }
                    if let Some(max) = &node.maximum
                        && decimal > *max
                    {
                        fail!("maximum", "{} is above the maximum", number.as_text());
                    }
                }
            }
            View::Null | View::Bool(_) => {}
        }
        for &sub in &node.all_of {
            if !self.eval(sub, value, rec) {
                return false;
            }
        }
        if !node.any_of.is_empty() && !node.any_of.iter().any(|&sub| self.is_valid(sub, value)) {
            fail!("anyOf", "value matches none of the alternatives");
        }
        if !node.one_of.is_empty() {
            let matches = node
                .one_of
                .iter()
                .filter(|&&sub| self.is_valid(sub, value))
                .count();
            if matches != 1 {
                fail!(
                    "oneOf",
                    "value matches {matches} alternatives instead of exactly one"
                );
            }
        }
        if let Some(not) = node.not
            && self.is_valid(not, value)
        {
            fail!("not", "value matches a forbidden schema");
        }
        if let Some((condition, then, otherwise)) = node.if_then_else {
            let branch = if self.is_valid(condition, value) {
                then
            } else {
                otherwise
            };
            if let Some(branch) = branch
                && !self.eval(branch, value, rec)
            {
                return false;
            }
        }
        true
    }
}
