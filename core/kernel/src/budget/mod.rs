//! The aggregate six-dimensional budget ledger (§12, §14, §11.5).
//!
//! Accounts form a tree: a root Mission, its WorkItems (nested through `parentWorkItemId`), and
//! child Missions hanging off a parent WorkItem (§14). A child's limits are *reserved* against
//! its parent when it is registered (the sum of direct children's limits never exceeds the
//! parent's, per dimension), so the Coordinator can never allocate more than the MissionOwner set.
//! A consumption is charged to the WorkItem and every ancestor in one step or not at all
//! (`BUDGET_EXCEEDED` names the dimension). Every operation walks only the ancestry: O(depth).
//!
//! Unlike the reference ledger, nothing re-validates the whole ledger per mutation (its gap
//! §7 item 8): the invariants are maintained incrementally and checked in full only by
//! [`BudgetLedger::rebuild`].

use std::collections::HashMap;

mod json;

pub use self::json::BUDGET_SNAPSHOT_VERSION;

use missionweaveprotocol::WireCode;

use crate::resources::{Currency, Dimension, Resources};

/// Which kind of account.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccountKind {
    /// A Mission (root or child).
    Mission,
    /// A WorkItem.
    WorkItem,
}

/// A named account, used in errors.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AccountId {
    /// Mission or WorkItem.
    pub kind: AccountKind,
    /// Its identifier.
    pub id: String,
}

impl AccountId {
    fn mission(id: &str) -> Self {
        AccountId {
            kind: AccountKind::Mission,
            id: id.to_owned(),
        }
    }
    fn work_item(id: &str) -> Self {
        AccountId {
            kind: AccountKind::WorkItem,
            id: id.to_owned(),
        }
    }
}

/// Ledger failures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BudgetError {
    /// Charging would exceed `account`'s limit in `dimension` (§12): nothing was charged.
    Exceeded {
        /// The first account in the ancestry (item first) that would overflow.
        account: AccountId,
        /// The first overflowing dimension.
        dimension: Dimension,
    },
    /// A new child's limit does not fit in what its parent has left unreserved.
    AllocationExceeded {
        /// The parent whose reservation would overflow.
        parent: AccountId,
        /// The first overflowing dimension.
        dimension: Dimension,
    },
    /// No such account.
    UnknownAccount(AccountId),
    /// The account is already registered (or listed twice in a snapshot).
    Duplicate(AccountId),
    /// A WorkItem's parent WorkItem belongs to another Mission.
    CrossMissionParent(AccountId),
    /// A financial limit without a currency, or a child with another currency than its parent.
    Currency(AccountId),
    /// A value above 2^53 − 1 (§2).
    UnsafeInteger(Dimension),
    /// A usage record must carry a nonzero delta (§12).
    ZeroDelta,
    /// A budget object that cannot be read exactly (a financial limit finer than a
    /// micro-unit, a non-integer count, a malformed currency).
    Malformed(AccountId),
    /// A snapshot's parent links form a cycle through this account.
    Cycle(AccountId),
    /// A snapshot's totals are inconsistent at this account (usage ≠ direct + children, usage
    /// over limit, or children reserving more than the limit).
    CorruptTotals(AccountId),
}

impl BudgetError {
    /// The §19 wire code.
    pub const fn code(&self) -> WireCode {
        match self {
            BudgetError::Exceeded { .. } | BudgetError::AllocationExceeded { .. } => {
                WireCode::BudgetExceeded
            }
            BudgetError::Cycle(_) | BudgetError::CorruptTotals(_) => WireCode::InternalError,
            _ => WireCode::InvalidCommand,
        }
    }
}

/// A Mission's persisted state (snapshot form).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissionBudgetState {
    /// Mission ID.
    pub mission_id: String,
    /// For a child Mission: the parent WorkItem it was promoted from (§14).
    pub parent_work_item_id: Option<String>,
    /// Currency of the financial dimension (inherited from the parent when `None`).
    pub currency: Option<Currency>,
    /// Limits.
    pub limit: Resources,
    /// Cumulative usage of the whole subtree.
    pub usage: Resources,
}

/// A WorkItem's persisted state (snapshot form).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkItemBudgetState {
    /// WorkItem ID.
    pub work_item_id: String,
    /// Owning Mission.
    pub mission_id: String,
    /// Parent WorkItem in the same Mission, if nested.
    pub parent_work_item_id: Option<String>,
    /// Limits.
    pub limit: Resources,
    /// Usage recorded against this WorkItem itself.
    pub direct_usage: Resources,
    /// Cumulative usage of this WorkItem and everything below it.
    pub usage: Resources,
}

