//! Offline-execution refusals, each with its §19 wire code.

use missionweaveprotocol::{DescribeError, ErrorClass, Fields, WireCode};

use crate::resources::Dimension;
use crate::unix_millis::UnixMillis;

/// Why buffering, rebasing or reconciling offline progress was refused
/// (reference `OfflinePolicyError`). Nothing was buffered, signed, charged or applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OfflineError {
    /// A malformed argument or limit (the name says which).
    InvalidArgument(&'static str),
    /// The kind is not reversible progress (§11.5: no new, irreversible or externally visible
    /// actions offline).
    NotReversible {
        /// The refused kind.
        kind: String,
    },
    /// The Command addresses another Agent, Group, WorkItem, lease or Conversation than the
    /// assignment or its binding (`member` names which).
    OutsideAssignment {
        /// The mismatching member.
        member: &'static str,
    },
    /// Buffered (or offered for buffering) after the grace deadline, or before the disconnect.
    OutsideGrace {
        /// The instant checked.
        at: UnixMillis,
        /// The grace deadline.
        grace_deadline: UnixMillis,
    },
    /// The Execution Lease the progress ran under had lapsed or was closed first.
    LeaseClosed {
        /// Why (`expired`, `closed`, `unknown`).
        reason: &'static str,
    },
    /// The WorkItem is owned by another Agent or under another Ownership Epoch (§11.5
    /// "for a changed owner").
    StaleOwnership {
        /// The epoch the binding carries.
        claimed: u64,
        /// The current epoch (0: no owner).
        current: u64,
    },
    /// The work is not active, owned and leased by this Agent (nothing may start offline).
    NotActive,
    /// More buffered actions than the bound allows.
    TooManyActions {
        /// The bound.
        max_actions: u32,
    },
    /// The cumulative offline usage would exceed the bound in this dimension.
    UsageExceeded(Dimension),
    /// External side effects or secrets are never buffered (§11.5, §12).
    ExternalEffect {
        /// What was refused (`externalActions`, or the payload member carrying a secret).
        detail: String,
    },
    /// The binding extension is absent, not critical, of another version, or malformed.
    InvalidBinding {
        /// What is wrong.
        detail: String,
    },
    /// The same Action ID was buffered with other content.
    ActionIdCollision {
        /// The Action ID.
        action_id: String,
    },
    /// Signing failed (the signer or the Command's schema).
    Signing {
        /// The signing error's text.
        detail: String,
    },
    /// The outbox failed.
    Outbox {
        /// The outbox error's text.
        detail: String,
    },
}

impl OfflineError {
    /// The §19 wire code.
    pub const fn code(&self) -> WireCode {
        match self {
            Self::InvalidArgument(_)
            | Self::NotReversible { .. }
            | Self::OutsideAssignment { .. }
            | Self::ExternalEffect { .. }
            | Self::InvalidBinding { .. } => WireCode::InvalidCommand,
            Self::OutsideGrace { .. } | Self::LeaseClosed { .. } => WireCode::WorkLeaseExpired,
            Self::StaleOwnership { .. } => WireCode::WorkStaleOwnership,
            Self::NotActive => WireCode::InvalidStateTransition,
            Self::TooManyActions { .. } => WireCode::RateLimited,
            Self::UsageExceeded(_) => WireCode::BudgetExceeded,
            Self::ActionIdCollision { .. } => WireCode::ActionIdCollision,
            Self::Signing { .. } => WireCode::SchemaValidationFailed,
            Self::Outbox { .. } => WireCode::InternalError,
        }
    }

    /// A stable snake_case name of the refusal.
    pub const fn kind(&self) -> &'static str {
        match self {
            Self::InvalidArgument(_) => "invalid_argument",
            Self::NotReversible { .. } => "not_reversible",
            Self::OutsideAssignment { .. } => "outside_assignment",
            Self::OutsideGrace { .. } => "outside_grace",
            Self::LeaseClosed { .. } => "lease_closed",
            Self::StaleOwnership { .. } => "stale_ownership",
            Self::NotActive => "not_active",
            Self::TooManyActions { .. } => "too_many_actions",
            Self::UsageExceeded(_) => "usage_exceeded",
            Self::ExternalEffect { .. } => "external_effect",
            Self::InvalidBinding { .. } => "invalid_binding",
            Self::ActionIdCollision { .. } => "action_id_collision",
            Self::Signing { .. } => "signing",
            Self::Outbox { .. } => "outbox",
        }
    }

    pub fn binding(detail: impl Into<String>) -> Self {
        Self::InvalidBinding {
            detail: detail.into(),
        }
    }
}

