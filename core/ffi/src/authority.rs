//! Bounded authority through JavaScript: fenced leases, the budget ledger, Delegation Grants
//! and retries. Each handle owns one core object and has one method per operation (an unknown
//! operation does not compile); a method takes its arguments as one JSON array read into the
//! types of [`crate::shapes::authority`] and returns an envelope. Core errors are described by
//! the core ([`Failure::error`]).

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

use missionweaveprotocol_kernel::cooperation::CooperationLimits;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

use crate::envelope::{Failure, Obj, finish};
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
use crate::shapes::{Call, Res, answer, run};

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

/// A time argument (`Millis`) at `index`, called `name` in errors.
fn time(a: &Call<'_>, index: usize, name: &str) -> Res<UnixMillis> {
    a.arg::<Millis>(index, name).map(|m| m.0)
}

fn null(result: Result<(), Failure>) -> Res<Value> {
    result.map(|()| Value::Null)
}

/// One fenced lease (any of the four types, §11.3).
#[derive(Debug, Clone)]
pub struct LeaseHandle(Lease);

impl LeaseHandle {
    fn made(lease: Result<Lease, LeaseError>) -> Res<Self> {
        lease.map(Self).map_err(|e| lease_failure(&e))
    }

    /// `[fields]` ([`WorkLeaseFields`]): an execution lease.
    pub fn execution(args: &str) -> Res<Self> {
        let f: WorkLeaseFields = Call::parse(args)?.arg(0, "lease")?;
        let (binding, window) = f.binding();
        Self::made(Lease::execution(
            binding,
            &f.work_item_id,
            f.ownership_epoch.0,
            window,
        ))
    }

    /// `[fields]` ([`OwnershipLeaseFields`]): queued ownership with a start-by deadline.
    pub fn ownership(args: &str) -> Res<Self> {
        let f: OwnershipLeaseFields = Call::parse(args)?.arg(0, "lease")?;
        let (binding, window) = f.binding();
        let (item, epoch) = (&f.work_item_id, f.ownership_epoch.0);
        Self::made(Lease::ownership(binding, item, epoch, f.start_by.0, window))
    }

    /// `[fields]` ([`BlockedLeaseFields`]): ownership retained while blocked.
    pub fn blocked(args: &str) -> Res<Self> {
        let f: BlockedLeaseFields = Call::parse(args)?.arg(0, "lease")?;
        let (binding, window) = f.binding();
        let grace = f.grace_expires_at.map(|m| m.0);
        Self::made(Lease::blocked(
            binding,
            &f.work_item_id,
            f.ownership_epoch.0,
            window,
            grace,
        ))
    }

    /// `[fields]` ([`CoordinatorLeaseFields`]): the Coordinator's lease.
    pub fn coordinator(args: &str) -> Res<Self> {
        let f: CoordinatorLeaseFields = Call::parse(args)?.arg(0, "lease")?;
        let (binding, window) = f.binding();
        Self::made(Lease::coordinator(binding, f.coordinator_epoch.0, window))
    }

    /// `[documentText]`: a `lease.schema.json` document read back through the core.
    pub fn from_document(args: &str) -> Res<Self> {
        let text = Call::parse(args)?.arg::<String>(0, "document")?;
        Lease::from_json(text.as_bytes())
            .map(Self)
            .map_err(|e| Failure::error(&e))
    }

    fn answer_state(&self) -> Res<Value> {
        answer(&LeaseStateAnswer::from(&self.0))
    }

    /// The full state ([`LeaseStateAnswer`]).
    pub fn state(&self) -> String {
        finish(self.answer_state())
    }

    /// `[now]`: the observed state at `now`.
    pub fn state_at(&self, args: &str) -> String {
        run(args, |a| {
            answer(&self.0.state_at(time(a, 0, "now")?).as_str())
        })
    }

    /// `[now]`.
    pub fn is_live(&self, args: &str) -> String {
        run(args, |a| answer(&self.0.is_live(time(a, 0, "now")?)))
    }

