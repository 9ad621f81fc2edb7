//! [`CoreError`]: every refusal of the [`Core`](super::Core) as one flat,
//! owned description, and [`ErrorFamily`]: the reference's 15 `ErrorCode` families
//! (`reference-python.md` §1.5) plus `store_failure`, with the one table mapping each §19 wire
//! code (and, where §19 has no code of its own, the reason) to its family. Bindings read both;
//! none re-spells a code, a reason or a family.

use core::fmt;

use missionweaveprotocol::{DescribeError, ErrorClass, Fields, Stage, WireCode};

macro_rules! families {
    ($($variant:ident => $name:literal, $class:literal;)*) => {
        /// The reference runtime's error families (`missionweaveprotocol.core.ErrorCode`), and
        /// this runtime's `store_failure`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorFamily {
            $(
                #[doc = concat!("`", $name, "` (`", $class, "`)")]
                $variant,
            )*
        }

        impl ErrorFamily {
            /// Every family: the reference's 15 in its order, then `store_failure`.
            pub const ALL: [ErrorFamily; 16] = [$(Self::$variant,)*];

            /// The snake_case value (`ErrorCode` member value).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $name,)*
                }
            }

            /// The exception class name (the reference's `InvalidCommand`, `NotFound`, …;
            /// `StoreError` for `store_failure`).
            pub const fn class_name(self) -> &'static str {
                match self {
                    $(Self::$variant => $class,)*
                }
            }

            /// The family named `text`, if any.
            pub fn parse(text: &str) -> Option<Self> {
                match text {
                    $($name => Some(Self::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

families! {
    InvalidCommand => "invalid_command", "InvalidCommand";
    NotFound => "not_found", "NotFound";
    AlreadyExists => "already_exists", "AlreadyExists";
    AuthorizationDenied => "authorization_denied", "AuthorizationDenied";
    ActionIdCollision => "action_id_collision", "ActionIdCollision";
    StaleSessionEpoch => "stale_session_epoch", "StaleSessionEpoch";
    StaleMembershipEpoch => "stale_membership_epoch", "StaleMembershipEpoch";
    StaleCoordinatorEpoch => "stale_coordinator_epoch", "StaleCoordinatorEpoch";
    StaleOwnershipEpoch => "stale_ownership_epoch", "StaleOwnershipEpoch";
    LeaseExpired => "lease_expired", "LeaseExpired";
    InvalidTransition => "invalid_transition", "InvalidTransition";
    RevisionConflict => "revision_conflict", "RevisionConflict";
    DependencyError => "dependency_error", "DependencyError";
    PolicyViolation => "policy_violation", "PolicyViolation";
    BudgetExceeded => "budget_exceeded", "BudgetExceeded";
    StoreFailure => "store_failure", "StoreError";
}

/// The reason slugs of `INTERNAL_ERROR` refusals that are the store's own failures (its
/// [`FAILURE_REASONS`](crate::store::StoreError::FAILURE_REASONS), and an aggregate the engine
/// cannot read back): the `store_failure` family.
pub const STORE_FAILURE_REASONS: [&str; 6] = [
    crate::store::StoreError::FAILURE_REASONS[0],
    crate::store::StoreError::FAILURE_REASONS[1],
    crate::store::StoreError::FAILURE_REASONS[2],
    crate::store::StoreError::FAILURE_REASONS[3],
    crate::store::StoreError::FAILURE_REASONS[4],
    "corrupt_aggregate",
];

impl ErrorFamily {
    /// The family of a refusal with §19 `code` and reason slug `reason`.
    ///
    /// By wire code, with three refinements by reason where §19 has no code of its own for a
    /// family a caller must tell apart: dependency refusals (`INVALID_COMMAND` with
    /// `dependency_cycle`, `unknown_dependency`, `dependency_not_ready`, §10.4) are
    /// `dependency_error`; a WorkItem or proposal ID already in use
    /// (`INVALID_STATE_TRANSITION`, `already_exists`) is `already_exists`; and the store's own
    /// failures (`INTERNAL_ERROR` with a [`STORE_FAILURE_REASONS`] reason: damaged data at
    /// rest, a refused integrity key, a failing backend, a closed store) are `store_failure`, so that a caller retrying
    /// on conflicts does not retry on corruption (their `retryable` says whether an unchanged
    /// retry can succeed: a failing backend, yes; corruption or a closed store, no).
    ///
    /// Any other `INTERNAL_ERROR` is `revision_conflict`: in normal operation that is
    /// `contended` (concurrent Commands kept changing the state, nothing applied, an unchanged
    /// retry may succeed) or `already_applied` (a concurrent commit applied the same Command
    /// first); the rare others (an Event that cannot be signed) keep their reason.
    pub fn of(code: WireCode, reason: &str) -> Self {
        match (code, reason) {
            (
                WireCode::InvalidCommand,
                "dependency_cycle" | "unknown_dependency" | "dependency_not_ready",
            ) => Self::DependencyError,
            (WireCode::InvalidStateTransition, "already_exists") => Self::AlreadyExists,
            (WireCode::InternalError, reason) if STORE_FAILURE_REASONS.contains(&reason) => {
                Self::StoreFailure
            }
            _ => Self::of_code(code),
        }
    }

    /// The family of §19 `code` alone (the table bindings show; [`of`](Self::of) refines it:
    /// `already_exists`, `dependency_error` and `store_failure` are reached by reason only).
    pub const fn of_code(code: WireCode) -> Self {
        match code {
            WireCode::UnsupportedVersion
            | WireCode::SchemaValidationFailed
            | WireCode::InvalidCommand
            | WireCode::UnknownCriticalExtension
            | WireCode::WorkContractIncomplete
            | WireCode::ProtocolViolation => Self::InvalidCommand,
            WireCode::GroupNotFound | WireCode::CursorTooOld => Self::NotFound,
            WireCode::AuthRequired
            | WireCode::AuthInvalidSignature
            | WireCode::AuthForbidden
            | WireCode::MembershipRequired => Self::AuthorizationDenied,
            WireCode::AuthStaleSession => Self::StaleSessionEpoch,
            WireCode::AuthStaleCoordinator => Self::StaleCoordinatorEpoch,
            WireCode::MembershipStale => Self::StaleMembershipEpoch,
            WireCode::WorkStaleOwnership => Self::StaleOwnershipEpoch,
            WireCode::WorkLeaseExpired | WireCode::WorkOfferExpired => Self::LeaseExpired,
            WireCode::InvalidStateTransition | WireCode::WorkAlreadyOwned => {
                Self::InvalidTransition
            }
            WireCode::RevisionConflict | WireCode::InternalError => Self::RevisionConflict,
            WireCode::ActionIdCollision => Self::ActionIdCollision,
            WireCode::ApprovalRequired | WireCode::RateLimited | WireCode::Backpressure => {
                Self::PolicyViolation
            }
            WireCode::BudgetExceeded => Self::BudgetExceeded,
        }
    }
}

/// The table bindings show: every §19 wire code with its family ([`ErrorFamily::of_code`]).
pub fn wire_code_families() -> Vec<(&'static str, &'static str)> {
    WireCode::ALL
        .iter()
        .map(|c| (c.as_str(), ErrorFamily::of_code(*c).as_str()))
        .collect()
}

/// A refusal of the core, described once: §19 wire code, reference family, reason slug, the
/// wire-safe message, the protected detail, structured fields, and whether an unchanged retry
/// can succeed. Nothing was applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreError {
    /// The §19 wire code.
    pub wire_code: WireCode,
    /// The reference family ([`ErrorFamily::of`]).
    pub family: ErrorFamily,
    /// The stable reason slug.
    pub reason: String,
    /// The message a wire response may carry (verification failures: the fixed message, §6.4).
    pub message: String,
    /// The protected diagnostic, for the audit record only.
    pub detail: String,
    /// Structured fields (`expected_revision`, `group_id`, …).
    pub fields: Fields,
    /// Whether an unchanged retry can succeed (§19).
    pub retryable: bool,
    /// The error class of the underlying error.
    pub class: ErrorClass,
    /// The verification stage, for verification failures.
    pub stage: Option<Stage>,
}

impl CoreError {
    /// The description of any core error.
    pub fn describe(error: &dyn DescribeError) -> Self {
        let reason = error.reason().to_owned();
        Self {
            wire_code: error.wire_code(),
            family: ErrorFamily::of(error.wire_code(), &reason),
            reason,
            message: error.to_string(),
            detail: error.detail(),
            fields: error.fields(),
            retryable: error.retryable(),
            class: error.class(),
            stage: error.stage(),
        }
    }

    /// An `INVALID_COMMAND` refusal of a call argument (replay bounds, query shape).
    pub fn invalid(reason: &str, message: impl Into<String>, fields: Fields) -> Self {
        let message = message.into();
        Self {
            wire_code: WireCode::InvalidCommand,
            family: ErrorFamily::of(WireCode::InvalidCommand, reason),
            reason: reason.to_owned(),
            detail: message.clone(),
            message,
            fields,
            retryable: false,
            class: ErrorClass::Argument,
            stage: None,
        }
    }

    /// No such entity (`GROUP_NOT_FOUND`, §17.2: "absent or intentionally undisclosed"; §19
    /// has no other not-found code).
    pub fn not_found(kind: &str, entity_id: &str) -> Self {
        let message = format!("{kind} {entity_id} not found");
        Self {
            wire_code: WireCode::GroupNotFound,
            family: ErrorFamily::NotFound,
            reason: "not_found".to_owned(),
            detail: message.clone(),
            message,
            fields: Fields::new()
                .text("query_kind", kind)
                .text("entity_id", entity_id),
            retryable: false,
            class: ErrorClass::Policy,
            stage: None,
        }
    }
}

impl fmt::Display for CoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CoreError {}

impl DescribeError for CoreError {
    fn class(&self) -> ErrorClass {
        self.class
    }
    fn wire_code(&self) -> WireCode {
        self.wire_code
    }
    fn reason(&self) -> &str {
        &self.reason
    }
    fn stage(&self) -> Option<Stage> {
        self.stage
    }
    fn detail(&self) -> String {
        self.detail.clone()
    }
    fn fields(&self) -> Fields {
        self.fields.clone()
    }
    fn retryable(&self) -> bool {
        self.retryable
    }
}

impl From<crate::error::EngineError> for CoreError {
    fn from(e: crate::error::EngineError) -> Self {
        Self::describe(&e)
    }
}

impl From<crate::ingress::IngressError> for CoreError {
    fn from(e: crate::ingress::IngressError) -> Self {
        Self::describe(&e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_wire_code_has_a_family_and_names_round_trip() {
        for code in WireCode::ALL {
            let family = ErrorFamily::of_code(code);
            assert_eq!(ErrorFamily::parse(family.as_str()), Some(family));
        }
        for family in ErrorFamily::ALL {
            if family == ErrorFamily::StoreFailure {
                // Not a reference family: its class is named as the error it is.
                assert_eq!(family.class_name(), "StoreError");
                continue;
            }
            // The class name is the CamelCase of the value (the reference's naming).
            let camel: String = family
                .as_str()
                .split('_')
                .map(|w| {
                    let mut c = w.chars();
                    c.next()
                        .map(|h| h.to_ascii_uppercase().to_string() + c.as_str())
                        .unwrap_or_default()
                })
                .collect();
            assert_eq!(camel, family.class_name());
        }
        assert_eq!(ErrorFamily::parse("nope"), None);
    }

    #[test]
    fn reasons_refine_dependency_and_existence() {
        assert_eq!(
            ErrorFamily::of(WireCode::InvalidCommand, "dependency_cycle"),
            ErrorFamily::DependencyError
        );
        assert_eq!(
            ErrorFamily::of(WireCode::InvalidCommand, "missing_member"),
            ErrorFamily::InvalidCommand
        );
        assert_eq!(
            ErrorFamily::of(WireCode::InvalidStateTransition, "already_exists"),
            ErrorFamily::AlreadyExists
        );
        assert_eq!(
            ErrorFamily::of(WireCode::InvalidStateTransition, "invalid_transition"),
            ErrorFamily::InvalidTransition
        );
        // The store's own failures are their own family, whatever layer reports them;
        // conflicts (`contended`, `already_applied`) stay revision conflicts.
        for reason in STORE_FAILURE_REASONS {
            assert_eq!(
                ErrorFamily::of(WireCode::InternalError, reason),
                ErrorFamily::StoreFailure,
                "{reason}"
            );
            // Only as INTERNAL_ERROR.
            assert_eq!(
                ErrorFamily::of(WireCode::ProtocolViolation, reason),
                ErrorFamily::InvalidCommand
            );
        }
        for reason in ["contended", "already_applied", "event_unsignable"] {
            assert_eq!(
                ErrorFamily::of(WireCode::InternalError, reason),
                ErrorFamily::RevisionConflict,
                "{reason}"
            );
        }
        assert_eq!(
            ErrorFamily::of(WireCode::RevisionConflict, "revision_conflict"),
            ErrorFamily::RevisionConflict
        );
        // Only INVALID_COMMAND reasons become dependency errors.
        assert_eq!(
            ErrorFamily::of(WireCode::AuthForbidden, "dependency_cycle"),
            ErrorFamily::AuthorizationDenied
        );
    }
}
