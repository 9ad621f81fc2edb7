//! Scoped Delegation Grants (§9.1, digest §2.12).
//!
//! A [`DelegationAuthority`] wraps one persisted [`DelegationGrant`] and checks every use of it
//! against the authoritative state handed in ([`DelegationContext`], [`WorkItemTree`]): the
//! grantee identity and its active `work_delegate` Membership at the granted epoch, the
//! Mission/Group, the current Coordinator Epoch and issuer, the validity window, the target's
//! existence and liveness, the subtree scope, capabilities at minimum versions, maximum
//! descendant depth (Grant and Organization policy), and cumulative six-dimensional ceilings
//! across every WorkItem created or offered under the Grant. Invalidating conditions (§9.1
//! "immediately invalidates further use") latch: once seen, the Grant stays unusable.

use std::collections::HashSet;

use missionweaveprotocol::WireCode;

use crate::capability_version::CapabilityRef;
use crate::resources::{Currency, Dimension, MAX_SAFE_INTEGER, Resources};
use crate::unix_millis::UnixMillis;

/// Why a Grant use was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DelegationViolationKind {
    /// The actor is not the grantee (Grants are non-transferable).
    Identity,
    /// No active `work_delegate` Membership in the Grant's Group.
    Membership,
    /// The Membership Epoch differs from the Grant's grantee Membership Epoch.
    MembershipEpoch,
    /// Wrong Mission or Group, or the WorkItem is outside the target's subtree.
    Scope,
    /// A required capability is not allowed, or below the allowed minimum version.
    Capability,
    /// A cumulative ceiling would be exceeded, or the currency differs.
    Budget,
    /// Deeper than the Grant maximum or Organization policy.
    Depth,
    /// The Coordinator Epoch is no longer current.
    CoordinatorEpoch,
    /// The issuing Coordinator is no longer the current Coordinator.
    Issuer,
    /// At or past `expiresAt`.
    Expired,
    /// Before `grantedAt`.
    NotYetValid,
    /// The target WorkItem does not exist.
    TargetMissing,
    /// The target WorkItem is failed, cancelled or verified.
    TargetClosed,
    /// The Grant itself is malformed.
    Malformed,
}

impl DelegationViolationKind {
    /// The §19 wire code.
    pub const fn code(self) -> WireCode {
        match self {
            Self::Membership => WireCode::MembershipRequired,
            Self::MembershipEpoch => WireCode::MembershipStale,
            Self::CoordinatorEpoch | Self::Issuer => WireCode::AuthStaleCoordinator,
            Self::Budget => WireCode::BudgetExceeded,
            Self::Malformed => WireCode::InvalidCommand,
            _ => WireCode::AuthForbidden,
        }
    }

    /// True for the conditions that end the Grant for good (§9.1).
    pub const fn invalidates(self) -> bool {
        matches!(
            self,
            Self::MembershipEpoch
                | Self::Membership
                | Self::CoordinatorEpoch
                | Self::Issuer
                | Self::Expired
                | Self::TargetMissing
                | Self::TargetClosed
        )
    }
}

missionweaveprotocol::spelling!(DelegationViolationKind {
    Identity => "identity",
    Membership => "membership",
    MembershipEpoch => "membership_epoch",
    Scope => "scope",
    Capability => "capability",
    Budget => "budget",
    Depth => "depth",
    CoordinatorEpoch => "coordinator_epoch",
    Issuer => "issuer",
    Expired => "expired",
    NotYetValid => "not_yet_valid",
    TargetMissing => "target_missing",
    TargetClosed => "target_closed",
    Malformed => "malformed",
});

/// A refused Grant use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DelegationViolation {
    /// Category.
    pub kind: DelegationViolationKind,
    /// Human-readable detail (never secrets).
    pub message: String,
    /// For [`DelegationViolationKind::Budget`]: the dimension.
    pub dimension: Option<Dimension>,
}

impl DelegationViolation {
    fn new(kind: DelegationViolationKind, message: impl Into<String>) -> Self {
        DelegationViolation {
            kind,
            message: message.into(),
            dimension: None,
        }
    }

    /// The §19 wire code.
    pub fn code(&self) -> WireCode {
        self.kind.code()
    }
}