    /// `[at, expiresAt]` → the state after the renewal.
    pub fn renew(&mut self, args: &str) -> String {
        run(args, |a| {
            self.0
                .renew(time(a, 0, "at")?, time(a, 1, "expiresAt")?)
                .map_err(|e| lease_failure(&e))?;
            self.answer_state()
        })
    }

    /// `[state, at, reason]` → [`LeaseCloseAnswer`].
    pub fn close(&mut self, args: &str) -> String {
        run(args, |a| {
            let state = lease_state(&a.arg::<String>(0, "state")?)?;
            let changed = self
                .0
                .close(state, time(a, 1, "at")?, &a.arg::<String>(2, "reason")?)
                .map_err(|e| lease_failure(&e))?;
            answer(&LeaseCloseAnswer {
                changed,
                lease: LeaseStateAnswer::from(&self.0),
            })
        })
    }

    /// `[claim, now]`: the fencing check of a lease-bound Command.
    pub fn check_claim(&self, args: &str) -> String {
        run(args, |a| {
            let c: LeaseClaimInput = a.arg(0, "claim")?;
            let claim = LeaseClaim {
                agent_id: &c.agent_id,
                lease_id: &c.lease_id,
                session_epoch: c.session_epoch,
                ownership_epoch: c.ownership_epoch,
                coordinator_epoch: c.coordinator_epoch,
            };
            null(
                self.0
                    .check_claim(&claim, time(a, 1, "now")?)
                    .map_err(|e| lease_failure(&e)),
            )
        })
    }

    /// `[now]`: may the work of an ownership lease start?
    pub fn check_start_by(&self, args: &str) -> String {
        run(args, |a| {
            null(
                self.0
                    .check_start_by(time(a, 0, "now")?)
                    .map_err(|e| lease_failure(&e)),
            )
        })
    }

    /// The `lease.schema.json` document, RFC 8785 text.
    pub fn to_json(&self) -> String {
        finish(
            self.0
                .to_json_string()
                .map_err(|e| lease_failure(&e))
                .and_then(|text| answer(&text)),
        )
    }
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

/// `[kind, id]`: a ledger account.
fn account(a: &Call<'_>) -> Res<(AccountKind, String)> {
    Ok((
        account_kind(&a.arg::<String>(0, "account kind")?)?,
        a.arg::<String>(1, "account id")?,
    ))
}

fn amount(a: &Call<'_>, index: usize, name: &str) -> Res<Resources> {
    a.arg::<ResourceInput>(index, name).map(Resources::from)
}

/// The hierarchical six-dimensional ledger (§12, §14).
#[derive(Debug, Clone, Default)]
pub struct LedgerHandle(BudgetLedger);

impl LedgerHandle {
    /// An empty ledger.
    pub fn new() -> Self {
        Self(BudgetLedger::new())
    }

    /// `[snapshotJsonText]`: rebuilt, every invariant checked.
    pub fn rebuild(args: &str) -> Res<Self> {
        let a = Call::parse(args)?;
        let doc = snapshot_text(&a.arg::<String>(0, "snapshot")?)?;
        let snap = BudgetLedgerSnapshot::from_value(&doc).map_err(|e| snapshot_failure(&e))?;
        BudgetLedger::rebuild(&snap)
            .map(Self)
            .map_err(|e| budget_failure(&e))
    }

    /// `[missionId, limit, currency?, parentWorkItemId?]`: a root Mission, or a child Mission
    /// reserved against that WorkItem.
    pub fn register_mission(&mut self, args: &str) -> String {
        run(args, |a| {
            let id = a.arg::<String>(0, "missionId")?;
            let limit = amount(a, 1, "limit")?;
            let currency = a.arg::<Option<CurrencyCode>>(2, "currency")?.map(|c| c.0);
            let ledger = &mut self.0;
            match a.arg::<Option<String>>(3, "parentWorkItemId")? {
                Some(parent) => ledger.register_child_mission(&id, &parent, currency, limit),
                None => ledger.register_mission(&id, currency, limit),
            }
            .map_err(|e| budget_failure(&e))?;
            Ok(Value::Null)
        })
    }

