//! Why the engine refused a Command: each refusal has its §19 wire code, a stable reason slug,
//! a readable message and structured fields. A refused Command appends nothing.

use core::fmt;

use missionweaveprotocol::{DescribeError, ErrorClass, Fields, WireCode};

use missionweaveprotocol::VerificationError;

use crate::events::EventBuildError;
use crate::store::error::{int, revision_conflict_fields};
use crate::store::{AggregateKey, StoreError};
use crate::work::error::WorkError;
use missionweaveprotocol_kernel::budget::BudgetError;
use missionweaveprotocol_kernel::delegation::DelegationViolationKind;

/// The class engine refusals report until `ErrorClass` has an engine family of its own (the
/// Python reference's `MissionWeaveProtocolError` family): the policy family that exists today.
/// Store and Event-building errors keep their own classes.
const ENGINE_CLASS: ErrorClass = ErrorClass::Policy;

/// A refusal of `perform`, `query` or `replay`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineError {
    /// The Command is well formed but semantically invalid (§15.1): `INVALID_COMMAND`.
    InvalidCommand {
        /// Stable reason slug (`missing_member`, `unsupported_kind`, …).
        reason: &'static str,
        /// What is wrong.
        detail: String,
    },
    /// A document the Command would create does not conform to its schema (§2):
    /// `SCHEMA_VALIDATION_FAILED`.
    SchemaInvalid {
        /// The schema (`mission`, `group`).
        schema: &'static str,
        /// The validator's message, with the instance path.
        detail: String,
    },
    /// The payload carries a member its kind does not define (§21: core objects set
    /// `additionalProperties: false`; extensions go in `extensions`, §18):
    /// `SCHEMA_VALIDATION_FAILED`, reason `unknown_payload_member` (`crate::input::members`).
    UnknownPayloadMember {
        /// The Command kind.
        kind: String,
        /// The undefined member's name.
        member: String,
        /// Its JSON Pointer in the Command (`/payload/…`).
        pointer: String,
    },
    /// The aggregate's state forbids the transition (§7.1 table, digest 2.1):
    /// `INVALID_STATE_TRANSITION`.
    InvalidStateTransition {
        /// The aggregate kind.
        aggregate: &'static str,
        /// The aggregate ID.
        id: String,
        /// Its current state (`none` when absent).
        state: String,
        /// The Command kind.
        command: String,
    },
    /// `expectedRevision` (or a bound Mission revision) differs from the current one (§15.3):
    /// `REVISION_CONFLICT` with `expectedRevision` and `currentRevision`.
    RevisionConflict {
        /// The aggregate.
        key: AggregateKey,
        /// The revision the Command expected.
        expected: u64,
        /// The current revision.
        current: u64,
    },
    /// The Coordinator Epoch is not the current one (§7.2): `AUTH_STALE_COORDINATOR`.
    StaleCoordinator {
        /// The epoch the Command carried (`None`: none).
        presented: Option<u64>,
        /// The current epoch.
        current: u64,
    },
    /// The Command's Membership Epoch is not the sender's current one, or its Membership has
    /// ended (§8 "a revoked or stale epoch MUST be rejected"): `MEMBERSHIP_STALE`.
    MembershipStale {
        /// The Group.
        group: String,
        /// The epoch the Command carried.
        presented: u64,
        /// The Membership's current epoch.
        current: u64,
        /// Whether the Membership has ended.
        ended: bool,
    },
    /// An Agent Command's Session Epoch is not the Agent's current one (§6.3, §4 invariant 4:
    /// "A lower epoch MUST be rejected even if its WebSocket is still connected"):
    /// `AUTH_STALE_SESSION`.
    StaleSession {
        /// The Agent.
        agent: String,
        /// The epoch the Command carried.
        presented: u64,
        /// The Agent's current Session Epoch.
        current: u64,
    },
    /// An Agent Command from an Agent for which no session was ever opened
    /// (`ext.missionweaveprotocol.identity.session_open`): `AUTH_REQUIRED` (§19 "Authentication
    /// is absent"; digest 2.10: a non-authenticated sender gets `AUTH_REQUIRED`).
    SessionRequired {
        /// The Agent.
        agent: String,
    },
    /// The Command needs a Membership that does not exist (§8, §17.2): `MEMBERSHIP_REQUIRED`.
    MembershipRequired {
        /// The Group.
        group: String,
        /// The Principal without a Membership.
        member: missionweaveprotocol::Principal,
    },
    /// The actor lacks the role the transition needs (§7.1 authority column, §6.4):
    /// `AUTH_FORBIDDEN`.
    Forbidden {
        /// Stable reason slug (`not_mission_owner`, `not_current_coordinator`, …).
        reason: &'static str,
        /// Readable detail.
        detail: String,
    },
    /// The Group is absent or intentionally undisclosed (§17.2): `GROUP_NOT_FOUND`.
    GroupNotFound {
        /// The Group ID.
        group: String,
    },
    /// A lease the transition needs has expired (§7.2, §11.3): `WORK_LEASE_EXPIRED`.
    LeaseExpired {
        /// The lease ID.
        lease_id: String,
        /// When it expired (RFC 3339).
        expired_at: String,
    },
    /// The Command depends on a critical extension the engine does not implement (§18):
    /// `UNKNOWN_CRITICAL_EXTENSION`.
    UnknownCriticalExtension {
        /// The extension ID.
        extension: String,
    },
    /// A §20 cooperation limit was reached: `RATE_LIMITED` (with `retry_after_ms` for rates).
    RateLimited {
        /// The reference's `CooperationPolicyName` (`proposal_rate`, `queued_work_items`,
        /// `active_work_items`).
        policy: &'static str,
        /// The configured limit.
        limit: u32,
        /// When the sliding window frees a slot (rates only).
        retry_after_ms: Option<u64>,
    },
    /// Concurrent writers kept invalidating the decision's reads; nothing was applied and an
    /// unchanged retry may succeed: `INTERNAL_ERROR` (retryable, §19).
    Contended {
        /// How many decisions were attempted.
        attempts: u32,
    },
    /// A stored aggregate could not be read back: `INTERNAL_ERROR`, nothing applied.
    Corrupt {
        /// The aggregate.
        key: AggregateKey,
        /// What is wrong.
        detail: String,
    },
    /// The store refused (its own code: `REVISION_CONFLICT`, `ACTION_ID_COLLISION`,
    /// `CURSOR_TOO_OLD`, …).
    Store(StoreError),
    /// An Event could not be built or signed: `INTERNAL_ERROR`, nothing applied.
    Event(EventBuildError),
    /// A WorkItem decision refused (§10; its own code: `WORK_STALE_OWNERSHIP`,
    /// `WORK_OFFER_EXPIRED`, `INVALID_STATE_TRANSITION`, …).
    Work(WorkError),
    /// A bounded-offline-execution refusal (§11.5) with its own code.
    Offline(missionweaveprotocol_kernel::offline::OfflineError),
    /// The budget ledger refused (§12; `BUDGET_EXCEEDED` naming the account and dimension, or
    /// `INVALID_COMMAND` for a malformed budget).
    Budget(BudgetError),
    /// A Delegation Grant's issuance or use was refused (§9.1): the violation's own code
    /// (`AUTH_FORBIDDEN`, `MEMBERSHIP_REQUIRED`, `MEMBERSHIP_STALE`, `AUTH_STALE_COORDINATOR`,
    /// `BUDGET_EXCEEDED`, `INVALID_COMMAND`).
    Delegation {
        /// The Grant.
        grant_id: String,
        /// What the pure `delegation` checks refused.
        violation: missionweaveprotocol_kernel::delegation::DelegationViolation,
    },
    /// A signed document carried in the payload (the `artifact.publish` manifest, §13.1) was
    /// rejected by the six-stage verifier: its own wire code (§6.4; the stage and reason stay
    /// in the protected diagnostic, not in the fields).
    Manifest(VerificationError),
    /// The signed Agent Card of `…registry.agent_card_register` was rejected by the six-stage
    /// verifier (Agent Card profile, §6.4): its own wire code.
    AgentCard(VerificationError),
}

