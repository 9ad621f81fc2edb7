//! Bounded authority through JavaScript: fenced leases, the budget ledger, Delegation Grants
//! and retries. Each handle owns one core object; every call takes its arguments as one JSON
//! array read into the types of [`crate::shapes::authority`] and returns an envelope. Core
//! errors are described by the core ([`Failure::error`]).

use missionweaveprotocol::json::{Value, parse};
use missionweaveprotocol_kernel::budget::BudgetLedgerSnapshot;
use missionweaveprotocol_kernel::budget::{AccountKind, BudgetError, BudgetLedger};
use missionweaveprotocol_kernel::capability_version::CapabilityRef;
use missionweaveprotocol_kernel::delegation::{
    DelegatedWork, DelegationAuthority, DelegationContext, DelegationViolation, MembershipView,
    WorkItemNode, WorkItemTree,
};
use missionweaveprotocol_kernel::lease::{Lease, LeaseClaim, LeaseError, LeaseState};
use missionweaveprotocol_kernel::resources::{Currency, MAX_SAFE_INTEGER, Resources};
use missionweaveprotocol_kernel::retry::{
    AttemptOutcome, Backoff, RetryController, RetryError, RetryPolicy, RetrySnapshot,
    derived_attempt_key, idempotency_key, parse_duration_ms,
};
use missionweaveprotocol_kernel::snapshot_json::SnapshotFormatError;

use crate::envelope::{Failure, Obj};
use crate::shapes::authority::{
    AttemptAnswer, AttemptOutcomeInput, BackoffName, BlockedLeaseFields, CoordinatorLeaseFields,
    DelegatedWorkInput, DelegationContextInput, DelegationGrantAnswer, DelegationGrantFields,
    DelegationViolationAnswer, LeaseClaim as LeaseClaimInput, LeaseCloseAnswer, LeaseStateAnswer,
    OwnershipLeaseFields, RetryOptions, RetryScheduleAnswer, RetryStateAnswer, WorkItems,
    WorkLeaseFields,
};
use crate::shapes::common::{
    CurrencyCode, Millis, ResourceAmounts, ResourceInput, Safe, capability_refs,
};
use crate::shapes::{Call, Res, answer};

/// A resource amount answer (all six members).
fn amounts(r: Resources) -> Res<Value> {
    answer(&ResourceAmounts::from(r))
}

pub(crate) fn snapshot_failure(e: &SnapshotFormatError) -> Failure {
    Failure::error(e)
}

/// Parses a snapshot document given as JSON text (the wrapper passes it unchanged).
pub(crate) fn snapshot_text(text: &str) -> Res<Value> {
    parse(text.as_bytes()).map_err(|e| Failure::error(&e))
}

// ---- leases --------------------------------------------------------------------------------

fn lease_failure(e: &LeaseError) -> Failure {
    Failure::error(e)
}

fn lease_state(name: &str) -> Res<LeaseState> {
    LeaseState::parse(name)
        .ok_or_else(|| Failure::argument(format!("state: unknown lease state {name:?}")))
}

/// One fenced lease (any of the four types).
#[derive(Debug, Clone)]
pub struct LeaseHandle(Lease);

impl LeaseHandle {
    /// `lease_type` execution, ownership, blocked or coordinator with `[fields]` (the type's
    /// `…LeaseFields`), or `document` with `[documentText]`.
    pub fn new(lease_type: &str, args: &str) -> Res<Self> {
        let a = Call::parse(args)?;
        let lease = match lease_type {
            // A `lease.schema.json` document read back through the core.
            "document" => {
                return Lease::from_json(a.arg::<String>(0, "document")?.as_bytes())
                    .map(Self)
                    .map_err(|e| Failure::error(&e));
            }
            "execution" => {
                let f: WorkLeaseFields = a.arg(0, "lease")?;
                let (binding, window) = f.binding();
                Lease::execution(binding, &f.work_item_id, f.ownership_epoch.0, window)
            }
            "ownership" => {
                let f: OwnershipLeaseFields = a.arg(0, "lease")?;
                let (binding, window) = f.binding();
                let (item, epoch) = (&f.work_item_id, f.ownership_epoch.0);
                Lease::ownership(binding, item, epoch, f.start_by.0, window)
            }
            "blocked" => {
                let f: BlockedLeaseFields = a.arg(0, "lease")?;
                let (binding, window) = f.binding();
                let grace = f.grace_expires_at.map(|m| m.0);
                Lease::blocked(binding, &f.work_item_id, f.ownership_epoch.0, window, grace)
            }
            "coordinator" => {
                let f: CoordinatorLeaseFields = a.arg(0, "lease")?;
                let (binding, window) = f.binding();
                Lease::coordinator(binding, f.coordinator_epoch.0, window)
            }
            other => {
                return Err(Failure::argument(format!(
                    "unknown lease type {other:?} (expected execution, ownership, blocked or coordinator)"
                )));
            }
        };
        lease.map(Self).map_err(|e| lease_failure(&e))
    }

