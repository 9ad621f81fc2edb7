//! [`CoreConfig`]: every set-up rule of a [`Core`], written once.
//!
//! Each host (Python, Node, WebAssembly, the CLI, the server) builds a `CoreConfig` — from its
//! own keyword arguments, or from the JSON options object it received (serde, camelCase,
//! unknown members refused) — and calls [`CoreConfig::build`] with the parts only a host can
//! hand over: the store, the Registry, the Group Authority's signing key and a random source.
//! The rules live here, so the same bad configuration is refused the same way everywhere:
//!
//! - **the authority key is bound in the Registry** to the authority Principal with the same
//!   public key: every Event is a signed document receivers verify against that Registry
//!   (§6.4 stage 4, §15.2), so a key bound to anyone else would sign Events nobody accepts
//!   (`authority_key_not_bound`);
//! - **the snapshot authority is the Group Authority** (§7.4, §6.4 "a Group Snapshot creator
//!   MUST be an authorized archival service"): the engine accepts only snapshots the Group
//!   Authority's key signed, so a snapshot-authority pair must be both present or both absent
//!   (`snapshot_authority_incomplete`) and name that key (`snapshot_authority_not_group_authority`);
//! - **Event IDs**: `eventIdPrefix` gives deterministic IDs `<prefix>1, 2, …` (tests, replayable
//!   simulations); absent, `urn:uuid:` v4 IDs from the host's random source (§16: unique
//!   within the Organization);
//! - **cooperation limits** (§20): each absent member keeps the reference's default, `null`
//!   means no limit; `maximumTrackedKeys` must be at least 1;
//! - **offline bounds** (§11.5): absent, [`DEFAULT_CORE_LIMITS`]; given, checked by
//!   [`OfflineLimits::validate`], an absent `maxUsage` keeping the default;
//! - **freshness** (§6.4): absent bounds keep [`FreshnessWindow`]'s defaults (30 s, 5 min);
//! - **contention retries**: at least 1 (`max_attempts_zero`);
//! - **bootstrap services** (§6.3): absent, the Group Authority itself (it opens Agent sessions
//!   after HELLO); **policy services**: absent, none.
//!
//! Time is not configuration: every call of the Core takes `now`, read by the host from its
//! clock (`missionweaveprotocol_host::SystemClock`, a browser's `Date.now()`, a test's fixed
//! instant).

use std::sync::Arc;

use missionweaveprotocol::crypto::Signer;
use missionweaveprotocol::json::{Number, Object, Value};
use missionweaveprotocol::schema_formats::decode_base64url;
use missionweaveprotocol::{
    DescribeError, ErrorClass, Fields, KeyRegistrySnapshot, Principal, PrincipalType, WireCode,
};
use missionweaveprotocol_kernel::cooperation::CooperationLimits;
use missionweaveprotocol_kernel::offline::{OfflineError, OfflineLimits};
use missionweaveprotocol_kernel::random::RandomSource;
use missionweaveprotocol_kernel::resources::{MAX_SAFE_INTEGER, Resources};
use serde::Deserialize;

use crate::events::{EventIdSource, EventIssuer, RandomEventIds, SequentialEventIds};
use crate::ingress::FreshnessWindow;
use crate::service::{Core, default_authorizer};
use crate::store::Store;
pub use crate::work::offline::reconcile::DEFAULT_CORE_LIMITS;

/// The Group Authority's Principal, as JSON `{type, id}`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthorityPrincipal {
    /// `agent`, `human` or `service` (a Group Authority is normally a `service`).
    #[serde(rename = "type")]
    pub kind: String,
    /// Its ID.
    pub id: String,
}

/// A member that may be absent (keep the default), `null` (no limit) or a number.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Limit {
    /// Absent: the default.
    #[default]
    Default,
    /// `null`: no limit.
    Unlimited,
    /// A limit.
    At(u32),
}

impl Limit {
    fn over(self, default: Option<u32>) -> Option<u32> {
        match self {
            Limit::Default => default,
            Limit::Unlimited => None,
            Limit::At(n) => Some(n),
        }
    }
}

