//! Bounded authority through JavaScript: fenced leases, the budget ledger, Delegation Grants
//! and retries. Each handle owns one core object; every call takes its arguments as one JSON
//! array (see [`crate::args`]) and returns an envelope. Core errors keep their §19 code and
//! gain a `class` and a snake_case `reason` for the wrapper's typed errors.

use std::collections::HashMap;

use missionweaveprotocol::json::{Number, Value, parse};
use missionweaveprotocol_authority::budget::BudgetLedgerSnapshot;
use missionweaveprotocol_authority::budget::{AccountKind, BudgetError, BudgetLedger};
use missionweaveprotocol_authority::delegation::{
    DelegatedWork, DelegationAuthority, DelegationContext, DelegationGrant, DelegationViolation,
    MembershipView, WorkItemNode, WorkItemTree,
};
use missionweaveprotocol_authority::execution::{
    AttemptOutcome, Backoff, RetryController, RetryError, RetryPolicy, derived_attempt_key,
    idempotency_key, parse_duration_ms,
};
use missionweaveprotocol_authority::lease::{
    Lease, LeaseBinding, LeaseClaim, LeaseError, LeaseState, LeaseWindow,
};
use missionweaveprotocol_authority::resources::{MAX_SAFE_INTEGER, Resources};
use missionweaveprotocol_authority::snapshot_json::{SnapshotFormatError, resources_to_value};
use missionweaveprotocol_authority::unix_millis::UnixMillis;

use crate::args::{Args, Reader, Res, resources};
use crate::envelope::{Failure, Obj};

pub(crate) fn ms(t: UnixMillis) -> Value {
    Value::Number(Number::from_i64(t.0))
}

pub(crate) fn opt_ms(t: Option<UnixMillis>) -> Value {
    t.map_or(Value::Null, ms)
}

pub(crate) fn num(v: u64) -> Value {
    Value::Number(Number::from_u64(v))
}