/// The persisted Grant (`membership.delegationGrants[]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DelegationGrant {
    /// Grant ID.
    pub grant_id: String,
    /// The only Agent that may use it.
    pub grantee_agent_id: String,
    /// Mission.
    pub mission_id: String,
    /// Group.
    pub group_id: String,
    /// Scope root.
    pub target_work_item_id: String,
    /// Allowed capabilities with their minimum versions (≥ 1).
    pub allowed_capabilities: Vec<CapabilityRef>,
    /// Currency of the financial ceiling.
    pub currency: Currency,
    /// Explicit ceilings for all six dimensions, cumulative across the Grant.
    pub ceilings: Resources,
    /// Maximum depth below the target (the target is depth 0).
    pub max_descendant_depth: u32,
    /// Grantee Membership Epoch at grant time.
    pub grantee_membership_epoch: u64,
    /// Coordinator Epoch of the issuer.
    pub coordinator_epoch: u64,
    /// Issuing Coordinator Agent.
    pub granted_by: String,
    /// Start of validity.
    pub granted_at: UnixMillis,
    /// End of validity (exclusive).
    pub expires_at: UnixMillis,
}

/// The acting Agent's Membership in the Grant's Group, as authoritative state has it now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MembershipView<'a> {
    /// Group of the Membership.
    pub group_id: &'a str,
    /// `active` (not provisional or ended).
    pub active: bool,
    /// Holds the `work_delegate` role.
    pub work_delegate: bool,
    /// Current Membership Epoch.
    pub epoch: u64,
}

/// Authoritative state at the moment of use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DelegationContext<'a> {
    /// The Agent issuing `work.authorize` / `work.offer`.
    pub actor_agent_id: &'a str,
    /// Its Membership in the Command's Group, if any.
    pub membership: Option<MembershipView<'a>>,
    /// Mission of the Command.
    pub mission_id: &'a str,
    /// Group of the Command.
    pub group_id: &'a str,
    /// The Mission's current Coordinator Epoch.
    pub coordinator_epoch: u64,
    /// The Mission's current Coordinator Agent.
    pub coordinator_agent_id: &'a str,
    /// Organization cooperation policy's maximum delegation depth.
    pub organization_max_depth: u32,
    /// Now.
    pub now: UnixMillis,
}

/// A WorkItem as the Grant checks see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkItemNode<'a> {
    /// Its Mission.
    pub mission_id: &'a str,
    /// Parent WorkItem, if nested.
    pub parent_work_item_id: Option<&'a str>,
    /// `failed`, `cancelled` or `verified`.
    pub closed: bool,
}

/// Read access to the authoritative WorkItem graph.
pub trait WorkItemTree {
    /// The WorkItem, or `None` if it does not exist.
    fn node(&self, work_item_id: &str) -> Option<WorkItemNode<'_>>;
}

/// What the delegated Command wants to create or offer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DelegatedWork<'a> {
    /// The Work Contract's required capabilities.
    pub required_capabilities: &'a [CapabilityRef],
    /// The Work Contract's budget.
    pub budget: Resources,
    /// Its currency (needed when the financial budget is nonzero).
    pub currency: Option<Currency>,
}

/// Walking more parents than this means the caller's graph has a cycle: treat as out of scope.
const MAX_WALK: u32 = 100_000;

/// Checks and accounts the uses of one Grant.
#[derive(Clone, Debug)]
pub struct DelegationAuthority {
    grant: DelegationGrant,
    charged: Resources,
    attributed: HashSet<String>,
    invalidated: Option<DelegationViolation>,
}

impl DelegationAuthority {
    /// Wraps a Grant after checking it is well-formed.
    pub fn new(grant: DelegationGrant) -> Result<Self, DelegationViolation> {
        use DelegationViolationKind::Malformed;
        let ids = [
            &grant.grant_id,
            &grant.grantee_agent_id,
            &grant.mission_id,
            &grant.group_id,
            &grant.target_work_item_id,
            &grant.granted_by,
        ];
        if ids.iter().any(|s| s.is_empty()) {
            return Err(DelegationViolation::new(Malformed, "empty identifier"));
        }
        if grant.allowed_capabilities.is_empty() {
            return Err(DelegationViolation::new(Malformed, "no allowed capability"));
        }
        for epoch in [grant.grantee_membership_epoch, grant.coordinator_epoch] {
            if epoch == 0 || epoch > MAX_SAFE_INTEGER {
                return Err(DelegationViolation::new(Malformed, "epoch out of range"));
            }
        }
        if grant.ceilings.first_unsafe().is_some() {
            return Err(DelegationViolation::new(Malformed, "ceiling out of range"));
        }
        if grant.expires_at <= grant.granted_at {
            return Err(DelegationViolation::new(Malformed, "expiresAt ≤ grantedAt"));
        }
        Ok(DelegationAuthority {
            grant,
            charged: Resources::ZERO,
            attributed: HashSet::new(),
            invalidated: None,
        })
    }