impl<'de> Deserialize<'de> for Limit {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Option::<u32>::deserialize(d)? {
            Some(n) => Limit::At(n),
            None => Limit::Unlimited,
        })
    }
}

/// The §20 limits as configured: every member optional (absent keeps the reference's default,
/// `null` is no limit). Python's `CooperationLimits` objects and Node's plain objects both
/// convert to this.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CooperationLimitsConfig {
    /// `maximumDelegationDepth`.
    #[serde(default)]
    pub maximum_delegation_depth: Limit,
    /// `maximumQueuedWorkItems`.
    #[serde(default)]
    pub maximum_queued_work_items: Limit,
    /// `maximumActiveWorkItems`.
    #[serde(default)]
    pub maximum_active_work_items: Limit,
    /// `maximumUnresolvedClarifications`.
    #[serde(default)]
    pub maximum_unresolved_clarifications: Limit,
    /// `maximumMessageRatePerMinute`.
    #[serde(default)]
    pub maximum_message_rate_per_minute: Limit,
    /// `maximumProposalRatePerMinute`.
    #[serde(default)]
    pub maximum_proposal_rate_per_minute: Limit,
    /// `maximumClarificationRatePerMinute`.
    #[serde(default)]
    pub maximum_clarification_rate_per_minute: Limit,
    /// `maximumTrackedKeys` (absent: the default; at least 1).
    #[serde(default)]
    pub maximum_tracked_keys: Option<u32>,
}

impl CooperationLimitsConfig {
    /// The limits: each member over the reference's defaults.
    pub fn resolve(&self) -> Result<CooperationLimits, ConfigError> {
        let d = CooperationLimits::default();
        let tracked = match self.maximum_tracked_keys {
            None => d.maximum_tracked_keys,
            Some(0) => {
                return Err(ConfigError::Invalid {
                    reason: "maximum_tracked_keys_zero",
                    member: "cooperationLimits.maximumTrackedKeys",
                    detail: "must be at least 1".into(),
                });
            }
            Some(n) => n as usize,
        };
        Ok(CooperationLimits {
            maximum_delegation_depth: self
                .maximum_delegation_depth
                .over(d.maximum_delegation_depth),
            maximum_queued_work_items: self
                .maximum_queued_work_items
                .over(d.maximum_queued_work_items),
            maximum_active_work_items: self
                .maximum_active_work_items
                .over(d.maximum_active_work_items),
            maximum_unresolved_clarifications: self
                .maximum_unresolved_clarifications
                .over(d.maximum_unresolved_clarifications),
            maximum_message_rate_per_minute: self
                .maximum_message_rate_per_minute
                .over(d.maximum_message_rate_per_minute),
            maximum_proposal_rate_per_minute: self
                .maximum_proposal_rate_per_minute
                .over(d.maximum_proposal_rate_per_minute),
            maximum_clarification_rate_per_minute: self
                .maximum_clarification_rate_per_minute
                .over(d.maximum_clarification_rate_per_minute),
            maximum_tracked_keys: tracked,
        })
    }
}

/// The JSON form of `limits` every binding answers with (camelCase members; `null` = no
/// limit): what [`CooperationLimitsConfig`] reads back unchanged.
pub fn cooperation_limits_json(limits: &CooperationLimits) -> Value {
    let limit =
        |l: Option<u32>| l.map_or(Value::Null, |n| Value::Number(Number::from_u64(n.into())));
    let mut object = Object::new();
    for (name, value) in [
        ("maximumDelegationDepth", limits.maximum_delegation_depth),
        ("maximumQueuedWorkItems", limits.maximum_queued_work_items),
        ("maximumActiveWorkItems", limits.maximum_active_work_items),
        (
            "maximumUnresolvedClarifications",
            limits.maximum_unresolved_clarifications,
        ),
        (
            "maximumMessageRatePerMinute",
            limits.maximum_message_rate_per_minute,
        ),
        (
            "maximumProposalRatePerMinute",
            limits.maximum_proposal_rate_per_minute,
        ),
        (
            "maximumClarificationRatePerMinute",
            limits.maximum_clarification_rate_per_minute,
        ),
    ] {
        object.insert(name, limit(value));
    }
    object.insert(
        "maximumTrackedKeys",
        Value::Number(Number::from_u64(limits.maximum_tracked_keys as u64)),
    );
    Value::Object(object)
}