    /// `[workItemId, missionId, limit, parentWorkItemId?]`.
    pub fn register_work_item(&mut self, args: &str) -> String {
        run(args, |a| {
            let limit = amount(a, 2, "limit")?;
            let parent = a.arg::<Option<String>>(3, "parentWorkItemId")?;
            self.0
                .register_work_item(
                    &a.arg::<String>(0, "workItemId")?,
                    &a.arg::<String>(1, "missionId")?,
                    parent.as_deref(),
                    limit,
                )
                .map_err(|e| budget_failure(&e))?;
            Ok(Value::Null)
        })
    }

    /// `[workItemId, delta]` → the WorkItem's usage.
    pub fn consume(&mut self, args: &str) -> String {
        run(args, |a| {
            let delta = amount(a, 1, "delta")?;
            amounts(
                self.0
                    .consume(&a.arg::<String>(0, "workItemId")?, &delta)
                    .map_err(|e| budget_failure(&e))?,
            )
        })
    }

    fn amount_of(
        &self,
        args: &str,
        read: impl FnOnce(&BudgetLedger, AccountKind, &str) -> Result<Resources, BudgetError>,
    ) -> String {
        run(args, |a| {
            let (kind, id) = account(a)?;
            amounts(read(&self.0, kind, &id).map_err(|e| budget_failure(&e))?)
        })
    }

    /// `[kind, id]`: what can still be consumed through the account.
    pub fn remaining(&self, args: &str) -> String {
        self.amount_of(args, |l, kind, id| l.remaining(kind, id))
    }

    /// `[kind, id]`.
    pub fn usage(&self, args: &str) -> String {
        self.amount_of(args, |l, kind, id| l.usage(kind, id))
    }

    /// `[kind, id]`.
    pub fn limit(&self, args: &str) -> String {
        self.amount_of(args, |l, kind, id| l.limit(kind, id))
    }

    /// `[kind, id]`.
    pub fn reserved(&self, args: &str) -> String {
        self.amount_of(args, |l, kind, id| l.reserved(kind, id))
    }

    /// `[kind, id]` → the ISO 4217 code, or `null`.
    pub fn currency(&self, args: &str) -> String {
        run(args, |a| {
            let (kind, id) = account(a)?;
            let currency = self.0.currency(kind, &id).map_err(|e| budget_failure(&e))?;
            answer(&currency.map(|c| c.as_str().to_owned()))
        })
    }

    /// `[kind, id]` → the account's depth.
    pub fn depth(&self, args: &str) -> String {
        run(args, |a| {
            let (kind, id) = account(a)?;
            answer(&self.0.depth(kind, &id).map_err(|e| budget_failure(&e))?)
        })
    }

    /// The number of accounts.
    pub fn size(&self) -> String {
        finish(answer(&self.0.len()))
    }