    /// The Grant.
    pub fn grant(&self) -> &DelegationGrant {
        &self.grant
    }

    /// Cumulative budget of all WorkItems created or offered under the Grant.
    pub fn charged(&self) -> Resources {
        self.charged
    }

    /// What remains under the ceilings.
    pub fn remaining(&self) -> Resources {
        self.grant.ceilings.saturating_sub(&self.charged)
    }

    /// The latched invalidation, if the Grant can no longer be used.
    pub fn invalidated(&self) -> Option<&DelegationViolation> {
        self.invalidated.as_ref()
    }

    /// Restores a WorkItem previously attributed to this Grant (rebuild from the log).
    pub fn restore_attribution(
        &mut self,
        work_item_id: &str,
        budget: &Resources,
    ) -> Result<(), DelegationViolation> {
        if self.attributed.contains(work_item_id) {
            return Ok(());
        }
        self.charge(budget)?;
        self.attributed.insert(work_item_id.to_owned());
        Ok(())
    }

    fn fail(&mut self, kind: DelegationViolationKind, message: &str) -> DelegationViolation {
        let v = DelegationViolation::new(kind, message);
        if kind.invalidates() {
            self.invalidated = Some(v.clone());
        }
        v
    }

    /// Every use-time check that does not depend on the WorkItem being created or offered.
    pub fn check_use(
        &mut self,
        ctx: &DelegationContext<'_>,
        tree: &dyn WorkItemTree,
    ) -> Result<(), DelegationViolation> {
        use DelegationViolationKind as K;
        if let Some(v) = &self.invalidated {
            return Err(v.clone());
        }
        let g = &self.grant;
        if ctx.actor_agent_id != g.grantee_agent_id {
            // Not invalidating: the grantee may still use it; others never can.
            return Err(DelegationViolation::new(
                K::Identity,
                "actor is not the grantee",
            ));
        }
        if ctx.mission_id != g.mission_id || ctx.group_id != g.group_id {
            return Err(DelegationViolation::new(K::Scope, "other Mission or Group"));
        }
        match ctx.membership {
            Some(m) if m.group_id == g.group_id && m.active && m.work_delegate => {
                if m.epoch != g.grantee_membership_epoch {
                    return Err(self.fail(K::MembershipEpoch, "Membership changed"));
                }
            }
            _ => return Err(self.fail(K::Membership, "no active work_delegate Membership")),
        }
        if ctx.coordinator_epoch != self.grant.coordinator_epoch {
            return Err(self.fail(K::CoordinatorEpoch, "Coordinator replaced"));
        }
        if ctx.coordinator_agent_id != self.grant.granted_by {
            return Err(self.fail(K::Issuer, "issuer is not the current Coordinator"));
        }
        if ctx.now < self.grant.granted_at {
            return Err(DelegationViolation::new(K::NotYetValid, "before grantedAt"));
        }
        if ctx.now >= self.grant.expires_at {
            return Err(self.fail(K::Expired, "Grant expired"));
        }
        match tree.node(&self.grant.target_work_item_id) {
            None => Err(self.fail(K::TargetMissing, "target WorkItem missing")),
            Some(n) if n.closed => Err(self.fail(K::TargetClosed, "target WorkItem closed")),
            Some(n) if n.mission_id != self.grant.mission_id => Err(DelegationViolation::new(
                K::Scope,
                "target in another Mission",
            )),
            Some(_) => Ok(()),
        }
    }

    /// Depth of an existing WorkItem below the target (0 = target), or a scope violation.
    fn depth_of(
        &self,
        tree: &dyn WorkItemTree,
        work_item_id: &str,
    ) -> Result<u32, DelegationViolation> {
        let scope = |m: &str| DelegationViolation::new(DelegationViolationKind::Scope, m);
        let mut cursor = work_item_id;
        let mut depth = 0u32;
        loop {
            if cursor == self.grant.target_work_item_id {
                return Ok(depth);
            }
            let node = tree
                .node(cursor)
                .ok_or_else(|| scope("WorkItem not found"))?;
            if node.mission_id != self.grant.mission_id {
                return Err(scope("WorkItem in another Mission"));
            }
            match node.parent_work_item_id {
                Some(p) if depth < MAX_WALK => {
                    cursor = p;
                    depth += 1;
                }
                _ => return Err(scope("WorkItem outside the Grant subtree")),
            }
        }
    }

    fn check_depth(
        &self,
        ctx: &DelegationContext<'_>,
        depth: u32,
    ) -> Result<(), DelegationViolation> {
        if depth > self.grant.max_descendant_depth || depth > ctx.organization_max_depth {
            return Err(DelegationViolation::new(
                DelegationViolationKind::Depth,
                format!("depth {depth} exceeds the Grant or Organization maximum"),
            ));
        }
        Ok(())
    }