/// The six usage dimensions of `maxUsage` (§12; absent dimensions are 0, each at most
/// 2^53 − 1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UsageConfig {
    /// Financial spend in micro-units.
    #[serde(default)]
    pub financial_microunits: u64,
    /// Model tokens.
    #[serde(default)]
    pub model_tokens: u64,
    /// Tool calls.
    #[serde(default)]
    pub tool_calls: u64,
    /// Compute seconds.
    #[serde(default)]
    pub compute_seconds: u64,
    /// Wall-clock seconds.
    #[serde(default)]
    pub wall_clock_seconds: u64,
    /// External actions (side effects).
    #[serde(default)]
    pub external_actions: u64,
}

impl From<Resources> for UsageConfig {
    fn from(r: Resources) -> Self {
        use missionweaveprotocol_kernel::resources::Dimension;
        Self {
            financial_microunits: r.get(Dimension::Financial),
            model_tokens: r.get(Dimension::ModelTokens),
            tool_calls: r.get(Dimension::ToolCalls),
            compute_seconds: r.get(Dimension::ComputeSeconds),
            wall_clock_seconds: r.get(Dimension::WallClockSeconds),
            external_actions: r.get(Dimension::ExternalSideEffects),
        }
    }
}

impl UsageConfig {
    fn resolve(&self) -> Result<Resources, ConfigError> {
        let all = [
            self.financial_microunits,
            self.model_tokens,
            self.tool_calls,
            self.compute_seconds,
            self.wall_clock_seconds,
            self.external_actions,
        ];
        if all.iter().any(|n| *n > MAX_SAFE_INTEGER) {
            return Err(ConfigError::Invalid {
                reason: "usage_out_of_range",
                member: "offlineLimits.maxUsage",
                detail: "each dimension is at most 2^53 - 1".into(),
            });
        }
        let [a, b, c, d, e, f] = all;
        Ok(Resources::new(a, b, c, d, e, f))
    }
}

/// §11.5 Core-side offline bounds per historical lease, as configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OfflineLimitsConfig {
    /// The longest offline window after the disconnect (> 0).
    pub max_disconnect_grace_ms: u64,
    /// The most Commands reconciled per window (≥ 1).
    pub max_actions: u32,
    /// The most usage per window; absent keeps [`DEFAULT_CORE_LIMITS`]' (no cap beyond the
    /// budget ledger).
    #[serde(default)]
    pub max_usage: Option<UsageConfig>,
}

impl OfflineLimitsConfig {
    /// The bounds, checked.
    pub fn resolve(&self) -> Result<OfflineLimits, ConfigError> {
        let limits = OfflineLimits {
            max_disconnect_grace_ms: self.max_disconnect_grace_ms,
            max_actions: self.max_actions,
            max_usage: match &self.max_usage {
                Some(usage) => usage.resolve()?,
                None => DEFAULT_CORE_LIMITS.max_usage,
            },
        };
        limits.validate().map_err(ConfigError::Offline)?;
        Ok(limits)
    }
}