    /// The snapshot's JSON form.
    pub fn snapshot(&self) -> String {
        finish(Ok(self.0.snapshot().to_value()))
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
        organization_max_depth: c.organization_max_depth.unwrap_or_else(max_depth_default),
        now: c.now.0,
    }
}

/// The reference's `CooperationLimits.maximum_delegation_depth` default (the core's).
fn max_depth_default() -> u32 {
    CooperationLimits::default()
        .maximum_delegation_depth
        .unwrap_or(u32::MAX)
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

/// `[context, workItems, …]`: the use's context and the caller's WorkItem graph.
fn use_of(a: &Call<'_>) -> Res<(DelegationContextInput, Tree)> {
    Ok((
        a.arg::<DelegationContextInput>(0, "context")?,
        a.arg::<WorkItems>(1, "workItems").map(Tree)?,
    ))
}

fn work(a: &Call<'_>, index: usize) -> Res<Work> {
    a.arg::<DelegatedWorkInput>(index, "work").map(Work::from)
}

/// One Delegation Grant and the uses charged to it (§9.1).
#[derive(Debug, Clone)]
pub struct AuthorityHandle(DelegationAuthority);

impl AuthorityHandle {
    /// `[grant]` ([`DelegationGrantFields`]).
    pub fn new(args: &str) -> Res<Self> {
        let grant: DelegationGrantFields = Call::parse(args)?.arg(0, "grant")?;
        DelegationAuthority::new(grant.into())
            .map(Self)
            .map_err(|v| violation_failure(&v))
    }

    /// The Grant ([`DelegationGrantAnswer`]).
    pub fn grant(&self) -> String {
        finish(answer(&DelegationGrantAnswer::from(self.0.grant())))
    }

    pub fn charged(&self) -> String {
        finish(amounts(self.0.charged()))
    }

    pub fn remaining(&self) -> String {
        finish(amounts(self.0.remaining()))
    }

    /// The latched invalidation, or `null`.
    pub fn invalidated(&self) -> String {
        finish(answer(
            &self.0.invalidated().map(DelegationViolationAnswer::from),
        ))
    }

    /// `[context, workItems]`: every use-time check independent of the WorkItem.
    pub fn check_use(&mut self, args: &str) -> String {
        run(args, |a| {
            let (ctx, tree) = use_of(a)?;
            self.0
                .check_use(&context_view(&ctx), &tree)
                .map_err(|v| violation_failure(&v))?;
            Ok(Value::Null)
        })
    }

    /// `[context, workItems, workItemId, work]` → the item's depth; charges once.
    pub fn authorize_existing(&mut self, args: &str) -> String {
        run(args, |a| {
            let (ctx, tree) = use_of(a)?;
            let (id, work) = (a.arg::<String>(2, "workItemId")?, work(a, 3)?);
            let depth = self
                .0
                .authorize_offer(&context_view(&ctx), &tree, &id, &work.view())
                .map_err(|v| violation_failure(&v))?;
            answer(&depth)
        })
    }

    /// `[context, workItems, newWorkItemId, parentWorkItemId, work]` → the new item's depth.
    pub fn authorize_descendant(&mut self, args: &str) -> String {
        run(args, |a| {
            let (ctx, tree) = use_of(a)?;
            let id = a.arg::<String>(2, "newWorkItemId")?;
            let parent = a.arg::<String>(3, "parentWorkItemId")?;
            let work = work(a, 4)?;
            let depth = self
                .0
                .authorize_descendant(&context_view(&ctx), &tree, &id, &parent, &work.view())
                .map_err(|v| violation_failure(&v))?;
            answer(&depth)
        })
    }

    /// `[workItemId, budget]`: re-attributes a WorkItem when rebuilding from the log.
    pub fn restore_attribution(&mut self, args: &str) -> String {
        run(args, |a| {
            let budget = amount(a, 1, "budget")?;
            self.0
                .restore_attribution(&a.arg::<String>(0, "workItemId")?, &budget)
                .map_err(|v| violation_failure(&v))?;
            Ok(Value::Null)
        })
    }
}

// ---- retries -------------------------------------------------------------------------------

fn retry_failure(e: &RetryError) -> Failure {
    Failure::error(e)
}

/// One WorkItem's retry budgets under one Ownership Epoch (§11.4).
#[derive(Debug, Clone)]
pub struct RetryHandle(RetryController);

impl RetryHandle {
    /// `[options]` ([`RetryOptions`]).
    pub fn new(args: &str) -> Res<Self> {
        let o: RetryOptions = Call::parse(args)?.arg(0, "options")?;
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

    /// `[snapshotText]`, a [`RetryController::snapshot`] document (§11.4: the retry bounds
    /// survive a Worker restart). A malformed, other-version, tampered (`integrity`) or
    /// unreachable state is the core's `SnapshotError` (`INTERNAL_ERROR`).
    pub fn restore(args: &str) -> Res<Self> {
        let a = Call::parse(args)?;
        let doc = snapshot_text(&a.arg::<String>(0, "snapshot")?)?;
        RetrySnapshot::from_value(&doc)
            .and_then(|s| RetryController::restore(&s))
            .map(Self)
            .map_err(|e| Failure::error(&e))
    }

    /// [`RetryStateAnswer`].
    pub fn state(&self) -> String {
        let c = &self.0;
        finish(answer(&RetryStateAnswer {
            attempts: c.attempts(),
            usage: c.usage().into(),
            finished: c.finished().map(|r| r.as_str()),
        }))
    }

    /// `[logicalOperationId]`.
    pub fn idempotency_key(&self, args: &str) -> String {
        run(args, |a| {
            answer(
                &self
                    .0
                    .idempotency_key(&a.arg::<String>(0, "logicalOperationId")?),
            )
        })
    }

    /// `[logicalOperationId, now]` → [`AttemptAnswer`].
    pub fn begin(&mut self, args: &str) -> String {
        run(args, |a| {
            let operation = a.arg::<String>(0, "logicalOperationId")?;
            let attempt = self
                .0
                .begin(&operation, time(a, 1, "now")?)
                .map_err(|e| retry_failure(&e))?;
            answer(&AttemptAnswer {
                attempt_number: attempt.attempt_number,
                idempotency_key: attempt.idempotency_key,
                attempt_key: attempt.attempt_key,
                started_at: attempt.started_at.into(),
            })
        })
    }

    /// `[outcome, now]` → [`RetryScheduleAnswer`].
    pub fn finish(&mut self, args: &str) -> String {
        run(args, |a| {
            let o: AttemptOutcomeInput = a.arg(0, "outcome")?;
            let outcome = if o.success {
                AttemptOutcome::Succeeded
            } else {
                AttemptOutcome::Failed {
                    code: o.code.as_deref(),
                    retryable: o.retryable.unwrap_or(true),
                }
            };
            let s = self
                .0
                .finish(outcome, time(a, 1, "now")?)
                .map_err(|e| retry_failure(&e))?;
            answer(&RetryScheduleAnswer {
                retry: s.retry,
                retry_at: s.retry_at.map(Millis),
                reason: s.reason.as_str(),
            })
        })
    }

    /// `[delta]` → the usage.
    pub fn consume(&mut self, args: &str) -> String {
        run(args, |a| {
            let delta = amount(a, 0, "delta")?;
            amounts(self.0.consume(&delta).map_err(|e| retry_failure(&e))?)
        })
    }

    /// The versioned snapshot document.
    pub fn snapshot(&self) -> String {
        finish(Ok(self.0.snapshot().to_value()))
    }

    /// `{logicalOperationId, startedAt}` of the attempt in flight, or `null`.
    pub fn current_attempt(&self) -> String {
        finish(Ok(self.0.current_attempt().map_or(
            Value::Null,
            |(op, at)| {
                Obj::new()
                    .str("logicalOperationId", op)
                    .int("startedAt", at.0)
                    .build()
            },
        )))
    }
}

// ---- stateless functions -------------------------------------------------------------------

/// `[missionId, workItemId, ownershipEpoch, logicalOperationId]`: `sha256:` of their RFC 8785
/// form (§11.4).
pub fn idempotency_key_of(args: &str) -> String {
    run(args, |a| {
        let text = |index, name| a.arg::<String>(index, name);
        let epoch: Safe = a.arg(2, "ownershipEpoch")?;
        let key = idempotency_key(
            &text(0, "missionId")?,
            &text(1, "workItemId")?,
            epoch.0,
            &text(3, "logicalOperationId")?,
        )
        .ok_or_else(|| Failure::argument("ownershipEpoch: expected an integer in 1..=2^53-1"))?;
        answer(&key)
    })
}

/// `[idempotencyKey, attempt]`: the deterministic per-attempt key.
pub fn derived_attempt_key_of(args: &str) -> String {
    run(args, |a| {
        answer(&derived_attempt_key(
            &a.arg::<String>(0, "idempotencyKey")?,
            a.arg(1, "attempt")?,
        ))
    })
}

/// `[duration]`: a schema `duration` in milliseconds, rounded up.
pub fn parse_duration(args: &str) -> String {
    run(args, |a| {
        let duration = a.arg::<String>(0, "duration")?;
        let ms = parse_duration_ms(&duration)
            .filter(|v| *v <= MAX_SAFE_INTEGER)
            .ok_or_else(|| Failure::argument(format!("not a duration: {duration:?}")))?;
        answer(&ms)
    })
}

/// The core's spelling lists (`missionweaveprotocol_engine::vocabularies`, e.g.
/// `retryable_wire_code`), the Error subclass shown for each error class and the ErrorCode
/// family of every §19 wire code: what the package's enum objects and error classes spell.
pub fn vocabularies() -> String {
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
    finish(Ok(Value::Object(out)))
}

#[cfg(test)]
mod retry_snapshot_tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use missionweaveprotocol::json::{Value, canonical_bytes};

    use super::RetryHandle;
    use crate::envelope::finish;

    const OPTIONS: &str = r#"[{"policy":{"maxAttempts":3,"backoff":"fixed","initialDelayMs":10,"maxDelayMs":10},
        "missionId":"urn:m","workItemId":"urn:w","ownershipEpoch":1}]"#;