impl EngineError {
    pub(crate) fn invalid(reason: &'static str, detail: impl Into<String>) -> Self {
        Self::InvalidCommand {
            reason,
            detail: detail.into(),
        }
    }

    pub(crate) fn forbidden(reason: &'static str, detail: impl Into<String>) -> Self {
        Self::Forbidden {
            reason,
            detail: detail.into(),
        }
    }
}

impl From<StoreError> for EngineError {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
    }
}

impl From<WorkError> for EngineError {
    fn from(e: WorkError) -> Self {
        Self::Work(e)
    }
}

impl From<BudgetError> for EngineError {
    fn from(e: BudgetError) -> Self {
        Self::Budget(e)
    }
}

impl From<EventBuildError> for EngineError {
    fn from(e: EventBuildError) -> Self {
        Self::Event(e)
    }
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidCommand { detail, .. } => write!(f, "invalid Command: {detail}"),
            Self::SchemaInvalid { schema, detail } => {
                write!(
                    f,
                    "the resulting {schema} does not conform to its schema: {detail}"
                )
            }
            Self::UnknownPayloadMember { kind, pointer, .. } => write!(
                f,
                "{kind} defines no payload member {pointer} (§21: core payloads are closed; extensions go in `extensions`, §18)"
            ),
            Self::InvalidStateTransition {
                aggregate,
                id,
                state,
                command,
            } => write!(
                f,
                "{aggregate} {id} in state {state} does not accept {command}"
            ),
            Self::RevisionConflict {
                key,
                expected,
                current,
            } => write!(
                f,
                "{} {} is at revision {current}, the Command expected {expected}",
                key.kind, key.id
            ),
            Self::StaleCoordinator { presented, current } => match presented {
                Some(p) => write!(
                    f,
                    "Coordinator Epoch {p} is fenced; the current epoch is {current}"
                ),
                None => write!(
                    f,
                    "the Command carries no Coordinator Epoch; the current epoch is {current}"
                ),
            },
            Self::Forbidden { detail, .. } => write!(f, "forbidden: {detail}"),
            Self::GroupNotFound { group } => write!(f, "Group {group} not found"),
            Self::MembershipStale {
                group,
                presented,
                current,
                ended,
            } => write!(
                f,
                "Membership Epoch {presented} in Group {group} is fenced (current {current}{})",
                if *ended { ", ended" } else { "" }
            ),
            Self::MembershipRequired { group, member } => write!(
                f,
                "{} {} has no Membership in Group {group}",
                member.kind.as_str(),
                member.id
            ),
            Self::LeaseExpired {
                lease_id,
                expired_at,
            } => write!(f, "lease {lease_id} expired at {expired_at}"),
            Self::UnknownCriticalExtension { extension } => {
                write!(f, "critical extension {extension} is not implemented")
            }
            Self::RateLimited {
                policy,
                limit,
                retry_after_ms,
            } => {
                write!(f, "the {policy} limit of {limit} is reached")?;
                match retry_after_ms {
                    Some(ms) => write!(f, "; retry after {ms} ms"),
                    None => f.write_str("; nothing was discarded"),
                }
            }
            Self::Contended { attempts } => write!(
                f,
                "concurrent Commands changed the state {attempts} times; nothing was applied"
            ),
            Self::Corrupt { key, detail } => {
                write!(f, "stored {} {} is unreadable: {detail}", key.kind, key.id)
            }
            Self::Store(e) => fmt::Display::fmt(e, f),
            Self::Event(e) => fmt::Display::fmt(e, f),
            Self::Work(e) => fmt::Display::fmt(e, f),
            Self::Offline(e) => fmt::Display::fmt(e, f),
            Self::Budget(e) => fmt::Display::fmt(e, f),
            Self::Delegation {
                grant_id,
                violation,
            } => write!(f, "Delegation Grant {grant_id}: {}", violation.message),
            Self::Manifest(e) => write!(f, "signed manifest: {}", e.wire_message()),
            Self::AgentCard(e) => write!(f, "signed Agent Card: {}", e.wire_message()),
            Self::StaleSession {
                agent,
                presented,
                current,
            } => write!(
                f,
                "Session Epoch {presented} of Agent {agent} is fenced (current {current})"
            ),
            Self::SessionRequired { agent } => {
                write!(f, "no session was opened for Agent {agent}")
            }
        }
    }
}

