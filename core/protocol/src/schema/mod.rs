//! The schema catalog: the protocol's Draft 2020-12 schemas compiled once per process, with the
//! protocol's own `date-time` and `uri` format assertions (§2), validating lossless values.

mod compile;
mod native_patterns;
mod node;
mod validate;

use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

use crate::json::{Value, View, parse_state};
use compile::Compiler;
use node::{Node, NodeId};
use validate::Validator;

/// A schema that could not be compiled (a bundle problem, never an instance problem).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    pub location: String,
    pub message: String,
}

impl SchemaError {
    pub(crate) fn compile(location: &str, message: impl Into<String>) -> Self {
        Self {
            location: location.to_owned(),
            message: message.into(),
        }
    }
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "schema {}: {}", self.location, self.message)
    }
}

impl std::error::Error for SchemaError {}

/// Why an instance does not conform: the first failing keyword.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaIssue {
    /// JSON Pointer to the failing value in the instance.
    pub instance_path: String,
    /// `$id#pointer` of the failing schema.
    pub schema_location: String,
    /// The failing keyword.
    pub keyword: &'static str,
    pub message: String,
}

impl fmt::Display for SchemaIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.instance_path.is_empty() {
            "/"
        } else {
            &self.instance_path
        };
        write!(
            f,
            "{} at {path} ({} in {})",
            self.message, self.keyword, self.schema_location
        )
    }
}

impl std::error::Error for SchemaIssue {}

/// Compiled schemas addressable by `$id`, by file name (`command.schema.json`) and by short
/// name (`command`).
#[derive(Debug)]
pub struct SchemaCatalog {
    nodes: Vec<Node>,
    roots: HashMap<String, NodeId>,
    names: Vec<String>,
}

/// Where the protocol's schemas live: `https://missionweaveprotocol.dev/schemas/0.1/<file>`.
pub const SCHEMA_ID_PREFIX: &str = "https://missionweaveprotocol.dev/schemas/0.1/";

impl SchemaCatalog {
    /// Compiles schema documents given as `(file path, bytes)`. Every document's root is
    /// compiled, so a broken schema fails here rather than at first use.
    pub fn compile<'a>(
        files: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    ) -> Result<Self, SchemaError> {
        let mut compiler = Compiler::new();
        let mut ids = Vec::new();
        for (path, bytes) in files {
            let id = compiler.add_document(path, bytes)?;
            let file = path.rsplit('/').next().unwrap_or(path).to_owned();
            ids.push((id, file));
        }
        let mut roots = HashMap::new();
        let mut names = Vec::new();
        for (id, file) in ids {
            let root = compiler.compile_root(&id)?;
            if let Some(short) = file.strip_suffix(".schema.json") {
                roots.insert(short.to_owned(), root);
                names.push(short.to_owned());
            }
            roots.insert(file, root);
            roots.insert(id, root);
        }
        names.sort();
        Ok(Self {
            nodes: compiler.nodes,
            roots,
            names,
        })
    }

    /// The protocol's 22 schemas from the embedded bundle, compiled once per process.
    pub fn embedded() -> &'static SchemaCatalog {
        static CATALOG: OnceLock<SchemaCatalog> = OnceLock::new();
        CATALOG.get_or_init(|| {
            // The embedded schemas are pinned and checked by the build; the conformance tests
            // prove they compile, so a failure here cannot happen with a built crate.
            SchemaCatalog::compile(crate::bundle::schema_files())
                .unwrap_or_else(|_| SchemaCatalog::empty())
        })
    }

    /// Short names of the schemas (`agent-card`, `command`, …), sorted.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Whether a schema is known under `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.roots.contains_key(name)
    }

    fn root(&self, name: &str) -> Result<NodeId, SchemaIssue> {
        self.roots.get(name).copied().ok_or_else(|| SchemaIssue {
            instance_path: String::new(),
            schema_location: name.to_owned(),
            keyword: "$id",
            message: format!("unknown schema {name:?}"),
        })
    }

    /// Validates a value against the schema named `name`.
    pub fn validate(&self, name: &str, value: &Value) -> Result<(), SchemaIssue> {
        self.validate_view(name, value.view())
    }

    /// Validates a [`View`] (a parsed [`Document`](crate::json::Document)'s node, say) against
    /// the schema named `name`.
    pub fn validate_view(&self, name: &str, value: View<'_>) -> Result<(), SchemaIssue> {
        let root = self.root(name)?;
        Validator::new(&self.nodes).validate(root, value)
    }

    /// Whether a value is valid against `name` (false for an unknown name).
    pub fn is_valid(&self, name: &str, value: &Value) -> bool {
        self.is_valid_view(name, value.view())
    }

    /// Whether a [`View`] is valid against `name` (false for an unknown name).
    pub fn is_valid_view(&self, name: &str, value: View<'_>) -> bool {
        self.root(name)
            .is_ok_and(|root| Validator::new(&self.nodes).is_valid(root, value))
    }

    /// Strictly parses `bytes` and validates them against `name`.
    pub fn validate_bytes(&self, name: &str, bytes: &[u8]) -> Result<Value, SchemaValidationError> {
        let value = parse_state(bytes).map_err(SchemaValidationError::Parse)?;
        self.validate(name, &value)
            .map_err(SchemaValidationError::Schema)?;
        Ok(value)
    }
}

/// A failure of [`SchemaCatalog::validate_bytes`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaValidationError {
    Parse(crate::json::ParseError),
    Schema(SchemaIssue),
}

impl fmt::Display for SchemaValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Parse(error) => write!(f, "{error}"),
            Self::Schema(issue) => write!(f, "{issue}"),
        }
    }
}

impl std::error::Error for SchemaValidationError {}

impl SchemaCatalog {
    /// A catalog that knows no schema, so every validation fails closed. Used only if the
    /// embedded schemas failed to compile, which the pinned build and every test run
    /// (`tests/structural_vectors.rs` requires 22 names) rule out; the process never panics.
    #[cold]
    fn empty() -> Self {
        Self {
            nodes: Vec::new(),
            roots: HashMap::new(),
            names: Vec::new(),
        }
    }
}
