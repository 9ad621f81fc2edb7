//! Tokens, execution authorization and local guardrails (`missionweaveprotocol_agent::policy`,
//! §8, §12, §20) for the JavaScript backends: one function per operation, each reading its
//! JSON argument object into the types of [`crate::shapes::policy`] and answering an envelope.
//! Every rule (MACs and bindings, grant expiry within the lease, lifetimes, budgets, limits, the
//! action classification) and every refusal (`PolicyError`: its §19 code and reason) is the
//! core's. Secrets never appear in an envelope.
//!
//! Randomness is the host's ([`RandomSource`]: the OS for napi, `crypto.getRandomValues` for
//! WebAssembly): a random secret when none is given, random token and grant IDs when the
//! caller names none. A failing source refuses the call.

use missionweaveprotocol::json::{Number, Value};
use missionweaveprotocol_agent::auth::SessionConfig;
use missionweaveprotocol_agent::policy::{
    ApprovalDocuments, AuthorizationService, BudgetMeter, CapabilityBinding, CapabilityScope,
    CooperationLimits, ExecutionAuthorization, ExecutionRequest, LiveDocuments,
    MAXIMUM_GRANT_TTL_MS, MAXIMUM_TTL_MS, MembershipBinding, MembershipTokenService,
    MembershipView, PolicyError, PolicyGuard,
};
use missionweaveprotocol_engine::config::{
    CooperationLimitsConfig, Limit, cooperation_limits_json,
};
use missionweaveprotocol_engine::events::uuid_v4_urn;
use missionweaveprotocol_kernel::random::RandomSource;
use missionweaveprotocol_kernel::resources::Resources;
use missionweaveprotocol_kernel::snapshot_json::resources_to_value;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

use crate::envelope::{Failure, Obj, finish};
use crate::shapes::common::ResourceInput;
use crate::shapes::policy::{
    AuthorizeExecutionInput, GrantIssueInput, GrantVerifyInput, GuardLimitsInput,
    MembershipDocumentIssueInput, MembershipDocumentVerifyInput, MembershipIssueInput,
    MembershipVerifyInput, PolicyDefaultsAnswer, TokenServiceOptions,
};
use crate::shapes::{Res, answer, read};

fn refused(error: &PolicyError) -> Failure {
    Failure::error(error)
}

fn random_failed() -> Failure {
    Failure::argument(missionweaveprotocol_kernel::random::RandomUnavailable.to_string())
}

/// `id`, or a random `urn:uuid:` (a fresh token or grant ID) from `random`.
fn id_or_random(id: Option<String>, random: &mut dyn RandomSource) -> Res<String> {
    match id {
        Some(id) => Ok(id),
        None => {
            let mut bytes = [0u8; 16];
            random.fill(&mut bytes).map_err(|_| random_failed())?;
            Ok(uuid_v4_urn(bytes))
        }
    }
}

/// The caller's secret; an empty one draws 32 random bytes (tokens then verify only with this
/// object).
fn secret(secret: &[u8], random: &mut dyn RandomSource) -> Res<Vec<u8>> {
    if !secret.is_empty() {
        return Ok(secret.to_vec());
    }
    let mut bytes = vec![0u8; 32];
    random.fill(&mut bytes).map_err(|_| random_failed())?;
    Ok(bytes)
}

fn issued(claims: Value, token: String) -> Value {
    Obj::new()
        .value("claims", claims)
        .str("token", token)
        .build()
}

fn unit(outcome: Result<(), PolicyError>) -> String {
    finish(outcome.map(|()| Value::Null).map_err(|e| refused(&e)))
}

/// The core's lifetimes: what a service or authority uses when the caller gives none.
pub fn defaults() -> String {
    let session = SessionConfig::default();
    finish(answer(&PolicyDefaultsAnswer {
        membership_token_maximum_ttl_ms: MAXIMUM_TTL_MS,
        capability_grant_maximum_ttl_ms: MAXIMUM_GRANT_TTL_MS,
        session_ttl_ms: session.session_ttl_ms,
        challenge_ttl_ms: session.challenge_ttl_ms,
    }))
}

// ---- membership tokens (§8) ------------------------------------------------------------------

/// Membership tokens: the core's service and the host's random source (token IDs).
#[derive(Debug)]
pub struct MembershipTokens {
    service: MembershipTokenService,
    random: Box<dyn RandomSource>,
}