    fn state(&self) -> Res<Value> {
        answer(&LeaseStateAnswer::from(&self.0))
    }

    pub fn call(&mut self, method: &str, args: &str) -> Res<Value> {
        let a = Call::parse(args)?;
        let lease = &mut self.0;
        let time = |index, name| a.arg::<Millis>(index, name).map(|m| m.0);
        match method {
            "state" => self.state(),
            "stateAt" => answer(&lease.state_at(time(0, "now")?).as_str()),
            "isLive" => answer(&lease.is_live(time(0, "now")?)),
            "renew" => {
                lease
                    .renew(time(0, "at")?, time(1, "expiresAt")?)
                    .map_err(|e| lease_failure(&e))?;
                self.state()
            }
            "close" => {
                let state = lease_state(&a.arg::<String>(0, "state")?)?;
                let changed = lease
                    .close(state, time(1, "at")?, &a.arg::<String>(2, "reason")?)
                    .map_err(|e| lease_failure(&e))?;
                answer(&LeaseCloseAnswer {
                    changed,
                    lease: LeaseStateAnswer::from(&self.0),
                })
            }
            "checkClaim" => {
                let c: LeaseClaimInput = a.arg(0, "claim")?;
                let claim = LeaseClaim {
                    agent_id: &c.agent_id,
                    lease_id: &c.lease_id,
                    session_epoch: c.session_epoch,
                    ownership_epoch: c.ownership_epoch,
                    coordinator_epoch: c.coordinator_epoch,
                };
                lease
                    .check_claim(&claim, time(1, "now")?)
                    .map_err(|e| lease_failure(&e))?;
                Ok(Value::Null)
            }
            "checkStartBy" => {
                lease
                    .check_start_by(time(0, "now")?)
                    .map_err(|e| lease_failure(&e))?;
                Ok(Value::Null)
            }
            "toJSON" => answer(&lease.to_json_string().map_err(|e| lease_failure(&e))?),
            other => Err(unknown_method("ExecutionLease", other)),
        }
    }
}

pub(crate) fn unknown_method(class: &str, method: &str) -> Failure {
    Failure::argument(format!("{class} has no method {method:?}"))
}

// ---- budget ledger -------------------------------------------------------------------------

pub(crate) fn budget_failure(e: &BudgetError) -> Failure {
    Failure::error(e)
}

fn account_kind(name: &str) -> Res<AccountKind> {
    AccountKind::parse(name).ok_or_else(|| {
        Failure::argument(format!(
            "account kind {name:?} (expected mission or work_item)"
        ))
    })
}

/// The hierarchical six-dimensional ledger.
#[derive(Debug, Clone)]
pub struct LedgerHandle(BudgetLedger);

impl LedgerHandle {
    /// `mode` `new` (`[]`) or `rebuild` (`[snapshotJsonText]`).
    pub fn new(mode: &str, args: &str) -> Res<Self> {
        let a = Call::parse(args)?;
        match mode {
            "new" => Ok(Self(BudgetLedger::new())),
            "rebuild" => {
                let doc = snapshot_text(&a.arg::<String>(0, "snapshot")?)?;
                let snap =
                    BudgetLedgerSnapshot::from_value(&doc).map_err(|e| snapshot_failure(&e))?;
                BudgetLedger::rebuild(&snap)
                    .map(Self)
                    .map_err(|e| budget_failure(&e))
            }
            other => Err(Failure::argument(format!("unknown ledger mode {other:?}"))),
        }
    }