/// A full ledger snapshot (§12 "persist an aggregate ledger"); order is not significant.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct BudgetLedgerSnapshot {
    /// Missions.
    pub missions: Vec<MissionBudgetState>,
    /// WorkItems.
    pub work_items: Vec<WorkItemBudgetState>,
}

#[derive(Clone, Debug)]
struct Account {
    kind: AccountKind,
    id: Box<str>,
    parent: Option<u32>,
    /// For a WorkItem, the index of its Mission; for a Mission, itself.
    mission: u32,
    currency: Option<Currency>,
    limit: Resources,
    reserved: Resources,
    direct_usage: Resources,
    usage: Resources,
}

/// The hierarchical ledger.
///
/// ```
/// use missionweaveprotocol_kernel::budget::{AccountKind, BudgetError, BudgetLedger};
/// use missionweaveprotocol_kernel::resources::{Dimension, Resources};
///
/// let tokens = |n| Resources::ZERO.with(Dimension::ModelTokens, n);
/// let mut ledger = BudgetLedger::new();
/// ledger.register_mission("urn:missionweaveprotocol:mission:m", None, tokens(1_000))?;
/// ledger.register_work_item(
///     "urn:missionweaveprotocol:work-item:w",
///     "urn:missionweaveprotocol:mission:m",
///     None,
///     tokens(600),
/// )?;
/// // A second WorkItem cannot reserve more than the Mission has left (600 + 500 > 1000).
/// let error = ledger
///     .register_work_item("urn:missionweaveprotocol:work-item:x", "urn:missionweaveprotocol:mission:m", None, tokens(500))
///     .unwrap_err();
/// assert!(matches!(error, BudgetError::AllocationExceeded { .. }));
///
/// // Spending is charged to the WorkItem and the Mission together, or not at all.
/// ledger.consume("urn:missionweaveprotocol:work-item:w", &tokens(400))?;
/// let error = ledger.consume("urn:missionweaveprotocol:work-item:w", &tokens(201)).unwrap_err();
/// assert_eq!(error.code().as_str(), "BUDGET_EXCEEDED");
/// assert_eq!(
///     ledger.usage(AccountKind::Mission, "urn:missionweaveprotocol:mission:m")?.get(Dimension::ModelTokens),
///     400
/// );
/// # Ok::<(), BudgetError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct BudgetLedger {
    accounts: Vec<Account>,
    missions: HashMap<Box<str>, u32>,
    work_items: HashMap<Box<str>, u32>,
}

impl BudgetLedger {
    /// An empty ledger.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of accounts (Missions plus WorkItems).
    pub fn len(&self) -> usize {
        self.accounts.len()
    }

    /// True when no account exists.
    pub fn is_empty(&self) -> bool {
        self.accounts.is_empty()
    }

    fn index(&self, kind: AccountKind, id: &str) -> Result<u32, BudgetError> {
        let map = match kind {
            AccountKind::Mission => &self.missions,
            AccountKind::WorkItem => &self.work_items,
        };
        map.get(id).copied().ok_or_else(|| {
            BudgetError::UnknownAccount(AccountId {
                kind,
                id: id.to_owned(),
            })
        })
    }

    fn account(&self, idx: u32) -> &Account {
        // Indices are only ever produced by this ledger for its own vector.
        &self.accounts[idx as usize]
    }

    fn name(&self, idx: u32) -> AccountId {
        let a = self.account(idx);
        AccountId {
            kind: a.kind,
            id: a.id.to_string(),
        }
    }

    /// Registers a root Mission with limits set by its MissionOwner (§12).
    pub fn register_mission(
        &mut self,
        mission_id: &str,
        currency: Option<Currency>,
        limit: Resources,
    ) -> Result<(), BudgetError> {
        if self.missions.contains_key(mission_id) {
            return Err(BudgetError::Duplicate(AccountId::mission(mission_id)));
        }
        Self::check_values(&limit)?;
        if currency.is_none() && limit.get(Dimension::Financial) > 0 {
            return Err(BudgetError::Currency(AccountId::mission(mission_id)));
        }
        self.insert(
            AccountKind::Mission,
            mission_id,
            None,
            None,
            currency,
            limit,
        );
        Ok(())
    }