fn opt_num(v: Option<u64>) -> Value {
    v.map_or(Value::Null, num)
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
    /// `args`: `[{leaseId, missionId, groupId, holderAgentId, sessionEpoch, issuedAt, startsAt,
    /// expiresAt, …type-specific}]`; `lease_type`: execution, ownership, blocked, coordinator.
    pub fn new(lease_type: &str, args: &str) -> Res<Self> {
        let args = Args::parse(args)?;
        if lease_type == "document" {
            // `[documentText]`: a `lease.schema.json` document read back through the core.
            return Lease::from_json(args.str(0, "document")?.as_bytes())
                .map(Self)
                .map_err(|e| Failure::error(&e));
        }
        let mut r = args.reader(0, "lease")?;
        let binding = LeaseBinding {
            lease_id: r.string("leaseId")?.to_owned(),
            mission_id: r.string("missionId")?.to_owned(),
            group_id: r.string("groupId")?.to_owned(),
            holder_agent_id: r.string("holderAgentId")?.to_owned(),
            session_epoch: r.uint("sessionEpoch", MAX_SAFE_INTEGER)?,
        };
        let window = LeaseWindow {
            issued_at: r.millis("issuedAt")?,
            starts_at: r.millis("startsAt")?,
            expires_at: r.millis("expiresAt")?,
        };
        let lease = match lease_type {
            "coordinator" => {
                let epoch = r.uint("coordinatorEpoch", MAX_SAFE_INTEGER)?;
                r.finish()?;
                Lease::coordinator(binding, epoch, window)
            }
            "execution" | "ownership" | "blocked" => {
                let work_item_id = r.string("workItemId")?;
                let epoch = r.uint("ownershipEpoch", MAX_SAFE_INTEGER)?;
                match lease_type {
                    "execution" => {
                        r.finish()?;
                        Lease::execution(binding, work_item_id, epoch, window)
                    }
                    "ownership" => {
                        let start_by = r.millis("startBy")?;
                        r.finish()?;
                        Lease::ownership(binding, work_item_id, epoch, start_by, window)
                    }
                    _ => {
                        let grace = r.opt_millis("graceExpiresAt")?;
                        r.finish()?;
                        Lease::blocked(binding, work_item_id, epoch, window, grace)
                    }
                }
            }
            other => {
                return Err(Failure::argument(format!(
                    "unknown lease type {other:?} (expected execution, ownership, blocked or coordinator)"
                )));
            }
        };
        lease.map(Self).map_err(|e| lease_failure(&e))
    }

    fn state(&self) -> Value {
        let l = &self.0;
        let b = l.binding();
        let w = l.window();
        Obj::new()
            .str("leaseId", b.lease_id.clone())
            .str("leaseType", l.lease_type().as_str())
            .str("missionId", b.mission_id.clone())
            .str("groupId", b.group_id.clone())
            .str("holderAgentId", b.holder_agent_id.clone())
            .num("sessionEpoch", b.session_epoch)
            .opt_str("workItemId", l.work_item_id())
            .value("ownershipEpoch", opt_num(l.ownership_epoch()))
            .value("coordinatorEpoch", opt_num(l.coordinator_epoch()))
            .value("issuedAt", ms(w.issued_at))
            .value("startsAt", ms(w.starts_at))
            .value("expiresAt", ms(w.expires_at))
            .value("startBy", opt_ms(l.start_by()))
            .value("graceExpiresAt", opt_ms(l.grace_expires_at()))
            .str("state", l.state().as_str())
            .num("renewalCount", l.renewal_count())
            .value("lastRenewedAt", opt_ms(l.last_renewed_at()))
            .value("closedAt", opt_ms(l.closed_at()))
            .opt_str("closureReason", l.closure_reason())
            .build()
    }

    pub fn call(&mut self, method: &str, args: &str) -> Res<Value> {
        let a = Args::parse(args)?;
        let lease = &mut self.0;
        Ok(match method {
            "state" => self.state(),
            "stateAt" => Value::string(lease.state_at(a.millis(0, "now")?).as_str()),
            "isLive" => Value::Bool(lease.is_live(a.millis(0, "now")?)),
            "renew" => {
                lease
                    .renew(a.millis(0, "at")?, a.millis(1, "expiresAt")?)
                    .map_err(|e| lease_failure(&e))?;
                self.state()
            }
            "close" => {
                let state = lease_state(a.str(0, "state")?)?;
                let changed = lease
                    .close(state, a.millis(1, "at")?, a.str(2, "reason")?)
                    .map_err(|e| lease_failure(&e))?;
                Obj::new()
                    .bool("changed", changed)
                    .value("lease", self.state())
                    .build()
            }
            "checkClaim" => {
                let mut r = a.reader(0, "claim")?;
                let claim = LeaseClaim {
                    agent_id: r.string("agentId")?,
                    lease_id: r.string("leaseId")?,
                    session_epoch: r.uint("sessionEpoch", u64::MAX)?,
                    ownership_epoch: r
                        .opt("ownershipEpoch")
                        .map(|v| crate::args::uint(v, "claim.ownershipEpoch", u64::MAX))
                        .transpose()?,
                    coordinator_epoch: r
                        .opt("coordinatorEpoch")
                        .map(|v| crate::args::uint(v, "claim.coordinatorEpoch", u64::MAX))
                        .transpose()?,
                };
                r.finish()?;
                lease
                    .check_claim(&claim, a.millis(1, "now")?)
                    .map_err(|e| lease_failure(&e))?;
                Value::Null
            }
            "checkStartBy" => {
                lease
                    .check_start_by(a.millis(0, "now")?)
                    .map_err(|e| lease_failure(&e))?;
                Value::Null
            }
            "toJSON" => Value::string(lease.to_json_string().map_err(|e| lease_failure(&e))?),
            other => return Err(unknown_method("ExecutionLease", other)),
        })
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
        let a = Args::parse(args)?;
        match mode {
            "new" => Ok(Self(BudgetLedger::new())),
            "rebuild" => {
                let doc = snapshot_text(a.str(0, "snapshot")?)?;
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
        let a = Args::parse(args)?;
        let ledger = &mut self.0;
        let fail = |e: BudgetError| budget_failure(&e);
        let opt_str = |i: usize, name: &str| -> Res<Option<&str>> {
            if a.is_null(i) {
                Ok(None)
            } else {
                a.str(i, name).map(Some)
            }
        };
        let account = || -> Res<(AccountKind, &str)> {
            Ok((
                account_kind(a.str(0, "account kind")?)?,
                a.str(1, "account id")?,
            ))
        };
        Ok(match method {
            "registerMission" => {
                let id = a.str(0, "missionId")?;
                let limit = resources(a.get(1), "limit")?;
                let currency = match opt_str(2, "currency")? {
                    Some(c) => Some(
                        missionweaveprotocol_authority::resources::Currency::parse(c).ok_or_else(
                            || Failure::argument("currency: expected three upper-case letters"),
                        )?,
                    ),
                    None => None,
                };
                match opt_str(3, "parentWorkItemId")? {
                    Some(parent) => ledger.register_child_mission(id, parent, currency, limit),
                    None => ledger.register_mission(id, currency, limit),
                }
                .map_err(fail)?;
                Value::Null
            }
            "registerWorkItem" => {
                let limit = resources(a.get(2), "limit")?;
                ledger
                    .register_work_item(
                        a.str(0, "workItemId")?,
                        a.str(1, "missionId")?,
                        opt_str(3, "parentWorkItemId")?,
                        limit,
                    )
                    .map_err(fail)?;
                Value::Null
            }
            "consume" => {
                let delta = resources(a.get(1), "delta")?;
                resources_to_value(
                    &ledger
                        .consume(a.str(0, "workItemId")?, &delta)
                        .map_err(fail)?,
                )
            }
            "remaining" | "usage" | "limit" | "reserved" => {
                let (kind, id) = account()?;
                let r = match method {
                    "remaining" => ledger.remaining(kind, id),
                    "usage" => ledger.usage(kind, id),
                    "limit" => ledger.limit(kind, id),
                    _ => ledger.reserved(kind, id),
                }
                .map_err(fail)?;
                resources_to_value(&r)
            }
            "currency" => {
                let (kind, id) = account()?;
                ledger
                    .currency(kind, id)
                    .map_err(fail)?
                    .map_or(Value::Null, |c| Value::string(c.as_str()))
            }
            "depth" => {
                let (kind, id) = account()?;
                num(ledger.depth(kind, id).map_err(fail)? as u64)
            }
            "size" => num(ledger.len() as u64),
            "snapshot" => ledger.snapshot().to_value(),
            other => return Err(unknown_method("BudgetLedger", other)),
        })
    }
}

// ---- delegation ----------------------------------------------------------------------------

fn violation_failure(v: &DelegationViolation) -> Failure {
    Failure::error(v)
}

fn violation_value(v: &DelegationViolation) -> Value {
    Obj::new()
        .str("kind", v.kind.as_str())
        .str("code", v.code().as_str())
        .str("message", v.message.clone())
        .opt_str("dimension", v.dimension.map(|d| d.as_str()))
        .build()
}

/// The caller's WorkItem graph: `{workItemId: {missionId, parentWorkItemId, closed}}`.
struct Tree(HashMap<String, (String, Option<String>, bool)>);

impl Tree {
    fn read(value: &Value) -> Res<Self> {
        let r = Reader::new(value, "workItems")?;
        let mut map = HashMap::new();
        for (id, node) in r.entries() {
            let mut n = Reader::new(node, &format!("workItems[{id:?}]"))?;
            let mission = n.string("missionId")?.to_owned();
            let parent = n.opt_string("parentWorkItemId")?.map(str::to_owned);
            let closed = n.bool_or("closed", false)?;
            n.finish()?;
            map.insert(id, (mission, parent, closed));
        }
        Ok(Self(map))
    }
}

impl WorkItemTree for Tree {
    fn node(&self, work_item_id: &str) -> Option<WorkItemNode<'_>> {
        self.0.get(work_item_id).map(|(m, p, c)| WorkItemNode {
            mission_id: m,
            parent_work_item_id: p.as_deref(),
            closed: *c,
        })
    }
}

struct Context {
    actor: String,
    membership: Option<(String, bool, bool, u64)>,
    mission: String,
    group: String,
    coordinator_epoch: u64,
    coordinator: String,
    max_depth: u32,
    now: UnixMillis,
}

impl Context {
    fn read(value: &Value) -> Res<Self> {
        let mut r = Reader::new(value, "context")?;
        let membership = match r.opt("membership") {
            Some(m) => {
                let mut m = Reader::new(m, "context.membership")?;
                let out = (
                    m.string("groupId")?.to_owned(),
                    m.bool_or("active", true)?,
                    m.bool_or("workDelegate", true)?,
                    m.uint("epoch", u64::MAX)?,
                );
                m.finish()?;
                Some(out)
            }
            None => None,
        };
        let ctx = Self {
            actor: r.string("actorAgentId")?.to_owned(),
            membership,
            mission: r.string("missionId")?.to_owned(),
            group: r.string("groupId")?.to_owned(),
            coordinator_epoch: r.uint("coordinatorEpoch", u64::MAX)?,
            coordinator: r.string("coordinatorAgentId")?.to_owned(),
            // The reference's CooperationLimits.maximum_delegation_depth default.
            max_depth: r.uint_or("organizationMaxDepth", u64::from(u32::MAX), 3)? as u32,
            now: r.millis("now")?,
        };
        r.finish()?;
        Ok(ctx)
    }

    fn view(&self) -> DelegationContext<'_> {
        DelegationContext {
            actor_agent_id: &self.actor,
            membership: self
                .membership
                .as_ref()
                .map(|(g, active, delegate, epoch)| MembershipView {
                    group_id: g,
                    active: *active,
                    work_delegate: *delegate,
                    epoch: *epoch,
                }),
            mission_id: &self.mission,
            group_id: &self.group,
            coordinator_epoch: self.coordinator_epoch,
            coordinator_agent_id: &self.coordinator,
            organization_max_depth: self.max_depth,
            now: self.now,
        }
    }
}

