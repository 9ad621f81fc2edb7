//! Compiles Draft 2020-12 schemas into [`Node`]s once per process. Only the keywords the
//! protocol's schemas use are supported; anything else is a compile error rather than a
//! silently ignored rule.

use std::collections::HashMap;

use super::SchemaError;
use super::node::{Format, Node, NodeId, Pattern, types};
use crate::json::{Value, parse_state};

/// Keywords that only annotate.
const ANNOTATIONS: [&str; 7] = [
    "$schema",
    "$id",
    "title",
    "description",
    "$comment",
    "examples",
    "default",
];

pub(crate) struct Compiler {
    pub nodes: Vec<Node>,
    documents: Vec<(String, Value)>,
    by_id: HashMap<String, usize>,
    memo: HashMap<(usize, String), NodeId>,
}

impl Compiler {
    pub fn new() -> Self {
        Self {
            nodes: Vec::new(),
            documents: Vec::new(),
            by_id: HashMap::new(),
            memo: HashMap::new(),
        }
    }

    /// Adds one schema document; returns its `$id`.
    pub fn add_document(&mut self, name: &str, bytes: &[u8]) -> Result<String, SchemaError> {
        let value = parse_state(bytes)
            .map_err(|e| SchemaError::compile(name, format!("not strict JSON: {e}")))?;
        let id = value
            .get("$id")
            .and_then(Value::as_str)
            .ok_or_else(|| SchemaError::compile(name, "schema has no string $id"))?
            .to_owned();
        if self.by_id.contains_key(&id) {
            return Err(SchemaError::compile(name, format!("duplicate $id {id}")));
        }
        self.by_id.insert(id.clone(), self.documents.len());
        self.documents.push((id.clone(), value));
        Ok(id)
    }

    /// Compiles the root of the document with `$id == id`.
    pub fn compile_root(&mut self, id: &str) -> Result<NodeId, SchemaError> {
        let document = *self
            .by_id
            .get(id)
            .ok_or_else(|| SchemaError::compile(id, "unknown schema"))?;
        self.compile_at(document, String::new())
    }

    fn resolve_pointer(&self, document: usize, pointer: &str) -> Option<&Value> {
        self.documents[document].1.pointer(pointer)
    }

    fn compile_at(&mut self, document: usize, pointer: String) -> Result<NodeId, SchemaError> {
        if let Some(&id) = self.memo.get(&(document, pointer.clone())) {
            return Ok(id);
        }
        let location = format!("{}#{}", self.documents[document].0, pointer);
        let schema = self
            .resolve_pointer(document, &pointer)
            .cloned()
            .ok_or_else(|| SchemaError::compile(&location, "reference target does not exist"))?;
        let id = self.nodes.len();
        self.nodes.push(Node::default());
        self.memo.insert((document, pointer.clone()), id);
        let node = self.compile_node(document, &pointer, &location, &schema)?;
        self.nodes[id] = node;
        Ok(id)
    }

    fn child(
        &mut self,
        document: usize,
        pointer: &str,
        suffix: &str,
    ) -> Result<NodeId, SchemaError> {
        self.compile_at(document, format!("{pointer}/{suffix}"))
    }

    fn children(
        &mut self,
        document: usize,
        pointer: &str,
        keyword: &str,
        value: &Value,
        location: &str,
    ) -> Result<Vec<NodeId>, SchemaError> {
        let items = value
            .as_array()
            .filter(|items| !items.is_empty())
            .ok_or_else(|| {
                SchemaError::compile(location, format!("{keyword} must be a non-empty array"))
            })?;
        (0..items.len())
            .map(|index| self.child(document, pointer, &format!("{keyword}/{index}")))
            .collect()
    }

    fn resolve_reference(
        &mut self,
        document: usize,
        reference: &str,
        location: &str,
    ) -> Result<NodeId, SchemaError> {
        let (resource, fragment) = match reference.split_once('#') {
            Some((resource, fragment)) => (resource, fragment),
            None => (reference, ""),
        };
        let target = if resource.is_empty() {
            document
        } else {
            let base = &self.documents[document].0;
            let absolute = if resource.contains(':') {
                resource.to_owned()
            } else {
                match base.rfind('/') {
                    Some(slash) => format!("{}{}", &base[..=slash], resource),
                    None => resource.to_owned(),
                }
            };
            *self.by_id.get(&absolute).ok_or_else(|| {
                SchemaError::compile(location, format!("unresolvable $ref {reference}"))
            })?
        };
        if !fragment.is_empty() && !fragment.starts_with('/') {
            return Err(SchemaError::compile(
                location,
                format!("unsupported anchor $ref {reference}"),
            ));
        }
        self.compile_at(target, fragment.to_owned())
    }