impl MembershipTokens {
    /// `secret` (empty: 32 random bytes) and `options` ([`TokenServiceOptions`]: absent
    /// `maximumTtlMs` is the core's `MAXIMUM_TTL_MS`).
    pub fn new(secret_bytes: &[u8], options: &str, mut random: Box<dyn RandomSource>) -> Res<Self> {
        let options: TokenServiceOptions = read(options, "options")?;
        let secret = secret(secret_bytes, &mut *random)?;
        let service = MembershipTokenService::new(&secret)
            .and_then(|s| {
                s.with_maximum_ttl(options.maximum_ttl_ms.map_or(MAXIMUM_TTL_MS, |t| t.0))
            })
            .map_err(|e| refused(&e))?;
        Ok(Self { service, random })
    }

    /// [`MembershipIssueInput`] → `{claims, token}`.
    pub fn issue(&mut self, args: &str) -> String {
        finish((|| {
            let a: MembershipIssueInput = read(args, "arguments")?;
            let roles = a.roles.unwrap_or_default();
            let binding = MembershipBinding {
                principal_id: &a.principal_id,
                group_id: &a.group_id,
                roles: &roles,
                membership_epoch: a.membership_epoch.0,
                session_epoch: a.session_epoch.0,
            };
            let token_id = id_or_random(a.token_id, &mut *self.random)?;
            let out = self
                .service
                .issue(&binding, a.ttl_ms.0, &token_id, a.now_ms.0)
                .map_err(|e| refused(&e))?;
            Ok(issued(out.claims.to_value(), out.token))
        })())
    }

    /// [`MembershipDocumentIssueInput`] → `{claims, token}`.
    pub fn issue_for_membership(&mut self, args: &str) -> String {
        finish((|| {
            let a: MembershipDocumentIssueInput = read(args, "arguments")?;
            let membership = a.membership.object("membership")?;
            let view = MembershipView::from_document(&membership).map_err(|e| refused(&e))?;
            let token_id = id_or_random(a.token_id, &mut *self.random)?;
            let out = self
                .service
                .issue_for_membership(&view, a.session_epoch.0, a.ttl_ms.0, &token_id, a.now_ms.0)
                .map_err(|e| refused(&e))?;
            Ok(issued(out.claims.to_value(), out.token))
        })())
    }

    /// `token` and [`MembershipVerifyInput`] → the claims.
    pub fn verify(&self, token: &str, args: &str) -> String {
        finish((|| {
            let a: MembershipVerifyInput = read(args, "arguments")?;
            let roles = a.roles.unwrap_or_default();
            let binding = MembershipBinding {
                principal_id: &a.principal_id,
                group_id: &a.group_id,
                roles: &roles,
                membership_epoch: a.membership_epoch.0,
                session_epoch: a.session_epoch.0,
            };
            let claims = self
                .service
                .verify(token, &binding, a.now_ms.0)
                .map_err(|e| refused(&e))?;
            Ok(claims.to_value())
        })())
    }

    /// `token` and [`MembershipDocumentVerifyInput`] → the claims.
    pub fn verify_membership(&self, token: &str, args: &str) -> String {
        finish((|| {
            let a: MembershipDocumentVerifyInput = read(args, "arguments")?;
            let membership = a.membership.object("membership")?;
            let view = MembershipView::from_document(&membership).map_err(|e| refused(&e))?;
            let claims = self
                .service
                .verify_membership(token, &view, a.session_epoch.0, a.now_ms.0)
                .map_err(|e| refused(&e))?;
            Ok(claims.to_value())
        })())
    }
}

// ---- capability grants and execution authorization (§12) ---------------------------------------

/// Capability grants and execution authorization: the core's service and the host's random
/// source (grant IDs).
#[derive(Debug)]
pub struct Authorization {
    service: ExecutionAuthorization,
    random: Box<dyn RandomSource>,
}

fn strings(list: Option<Vec<String>>) -> Vec<String> {
    list.unwrap_or_default()
}