struct Work {
    caps: Vec<missionweaveprotocol_authority::capability_version::CapabilityRef>,
    budget: Resources,
    currency: Option<missionweaveprotocol_authority::resources::Currency>,
}

impl Work {
    fn read(value: &Value) -> Res<Self> {
        let mut r = Reader::new(value, "work")?;
        let work = Self {
            caps: r.capabilities("requiredCapabilities")?,
            budget: r.resources("budget")?,
            currency: r.currency("currency")?,
        };
        r.finish()?;
        Ok(work)
    }

    fn view(&self) -> DelegatedWork<'_> {
        DelegatedWork {
            required_capabilities: &self.caps,
            budget: self.budget,
            currency: self.currency,
        }
    }
}

fn grant_value(g: &DelegationGrant) -> Value {
    let Value::Object(mut budget) = resources_to_value(&g.ceilings) else {
        return Value::Null;
    };
    budget.insert("currency", Value::string(g.currency.as_str()));
    let caps = g
        .allowed_capabilities
        .iter()
        .map(|c| {
            Obj::new()
                .str("id", c.id.clone())
                .str("version", c.version.as_str())
                .build()
        })
        .collect();
    Obj::new()
        .str("grantId", g.grant_id.clone())
        .str("granteeAgentId", g.grantee_agent_id.clone())
        .str("missionId", g.mission_id.clone())
        .str("groupId", g.group_id.clone())
        .str("targetWorkItemId", g.target_work_item_id.clone())
        .value("allowedCapabilities", Value::Array(caps))
        .value("budget", Value::Object(budget))
        .num("maxDescendantDepth", u64::from(g.max_descendant_depth))
        .num("granteeMembershipEpoch", g.grantee_membership_epoch)
        .num("coordinatorEpoch", g.coordinator_epoch)
        .str("grantedBy", g.granted_by.clone())
        .value("grantedAt", ms(g.granted_at))
        .value("expiresAt", ms(g.expires_at))
        .build()
}