impl std::error::Error for EngineError {}

impl DescribeError for EngineError {
    fn class(&self) -> ErrorClass {
        match self {
            Self::Store(e) => e.class(),
            Self::Event(e) => e.class(),
            Self::Work(e) => e.class(),
            Self::Budget(e) => e.class(),
            Self::SchemaInvalid { .. } | Self::UnknownPayloadMember { .. } => ErrorClass::Schema,
            Self::LeaseExpired { .. } => ErrorClass::Lease,
            _ => ENGINE_CLASS,
        }
    }

    fn wire_code(&self) -> WireCode {
        match self {
            Self::InvalidCommand { .. } => WireCode::InvalidCommand,
            Self::SchemaInvalid { .. } | Self::UnknownPayloadMember { .. } => {
                WireCode::SchemaValidationFailed
            }
            Self::InvalidStateTransition { .. } => WireCode::InvalidStateTransition,
            Self::RevisionConflict { .. } => WireCode::RevisionConflict,
            Self::StaleCoordinator { .. } => WireCode::AuthStaleCoordinator,
            Self::Forbidden { .. } => WireCode::AuthForbidden,
            Self::GroupNotFound { .. } => WireCode::GroupNotFound,
            Self::MembershipStale { .. } => WireCode::MembershipStale,
            Self::MembershipRequired { .. } => WireCode::MembershipRequired,
            Self::LeaseExpired { .. } => WireCode::WorkLeaseExpired,
            Self::UnknownCriticalExtension { .. } => WireCode::UnknownCriticalExtension,
            Self::RateLimited { .. } => WireCode::RateLimited,
            Self::Contended { .. } | Self::Corrupt { .. } => WireCode::InternalError,
            Self::Store(e) => e.wire_code(),
            Self::Event(e) => e.wire_code(),
            Self::Work(e) => e.code(),
            Self::Offline(e) => e.code(),
            Self::Budget(e) => e.code(),
            Self::Delegation { violation, .. } => violation.code(),
            Self::Manifest(e) | Self::AgentCard(e) => e.wire_code(),
            Self::StaleSession { .. } => WireCode::AuthStaleSession,
            Self::SessionRequired { .. } => WireCode::AuthRequired,
        }
    }