    fn check_capabilities(&self, work: &DelegatedWork<'_>) -> Result<(), DelegationViolation> {
        for req in work.required_capabilities {
            let allowed = self
                .grant
                .allowed_capabilities
                .iter()
                .any(|a| a.id == req.id && req.version.satisfies(&a.version));
            if !allowed {
                return Err(DelegationViolation::new(
                    DelegationViolationKind::Capability,
                    format!("capability {} {} not allowed", req.id, req.version),
                ));
            }
        }
        Ok(())
    }

    fn check_budget(&self, work: &DelegatedWork<'_>) -> Result<Resources, DelegationViolation> {
        if work.budget.get(Dimension::Financial) > 0 && work.currency != Some(self.grant.currency) {
            let mut v =
                DelegationViolation::new(DelegationViolationKind::Budget, "currency differs");
            v.dimension = Some(Dimension::Financial);
            return Err(v);
        }
        let over = |d: Dimension| {
            let mut v = DelegationViolation::new(
                DelegationViolationKind::Budget,
                format!("cumulative {d} budget exceeds the Grant ceiling"),
            );
            v.dimension = Some(d);
            v
        };
        let next = self.charged.checked_add(&work.budget).map_err(over)?;
        match next.first_exceeding(&self.grant.ceilings) {
            Some(d) => Err(over(d)),
            None => Ok(next),
        }
    }

    fn charge(&mut self, budget: &Resources) -> Result<(), DelegationViolation> {
        let work = DelegatedWork {
            required_capabilities: &[],
            budget: *budget,
            currency: Some(self.grant.currency),
        };
        self.charged = self.check_budget(&work)?;
        Ok(())
    }

    /// `work.offer` of the target or an existing descendant under the Grant. Charges the item's
    /// budget once (re-offering the same item does not charge again). Returns its depth.
    pub fn authorize_offer(
        &mut self,
        ctx: &DelegationContext<'_>,
        tree: &dyn WorkItemTree,
        work_item_id: &str,
        work: &DelegatedWork<'_>,
    ) -> Result<u32, DelegationViolation> {
        self.check_use(ctx, tree)?;
        let depth = self.depth_of(tree, work_item_id)?;
        self.check_depth(ctx, depth)?;
        self.check_capabilities(work)?;
        if !self.attributed.contains(work_item_id) {
            self.charged = self.check_budget(work)?;
            self.attributed.insert(work_item_id.to_owned());
        }
        Ok(depth)
    }

    /// `work.authorize` of a new WorkItem whose `parentWorkItemId` links it into the subtree.
    /// Returns the new item's depth.
    pub fn authorize_descendant(
        &mut self,
        ctx: &DelegationContext<'_>,
        tree: &dyn WorkItemTree,
        new_work_item_id: &str,
        parent_work_item_id: &str,
        work: &DelegatedWork<'_>,
    ) -> Result<u32, DelegationViolation> {
        self.check_use(ctx, tree)?;
        if tree.node(new_work_item_id).is_some() || self.attributed.contains(new_work_item_id) {
            return Err(DelegationViolation::new(
                DelegationViolationKind::Scope,
                "WorkItem already exists",
            ));
        }
        let depth = self.depth_of(tree, parent_work_item_id)?.saturating_add(1);
        self.check_depth(ctx, depth)?;
        self.check_capabilities(work)?;
        self.charged = self.check_budget(work)?;
        self.attributed.insert(new_work_item_id.to_owned());
        Ok(depth)
    }
}

// ---- the reference's shapes ----------------------------------------------------------------
//
// A binding that accepts the reference runtime's models (a Principal, a Membership record, a
// WorkItem status, a `ResourceBudget` with unset dimensions) reads them through these rules, so
// that no binding re-decides what they mean.

/// The principal type that may use a Grant and that grants one: §9.1 Grants are issued by the
/// Coordinator Agent to another Agent.
pub const GRANT_PRINCIPAL_TYPE: &str = "agent";

/// The Membership role a grantee needs (§9.1).
pub const WORK_DELEGATE_ROLE: &str = "work_delegate";

/// The Membership status a grantee needs.
pub const ACTIVE_MEMBERSHIP_STATUS: &str = "active";

/// The WorkItem statuses that close a Grant's target and every item under it.
pub const CLOSED_WORK_ITEM_STATUSES: [&str; 3] = ["verified", "failed", "cancelled"];