    pub fn call(&mut self, method: &str, args: &str) -> Res<Value> {
        let a = Call::parse(args)?;
        let ledger = &mut self.0;
        let fail = |e: BudgetError| budget_failure(&e);
        let text = |index, name| a.arg::<String>(index, name);
        let amount = |index, name| a.arg::<ResourceInput>(index, name).map(Resources::from);
        let account = || -> Res<(AccountKind, String)> {
            Ok((
                account_kind(&text(0, "account kind")?)?,
                text(1, "account id")?,
            ))
        };
        match method {
            "registerMission" => {
                let id = text(0, "missionId")?;
                let limit = amount(1, "limit")?;
                let currency = a.arg::<Option<CurrencyCode>>(2, "currency")?.map(|c| c.0);
                match a.arg::<Option<String>>(3, "parentWorkItemId")? {
                    Some(parent) => ledger.register_child_mission(&id, &parent, currency, limit),
                    None => ledger.register_mission(&id, currency, limit),
                }
                .map_err(fail)?;
                Ok(Value::Null)
            }
            "registerWorkItem" => {
                let limit = amount(2, "limit")?;
                let parent = a.arg::<Option<String>>(3, "parentWorkItemId")?;
                ledger
                    .register_work_item(
                        &text(0, "workItemId")?,
                        &text(1, "missionId")?,
                        parent.as_deref(),
                        limit,
                    )
                    .map_err(fail)?;
                Ok(Value::Null)
            }
            "consume" => {
                let delta = amount(1, "delta")?;
                amounts(
                    ledger
                        .consume(&text(0, "workItemId")?, &delta)
                        .map_err(fail)?,
                )
            }
            "remaining" | "usage" | "limit" | "reserved" => {
                let (kind, id) = account()?;
                let r = match method {
                    "remaining" => ledger.remaining(kind, &id),
                    "usage" => ledger.usage(kind, &id),
                    "limit" => ledger.limit(kind, &id),
                    _ => ledger.reserved(kind, &id),
                }
                .map_err(fail)?;
                amounts(r)
            }
            "currency" => {
                let (kind, id) = account()?;
                answer(
                    &ledger
                        .currency(kind, &id)
                        .map_err(fail)?
                        .map(|c| c.as_str().to_owned()),
                )
            }
            "depth" => {
                let (kind, id) = account()?;
                answer(&ledger.depth(kind, &id).map_err(fail)?)
            }
            "size" => answer(&ledger.len()),
            "snapshot" => Ok(ledger.snapshot().to_value()),
            other => Err(unknown_method("BudgetLedger", other)),
        }
    }
}

// ---- delegation ----------------------------------------------------------------------------

fn violation_failure(v: &DelegationViolation) -> Failure {
    Failure::error(v)
}

/// The caller's WorkItem graph as the core reads it.
struct Tree(WorkItems);

impl WorkItemTree for Tree {
    fn node(&self, work_item_id: &str) -> Option<WorkItemNode<'_>> {
        self.0.0.get(work_item_id).map(|n| WorkItemNode {
            mission_id: &n.mission_id,
            parent_work_item_id: n.parent_work_item_id.as_deref(),
            closed: n.closed.unwrap_or(false),
        })
    }
}

/// The core's view of a [`DelegationContextInput`].
fn context_view(c: &DelegationContextInput) -> DelegationContext<'_> {
    DelegationContext {
        actor_agent_id: &c.actor_agent_id,
        membership: c.membership.as_ref().map(|m| MembershipView {
            group_id: &m.group_id,
            active: m.active.unwrap_or(true),
            work_delegate: m.work_delegate.unwrap_or(true),
            epoch: m.epoch,
        }),
        mission_id: &c.mission_id,
        group_id: &c.group_id,
        coordinator_epoch: c.coordinator_epoch,
        coordinator_agent_id: &c.coordinator_agent_id,
        // The reference's CooperationLimits.maximum_delegation_depth default.
        organization_max_depth: c.organization_max_depth.unwrap_or(3),
        now: c.now.0,
    }
}

/// The work of a use, with its capability references already parsed.
struct Work {
    caps: Vec<CapabilityRef>,
    budget: Resources,
    currency: Option<Currency>,
}

impl From<DelegatedWorkInput> for Work {
    fn from(w: DelegatedWorkInput) -> Self {
        Self {
            caps: capability_refs(w.required_capabilities.unwrap_or_default()),
            budget: w.budget.unwrap_or_default().into(),
            currency: w.currency.map(|c| c.0),
        }
    }
}

impl Work {
    fn view(&self) -> DelegatedWork<'_> {
        DelegatedWork {
            required_capabilities: &self.caps,
            budget: self.budget,
            currency: self.currency,
        }
    }
}