    fn reason(&self) -> &str {
        match self {
            Self::InvalidCommand { reason, .. } | Self::Forbidden { reason, .. } => reason,
            Self::SchemaInvalid { .. } => "schema_invalid",
            Self::UnknownPayloadMember { .. } => "unknown_payload_member",
            Self::InvalidStateTransition { .. } => "invalid_state_transition",
            Self::RevisionConflict { .. } => "revision_conflict",
            Self::StaleCoordinator { .. } => "stale_coordinator_epoch",
            Self::GroupNotFound { .. } => "group_not_found",
            Self::MembershipStale { ended: true, .. } => "membership_ended",
            Self::MembershipStale { .. } => "stale_membership_epoch",
            Self::MembershipRequired { .. } => "membership_required",
            Self::LeaseExpired { .. } => "lease_expired",
            Self::UnknownCriticalExtension { .. } => "unknown_critical_extension",
            Self::Contended { .. } => "contended",
            Self::RateLimited { policy, .. } => policy,
            Self::Corrupt { .. } => "corrupt_aggregate",
            Self::Store(e) => StoreError::reason(e),
            Self::Event(e) => e.reason(),
            Self::Work(e) => WorkError::reason(e),
            Self::Offline(e) => e.kind(),
            Self::Budget(e) => BudgetError::reason(e),
            Self::Delegation { violation, .. } => delegation_reason(violation.kind),
            Self::Manifest(_) => "manifest_rejected",
            Self::AgentCard(_) => "agent_card_rejected",
            Self::StaleSession { .. } => "stale_session_epoch",
            Self::SessionRequired { .. } => "no_session",
        }
    }

