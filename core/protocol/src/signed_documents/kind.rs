//! The nine Signed Document Verification Profiles of §6.4.

use core::fmt;

use crate::json::View;
use crate::{Principal, PrincipalType};

/// How the expected signer is found in a document (§6.4 profile table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpectedSignerRule {
    /// Any `service` Principal binding (Agent Cards).
    ServicePrincipal,
    /// The exact `{type, id}` object at this JSON Pointer.
    PrincipalObject(&'static str),
    /// The Agent whose ID is the string at this JSON Pointer.
    AgentId(&'static str),
}

impl ExpectedSignerRule {
    /// The JSON Pointer the rule reads the signer from (`None`: any service Principal).
    pub const fn pointer(self) -> Option<&'static str> {
        match self {
            Self::ServicePrincipal => None,
            Self::PrincipalObject(pointer) | Self::AgentId(pointer) => Some(pointer),
        }
    }

    /// The Principal a document names as its signer under this rule: `Ok(None)` for a rule any
    /// service Principal satisfies; `Err(pointer)` when the member there is not what the rule
    /// reads (a `{type, id}` object, or an Agent ID string). The verifier's stage 3 and the
    /// bindings' document builders both resolve the signer here.
    pub fn resolve(self, document: View<'_>) -> Result<Option<Principal>, &'static str> {
        match self {
            Self::ServicePrincipal => Ok(None),
            Self::PrincipalObject(pointer) => document
                .pointer(pointer)
                .and_then(Principal::from_view)
                .map(Some)
                .ok_or(pointer),
            Self::AgentId(pointer) => document
                .pointer(pointer)
                .and_then(|value| value.as_str())
                .map(|id| Some(Principal::new(PrincipalType::Agent, id)))
                .ok_or(pointer),
        }
    }
}

/// The nine signature-required document kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SignedDocumentKind {
    AgentCard,
    Approval,
    Artifact,
    Command,
    ContextPackage,
    Event,
    Evidence,
    ExtensionProfile,
    GroupSnapshot,
}

impl SignedDocumentKind {
    /// All kinds in the manifest's profile order.
    pub const ALL: [SignedDocumentKind; 9] = [
        Self::AgentCard,
        Self::Approval,
        Self::Artifact,
        Self::Command,
        Self::ContextPackage,
        Self::Event,
        Self::Evidence,
        Self::ExtensionProfile,
        Self::GroupSnapshot,
    ];

    /// The profile ID (`documentKind`), e.g. `context-package`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::AgentCard => "agent-card",
            Self::Approval => "approval",
            Self::Artifact => "artifact",
            Self::Command => "command",
            Self::ContextPackage => "context-package",
            Self::Event => "event",
            Self::Evidence => "evidence",
            Self::ExtensionProfile => "extension-profile",
            Self::GroupSnapshot => "group-snapshot",
        }
    }

    /// Parses a profile ID.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == text)
    }

    /// The schema file that governs this kind.
    pub const fn schema_file(self) -> &'static str {
        match self {
            Self::AgentCard => "agent-card.schema.json",
            Self::Approval => "approval.schema.json",
            Self::Artifact => "artifact.schema.json",
            Self::Command => "command.schema.json",
            Self::ContextPackage => "context-package.schema.json",
            Self::Event => "event.schema.json",
            Self::Evidence => "evidence.schema.json",
            Self::ExtensionProfile => "extension-profile.schema.json",
            Self::GroupSnapshot => "group-snapshot.schema.json",
        }
    }

    /// JSON Pointer of the protected signed time.
    pub const fn protected_time_pointer(self) -> &'static str {
        match self {
            Self::AgentCard | Self::Command => "/issuedAt",
            Self::Approval | Self::Event => "/occurredAt",
            Self::Artifact | Self::Evidence | Self::GroupSnapshot => "/createdAt",
            Self::ContextPackage => "/generatedAt",
            Self::ExtensionProfile => "/approvedAt",
        }
    }

    /// The expected-signer rule.
    pub const fn expected_signer_rule(self) -> ExpectedSignerRule {
        match self {
            Self::AgentCard => ExpectedSignerRule::ServicePrincipal,
            Self::Approval => ExpectedSignerRule::PrincipalObject("/approver"),
            Self::Artifact => ExpectedSignerRule::AgentId("/producer/agentId"),
            Self::Command => ExpectedSignerRule::PrincipalObject("/actor"),
            Self::ContextPackage | Self::Evidence => {
                ExpectedSignerRule::PrincipalObject("/generatedBy")
            }
            Self::Event => ExpectedSignerRule::PrincipalObject("/acceptedBy"),
            Self::ExtensionProfile => ExpectedSignerRule::PrincipalObject("/approvedBy"),
            Self::GroupSnapshot => ExpectedSignerRule::PrincipalObject("/createdBy"),
        }
    }
}

impl fmt::Display for SignedDocumentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