/// How a [`Core`] is set up. Build it with [`CoreConfig::new`] and the `with_…` methods, or
/// deserialize it from the JSON options object (camelCase members; unknown members refused).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CoreConfig {
    /// The Group Authority (signs every Event).
    pub authority: AuthorityPrincipal,
    /// Deterministic Event IDs `<prefix>1, 2, …`; absent: random `urn:uuid:` v4.
    #[serde(default)]
    pub event_id_prefix: Option<String>,
    /// Tolerated clock skew into the future (ms; default 30 s).
    #[serde(default)]
    pub max_future_skew_ms: Option<u64>,
    /// Largest age of `issuedAt` (ms; default 5 min).
    #[serde(default)]
    pub max_age_ms: Option<u64>,
    /// Contention retries per Command (at least 1; default the engine's).
    #[serde(default)]
    pub max_attempts: Option<u32>,
    /// Who may send the bootstrap Commands (default: the authority itself, §6.3).
    #[serde(default)]
    pub bootstrap_services: Option<Vec<String>>,
    /// Who may sign the Group kinds of Organization policy (default: nobody).
    #[serde(default)]
    pub policy_services: Option<Vec<String>>,
    /// §20 limits (absent: the reference's defaults).
    #[serde(default)]
    pub cooperation_limits: Option<CooperationLimitsConfig>,
    /// §11.5 offline bounds (absent: [`DEFAULT_CORE_LIMITS`]).
    #[serde(default)]
    pub offline_limits: Option<OfflineLimitsConfig>,
    /// The key ID Group Snapshots must be signed with (§7.4); with the public key, or neither.
    #[serde(default)]
    pub snapshot_authority_key_id: Option<String>,
    /// Its public key, unpadded base64url (the Registry's `publicKey` text).
    #[serde(default)]
    pub snapshot_authority_public_key: Option<String>,
}

impl CoreConfig {
    /// A configuration for the Group Authority `authority` with every default.
    pub fn new(authority: &Principal) -> Self {
        Self {
            authority: AuthorityPrincipal {
                kind: authority.kind.as_str().to_owned(),
                id: authority.id.clone(),
            },
            event_id_prefix: None,
            max_future_skew_ms: None,
            max_age_ms: None,
            max_attempts: None,
            bootstrap_services: None,
            policy_services: None,
            cooperation_limits: None,
            offline_limits: None,
            snapshot_authority_key_id: None,
            snapshot_authority_public_key: None,
        }
    }

    /// Reads the JSON options object (strict: unknown members, wrong types and duplicate
    /// members are refused with the path of the offending member).
    pub fn from_json(text: &str) -> Result<Self, ConfigError> {
        // The strict parser first: serde_json would take the last of two equal members.
        missionweaveprotocol::json::parse_state(text.as_bytes()).map_err(|e| {
            ConfigError::Invalid {
                reason: "options_not_json",
                member: "options",
                detail: e.to_string(),
            }
        })?;
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let config: Self = serde_path_to_error::deserialize(&mut deserializer).map_err(|e| {
            // API misuse with the path of the offending member, as every binding's other
            // argument errors (`options.maxAgeMs`).
            let path = e.path().to_string();
            let argument = match path.as_str() {
                "." | "" => "options".to_owned(),
                _ => format!("options.{path}"),
            };
            ConfigError::Argument(missionweaveprotocol::ArgumentError::new(
                argument,
                e.into_inner().to_string(),
            ))
        })?;
        Ok(config)
    }

