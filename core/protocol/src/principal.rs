//! Principals (`common.schema.json#/$defs/actor`): an Agent, a human or a service, by identifier.

use core::fmt;

use crate::json::{Object, Value, View};

/// The type of a Principal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PrincipalType {
    Agent,
    Human,
    Service,
}

impl PrincipalType {
    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Agent => "agent",
            Self::Human => "human",
            Self::Service => "service",
        }
    }

    /// Parses a wire name.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "agent" => Some(Self::Agent),
            "human" => Some(Self::Human),
            "service" => Some(Self::Service),
            _ => None,
        }
    }
}

/// A Principal: type and exact identifier (compared byte for byte, §2).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Principal {
    pub kind: PrincipalType,
    pub id: String,
}

impl Principal {
    /// A Principal of `kind` with `id`.
    pub fn new(kind: PrincipalType, id: impl Into<String>) -> Self {
        Self {
            kind,
            id: id.into(),
        }
    }

    /// Reads `{type, id}` with exactly those two members.
    pub fn from_value(value: &Value) -> Option<Self> {
        Self::from_view(value.view())
    }

    /// [`Self::from_value`] on a [`View`].
    pub fn from_view(value: View<'_>) -> Option<Self> {
        let object = value.as_object()?;
        if object.len() != 2 {
            return None;
        }
        let kind = PrincipalType::parse(object.get("type")?.as_str()?)?;
        let id = object.get("id")?.as_str()?;
        Some(Self::new(kind, id))
    }

    /// The `{type, id}` object.
    pub fn to_value(&self) -> Value {
        let mut object = Object::new();
        object.insert("type", Value::string(self.kind.as_str()));
        object.insert("id", Value::string(self.id.clone()));
        Value::Object(object)
    }
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.kind.as_str(), self.id)
    }
}