    fn compile_node(
        &mut self,
        document: usize,
        pointer: &str,
        location: &str,
        schema: &Value,
    ) -> Result<Node, SchemaError> {
        let mut node = Node {
            location: location.into(),
            ..Node::default()
        };
        let object = match schema {
            Value::Bool(always) => {
                node.always = Some(*always);
                return Ok(node);
            }
            Value::Object(object) => object,
            _ => {
                return Err(SchemaError::compile(
                    location,
                    "a schema must be an object or a boolean",
                ));
            }
        };
        let bad = |what: &str| SchemaError::compile(location, what.to_owned());
        let count = |value: &Value, keyword: &str| {
            value
                .as_number()
                .and_then(|n| n.as_u64())
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| bad(&format!("{keyword} must be a non-negative integer")))
        };
        for (key, value) in object.iter() {
            let key = key
                .as_str()
                .ok_or_else(|| bad("keyword is not valid Unicode"))?;
            match key {
                _ if ANNOTATIONS.contains(&key) => {}
                "$defs" => {
                    if value.as_object().is_none() {
                        return Err(bad("$defs must be an object"));
                    }
                }
                "$ref" => {
                    let reference = value.as_str().ok_or_else(|| bad("$ref must be a string"))?;
                    node.reference = Some(self.resolve_reference(document, reference, location)?);
                }
                "type" => {
                    let mut set = 0u8;
                    let names: Vec<&Value> = match value {
                        Value::Array(items) => items.iter().collect(),
                        other => vec![other],
                    };
                    for name in names {
                        set |= name
                            .as_str()
                            .and_then(types::from_name)
                            .ok_or_else(|| bad("unknown type"))?;
                    }
                    node.types = Some(set);
                }
                "const" => node.constant = Some(value.clone()),
                "enum" => {
                    node.enumeration = Some(
                        value
                            .as_array()
                            .ok_or_else(|| bad("enum must be an array"))?
                            .to_vec(),
                    );
                }
                "properties" => {
                    let properties = value
                        .as_object()
                        .ok_or_else(|| bad("properties must be an object"))?;
                    let names: Vec<String> = properties
                        .iter()
                        .map(|(name, _)| name.to_lossy().into_owned())
                        .collect();
                    for name in names {
                        let escaped = name.replace('~', "~0").replace('/', "~1");
                        let id = self.child(document, pointer, &format!("properties/{escaped}"))?;
                        node.properties.push((name.into_boxed_str(), id));
                    }
                }
                "required" => {
                    let names = value
                        .as_array()
                        .ok_or_else(|| bad("required must be an array"))?;
                    for name in names {
                        node.required.push(
                            name.as_str()
                                .ok_or_else(|| bad("required holds a non-string"))?
                                .into(),
                        );
                    }
                }
                "additionalProperties" => {
                    node.additional_properties =
                        Some(self.child(document, pointer, "additionalProperties")?);
                }
                "propertyNames" => {
                    node.property_names = Some(self.child(document, pointer, "propertyNames")?)
                }
                "prefixItems" => {
                    node.prefix_items =
                        self.children(document, pointer, "prefixItems", value, location)?
                }
                "items" => node.items = Some(self.child(document, pointer, "items")?),
                "minItems" => node.min_items = Some(count(value, key)?),
                "maxItems" => node.max_items = Some(count(value, key)?),
                "uniqueItems" => {
                    node.unique_items = value
                        .as_bool()
                        .ok_or_else(|| bad("uniqueItems must be a boolean"))?
                }
                "minLength" => node.min_length = Some(count(value, key)?),
                "maxLength" => node.max_length = Some(count(value, key)?),
                "pattern" => {
                    let source = value
                        .as_str()
                        .ok_or_else(|| bad("pattern must be a string"))?;
                    let regex = regress::Regex::with_flags(source, "u")
                        .map_err(|e| bad(&format!("pattern {source:?} does not compile: {e}")))?;
                    node.pattern = Some(Pattern {
                        source: source.into(),
                        regex,
                        native: super::native_patterns::native(source),
                    });
                }
                "format" => {
                    node.format = Some(match value.as_str() {
                        Some("date-time") => Format::DateTime,
                        Some("uri") => Format::Uri,
                        _ => return Err(bad("unsupported format")),
                    });
                }
                "minimum" => {
                    node.minimum = Some(
                        value
                            .as_number()
                            .ok_or_else(|| bad("minimum must be a number"))?
                            .decimal(),
                    )
                }
                "maximum" => {
                    node.maximum = Some(
                        value
                            .as_number()
                            .ok_or_else(|| bad("maximum must be a number"))?
                            .decimal(),
                    )
                }
                "allOf" => {
                    node.all_of = self.children(document, pointer, "allOf", value, location)?
                }
                "anyOf" => {
                    node.any_of = self.children(document, pointer, "anyOf", value, location)?
                }
                "oneOf" => {
                    node.one_of = self.children(document, pointer, "oneOf", value, location)?
                }
                "not" => node.not = Some(self.child(document, pointer, "not")?),
                "if" => {
                    let condition = self.child(document, pointer, "if")?;
                    let then = if object.contains("then") {
                        Some(self.child(document, pointer, "then")?)
                    } else {
                        None
                    };
                    let otherwise = if object.contains("else") {
                        Some(self.child(document, pointer, "else")?)
                    } else {
                        None
                    };
                    node.if_then_else = Some((condition, then, otherwise));
                }
                // Without `if`, `then` and `else` have no effect (Draft 2020-12 §10.2.2).
                "then" | "else" => {}
                other => return Err(bad(&format!("unsupported keyword {other}"))),
            }
        }
        Ok(node)
    }
}
