//! Authorization and local policy (§8, §12, §20): membership tokens, capability grants bound to
//! an Execution Lease, execution authorization against live authoritative state, budget meters
//! and the local runaway guard (the reference's `policy.py`, `reference-python.md` §1.16).
//!
//! Sans-IO: secrets, token IDs and `now` are arguments; live state comes through the read-only
//! [`PolicyStateReader`] and [`ExecutionApprovalLookup`] seams.
//!
//! | module | spec | what |
//! | --- | --- | --- |
//! | `token` | §12 | `b64url(canonical claims).b64url(HMAC-SHA256)`, constant-time MAC check |
//! | `membership_token` | §8, §6.3 | [`MembershipTokenService`] |
//! | `capability` | §12 | [`AuthorizationService`], [`CapabilityGrant`] |
//! | `live_state` | §12 | the state seams, the engine reader, [`LiveDocuments`] |
//! | `execution_authorization` | §12 | [`ExecutionAuthorization`] |
//! | `meter` | §12 | [`BudgetMeter`] |
//! | `guard` | §20 | [`CooperationLimits`], [`PolicyGuard`] |
//! | `error` | §19 | [`PolicyError`] |

mod capability;
mod error;
mod execution_authorization;
mod guard;
mod live_state;
mod membership_token;
mod meter;
mod token;

pub use self::capability::{
    AuthorizationService, CapabilityBinding, CapabilityGrant, CapabilityScope,
    IssuedCapabilityGrant, MAXIMUM_TTL_MS as MAXIMUM_GRANT_TTL_MS,
};
pub use self::error::PolicyError;
pub use self::execution_authorization::{ExecutionAuthorization, ExecutionRequest};
pub use self::guard::{ActionClass, CooperationLimits, PolicyGuard, RateKind, WINDOW_MS};
pub use self::live_state::{
    ApprovalDocuments, ExecutionApprovalLookup, ExecutionApprovalRecord, LiveDocuments,
    LiveMission, LiveWorkItem, NoExecutionApprovals, PolicyStateReader,
};
pub use self::membership_token::{
    IssuedMembershipToken, MAXIMUM_TTL_MS, MembershipBinding, MembershipTokenClaims,
    MembershipTokenService, MembershipView, check_token_principal,
};
pub use self::meter::BudgetMeter;
pub use self::token::{MAX_SECRET_BYTES, MAX_TOKEN_CHARS, MIN_SECRET_BYTES};
pub use missionweaveprotocol_engine::work::scope::{
    ContractScope, HIGH_RISK_OPERATION_PREFIXES, ResourceGrant, is_high_risk_operation,
};