    fn fields(&self) -> Fields {
        match self {
            Self::SchemaInvalid { schema, .. } => Fields::new().text("schema", *schema),
            Self::UnknownPayloadMember {
                kind,
                member,
                pointer,
            } => Fields::new()
                .text("command_kind", kind.as_str())
                .text("member", member.as_str())
                .text("pointer", pointer.as_str()),
            Self::InvalidStateTransition {
                aggregate,
                id,
                state,
                command,
            } => Fields::new()
                .text("aggregate_kind", *aggregate)
                .text("aggregate_id", id.as_str())
                .text("state", state.as_str())
                .text("command_kind", command.as_str()),
            // §19 error fields `expectedRevision` and `currentRevision`.
            Self::RevisionConflict {
                key,
                expected,
                current,
            } => revision_conflict_fields(key, *expected, *current),
            Self::StaleCoordinator { presented, current } => {
                let fields = Fields::new().integer("current_coordinator_epoch", int(*current));
                match presented {
                    Some(p) => fields.integer("presented_coordinator_epoch", int(*p)),
                    None => fields,
                }
            }
            Self::GroupNotFound { group } => Fields::new().text("group_id", group.as_str()),
            Self::MembershipStale {
                group,
                presented,
                current,
                ..
            } => Fields::new()
                .text("group_id", group.as_str())
                .integer("presented_membership_epoch", int(*presented))
                .integer("current_membership_epoch", int(*current)),
            Self::MembershipRequired { group, member } => Fields::new()
                .text("group_id", group.as_str())
                .text("member_type", member.kind.as_str())
                .text("member_id", member.id.as_str()),
            Self::LeaseExpired {
                lease_id,
                expired_at,
            } => Fields::new()
                .text("lease_id", lease_id.as_str())
                .text("expired_at", expired_at.as_str()),
            Self::UnknownCriticalExtension { extension } => {
                Fields::new().text("extension_id", extension.as_str())
            }
            Self::Contended { attempts } => Fields::new().integer("attempts", i64::from(*attempts)),
            Self::RateLimited {
                policy,
                limit,
                retry_after_ms,
            } => {
                let fields = Fields::new()
                    .text("policy", *policy)
                    .integer("limit", i64::from(*limit));
                match retry_after_ms {
                    Some(ms) => {
                        fields.integer("retry_after_ms", i64::try_from(*ms).unwrap_or(i64::MAX))
                    }
                    None => fields,
                }
            }
            // The store's own locator fields (`stored`, `locator`), as for a row the store's
            // integrity check refuses, and the aggregate's key.
            Self::Corrupt { key, .. } => Fields::new()
                .text("stored", "aggregate")
                .text("locator", format!("{} {}", key.kind, key.id))
                .text("aggregate_kind", key.kind.as_str())
                .text("aggregate_id", key.id.as_str()),
            Self::Store(e) => e.fields(),
            Self::Event(e) => e.fields(),
            Self::Work(e) => e.fields(),
            Self::Budget(e) => e.fields(),
            Self::Delegation {
                grant_id,
                violation,
            } => {
                let fields = Fields::new()
                    .text("grant_id", grant_id.as_str())
                    .text("violation", violation.kind.as_str());
                match violation.dimension {
                    Some(d) => fields.text("dimension", d.as_str()),
                    None => fields,
                }
            }
            Self::StaleSession {
                agent,
                presented,
                current,
            } => Fields::new()
                .text("agent_id", agent.as_str())
                .integer("presented_session_epoch", int(*presented))
                .integer("current_session_epoch", int(*current)),
            Self::SessionRequired { agent } => Fields::new().text("agent_id", agent.as_str()),
            Self::InvalidCommand { .. }
            | Self::Forbidden { .. }
            | Self::Manifest(_)
            | Self::AgentCard(_)
            | Self::Offline(_) => Fields::new(),
        }
    }

    fn retryable(&self) -> bool {
        match self {
            // Another decision on fresh state may succeed unchanged (§19 INTERNAL_ERROR).
            Self::Contended { .. } => true,
            // A stored aggregate that cannot be read back stays so until an operator repairs
            // it: retrying the same Command reads the same bytes.
            Self::Corrupt { .. } => false,
            Self::Store(e) => e.retryable(),
            Self::Work(e) => e.retryable(),
            _ => self.wire_code().retryable(),
        }
    }
}

/// The reason slug of a refused Grant issuance or use.
const fn delegation_reason(kind: DelegationViolationKind) -> &'static str {
    use DelegationViolationKind as K;
    match kind {
        K::Identity => "delegation_not_grantee",
        K::Membership => "delegation_membership",
        K::MembershipEpoch => "delegation_membership_epoch",
        K::Scope => "delegation_scope",
        K::Capability => "delegation_capability",
        K::Budget => "delegation_budget",
        K::Depth => "delegation_depth",
        K::CoordinatorEpoch => "delegation_coordinator_epoch",
        K::Issuer => "delegation_issuer",
        K::Expired => "delegation_expired",
        K::NotYetValid => "delegation_not_yet_valid",
        K::TargetMissing => "delegation_target_missing",
        K::TargetClosed => "delegation_target_closed",
        K::Malformed => "delegation_malformed",
    }
}