fn read_grant(value: &Value) -> Res<DelegationGrant> {
    let mut r = Reader::new(value, "grant")?;
    let budget_value = r.req("budget")?;
    let budget = budget_value
        .as_object()
        .ok_or_else(|| Failure::argument("grant.budget: expected an object"))?;
    let currency = budget
        .get("currency")
        .and_then(Value::as_str)
        .and_then(missionweaveprotocol_authority::resources::Currency::parse)
        .ok_or_else(|| {
            Failure::argument("grant.budget.currency: required, three upper-case letters")
        })?;
    // The six ceilings are the other members.
    let mut ceilings_object = missionweaveprotocol::json::Object::new();
    for (name, v) in budget.iter() {
        if name.as_str() != Some("currency") {
            ceilings_object.insert(&name.to_lossy(), v.clone());
        }
    }
    let ceilings = resources(&Value::Object(ceilings_object), "grant.budget")?;
    let grant = DelegationGrant {
        grant_id: r.string("grantId")?.to_owned(),
        grantee_agent_id: r.string("granteeAgentId")?.to_owned(),
        mission_id: r.string("missionId")?.to_owned(),
        group_id: r.string("groupId")?.to_owned(),
        target_work_item_id: r.string("targetWorkItemId")?.to_owned(),
        allowed_capabilities: r.capabilities("allowedCapabilities")?,
        currency,
        ceilings,
        max_descendant_depth: r.uint("maxDescendantDepth", u64::from(u32::MAX))? as u32,
        grantee_membership_epoch: r.uint("granteeMembershipEpoch", u64::MAX)?,
        coordinator_epoch: r.uint("coordinatorEpoch", u64::MAX)?,
        granted_by: r.string("grantedBy")?.to_owned(),
        granted_at: r.millis("grantedAt")?,
        expires_at: r.millis("expiresAt")?,
    };
    r.finish()?;
    Ok(grant)
}