impl core::fmt::Display for OfflineError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::InvalidArgument(name) => write!(f, "invalid argument: {name}"),
            Self::NotReversible { kind } => write!(
                f,
                "{kind} is not reversible progress: only message.post and work.checkpoint may be buffered offline"
            ),
            Self::OutsideAssignment { member } => {
                write!(f, "{member} is outside the offline assignment")
            }
            Self::OutsideGrace { at, grace_deadline } => write!(
                f,
                "{} is outside the offline window ending at {}",
                at.0, grace_deadline.0
            ),
            Self::LeaseClosed { reason } => {
                write!(f, "the historical Execution Lease is not usable: {reason}")
            }
            Self::StaleOwnership { claimed, current } => write!(
                f,
                "ownership epoch {claimed} is stale: the WorkItem is at {current} or owned by another Agent"
            ),
            Self::NotActive => write!(
                f,
                "offline progress needs active, owned work under a live Execution Lease"
            ),
            Self::TooManyActions { max_actions } => {
                write!(f, "more than {max_actions} offline actions")
            }
            Self::UsageExceeded(d) => {
                write!(f, "offline usage exceeds the bound in {}", d.as_str())
            }
            Self::ExternalEffect { detail } => {
                write!(f, "external effects are never buffered offline: {detail}")
            }
            Self::InvalidBinding { detail } => write!(f, "offline binding: {detail}"),
            Self::ActionIdCollision { action_id } => {
                write!(f, "action {action_id} was buffered with other content")
            }
            Self::Signing { detail } => write!(f, "signing: {detail}"),
            Self::Outbox { detail } => write!(f, "outbox: {detail}"),
        }
    }
}

impl std::error::Error for OfflineError {}

/// The one description every binding converts (`ErrorClass::Offline`: Python
/// `OfflinePolicyError`, a `ValueError` as the reference's; JavaScript `OfflinePolicyError`).
/// The reason is [`OfflineError::kind`].
impl DescribeError for OfflineError {
    fn class(&self) -> ErrorClass {
        ErrorClass::Offline
    }

    fn wire_code(&self) -> WireCode {
        self.code()
    }

    fn reason(&self) -> &str {
        self.kind()
    }

    fn fields(&self) -> Fields {
        let int = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        match self {
            Self::InvalidArgument(name) => Fields::new().text("argument", *name),
            Self::NotReversible { kind } => Fields::new().text("command_kind", kind),
            Self::OutsideAssignment { member } => Fields::new().text("member", *member),
            Self::StaleOwnership { claimed, current } => Fields::new()
                .integer("claimed", int(*claimed))
                .integer("current", int(*current)),
            Self::TooManyActions { max_actions } => {
                Fields::new().integer("max_actions", i64::from(*max_actions))
            }
            Self::UsageExceeded(d) => Fields::new().text("dimension", d.as_str()),
            Self::ActionIdCollision { action_id } => Fields::new().text("action_id", action_id),
            _ => Fields::new(),
        }
    }
}

#[cfg(test)]
mod describe_tests {
    use missionweaveprotocol::{DescribeError, ErrorClass, FieldValue, WireCode};

    use super::OfflineError;

    #[test]
    fn every_refusal_is_an_offline_policy_error() {
        let error = OfflineError::TooManyActions { max_actions: 3 };
        let described: &dyn DescribeError = &error;
        assert_eq!(described.class(), ErrorClass::Offline);
        assert_eq!(ErrorClass::Offline.python_name(), "OfflinePolicyError");
        assert_eq!(described.wire_code(), WireCode::RateLimited);
        assert!(described.retryable());
        assert_eq!(described.reason(), "too_many_actions");
        assert_eq!(
            described.fields().get("max_actions"),
            Some(&FieldValue::Integer(3))
        );
        let error = OfflineError::NotActive;
        assert_eq!(DescribeError::class(&error), ErrorClass::Offline);
        assert!(!DescribeError::retryable(&error));
        assert!(DescribeError::fields(&error).is_empty());
    }
}