/// One Delegation Grant and the uses charged to it.
#[derive(Debug, Clone)]
pub struct AuthorityHandle(DelegationAuthority);

impl AuthorityHandle {
    /// `args`: `[grant]` ([`DelegationGrantFields`]).
    pub fn new(args: &str) -> Res<Self> {
        let a = Call::parse(args)?;
        let grant: DelegationGrantFields = a.arg(0, "grant")?;
        DelegationAuthority::new(grant.into())
            .map(Self)
            .map_err(|v| violation_failure(&v))
    }

    pub fn call(&mut self, method: &str, args: &str) -> Res<Value> {
        let a = Call::parse(args)?;
        let auth = &mut self.0;
        let fail = |v: DelegationViolation| violation_failure(&v);
        let text = |index, name| a.arg::<String>(index, name);
        let context = || a.arg::<DelegationContextInput>(0, "context");
        let tree = || a.arg::<WorkItems>(1, "workItems").map(Tree);
        let work = |index| a.arg::<DelegatedWorkInput>(index, "work").map(Work::from);
        match method {
            "grant" => answer(&DelegationGrantAnswer::from(auth.grant())),
            "charged" => amounts(auth.charged()),
            "remaining" => amounts(auth.remaining()),
            "invalidated" => answer(&auth.invalidated().map(DelegationViolationAnswer::from)),
            "checkUse" => {
                let (ctx, tree) = (context()?, tree()?);
                auth.check_use(&context_view(&ctx), &tree).map_err(fail)?;
                Ok(Value::Null)
            }
            "authorizeExisting" => {
                let (ctx, tree) = (context()?, tree()?);
                let (id, work) = (text(2, "workItemId")?, work(3)?);
                let depth = auth
                    .authorize_offer(&context_view(&ctx), &tree, &id, &work.view())
                    .map_err(fail)?;
                answer(&depth)
            }
            "authorizeDescendant" => {
                let (ctx, tree) = (context()?, tree()?);
                let (id, parent) = (text(2, "newWorkItemId")?, text(3, "parentWorkItemId")?);
                let work = work(4)?;
                let depth = auth
                    .authorize_descendant(&context_view(&ctx), &tree, &id, &parent, &work.view())
                    .map_err(fail)?;
                answer(&depth)
            }
            "restoreAttribution" => {
                let budget = Resources::from(a.arg::<ResourceInput>(1, "budget")?);
                auth.restore_attribution(&text(0, "workItemId")?, &budget)
                    .map_err(fail)?;
                Ok(Value::Null)
            }
            other => Err(unknown_method("DelegationAuthority", other)),
        }
    }
}

// ---- retries -------------------------------------------------------------------------------

fn retry_failure(e: &RetryError) -> Failure {
    Failure::error(e)
}

/// One WorkItem's retry budgets under one Ownership Epoch.
#[derive(Debug, Clone)]
pub struct RetryHandle(RetryController);

impl RetryHandle {
    /// `args`: `[options]` ([`RetryOptions`]).
    pub fn new(args: &str) -> Res<Self> {
        let a = Call::parse(args)?;
        let o: RetryOptions = a.arg(0, "options")?;
        let p = o.policy;
        let backoff = match p.backoff.unwrap_or(BackoffName::Exponential) {
            BackoffName::None => Backoff::None,
            BackoffName::Fixed => Backoff::Fixed,
            BackoffName::Exponential => Backoff::Exponential,
        };
        let max_delay_ms = match (p.max_delay_ms, p.max_delay) {
            (Some(ms), None) => ms.0,
            (None, Some(text)) => parse_duration_ms(&text).ok_or_else(|| {
                Failure::argument("options.policy.maxDelay: not a duration (P[nD][T[nH][nM][nS]])")
            })?,
            (None, None) => 0,
            (Some(_), Some(_)) => {
                return Err(Failure::argument(
                    "options.policy: give maxDelayMs or maxDelay, not both",
                ));
            }
        };
        let policy = RetryPolicy {
            max_attempts: p.max_attempts,
            backoff,
            initial_delay_ms: p.initial_delay_ms.map_or(max_delay_ms.min(1000), |ms| ms.0),
            max_delay_ms,
            retryable_failures: p.retryable_failures.unwrap_or_default(),
        };
        RetryController::new(
            policy,
            o.deadline.map(|m| m.0),
            o.cost_budget.unwrap_or_default().into(),
            &o.mission_id,
            &o.work_item_id,
            o.ownership_epoch,
        )
        .map(Self)
        .map_err(|e| retry_failure(&e))
    }