/// One Delegation Grant and the uses charged to it.
#[derive(Debug, Clone)]
pub struct AuthorityHandle(DelegationAuthority);

impl AuthorityHandle {
    /// `args`: `[grant]`.
    pub fn new(args: &str) -> Res<Self> {
        let a = Args::parse(args)?;
        let grant = read_grant(a.get(0))?;
        DelegationAuthority::new(grant)
            .map(Self)
            .map_err(|v| violation_failure(&v))
    }

    pub fn call(&mut self, method: &str, args: &str) -> Res<Value> {
        let a = Args::parse(args)?;
        let auth = &mut self.0;
        let fail = |v: DelegationViolation| violation_failure(&v);
        Ok(match method {
            "grant" => grant_value(auth.grant()),
            "charged" => resources_to_value(&auth.charged()),
            "remaining" => resources_to_value(&auth.remaining()),
            "invalidated" => auth.invalidated().map_or(Value::Null, violation_value),
            "checkUse" => {
                let ctx = Context::read(a.get(0))?;
                let tree = Tree::read(a.get(1))?;
                auth.check_use(&ctx.view(), &tree).map_err(fail)?;
                Value::Null
            }
            "authorizeExisting" => {
                let ctx = Context::read(a.get(0))?;
                let tree = Tree::read(a.get(1))?;
                let work = Work::read(a.get(3))?;
                let depth = auth
                    .authorize_offer(&ctx.view(), &tree, a.str(2, "workItemId")?, &work.view())
                    .map_err(fail)?;
                num(u64::from(depth))
            }
            "authorizeDescendant" => {
                let ctx = Context::read(a.get(0))?;
                let tree = Tree::read(a.get(1))?;
                let work = Work::read(a.get(4))?;
                let depth = auth
                    .authorize_descendant(
                        &ctx.view(),
                        &tree,
                        a.str(2, "newWorkItemId")?,
                        a.str(3, "parentWorkItemId")?,
                        &work.view(),
                    )
                    .map_err(fail)?;
                num(u64::from(depth))
            }
            "restoreAttribution" => {
                let budget = resources(a.get(1), "budget")?;
                auth.restore_attribution(a.str(0, "workItemId")?, &budget)
                    .map_err(fail)?;
                Value::Null
            }
            other => return Err(unknown_method("DelegationAuthority", other)),
        })
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
    /// `args`: `[{policy, deadline, costBudget, missionId, workItemId, ownershipEpoch}]`.
    pub fn new(args: &str) -> Res<Self> {
        let a = Args::parse(args)?;
        let mut r = a.reader(0, "options")?;
        let mut p = Reader::new(r.req("policy")?, "options.policy")?;
        let backoff = match p.opt_string("backoff")?.unwrap_or("exponential") {
            "none" => Backoff::None,
            "fixed" => Backoff::Fixed,
            "exponential" => Backoff::Exponential,
            other => {
                return Err(Failure::argument(format!(
                    "options.policy.backoff: {other:?} (expected none, fixed or exponential)"
                )));
            }
        };
        let max_delay_ms = match (p.opt("maxDelayMs"), p.opt_string("maxDelay")?) {
            (Some(v), None) => crate::args::uint(v, "options.policy.maxDelayMs", MAX_SAFE_INTEGER)?,
            (None, Some(text)) => parse_duration_ms(text).ok_or_else(|| {
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
            max_attempts: p.uint("maxAttempts", u64::from(u32::MAX))? as u32,
            backoff,
            initial_delay_ms: p.uint_or(
                "initialDelayMs",
                MAX_SAFE_INTEGER,
                max_delay_ms.min(1000),
            )?,
            max_delay_ms,
            retryable_failures: p
                .array("retryableFailures")?
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    crate::args::string(v, &format!("options.policy.retryableFailures[{i}]"))
                        .map(str::to_owned)
                })
                .collect::<Res<_>>()?,
        };
        p.finish()?;
        let controller = RetryController::new(
            policy,
            r.opt_millis("deadline")?,
            r.resources("costBudget")?,
            r.string("missionId")?,
            r.string("workItemId")?,
            r.uint("ownershipEpoch", u64::MAX)?,
        );
        r.finish()?;
        controller.map(Self).map_err(|e| retry_failure(&e))
    }

    pub fn call(&mut self, method: &str, args: &str) -> Res<Value> {
        let a = Args::parse(args)?;
        let c = &mut self.0;
        let fail = |e: RetryError| retry_failure(&e);
        Ok(match method {
            "state" => Obj::new()
                .num("attempts", u64::from(c.attempts()))
                .value("usage", resources_to_value(&c.usage()))
                .opt_str("finished", c.finished().map(|r| r.as_str()))
                .build(),
            "idempotencyKey" => Value::string(c.idempotency_key(a.str(0, "logicalOperationId")?)),
            "begin" => {
                let attempt = c
                    .begin(a.str(0, "logicalOperationId")?, a.millis(1, "now")?)
                    .map_err(fail)?;
                Obj::new()
                    .num("attemptNumber", u64::from(attempt.attempt_number))
                    .str("idempotencyKey", attempt.idempotency_key)
                    .str("attemptKey", attempt.attempt_key)
                    .value("startedAt", ms(attempt.started_at))
                    .build()
            }
            "finish" => {
                let mut r = a.reader(0, "outcome")?;
                let success = crate::args::boolean(r.req("success")?, "outcome.success")?;
                let code = r.opt_string("code")?;
                let retryable = r.bool_or("retryable", true)?;
                r.finish()?;
                let outcome = if success {
                    AttemptOutcome::Succeeded
                } else {
                    AttemptOutcome::Failed { code, retryable }
                };
                let s = c.finish(outcome, a.millis(1, "now")?).map_err(fail)?;
                Obj::new()
                    .bool("retry", s.retry)
                    .value("retryAt", opt_ms(s.retry_at))
                    .str("reason", s.reason.as_str())
                    .build()
            }
            "consume" => {
                let delta = resources(a.get(0), "delta")?;
                resources_to_value(&c.consume(&delta).map_err(fail)?)
            }
            other => return Err(unknown_method("RetryController", other)),
        })
    }
}

/// Stateless functions: `idempotencyKey`, `derivedAttemptKey`, `parseDurationMs`.
pub fn call_function(method: &str, args: &str) -> Res<Value> {
    let a = Args::parse(args)?;
    Ok(match method {
        "idempotencyKey" => {
            let epoch = a.uint(2, "ownershipEpoch", MAX_SAFE_INTEGER)?;
            let key = idempotency_key(
                a.str(0, "missionId")?,
                a.str(1, "workItemId")?,
                epoch,
                a.str(3, "logicalOperationId")?,
            )
            .ok_or_else(|| {
                Failure::argument("ownershipEpoch: expected an integer in 1..=2^53-1")
            })?;
            Value::string(key)
        }
        "derivedAttemptKey" => Value::string(derived_attempt_key(
            a.str(0, "idempotencyKey")?,
            a.uint(1, "attempt", u64::from(u32::MAX))? as u32,
        )),
        // The core's spelling lists, for the package's own enum objects to be tested against.
        "vocabularies" => {
            let mut out = missionweaveprotocol::json::Object::new();
            for (name, values) in missionweaveprotocol_authority::vocabularies() {
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
            Value::Object(out)
        }
        "parseDurationMs" => {
            let text = a.str(0, "duration")?;
            num(parse_duration_ms(text)
                .filter(|v| *v <= MAX_SAFE_INTEGER)
                .ok_or_else(|| Failure::argument(format!("not a duration: {text:?}")))?)
        }
        other => return Err(Failure::argument(format!("no function {other:?}"))),
    })
}
