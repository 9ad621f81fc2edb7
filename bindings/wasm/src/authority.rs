//! Leases, budget ledger, Delegation Grants, retries and the Scheduler
//! (`missionweaveprotocol_ffi::{authority, scheduling}`): one class per core object, one method
//! per operation (an operation the core lacks does not compile), each passing its JSON argument
//! array through and answering the core's envelope. A construction the core refuses is kept
//! and reported by `status()`.

use missionweaveprotocol_ffi::Held;
use missionweaveprotocol_ffi::authority::{
    self as ffi, AuthorityHandle, LeaseHandle, LedgerHandle, RetryHandle,
};
use missionweaveprotocol_ffi::scheduling::SchedulerHandle;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
#[derive(Debug)]
pub struct Lease(Held<LeaseHandle>);

#[wasm_bindgen]
impl Lease {
    /// `[fields]`: an execution lease.
    #[wasm_bindgen(constructor)]
    pub fn new(args: &str) -> Self {
        Self(Held::made(LeaseHandle::execution(args)))
    }

    pub fn status(&self) -> String {
        self.0.status()
    }
}

ops!(Lease {
    state as state();
    state_at as stateAt(args);
    is_live as isLive(args);
    renew as renew(args);
    close as close(args);
    check_claim as checkClaim(args);
    check_start_by as checkStartBy(args);
    to_json as toJson();
});

#[wasm_bindgen(js_name = leaseOwnership)]
pub fn lease_ownership(args: &str) -> Lease {
    Lease(Held::made(LeaseHandle::ownership(args)))
}

#[wasm_bindgen(js_name = leaseBlocked)]
pub fn lease_blocked(args: &str) -> Lease {
    Lease(Held::made(LeaseHandle::blocked(args)))
}

#[wasm_bindgen(js_name = leaseCoordinator)]
pub fn lease_coordinator(args: &str) -> Lease {
    Lease(Held::made(LeaseHandle::coordinator(args)))
}

#[wasm_bindgen(js_name = leaseFromDocument)]
pub fn lease_from_document(args: &str) -> Lease {
    Lease(Held::made(LeaseHandle::from_document(args)))
}

#[wasm_bindgen]
#[derive(Debug)]
pub struct Ledger(Held<LedgerHandle>);

#[wasm_bindgen]
impl Ledger {
    #[wasm_bindgen(constructor)]
    pub fn new() -> Self {
        Self(Held::of(LedgerHandle::new()))
    }

    pub fn status(&self) -> String {
        self.0.status()
    }
}

impl Default for Ledger {
    fn default() -> Self {
        Self::new()
    }
}

ops!(Ledger {
    register_mission as registerMission(args);
    register_work_item as registerWorkItem(args);
    consume as consume(args);
    remaining as remaining(args);
    usage as usage(args);
    limit as limit(args);
    reserved as reserved(args);
    currency as currency(args);
    depth as depth(args);
    size as size();
    snapshot as snapshot();
});

#[wasm_bindgen(js_name = ledgerRebuild)]
pub fn ledger_rebuild(args: &str) -> Ledger {
    Ledger(Held::made(LedgerHandle::rebuild(args)))
}

#[wasm_bindgen]
#[derive(Debug)]
pub struct Delegation(Held<AuthorityHandle>);

#[wasm_bindgen]
impl Delegation {
    /// `[grant]`.
    #[wasm_bindgen(constructor)]
    pub fn new(args: &str) -> Self {
        Self(Held::made(AuthorityHandle::new(args)))
    }

    pub fn status(&self) -> String {
        self.0.status()
    }
}

ops!(Delegation {
    grant as grant();
    charged as charged();
    remaining as remaining();
    invalidated as invalidated();
    check_use as checkUse(args);
    authorize_existing as authorizeExisting(args);
    authorize_descendant as authorizeDescendant(args);
    restore_attribution as restoreAttribution(args);
});

#[wasm_bindgen]
#[derive(Debug)]
pub struct Retry(Held<RetryHandle>);

#[wasm_bindgen]
impl Retry {
    /// `[options]`.
    #[wasm_bindgen(constructor)]
    pub fn new(args: &str) -> Self {
        Self(Held::made(RetryHandle::new(args)))
    }

    pub fn status(&self) -> String {
        self.0.status()
    }
}

ops!(Retry {
    state as state();
    idempotency_key as idempotencyKey(args);
    begin as begin(args);
    finish as finish(args);
    consume as consume(args);
    snapshot as snapshot();
    current_attempt as currentAttempt();
});

#[wasm_bindgen(js_name = retryRestore)]
pub fn retry_restore(args: &str) -> Retry {
    Retry(Held::made(RetryHandle::restore(args)))
}

/// The Worker-local Scheduler; `schedule` and `apply` take the hot path's plain arguments.
#[wasm_bindgen]
#[derive(Debug)]
pub struct Scheduler(Held<SchedulerHandle>);