    /// Deterministic Event IDs `<prefix>1, 2, …`.
    pub fn with_event_id_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.event_id_prefix = Some(prefix.into());
        self
    }

    /// Another freshness window (§6.4).
    pub fn with_freshness(mut self, max_future_skew_ms: u64, max_age_ms: u64) -> Self {
        self.max_future_skew_ms = Some(max_future_skew_ms);
        self.max_age_ms = Some(max_age_ms);
        self
    }

    /// Other §20 limits.
    pub fn with_cooperation_limits(mut self, limits: CooperationLimitsConfig) -> Self {
        self.cooperation_limits = Some(limits);
        self
    }

    /// Other §11.5 offline bounds.
    pub fn with_offline_limits(mut self, limits: OfflineLimitsConfig) -> Self {
        self.offline_limits = Some(limits);
        self
    }

    /// Who may send the bootstrap Commands and sign Organization policy Commands.
    pub fn with_services(mut self, bootstrap: Vec<String>, policy: Vec<String>) -> Self {
        self.bootstrap_services = Some(bootstrap);
        self.policy_services = Some(policy);
        self
    }

    /// The freshness window this configuration gives.
    pub fn freshness(&self) -> FreshnessWindow {
        FreshnessWindow::new(
            self.max_future_skew_ms
                .unwrap_or(FreshnessWindow::DEFAULT_MAX_FUTURE_SKEW_MS),
            self.max_age_ms
                .unwrap_or(FreshnessWindow::DEFAULT_MAX_AGE_MS),
        )
    }

    /// The authority Principal, checked.
    pub fn authority_principal(&self) -> Result<Principal, ConfigError> {
        let kind =
            PrincipalType::parse(&self.authority.kind).ok_or_else(|| ConfigError::Invalid {
                reason: "authority_type_unknown",
                member: "authority.type",
                detail: format!("{:?} is not agent, human or service", self.authority.kind),
            })?;
        if self.authority.id.is_empty() {
            return Err(ConfigError::Invalid {
                reason: "authority_id_empty",
                member: "authority.id",
                detail: "the authority needs an ID".into(),
            });
        }
        Ok(Principal::new(kind, self.authority.id.as_str()))
    }

    /// Checks every rule without building anything: the same refusals as [`build`](Self::build)
    /// for a configuration, given the Registry and the authority key.
    pub fn check<G: Signer>(
        &self,
        registry: &KeyRegistrySnapshot,
        authority_key: &G,
    ) -> Result<Resolved, ConfigError> {
        let principal = self.authority_principal()?;
        // §6.4 stage 4, §15.2: receivers verify every Event against this Registry.
        let public_key = authority_key.public_key_bytes();
        let bound = registry
            .binding(authority_key.key_id())
            .is_some_and(|b| b.principal == principal && b.public_key.as_bytes() == &public_key);
        if !bound {
            return Err(ConfigError::AuthorityKeyNotBound {
                key_id: authority_key.key_id().to_owned(),
                principal: format!("{} {}", principal.kind.as_str(), principal.id),
            });
        }
        // §7.4: the snapshot authority is the Group Authority.
        match (
            &self.snapshot_authority_key_id,
            &self.snapshot_authority_public_key,
        ) {
            (None, None) => {}
            (Some(key_id), Some(text)) => {
                let same_key = decode_base64url(text).as_deref() == Some(&public_key[..]);
                if key_id != authority_key.key_id() || !same_key {
                    return Err(ConfigError::SnapshotAuthorityNotGroupAuthority {
                        key_id: key_id.clone(),
                    });
                }
            }
            _ => return Err(ConfigError::SnapshotAuthorityIncomplete),
        }
        if self.max_attempts == Some(0) {
            return Err(ConfigError::Invalid {
                reason: "max_attempts_zero",
                member: "maxAttempts",
                detail: "at least one attempt is needed".into(),
            });
        }
        let cooperation = match &self.cooperation_limits {
            Some(given) => given.resolve()?,
            None => CooperationLimits::default(),
        };
        let offline = match &self.offline_limits {
            Some(given) => given.resolve()?,
            None => DEFAULT_CORE_LIMITS,
        };
        Ok(Resolved {
            principal,
            cooperation,
            offline,
            freshness: self.freshness(),
        })
    }

    /// The Core over `store`, verifying Commands against `registry`, signing Events with
    /// `authority_key`, drawing random Event IDs from `random` (unused with an
    /// `eventIdPrefix`). Every rule of this module is checked first; nothing is built on a
    /// refusal.
    pub fn build<S: Store, G: Signer>(
        self,
        store: S,
        registry: Arc<KeyRegistrySnapshot>,
        authority_key: G,
        random: Box<dyn RandomSource>,
    ) -> Result<Core<S, G>, ConfigError> {
        let resolved = self.check(&registry, &authority_key)?;
        let bootstrap = self
            .bootstrap_services
            .unwrap_or_else(|| vec![resolved.principal.id.clone()]);
        let policy = self.policy_services.unwrap_or_default();
        let ids: Box<dyn EventIdSource + Send> = match self.event_id_prefix {
            Some(prefix) => Box::new(SequentialEventIds::new(prefix)),
            None => Box::new(RandomEventIds::new(random)),
        };
        let mut core = Core::new(
            store,
            registry,
            EventIssuer::new(resolved.principal, authority_key),
            default_authorizer(bootstrap, policy),
            ids,
        )
        .with_freshness(resolved.freshness)
        .with_cooperation_limits(resolved.cooperation)
        .with_offline_limits(resolved.offline);
        if let Some(attempts) = self.max_attempts {
            core = core.with_max_attempts(attempts);
        }
        Ok(core)
    }
}