impl Authorization {
    /// `secret` (empty: 32 random bytes) and `options` ([`TokenServiceOptions`]: absent
    /// `maximumTtlMs` is the core's `MAXIMUM_GRANT_TTL_MS`).
    pub fn new(secret_bytes: &[u8], options: &str, mut random: Box<dyn RandomSource>) -> Res<Self> {
        let options: TokenServiceOptions = read(options, "options")?;
        let secret = secret(secret_bytes, &mut *random)?;
        let maximum = options.maximum_ttl_ms.map_or(MAXIMUM_GRANT_TTL_MS, |t| t.0);
        let service = AuthorizationService::new(&secret)
            .and_then(|s| s.with_maximum_ttl(maximum))
            .map(ExecutionAuthorization::new)
            .map_err(|e| refused(&e))?;
        Ok(Self { service, random })
    }

    /// [`GrantIssueInput`] → `{claims, token}` (high-risk requests: `APPROVAL_REQUIRED`).
    pub fn issue(&mut self, args: &str) -> String {
        finish((|| {
            let a: GrantIssueInput = read(args, "arguments")?;
            let lease = missionweaveprotocol_kernel::lease::Lease::from_value(
                &a.execution_lease.object("executionLease")?,
            )
            .map_err(|e| Failure::error(&e))?;
            let (tools, resources, operations) = (
                strings(a.allowed_tools),
                strings(a.allowed_resources),
                strings(a.allowed_operations),
            );
            let scope = CapabilityScope {
                tools: &tools,
                resources: &resources,
                operations: &operations,
                budget: a.budget.map_or(Resources::ZERO, Resources::from),
            };
            let binding = CapabilityBinding {
                worker_id: &a.worker_id,
                session_epoch: a.session_epoch.0,
                work_item_id: &a.work_item_id,
                ownership_epoch: a.ownership_epoch.0,
            };
            let grant_id = id_or_random(a.grant_id, &mut *self.random)?;
            let out = self
                .service
                .authorization()
                .issue(
                    &binding,
                    &lease,
                    &scope,
                    a.high_risk.unwrap_or(false),
                    a.approval_id.as_deref(),
                    a.ttl_ms.0,
                    &grant_id,
                    a.now_ms.0,
                )
                .map_err(|e| refused(&e))?;
            Ok(issued(out.claims.to_value(), out.token))
        })())
    }

    /// `token` and [`GrantVerifyInput`] → the grant.
    pub fn verify(&self, token: &str, args: &str) -> String {
        finish((|| {
            let a: GrantVerifyInput = read(args, "arguments")?;
            let lease = missionweaveprotocol_kernel::lease::Lease::from_value(
                &a.execution_lease.object("executionLease")?,
            )
            .map_err(|e| Failure::error(&e))?;
            let binding = CapabilityBinding {
                worker_id: &a.worker_id,
                session_epoch: a.session_epoch.0,
                work_item_id: &a.work_item_id,
                ownership_epoch: a.ownership_epoch.0,
            };
            let grant = self
                .service
                .authorization()
                .verify(token, &binding, &lease, a.operation.as_deref(), a.now_ms.0)
                .map_err(|e| refused(&e))?;
            Ok(grant.to_value())
        })())
    }

    /// Execution authorization over queried documents ([`AuthorizeExecutionInput`]) →
    /// `{claims, token}`; without `executionApproval`, approval-gated requests are
    /// `APPROVAL_REQUIRED`.
    pub fn authorize_execution(&mut self, args: &str) -> String {
        finish((|| {
            let a: AuthorizeExecutionInput = read(args, "arguments")?;
            let document = |d: Option<crate::shapes::policy::DocumentArg>, name: &str| {
                d.map(|d| d.object(name)).transpose()
            };
            let documents = LiveDocuments {
                session: a.current_session_epoch.map(|e| (a.worker_id.clone(), e.0)),
                work_item: document(a.work_item, "workItem")?,
                execution_lease: document(a.execution_lease, "executionLease")?,
                mission: document(a.mission, "mission")?,
                mission_permissions: a.mission_permissions,
                remaining: a.remaining.into_iter().map(Resources::from).collect(),
            };
            let approvals = document(a.execution_approval, "executionApproval")?;
            let (tools, resources, operations) = (
                strings(a.allowed_tools),
                strings(a.allowed_resources),
                strings(a.allowed_operations),
            );
            let request = ExecutionRequest {
                binding: CapabilityBinding {
                    worker_id: &a.worker_id,
                    session_epoch: a.session_epoch.0,
                    work_item_id: &a.work_item_id,
                    ownership_epoch: a.ownership_epoch.0,
                },
                tools: &tools,
                resources: &resources,
                operations: &operations,
                budget: a.budget.map(Resources::from),
                approval_id: a.approval_id.as_deref(),
                ttl_ms: a.ttl_ms.0,
            };
            let grant_id = id_or_random(a.grant_id, &mut *self.random)?;
            let out = self
                .service
                .issue(
                    &documents,
                    &ApprovalDocuments(approvals.into_iter().collect()),
                    &request,
                    &grant_id,
                    a.now_ms.0,
                )
                .map_err(|e| refused(&e))?;
            Ok(issued(out.claims.to_value(), out.token))
        })())
    }
}