    /// Registers a child Mission promoted from `parent_work_item_id` (§14); its limits are
    /// reserved against that WorkItem. `currency` defaults to the parent's and must match it.
    pub fn register_child_mission(
        &mut self,
        mission_id: &str,
        parent_work_item_id: &str,
        currency: Option<Currency>,
        limit: Resources,
    ) -> Result<(), BudgetError> {
        if self.missions.contains_key(mission_id) {
            return Err(BudgetError::Duplicate(AccountId::mission(mission_id)));
        }
        Self::check_values(&limit)?;
        let parent = self.index(AccountKind::WorkItem, parent_work_item_id)?;
        let parent_currency = self.account(self.account(parent).mission).currency;
        let currency = match (currency, parent_currency) {
            (Some(c), Some(p)) if c != p => {
                return Err(BudgetError::Currency(AccountId::mission(mission_id)));
            }
            (Some(c), _) => Some(c),
            (None, p) => p,
        };
        if currency.is_none() && limit.get(Dimension::Financial) > 0 {
            return Err(BudgetError::Currency(AccountId::mission(mission_id)));
        }
        self.reserve(parent, &limit)?;
        self.insert(
            AccountKind::Mission,
            mission_id,
            Some(parent),
            None,
            currency,
            limit,
        );
        Ok(())
    }

    /// Registers a WorkItem under its Mission, or under a parent WorkItem of the same Mission;
    /// its limits are reserved against that parent (§12 "allocates no more than those limits").
    pub fn register_work_item(
        &mut self,
        work_item_id: &str,
        mission_id: &str,
        parent_work_item_id: Option<&str>,
        limit: Resources,
    ) -> Result<(), BudgetError> {
        if self.work_items.contains_key(work_item_id) {
            return Err(BudgetError::Duplicate(AccountId::work_item(work_item_id)));
        }
        Self::check_values(&limit)?;
        let mission = self.index(AccountKind::Mission, mission_id)?;
        let parent = match parent_work_item_id {
            Some(p) => {
                let idx = self.index(AccountKind::WorkItem, p)?;
                if self.account(idx).mission != mission {
                    return Err(BudgetError::CrossMissionParent(AccountId::work_item(
                        work_item_id,
                    )));
                }
                idx
            }
            None => mission,
        };
        self.reserve(parent, &limit)?;
        self.insert(
            AccountKind::WorkItem,
            work_item_id,
            Some(parent),
            Some(mission),
            None,
            limit,
        );
        Ok(())
    }

    fn check_values(r: &Resources) -> Result<(), BudgetError> {
        match r.first_unsafe() {
            Some(d) => Err(BudgetError::UnsafeInteger(d)),
            None => Ok(()),
        }
    }

    fn reserve(&mut self, parent: u32, limit: &Resources) -> Result<(), BudgetError> {
        let p = self.account(parent);
        let reserved = p
            .reserved
            .checked_add(limit)
            .map_err(BudgetError::UnsafeInteger)?;
        if let Some(dimension) = reserved.first_exceeding(&p.limit) {
            return Err(BudgetError::AllocationExceeded {
                parent: self.name(parent),
                dimension,
            });
        }
        self.accounts[parent as usize].reserved = reserved;
        Ok(())
    }

    fn insert(
        &mut self,
        kind: AccountKind,
        id: &str,
        parent: Option<u32>,
        mission: Option<u32>,
        currency: Option<Currency>,
        limit: Resources,
    ) -> u32 {
        let idx = self.accounts.len() as u32;
        self.accounts.push(Account {
            kind,
            id: id.into(),
            parent,
            mission: mission.unwrap_or(idx),
            currency,
            limit,
            reserved: Resources::ZERO,
            direct_usage: Resources::ZERO,
            usage: Resources::ZERO,
        });
        match kind {
            AccountKind::Mission => self.missions.insert(id.into(), idx),
            AccountKind::WorkItem => self.work_items.insert(id.into(), idx),
        };
        idx
    }

    /// Charges a nonzero `delta` to a WorkItem and its whole WorkItem/Mission ancestry, all or
    /// nothing (§12, §11.5). Returns the WorkItem's new cumulative usage.
    pub fn consume(
        &mut self,
        work_item_id: &str,
        delta: &Resources,
    ) -> Result<Resources, BudgetError> {
        let item = self.index(AccountKind::WorkItem, work_item_id)?;
        if delta.is_zero() {
            return Err(BudgetError::ZeroDelta);
        }
        Self::check_values(delta)?;
        // First pass: check every ancestor without mutating, so a failure leaves no trace.
        let mut cursor = Some(item);
        while let Some(idx) = cursor {
            let a = self.account(idx);
            let next = a
                .usage
                .checked_add(delta)
                .map_err(|dimension| BudgetError::Exceeded {
                    account: self.name(idx),
                    dimension,
                })?;
            if let Some(dimension) = next.first_exceeding(&a.limit) {
                return Err(BudgetError::Exceeded {
                    account: self.name(idx),
                    dimension,
                });
            }
            cursor = a.parent;
        }
        // Second pass: apply. The first pass proved every addition fits.
        let mut cursor = Some(item);
        while let Some(idx) = cursor {
            let a = &mut self.accounts[idx as usize];
            a.usage = a.usage.checked_add(delta).unwrap_or(a.usage);
            cursor = a.parent;
        }
        let a = &mut self.accounts[item as usize];
        a.direct_usage = a.direct_usage.checked_add(delta).unwrap_or(a.direct_usage);
        Ok(a.usage)
    }

