//! Fenced leases, the budget ledger, Delegation Grants and retries
//! (`missionweaveprotocol_ffi::authority`): one class per core object, one method per
//! operation, each passing its JSON argument array through and answering the core's envelope.
//! A construction that the core refuses is kept and reported by `status()`; `free()` drops the
//! core object at once.

use missionweaveprotocol_ffi::Held;
use missionweaveprotocol_ffi::authority::{
    self as ffi, AuthorityHandle, LeaseHandle, LedgerHandle, RetryHandle,
};
use napi_derive::napi;

/// One fenced lease (§11.3). `new Lease(args)` is an execution lease; `leaseOwnership`,
/// `leaseBlocked`, `leaseCoordinator` and `leaseFromDocument` make the others.
#[napi]
#[derive(Debug)]
pub struct Lease(Held<LeaseHandle>);

#[napi]
impl Lease {
    /// `[fields]`: an execution lease.
    #[napi(constructor, catch_unwind)]
    pub fn new(args: String) -> Self {
        Self(Held::made(LeaseHandle::execution(&args)))
    }

    #[napi(catch_unwind)]
    pub fn status(&self) -> String {
        self.0.status()
    }

    /// Drops the core object now (idempotent); every later call answers `invalid-argument`.
    #[napi(catch_unwind)]
    pub fn free(&mut self) {
        self.0.free("ExecutionLease");
    }
}

ops!(Lease {
    state();
    state_at(args);
    is_live(args);
    renew(args);
    close(args);
    check_claim(args);
    check_start_by(args);
    to_json();
});

/// `[fields]`: queued ownership with a start-by deadline.
#[napi(catch_unwind)]
pub fn lease_ownership(args: String) -> Lease {
    Lease(Held::made(LeaseHandle::ownership(&args)))
}

/// `[fields]`: ownership retained while blocked.
#[napi(catch_unwind)]
pub fn lease_blocked(args: String) -> Lease {
    Lease(Held::made(LeaseHandle::blocked(&args)))
}

/// `[fields]`: the Coordinator's lease.
#[napi(catch_unwind)]
pub fn lease_coordinator(args: String) -> Lease {
    Lease(Held::made(LeaseHandle::coordinator(&args)))
}

/// `[documentText]`: a `lease.schema.json` document.
#[napi(catch_unwind)]
pub fn lease_from_document(args: String) -> Lease {
    Lease(Held::made(LeaseHandle::from_document(&args)))
}

/// The hierarchical budget ledger (§12, §14); `ledgerRebuild` restores one from a snapshot.
#[napi]
#[derive(Debug)]
pub struct Ledger(Held<LedgerHandle>);

#[napi]
impl Ledger {
    #[napi(constructor)]
    pub fn new() -> Self {
        Self(Held::of(LedgerHandle::new()))
    }

    #[napi(catch_unwind)]
    pub fn status(&self) -> String {
        self.0.status()
    }

    #[napi(catch_unwind)]
    pub fn free(&mut self) {
        self.0.free("BudgetLedger");
    }
}

impl Default for Ledger {
    fn default() -> Self {
        Self::new()
    }
}

ops!(Ledger {
    register_mission(args);
    register_work_item(args);
    consume(args);
    remaining(args);
    usage(args);
    limit(args);
    reserved(args);
    currency(args);
    depth(args);
    size();
    snapshot();
});

/// `[snapshotText]`.
#[napi(catch_unwind)]
pub fn ledger_rebuild(args: String) -> Ledger {
    Ledger(Held::made(LedgerHandle::rebuild(&args)))
}

/// One Delegation Grant and the uses charged to it (§9.1).
#[napi]
#[derive(Debug)]
pub struct Delegation(Held<AuthorityHandle>);

#[napi]
impl Delegation {
    /// `[grant]`.
    #[napi(constructor, catch_unwind)]
    pub fn new(args: String) -> Self {
        Self(Held::made(AuthorityHandle::new(&args)))
    }

    #[napi(catch_unwind)]
    pub fn status(&self) -> String {
        self.0.status()
    }

    #[napi(catch_unwind)]
    pub fn free(&mut self) {
        self.0.free("DelegationAuthority");
    }
}

ops!(Delegation {
    grant();
    charged();
    remaining();
    invalidated();
    check_use(args);
    authorize_existing(args);
    authorize_descendant(args);
    restore_attribution(args);
});

/// One WorkItem's retry budgets (§11.4); `retryRestore` restores one from a snapshot.
#[napi]
#[derive(Debug)]
pub struct Retry(Held<RetryHandle>);

#[napi]
impl Retry {
    /// `[options]`.
    #[napi(constructor, catch_unwind)]
    pub fn new(args: String) -> Self {
        Self(Held::made(RetryHandle::new(&args)))
    }

    #[napi(catch_unwind)]
    pub fn status(&self) -> String {
        self.0.status()
    }

    #[napi(catch_unwind)]
    pub fn free(&mut self) {
        self.0.free("RetryController");
    }
}

ops!(Retry {
    state();
    idempotency_key(args);
    begin(args);
    finish(args);
    consume(args);
    snapshot();
    current_attempt();
});

/// `[snapshotText]`.
#[napi(catch_unwind)]
pub fn retry_restore(args: String) -> Retry {
    Retry(Held::made(RetryHandle::restore(&args)))
}

/// `[missionId, workItemId, ownershipEpoch, logicalOperationId]` (§11.4).
#[napi(catch_unwind)]
pub fn idempotency_key(args: String) -> String {
    ffi::idempotency_key_of(&args)
}

/// `[idempotencyKey, attempt]`.
#[napi(catch_unwind)]
pub fn derived_attempt_key(args: String) -> String {
    ffi::derived_attempt_key_of(&args)
}

/// `[duration]`.
#[napi(catch_unwind)]
pub fn parse_duration_ms(args: String) -> String {
    ffi::parse_duration(&args)
}

/// The core's spelling lists, error classes and ErrorCode families.
#[napi(catch_unwind)]
pub fn vocabularies() -> String {
    ffi::vocabularies()
}