// ---- the budget meter (§12) --------------------------------------------------------------------

/// A hard local budget: `consume` refuses a whole delta that would pass the limit.
#[derive(Debug, Clone)]
pub struct Meter(BudgetMeter);

impl Meter {
    /// `limit`: a [`ResourceInput`] object (absent members 0).
    pub fn new(limit: &str) -> Res<Self> {
        let limit: ResourceInput = read(limit, "limit")?;
        BudgetMeter::new(limit.into())
            .map(Self)
            .map_err(|e| refused(&e))
    }

    /// `delta` ([`ResourceInput`]) → the cumulative usage, or `BUDGET_EXCEEDED`.
    pub fn consume(&mut self, delta: &str) -> String {
        finish((|| {
            let delta: ResourceInput = read(delta, "delta")?;
            let usage = self.0.consume(&delta.into()).map_err(|e| refused(&e))?;
            Ok(resources_to_value(&usage))
        })())
    }

    /// The cumulative usage so far.
    pub fn usage(&self) -> String {
        finish(Ok(resources_to_value(&self.0.usage())))
    }

    /// The limit the meter enforces.
    pub fn limit(&self) -> String {
        finish(Ok(resources_to_value(&self.0.limit())))
    }
}

// ---- the local guard (§20) -----------------------------------------------------------------------

/// A JavaScript number as a count for the guard (`what`: the argument's name).
fn count(value: f64, what: &str) -> Res<u64> {
    if value.is_finite() && value.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&value) {
        // Exact: an integer within u32 converts without rounding.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        Ok(value as u64)
    } else {
        Err(Failure::error(&missionweaveprotocol::ArgumentError::new(
            what,
            "must be an integer in 0..2^32-1",
        )))
    }
}

/// A JavaScript number as an instant (integer milliseconds within ±(2^53 − 1)).
fn instant(value: f64, what: &str) -> Res<UnixMillis> {
    crate::auth::instant(value, what)
}

/// The local delegation-depth, queue, clarification and rate guard.
#[derive(Debug, Clone)]
pub struct Guard(PolicyGuard);

impl Guard {
    /// `limits`: [`GuardLimitsInput`] (absent or `null` members keep the reference's defaults).
    pub fn new(limits: &str) -> Res<Self> {
        let l: GuardLimitsInput = read(limits, "limits")?;
        let given = |n: Option<u32>| n.map_or(Limit::Default, Limit::At);
        let limits = CooperationLimitsConfig {
            maximum_delegation_depth: given(l.maximum_delegation_depth),
            maximum_queued_work_items: given(l.maximum_queued_work_items),
            maximum_active_work_items: given(l.maximum_active_work_items),
            maximum_unresolved_clarifications: given(l.maximum_unresolved_clarifications),
            maximum_message_rate_per_minute: given(l.maximum_message_rate_per_minute),
            maximum_proposal_rate_per_minute: given(l.maximum_proposal_rate_per_minute),
            maximum_clarification_rate_per_minute: given(l.maximum_clarification_rate_per_minute),
            maximum_tracked_keys: l.maximum_tracked_keys,
        }
        .resolve()
        .map_err(|e| Failure::error(&e))?;
        PolicyGuard::new(limits).map(Self).map_err(|e| refused(&e))
    }

    pub fn check_delegation_depth(&self, depth: f64) -> String {
        match count(depth, "depth") {
            Ok(depth) => unit(self.0.check_delegation_depth(depth)),
            Err(failure) => finish(Err(failure)),
        }
    }

    pub fn check_queue(&self, queued: f64, active: f64) -> String {
        match count(queued, "queued").and_then(|q| Ok((q, count(active, "active")?))) {
            Ok((queued, active)) => unit(self.0.check_queue(queued, active)),
            Err(failure) => finish(Err(failure)),
        }
    }