    /// `args`: `[snapshotText]`, a [`RetryController::snapshot`] document (§11.4: the retry
    /// bounds survive a Worker restart). A malformed, other-version, tampered (`integrity`) or
    /// unreachable state is the core's `SnapshotError` (`INTERNAL_ERROR`).
    pub fn restore(args: &str) -> Res<Self> {
        let a = Call::parse(args)?;
        let doc = snapshot_text(&a.arg::<String>(0, "snapshot")?)?;
        RetrySnapshot::from_value(&doc)
            .and_then(|s| RetryController::restore(&s))
            .map(Self)
            .map_err(|e| Failure::error(&e))
    }

    pub fn call(&mut self, method: &str, args: &str) -> Res<Value> {
        let a = Call::parse(args)?;
        let c = &mut self.0;
        let fail = |e: RetryError| retry_failure(&e);
        let now = |index| a.arg::<Millis>(index, "now").map(|m| m.0);
        let operation = || a.arg::<String>(0, "logicalOperationId");
        match method {
            "state" => answer(&RetryStateAnswer {
                attempts: c.attempts(),
                usage: c.usage().into(),
                finished: c.finished().map(|r| r.as_str()),
            }),
            "idempotencyKey" => answer(&c.idempotency_key(&operation()?)),
            "begin" => {
                let attempt = c.begin(&operation()?, now(1)?).map_err(fail)?;
                answer(&AttemptAnswer {
                    attempt_number: attempt.attempt_number,
                    idempotency_key: attempt.idempotency_key,
                    attempt_key: attempt.attempt_key,
                    started_at: attempt.started_at.into(),
                })
            }
            "finish" => {
                let o: AttemptOutcomeInput = a.arg(0, "outcome")?;
                let outcome = if o.success {
                    AttemptOutcome::Succeeded
                } else {
                    AttemptOutcome::Failed {
                        code: o.code.as_deref(),
                        retryable: o.retryable.unwrap_or(true),
                    }
                };
                let s = c.finish(outcome, now(1)?).map_err(fail)?;
                answer(&RetryScheduleAnswer {
                    retry: s.retry,
                    retry_at: s.retry_at.map(Millis),
                    reason: s.reason.as_str(),
                })
            }
            "consume" => {
                let delta = Resources::from(a.arg::<ResourceInput>(0, "delta")?);
                amounts(c.consume(&delta).map_err(fail)?)
            }
            "snapshot" => Ok(c.snapshot().to_value()),
            "currentAttempt" => Ok(c.current_attempt().map_or(Value::Null, |(op, at)| {
                Obj::new()
                    .str("logicalOperationId", op)
                    .int("startedAt", at.0)
                    .build()
            })),
            other => Err(unknown_method("RetryController", other)),
        }
    }
}

/// Stateless functions: `idempotencyKey`, `derivedAttemptKey`, `parseDurationMs`.
pub fn call_function(method: &str, args: &str) -> Res<Value> {
    let a = Call::parse(args)?;
    let text = |index, name| a.arg::<String>(index, name);
    match method {
        "idempotencyKey" => {
            let epoch: Safe = a.arg(2, "ownershipEpoch")?;
            let key = idempotency_key(
                &text(0, "missionId")?,
                &text(1, "workItemId")?,
                epoch.0,
                &text(3, "logicalOperationId")?,
            )
            .ok_or_else(|| {
                Failure::argument("ownershipEpoch: expected an integer in 1..=2^53-1")
            })?;
            answer(&key)
        }
        "derivedAttemptKey" => answer(&derived_attempt_key(
            &text(0, "idempotencyKey")?,
            a.arg(1, "attempt")?,
        )),
        // §11.5: the offline extension's URI and version and the reversible kinds.
        "offlineConstants" => Ok(crate::offline::constants()),
        // The core's spelling lists, for the package's own enum objects to be tested against.
        "vocabularies" => {
            let mut out = missionweaveprotocol::json::Object::new();
            for (name, values) in missionweaveprotocol_engine::vocabularies() {
                out.insert(
                    name,
                    Value::Array(values.into_iter().map(Value::string).collect()),
                );
            }
            // The Error subclass this package shows for each error class.
            let mut classes = missionweaveprotocol::json::Object::new();
            for class in missionweaveprotocol::ErrorClass::ALL {
                classes.insert(class.as_str(), Value::string(class.js_name()));
            }
            out.insert("js_error_class", Value::Object(classes));
            // The Core's one table: the reference ErrorCode family of every §19 wire code.
            let mut families = missionweaveprotocol::json::Object::new();
            for (code, family) in missionweaveprotocol_engine::service::wire_code_families() {
                families.insert(code, Value::string(family));
            }
            out.insert("wire_code_family", Value::Object(families));
            Ok(Value::Object(out))
        }
        // The human control interface (reference §1.6).
        "controlCommand" => crate::control::command(args),
        "controlApproval" => crate::control::approval(args),
        "controlVerify" => crate::control::verify(args),
        "parseDurationMs" => {
            let duration = text(0, "duration")?;
            let ms = parse_duration_ms(&duration)
                .filter(|v| *v <= MAX_SAFE_INTEGER)
                .ok_or_else(|| Failure::argument(format!("not a duration: {duration:?}")))?;
            answer(&ms)
        }
        other => Err(Failure::argument(format!("no function {other:?}"))),
    }
}