    /// Cumulative usage of an account's subtree.
    pub fn usage(&self, kind: AccountKind, id: &str) -> Result<Resources, BudgetError> {
        Ok(self.account(self.index(kind, id)?).usage)
    }

    /// An account's limits.
    pub fn limit(&self, kind: AccountKind, id: &str) -> Result<Resources, BudgetError> {
        Ok(self.account(self.index(kind, id)?).limit)
    }

    /// Sum of the limits reserved by an account's direct children.
    pub fn reserved(&self, kind: AccountKind, id: &str) -> Result<Resources, BudgetError> {
        Ok(self.account(self.index(kind, id)?).reserved)
    }

    /// The currency of an account's financial dimension (a WorkItem uses its Mission's).
    pub fn currency(&self, kind: AccountKind, id: &str) -> Result<Option<Currency>, BudgetError> {
        let idx = self.index(kind, id)?;
        Ok(self.account(self.account(idx).mission).currency)
    }

    /// Number of ancestors (0 for a root Mission).
    pub fn depth(&self, kind: AccountKind, id: &str) -> Result<usize, BudgetError> {
        let mut cursor = self.account(self.index(kind, id)?).parent;
        let mut depth = 0;
        while let Some(idx) = cursor {
            depth += 1;
            cursor = self.account(idx).parent;
        }
        Ok(depth)
    }

    /// What can still be consumed through this account: the minimum of `limit − usage` over
    /// the account and its whole ancestry (§12 "authoritative remaining budget").
    pub fn remaining(&self, kind: AccountKind, id: &str) -> Result<Resources, BudgetError> {
        let mut cursor = Some(self.index(kind, id)?);
        let mut out = Resources::splat(u64::MAX);
        while let Some(idx) = cursor {
            let a = self.account(idx);
            out = out.min(&a.limit.saturating_sub(&a.usage));
            cursor = a.parent;
        }
        Ok(out)
    }

    /// A full snapshot for persistence.
    pub fn snapshot(&self) -> BudgetLedgerSnapshot {
        let mut snap = BudgetLedgerSnapshot::default();
        for a in &self.accounts {
            let parent_id = a.parent.map(|p| self.account(p).id.to_string());
            match a.kind {
                AccountKind::Mission => snap.missions.push(MissionBudgetState {
                    mission_id: a.id.to_string(),
                    parent_work_item_id: parent_id,
                    currency: a.currency,
                    limit: a.limit,
                    usage: a.usage,
                }),
                AccountKind::WorkItem => snap.work_items.push(WorkItemBudgetState {
                    work_item_id: a.id.to_string(),
                    mission_id: self.account(a.mission).id.to_string(),
                    parent_work_item_id: a
                        .parent
                        .filter(|p| self.account(*p).kind == AccountKind::WorkItem)
                        .map(|p| self.account(p).id.to_string()),
                    limit: a.limit,
                    direct_usage: a.direct_usage,
                    usage: a.usage,
                }),
            }
        }
        snap
    }