    pub fn check_unresolved_clarifications(&self, unresolved: f64) -> String {
        match count(unresolved, "unresolved") {
            Ok(unresolved) => unit(self.0.check_unresolved_clarifications(unresolved)),
            Err(failure) => finish(Err(failure)),
        }
    }

    /// One Message by `principal_id` in `group_id` at `now`; `RATE_LIMITED` carries
    /// `fields.retryAfterMs`.
    pub fn check_message_rate(&mut self, principal_id: &str, group_id: &str, now: f64) -> String {
        match instant(now, "now") {
            Ok(now) => unit(self.0.check_message_rate(principal_id, group_id, now)),
            Err(failure) => finish(Err(failure)),
        }
    }

    /// One work proposal.
    pub fn check_proposal_rate(&mut self, principal_id: &str, group_id: &str, now: f64) -> String {
        match instant(now, "now") {
            Ok(now) => unit(self.0.check_proposal_rate(principal_id, group_id, now)),
            Err(failure) => finish(Err(failure)),
        }
    }

    /// One clarification request.
    pub fn check_clarification_rate(
        &mut self,
        principal_id: &str,
        group_id: &str,
        now: f64,
    ) -> String {
        match instant(now, "now") {
            Ok(now) => unit(self.0.check_clarification_rate(principal_id, group_id, now)),
            Err(failure) => finish(Err(failure)),
        }
    }

    /// The limits in force (camelCase `CooperationLimits`; `null`: no limit).
    pub fn limits(&self) -> String {
        finish(Ok(cooperation_limits_json(self.0.limits())))
    }

    /// How many (kind, principal, Group) rate windows are held.
    pub fn tracked_keys(&self) -> String {
        finish(Ok(Value::Number(Number::from_u64(
            self.0.tracked_keys() as u64
        ))))
    }
}

/// The reference's §20 defaults (camelCase `CooperationLimits`), from the core's `Default`.
pub fn cooperation_limits_defaults() -> String {
    finish(Ok(cooperation_limits_json(&CooperationLimits::default())))
}