/// Only an Agent may use a Grant: any other principal type is an
/// [`Identity`](DelegationViolationKind::Identity) violation (not invalidating: the grantee may
/// still use it).
pub fn check_grant_user(principal_type: &str) -> Result<(), DelegationViolation> {
    if principal_type == GRANT_PRINCIPAL_TYPE {
        Ok(())
    } else {
        Err(DelegationViolation::new(
            DelegationViolationKind::Identity,
            "only an Agent can use a Delegation Grant",
        ))
    }
}

/// A Grant is granted by an Agent (the Coordinator): any other principal type makes the Grant
/// [`Malformed`](DelegationViolationKind::Malformed).
pub fn check_grantor(principal_type: &str) -> Result<(), DelegationViolation> {
    if principal_type == GRANT_PRINCIPAL_TYPE {
        Ok(())
    } else {
        Err(DelegationViolation::new(
            DelegationViolationKind::Malformed,
            "a Delegation Grant is granted by an Agent",
        ))
    }
}

/// Whether a WorkItem in `status` is closed for the Grant checks ([`WorkItemNode::closed`]).
pub fn is_closed_status(status: &str) -> bool {
    CLOSED_WORK_ITEM_STATUSES.contains(&status)
}

/// A Membership record as the reference models it: whose it is, its Group, status, roles and
/// epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MembershipRecord<'a> {
    /// The member's principal type (`agent`, `human`, …).
    pub principal_type: &'a str,
    /// The member's principal ID.
    pub principal_id: &'a str,
    /// Its Group.
    pub group_id: &'a str,
    /// Its status (`active`, `provisional`, `ended`, …).
    pub status: &'a str,
    /// Its roles.
    pub roles: &'a [&'a str],
    /// Its Membership Epoch.
    pub epoch: u64,
}

impl<'a> MembershipView<'a> {
    /// The acting Agent's Membership as the Grant checks see it: `None` when the record is
    /// another principal's (a Membership of someone else counts as none); `active` when its
    /// status is [`ACTIVE_MEMBERSHIP_STATUS`]; `work_delegate` when it holds
    /// [`WORK_DELEGATE_ROLE`].
    pub fn of_record(actor_agent_id: &str, record: &MembershipRecord<'a>) -> Option<Self> {
        if record.principal_type != GRANT_PRINCIPAL_TYPE || record.principal_id != actor_agent_id {
            return None;
        }
        Some(MembershipView {
            group_id: record.group_id,
            active: record.status == ACTIVE_MEMBERSHIP_STATUS,
            work_delegate: record.roles.contains(&WORK_DELEGATE_ROLE),
            epoch: record.epoch,
        })
    }
}

/// Six optional amounts in [`Dimension::ALL`] order: the reference's `ResourceBudget`, where
/// `None` means the dimension is not set.
pub type OptionalCeilings = [Option<u64>; 6];

/// The reference's `ResourceBudget.contains`: every dimension `child` sets is set in `have` and
/// at least as large (a dimension the child leaves unset always fits).
pub fn budget_contains(have: &OptionalCeilings, child: &OptionalCeilings) -> bool {
    have.iter()
        .zip(child)
        .all(|(have, wanted)| match (have, wanted) {
            (_, None) => true,
            (None, Some(_)) => false,
            (Some(have), Some(wanted)) => wanted <= have,
        })
}

/// A Grant's ceilings from a reference budget: a Grant sets all six (§9.1); an unset one is
/// [`Malformed`](DelegationViolationKind::Malformed), naming every unset dimension.
pub fn grant_ceilings(budget: &OptionalCeilings) -> Result<Resources, DelegationViolation> {
    let unset: Vec<&str> = Dimension::ALL
        .into_iter()
        .filter(|d| budget[d.index()].is_none())
        .map(Dimension::as_str)
        .collect();
    if !unset.is_empty() {
        return Err(DelegationViolation::new(
            DelegationViolationKind::Malformed,
            format!(
                "a Delegation Grant sets all six ceilings; unset: {}",
                unset.join(", ")
            ),
        ));
    }
    Ok(Resources(budget.map(Option::unwrap_or_default)))
}

impl DelegationGrant {
    /// The currency of a Work Contract budget used under this Grant: its own, else — when it
    /// spends money — the Grant's (the reference's `ResourceBudget` has no currency, so its
    /// budgets are in the Grant's).
    pub fn contract_currency(
        &self,
        budget: &Resources,
        currency: Option<Currency>,
    ) -> Option<Currency> {
        match currency {
            Some(c) => Some(c),
            None if budget.get(Dimension::Financial) > 0 => Some(self.currency),
            None => None,
        }
    }
}