    /// Rebuilds from a snapshot in O(accounts), rejecting duplicates, dangling or cross-Mission
    /// parents, cycles, currency conflicts, over-reservation and inconsistent totals.
    pub fn rebuild(snapshot: &BudgetLedgerSnapshot) -> Result<BudgetLedger, BudgetError> {
        let mut ledger = BudgetLedger::new();
        for m in &snapshot.missions {
            if ledger.missions.contains_key(m.mission_id.as_str()) {
                return Err(BudgetError::Duplicate(AccountId::mission(&m.mission_id)));
            }
            Self::check_values(&m.limit)?;
            Self::check_values(&m.usage)?;
            let idx = ledger.insert(
                AccountKind::Mission,
                &m.mission_id,
                None,
                None,
                m.currency,
                m.limit,
            );
            ledger.accounts[idx as usize].usage = m.usage;
        }
        for w in &snapshot.work_items {
            if ledger.work_items.contains_key(w.work_item_id.as_str()) {
                return Err(BudgetError::Duplicate(AccountId::work_item(
                    &w.work_item_id,
                )));
            }
            Self::check_values(&w.limit)?;
            Self::check_values(&w.usage)?;
            Self::check_values(&w.direct_usage)?;
            let mission = ledger.index(AccountKind::Mission, &w.mission_id)?;
            let idx = ledger.insert(
                AccountKind::WorkItem,
                &w.work_item_id,
                None,
                Some(mission),
                None,
                w.limit,
            );
            let a = &mut ledger.accounts[idx as usize];
            a.usage = w.usage;
            a.direct_usage = w.direct_usage;
        }
        // Resolve parent links now that every account exists.
        for m in &snapshot.missions {
            if let Some(p) = &m.parent_work_item_id {
                let idx = ledger.index(AccountKind::Mission, &m.mission_id)?;
                let parent = ledger.index(AccountKind::WorkItem, p)?;
                ledger.accounts[idx as usize].parent = Some(parent);
            }
        }
        for w in &snapshot.work_items {
            let idx = ledger.index(AccountKind::WorkItem, &w.work_item_id)?;
            let mission = ledger.account(idx).mission;
            let parent = match &w.parent_work_item_id {
                Some(p) => {
                    let parent = ledger.index(AccountKind::WorkItem, p)?;
                    if ledger.account(parent).mission != mission {
                        return Err(BudgetError::CrossMissionParent(AccountId::work_item(
                            &w.work_item_id,
                        )));
                    }
                    parent
                }
                None => mission,
            };
            ledger.accounts[idx as usize].parent = Some(parent);
        }
        ledger.validate_tree()?;
        Ok(ledger)
    }

    /// Full-tree validation used only by `rebuild`: Kahn-style leaf-first order (which also
    /// detects cycles), then reservation, roll-up and currency checks.
    fn validate_tree(&mut self) -> Result<(), BudgetError> {
        let n = self.accounts.len();
        let mut children = vec![0u32; n];
        for a in &self.accounts {
            if let Some(p) = a.parent {
                children[p as usize] += 1;
            }
        }
        let mut ready: Vec<u32> = (0..n as u32)
            .filter(|i| children[*i as usize] == 0)
            .collect();
        // Leaf-first order; accounts never reached sit on (or below) a cycle.
        let mut order = Vec::with_capacity(n);
        while let Some(idx) = ready.pop() {
            order.push(idx);
            if let Some(p) = self.account(idx).parent {
                children[p as usize] -= 1;
                if children[p as usize] == 0 {
                    ready.push(p);
                }
            }
        }
        if order.len() != n {
            let stuck = (0..n as u32)
                .find(|i| children[*i as usize] > 0)
                .unwrap_or(0);
            return Err(BudgetError::Cycle(self.name(stuck)));
        }
        let mut sums = vec![Resources::ZERO; n];
        let mut reserved = vec![Resources::ZERO; n];
        for idx in order {
            let a = self.account(idx);
            let expected = a
                .direct_usage
                .checked_add(&sums[idx as usize])
                .map_err(|_| BudgetError::CorruptTotals(self.name(idx)))?;
            if expected != a.usage
                || !a.usage.fits_within(&a.limit)
                || !reserved[idx as usize].fits_within(&a.limit)
            {
                return Err(BudgetError::CorruptTotals(self.name(idx)));
            }
            if let Some(p) = a.parent {
                let pu = p as usize;
                sums[pu] = sums[pu]
                    .checked_add(&a.usage)
                    .map_err(|_| BudgetError::CorruptTotals(self.name(p)))?;
                reserved[pu] = reserved[pu]
                    .checked_add(&a.limit)
                    .map_err(|_| BudgetError::CorruptTotals(self.name(p)))?;
            }
        }
        for (i, r) in reserved.into_iter().enumerate() {
            self.accounts[i].reserved = r;
        }
        // Currency: roots with money need one; children inherit or must match.
        for i in 0..n {
            let a = self.account(i as u32);
            if a.kind != AccountKind::Mission {
                continue;
            }
            let parent_currency = a
                .parent
                .and_then(|p| self.account(self.account(p).mission).currency);
            let ok = match (a.currency, parent_currency) {
                (Some(c), Some(p)) => c == p,
                (None, _) => a.limit.get(Dimension::Financial) == 0,
                (Some(_), None) => true,
            };
            if !ok {
                return Err(BudgetError::Currency(self.name(i as u32)));
            }
        }
        Ok(())
    }
}