    fn ok(envelope: &str) -> Value {
        let parsed = missionweaveprotocol::json::parse(envelope.as_bytes()).unwrap();
        parsed.get("ok").cloned().expect(envelope)
    }

    fn error_class(made: Result<RetryHandle, crate::Failure>) -> String {
        let envelope = finish(made.map(|_| Value::Null));
        let parsed = missionweaveprotocol::json::parse(envelope.as_bytes()).unwrap();
        let error = parsed.get("error").expect(&envelope);
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
        let mut retry = RetryHandle::new(OPTIONS).unwrap();
        ok(&retry.begin(r#"["op",1000]"#));
        ok(&retry.finish(r#"[{"success":false,"retryable":true},1001]"#));
        ok(&retry.begin(r#"["op",1100]"#));
        let snapshot = ok(&retry.snapshot());
        let args = format!("[{}]", serde_json::to_string(&text(&snapshot)).unwrap());
        let restored = RetryHandle::restore(&args).unwrap();
        assert_eq!(ok(&restored.state()), ok(&retry.state()));
        let current = ok(&restored.current_attempt());
        assert_eq!(
            current.get("logicalOperationId").and_then(Value::as_str),
            Some("op")
        );
        assert_eq!(ok(&restored.snapshot()), snapshot);
        assert_eq!(
            ok(&RetryHandle::new(OPTIONS).unwrap().current_attempt()),
            Value::Null
        );
    }

    #[test]
    fn a_tampered_or_malformed_snapshot_is_refused() {
        let mut retry = RetryHandle::new(OPTIONS).unwrap();
        ok(&retry.begin(r#"["op",1000]"#));
        let snapshot = text(&ok(&retry.snapshot()));
        let tampered = snapshot.replace(r#""attempts":1"#, r#""attempts":2"#);
        assert_ne!(tampered, snapshot);
        let args = format!("[{}]", serde_json::to_string(&tampered).unwrap());
        assert_eq!(
            error_class(RetryHandle::restore(&args)),
            "SnapshotError/INTERNAL_ERROR"
        );
        assert!(error_class(RetryHandle::restore(r#"["{}"]"#)).starts_with("SnapshotError/"));
        assert!(error_class(RetryHandle::restore("[1]")).starts_with("ArgumentError/"));
    }
}
