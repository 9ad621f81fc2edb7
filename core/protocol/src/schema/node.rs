//! Compiled schema nodes: one per schema location, `$ref`s resolved to node indices.

use crate::json::{Decimal, Value};

pub(crate) type NodeId = usize;

/// JSON Schema `type` keyword as a bit set.
pub(crate) mod types {
    pub const NULL: u8 = 1;
    pub const BOOLEAN: u8 = 2;
    pub const OBJECT: u8 = 4;
    pub const ARRAY: u8 = 8;
    pub const NUMBER: u8 = 16;
    pub const STRING: u8 = 32;
    pub const INTEGER: u8 = 64;

    pub fn from_name(name: &str) -> Option<u8> {
        Some(match name {
            "null" => NULL,
            "boolean" => BOOLEAN,
            "object" => OBJECT,
            "array" => ARRAY,
            "number" => NUMBER,
            "string" => STRING,
            "integer" => INTEGER,
            _ => return None,
        })
    }
}

/// The `format` values the protocol asserts (§2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    DateTime,
    Uri,
}

/// A compiled `pattern` (ECMA-262 regular expression, unanchored search).
#[derive(Debug)]
pub(crate) struct Pattern {
    pub source: Box<str>,
    pub regex: regress::Regex,
    /// The same verdict computed natively, for the frequent patterns (`native_patterns`).
    pub native: Option<super::native_patterns::Matcher>,
}

impl Pattern {
    /// Whether the pattern is found in `text`.
    pub fn is_match(&self, text: &str) -> bool {
        match self.native {
            Some(matcher) => matcher(text),
            None => self.regex.find(text).is_some(),
        }
    }
}

/// One compiled schema. Boolean schemas are `always: Some(bool)`.
#[derive(Debug, Default)]
pub(crate) struct Node {
    pub always: Option<bool>,
    pub location: Box<str>,
    pub reference: Option<NodeId>,
    pub types: Option<u8>,
    pub constant: Option<Value>,
    pub enumeration: Option<Vec<Value>>,
    pub properties: Vec<(Box<str>, NodeId)>,
    pub required: Vec<Box<str>>,
    pub additional_properties: Option<NodeId>,
    pub property_names: Option<NodeId>,
    pub prefix_items: Vec<NodeId>,
    pub items: Option<NodeId>,
    pub min_items: Option<usize>,
    pub max_items: Option<usize>,
    pub unique_items: bool,
    pub min_length: Option<usize>,
    pub max_length: Option<usize>,
    pub pattern: Option<Pattern>,
    pub format: Option<Format>,
    pub minimum: Option<Decimal>,
    pub maximum: Option<Decimal>,
    pub all_of: Vec<NodeId>,
    pub any_of: Vec<NodeId>,
    pub one_of: Vec<NodeId>,
    pub not: Option<NodeId>,
    pub if_then_else: Option<(NodeId, Option<NodeId>, Option<NodeId>)>,
}