/// What [`CoreConfig::check`] resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// The authority Principal.
    pub principal: Principal,
    /// The §20 limits.
    pub cooperation: CooperationLimits,
    /// The §11.5 bounds.
    pub offline: OfflineLimits,
    /// The §6.4 window.
    pub freshness: FreshnessWindow,
}

/// A configuration refused (class `argument`, wire `PROTOCOL_VIOLATION`: API misuse, not a wire
/// event; invalid offline bounds keep the offline module's own error).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// The authority key is not bound to the authority Principal with its public key.
    AuthorityKeyNotBound {
        /// The key ID.
        key_id: String,
        /// `<type> <id>` of the authority.
        principal: String,
    },
    /// Only one of the snapshot-authority key ID and public key was given.
    SnapshotAuthorityIncomplete,
    /// The snapshot authority named a key other than the Group Authority's.
    SnapshotAuthorityNotGroupAuthority {
        /// The key ID given.
        key_id: String,
    },
    /// A member is malformed or out of range.
    Invalid {
        /// Stable reason slug.
        reason: &'static str,
        /// The member (camelCase path).
        member: &'static str,
        /// What is wrong.
        detail: String,
    },
    /// The offline bounds are invalid.
    Offline(OfflineError),
    /// The options object is malformed (a member of the wrong type or range, an unknown one):
    /// the argument error names its path.
    Argument(missionweaveprotocol::ArgumentError),
}

impl core::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::AuthorityKeyNotBound { key_id, principal } => write!(
                f,
                "authorityKey {key_id} is not bound to {principal} with this public key in the Registry"
            ),
            Self::SnapshotAuthorityIncomplete => f.write_str(
                "snapshot_authority_key_id and snapshot_authority_public_key go together",
            ),
            Self::SnapshotAuthorityNotGroupAuthority { key_id } => write!(
                f,
                "the snapshot authority is the Group Authority (§7.4): {key_id} is not its key"
            ),
            Self::Invalid { member, detail, .. } => write!(f, "{member}: {detail}"),
            Self::Offline(e) => e.fmt(f),
            Self::Argument(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ConfigError {}

impl DescribeError for ConfigError {
    fn class(&self) -> ErrorClass {
        match self {
            Self::Offline(e) => e.class(),
            _ => ErrorClass::Argument,
        }
    }
    fn wire_code(&self) -> WireCode {
        match self {
            Self::Offline(e) => e.wire_code(),
            Self::Argument(e) => e.wire_code(),
            _ => WireCode::ProtocolViolation,
        }
    }
    fn reason(&self) -> &str {
        match self {
            Self::AuthorityKeyNotBound { .. } => "authority_key_not_bound",
            Self::SnapshotAuthorityIncomplete => "snapshot_authority_incomplete",
            Self::SnapshotAuthorityNotGroupAuthority { .. } => {
                "snapshot_authority_not_group_authority"
            }
            Self::Invalid { reason, .. } => reason,
            Self::Offline(e) => e.reason(),
            Self::Argument(e) => e.reason(),
        }
    }
    fn fields(&self) -> Fields {
        match self {
            Self::AuthorityKeyNotBound { key_id, principal } => Fields::new()
                .text("key_id", key_id.clone())
                .text("principal", principal.clone()),
            Self::SnapshotAuthorityIncomplete => Fields::new(),
            Self::SnapshotAuthorityNotGroupAuthority { key_id } => {
                Fields::new().text("key_id", key_id.clone())
            }
            Self::Invalid { member, .. } => Fields::new().text("member", *member),
            Self::Offline(e) => e.fields(),
            Self::Argument(e) => e.fields(),
        }
    }
}