#[cfg(test)]
mod retry_snapshot_tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use missionweaveprotocol::json::{Value, canonical_bytes};

    use crate::Handle;

    const OPTIONS: &str = r#"[{"policy":{"maxAttempts":3,"backoff":"fixed","initialDelayMs":10,"maxDelayMs":10},
        "missionId":"urn:m","workItemId":"urn:w","ownershipEpoch":1}]"#;

    fn ok(envelope: &str) -> Value {
        let parsed = missionweaveprotocol::json::parse(envelope.as_bytes()).unwrap();
        parsed.get("ok").cloned().expect(envelope)
    }

    fn error_class(envelope: &str) -> String {
        let parsed = missionweaveprotocol::json::parse(envelope.as_bytes()).unwrap();
        let error = parsed.get("error").expect(envelope);
        format!(
            "{}/{}",
            error.get("class").and_then(Value::as_str).unwrap(),
            error.get("code").and_then(Value::as_str).unwrap()
        )
    }

    fn text(value: &Value) -> String {
        String::from_utf8(canonical_bytes(value).unwrap()).unwrap()
    }

    #[test]
    fn a_restored_controller_keeps_attempts_and_the_attempt_in_flight() {
        let mut retry = Handle::new("retry", "new", OPTIONS);
        ok(&retry.call("begin", r#"["op",1000]"#));
        ok(&retry.call("finish", r#"[{"success":false,"retryable":true},1001]"#));
        ok(&retry.call("begin", r#"["op",1100]"#));
        let snapshot = ok(&retry.call("snapshot", "[]"));
        let args = format!("[{}]", serde_json::to_string(&text(&snapshot)).unwrap());
        let mut restored = Handle::new("retry", "restore", &args);
        assert_eq!(restored.status(), r#"{"ok":null}"#);
        assert_eq!(
            ok(&restored.call("state", "[]")),
            ok(&retry.call("state", "[]"))
        );
        let current = ok(&restored.call("currentAttempt", "[]"));
        assert_eq!(
            current.get("logicalOperationId").and_then(Value::as_str),
            Some("op")
        );
        assert_eq!(ok(&restored.call("snapshot", "[]")), snapshot);
        assert_eq!(
            ok(&Handle::new("retry", "new", OPTIONS).call("currentAttempt", "[]")),
            Value::Null
        );
    }

    #[test]
    fn a_tampered_or_malformed_snapshot_is_refused() {
        let mut retry = Handle::new("retry", "new", OPTIONS);
        ok(&retry.call("begin", r#"["op",1000]"#));
        let snapshot = text(&ok(&retry.call("snapshot", "[]")));
        let tampered = snapshot.replace(r#""attempts":1"#, r#""attempts":2"#);
        assert_ne!(tampered, snapshot);
        let args = format!("[{}]", serde_json::to_string(&tampered).unwrap());
        assert_eq!(
            error_class(&Handle::new("retry", "restore", &args).status()),
            "SnapshotError/INTERNAL_ERROR"
        );
        assert!(
            error_class(&Handle::new("retry", "restore", r#"["{}"]"#).status())
                .starts_with("SnapshotError/")
        );
        assert!(
            error_class(&Handle::new("retry", "restore", "[1]").status())
                .starts_with("ArgumentError/")
        );
    }
}