/// `automatic` or `human_approval_required` (the core's high-risk table); not an envelope.
pub fn classify_action(operation: &str) -> String {
    PolicyGuard::classify_action(operation).as_str().to_owned()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use missionweaveprotocol::json::{Value, parse};
    use missionweaveprotocol_agent::auth::SessionConfig;
    use missionweaveprotocol_agent::policy::{MAXIMUM_GRANT_TTL_MS, MAXIMUM_TTL_MS};
    use missionweaveprotocol_kernel::random::{RandomSource, RandomUnavailable};

    use super::{Guard, MembershipTokens, defaults};

    /// A deterministic source (tests only).
    #[derive(Debug)]
    struct Counter(u8);

    impl RandomSource for Counter {
        fn fill(&mut self, out: &mut [u8]) -> Result<(), RandomUnavailable> {
            for byte in out {
                self.0 = self.0.wrapping_add(1);
                *byte = self.0;
            }
            Ok(())
        }
    }

    /// A source that always fails.
    #[derive(Debug)]
    struct Broken;

    impl RandomSource for Broken {
        fn fill(&mut self, _: &mut [u8]) -> Result<(), RandomUnavailable> {
            Err(RandomUnavailable)
        }
    }

    const SECRET: &[u8] = b"0123456789abcdef0123456789abcdef";
    const T0: i64 = 1_784_107_800_000;

    fn envelope(text: &str) -> Value {
        parse(text.as_bytes()).expect("an envelope is JSON")
    }

    fn ok(text: &str) -> Value {
        envelope(text).get("ok").cloned().expect(text)
    }

    /// `class/code/reason argument` of an error envelope.
    fn refusal(text: &str) -> String {
        let e = envelope(text);
        let at = |p: &str| {
            e.pointer(p)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        format!(
            "{}/{}/{} {}",
            at("/error/class"),
            at("/error/code"),
            at("/error/reason"),
            at("/error/fields/argument")
        )
    }

    fn issue_args(ttl_ms: u64, extra: &str) -> String {
        format!(
            r#"{{"principalId":"urn:a","groupId":"urn:g","roles":["worker"],"membershipEpoch":2,
            "sessionEpoch":3,"ttlMs":{ttl_ms},"nowMs":{T0}{extra}}}"#
        )
    }

    #[test]
    fn the_constants_are_the_cores() {
        let d = ok(&defaults());
        let n = |name: &str| {
            d.get(name)
                .and_then(Value::as_number)
                .and_then(|n| n.as_u64())
        };
        let session = SessionConfig::default();
        assert_eq!(n("membershipTokenMaximumTtlMs"), Some(MAXIMUM_TTL_MS));
        assert_eq!(n("capabilityGrantMaximumTtlMs"), Some(MAXIMUM_GRANT_TTL_MS));
        assert_eq!(n("sessionTtlMs"), Some(session.session_ttl_ms));
        assert_eq!(n("challengeTtlMs"), Some(session.challenge_ttl_ms));
    }

    #[test]
    fn an_absent_maximum_is_the_cores_and_ids_come_from_the_host() {
        let mut tokens = MembershipTokens::new(SECRET, "{}", Box::new(Counter(0))).unwrap();
        let issued = ok(&tokens.issue(&issue_args(MAXIMUM_TTL_MS, "")));
        let token_id = issued.pointer("/claims/tokenId").and_then(Value::as_str);
        assert!(
            token_id.is_some_and(|id| id.starts_with("urn:uuid:")),
            "{token_id:?}"
        );
        assert_eq!(
            refusal(&tokens.issue(&issue_args(MAXIMUM_TTL_MS + 1, ""))),
            "RetryError/INVALID_COMMAND/invalid_argument "
        );
        let token = issued.get("token").and_then(Value::as_str).unwrap();
        let verify = format!(
            r#"{{"principalId":"urn:a","groupId":"urn:g","roles":["worker"],"membershipEpoch":2,"sessionEpoch":3,"nowMs":{}}}"#,
            T0 + 1
        );
        assert_eq!(
            ok(&tokens.verify(token, &verify))
                .get("tokenId")
                .and_then(Value::as_str),
            token_id
        );
    }

    #[test]
    fn shapes_refuse_by_name_with_the_argument_error() {
        let mut tokens = MembershipTokens::new(SECRET, "{}", Box::new(Counter(0))).unwrap();
        assert_eq!(
            refusal(&tokens.issue(&issue_args(1000, r#","colour":"red""#))),
            "ArgumentError/PROTOCOL_VIOLATION/invalid-argument arguments.colour"
        );
        assert_eq!(
            refusal(&tokens.issue(r#"{"groupId":"urn:g"}"#)),
            "ArgumentError/PROTOCOL_VIOLATION/invalid-argument arguments.principalId"
        );
        let refused = MembershipTokens::new(SECRET, r#"{"maximumTtlMs":-1}"#, Box::new(Broken))
            .map(|_| ())
            .unwrap_err();
        assert_eq!(
            refusal(&crate::finish(Err(refused))),
            "ArgumentError/PROTOCOL_VIOLATION/invalid-argument options.maximumTtlMs"
        );
    }

    #[test]
    fn a_failing_random_source_refuses_instead_of_guessing() {
        assert!(MembershipTokens::new(&[], "{}", Box::new(Broken)).is_err());
        let mut tokens = MembershipTokens::new(SECRET, "{}", Box::new(Broken)).unwrap();
        assert!(refusal(&tokens.issue(&issue_args(1000, ""))).starts_with("ArgumentError/"));
        // A token ID of the caller's own draws nothing.
        assert!(
            ok(&tokens.issue(&issue_args(1000, r#","tokenId":"urn:t:1""#)))
                .as_object()
                .is_some()
        );
    }

    #[test]
    fn guard_counts_are_checked_here_and_ranges_by_the_core() {
        let mut guard = Guard::new(r#"{"maximumMessageRatePerMinute":1}"#).unwrap();
        assert_eq!(
            refusal(&guard.check_queue(-1.0, 0.0)),
            "ArgumentError/PROTOCOL_VIOLATION/invalid-argument queued"
        );
        assert_eq!(
            refusal(&guard.check_delegation_depth(4.0)),
            "RetryError/RATE_LIMITED/threshold_reached "
        );
        assert_eq!(
            ok(&guard.check_message_rate("a", "g", T0 as f64)),
            Value::Null
        );
        assert_eq!(
            refusal(&guard.check_message_rate("a", "g", T0 as f64)),
            "RetryError/RATE_LIMITED/rate_limited "
        );
        assert!(refusal(&guard.check_proposal_rate("a", "g", 0.5)).starts_with("ArgumentError/"));
    }
}