#[wasm_bindgen]
impl Scheduler {
    /// `[policy]`.
    #[wasm_bindgen(constructor)]
    pub fn new(args: &str) -> Self {
        Self(Held::made(SchedulerHandle::new(args)))
    }

    pub fn status(&self) -> String {
        self.0.status()
    }

    pub fn schedule(&mut self, now: f64) -> String {
        self.0.with_mut(|s| s.schedule(now))
    }

    pub fn apply(&mut self, work_id: &str, transition: &str, now: f64) -> String {
        self.0.with_mut(|s| s.apply(work_id, transition, now))
    }
}

ops!(Scheduler {
    admit as admit(args);
    admit_many as admitMany(args);
    unblock as unblock(args);
    cancel as cancel(args);
    reprioritize as reprioritize(args);
    set_capacity as setCapacity(args);
    set_group_policy as setGroupPolicy(args);
    state as state(args);
    generation as generation(args);
    is_terminal as isTerminal(args);
    forget as forget(args);
    disclose as disclose(args);
    stats as stats();
    snapshot as snapshot();
});

#[wasm_bindgen(js_name = schedulerRestore)]
pub fn scheduler_restore(args: &str) -> Scheduler {
    Scheduler(Held::made(SchedulerHandle::restore(args)))
}

#[wasm_bindgen(js_name = schedulerRebuild)]
pub fn scheduler_rebuild(args: &str) -> Scheduler {
    Scheduler(Held::made(SchedulerHandle::rebuild(args)))
}

#[wasm_bindgen(js_name = schedulerFromOffers)]
pub fn scheduler_from_offers(args: &str) -> Scheduler {
    Scheduler(Held::made(SchedulerHandle::from_offers(args)))
}

#[wasm_bindgen(js_name = idempotencyKey)]
pub fn idempotency_key(args: &str) -> String {
    ffi::idempotency_key_of(args)
}

#[wasm_bindgen(js_name = derivedAttemptKey)]
pub fn derived_attempt_key(args: &str) -> String {
    ffi::derived_attempt_key_of(args)
}

#[wasm_bindgen(js_name = parseDurationMs)]
pub fn parse_duration_ms(args: &str) -> String {
    ffi::parse_duration(args)
}

#[wasm_bindgen]
pub fn vocabularies() -> String {
    ffi::vocabularies()
}

/// The offline extension's URI, version and reversible kinds (§11.5).
#[wasm_bindgen(js_name = offlineConstants)]
pub fn offline_constants() -> String {
    missionweaveprotocol_ffi::offline::constants()
}

// ---- the human control interface (reference §1.6) ------------------------------------------

#[wasm_bindgen(js_name = controlCommand)]
pub fn control_command(args: &str) -> String {
    missionweaveprotocol_ffi::control::command(args)
}

#[wasm_bindgen(js_name = controlApproval)]
pub fn control_approval(args: &str) -> String {
    missionweaveprotocol_ffi::control::approval(args)
}

#[wasm_bindgen(js_name = controlView)]
pub fn control_view(args: &str) -> String {
    missionweaveprotocol_ffi::control::view(args)
}

#[wasm_bindgen(js_name = controlVerify)]
pub fn control_verify(args: &str) -> String {
    missionweaveprotocol_ffi::control::verify(args)
}

#[wasm_bindgen(js_name = controlDefaultKeyId)]
pub fn control_default_key_id(human_id: &str) -> String {
    missionweaveprotocol_ffi::control::default_key_id(human_id)
}

// ---- context (§13.3, §7.4): a signing operation takes `keyId` and seed (empty: no key) -------

#[wasm_bindgen(js_name = contextPublish)]
pub fn context_publish(args: &str, key_id: &str, seed: &[u8]) -> String {
    missionweaveprotocol_ffi::context::publish(args, key_id, seed)
}

#[wasm_bindgen(js_name = contextVerify)]
pub fn context_verify(args: &str) -> String {
    missionweaveprotocol_ffi::context::verify(args)
}

#[wasm_bindgen(js_name = contextInstall)]
pub fn context_install(args: &str) -> String {
    missionweaveprotocol_ffi::context::install(args)
}

#[wasm_bindgen(js_name = contextKnowledgePublish)]
pub fn context_knowledge_publish(args: &str, key_id: &str, seed: &[u8]) -> String {
    missionweaveprotocol_ffi::context::knowledge_publish(args, key_id, seed)
}

#[wasm_bindgen(js_name = contextKnowledgeVerify)]
pub fn context_knowledge_verify(args: &str) -> String {
    missionweaveprotocol_ffi::context::knowledge_verify(args)
}

#[wasm_bindgen(js_name = contextSnapshotArchive)]
pub fn context_snapshot_archive(args: &str, key_id: &str, seed: &[u8]) -> String {
    missionweaveprotocol_ffi::context::snapshot_archive(args, key_id, seed)
}

#[wasm_bindgen(js_name = contextSnapshotVerify)]
pub fn context_snapshot_verify(args: &str) -> String {
    missionweaveprotocol_ffi::context::snapshot_verify(args)
}
