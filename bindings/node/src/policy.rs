//! Tokens, execution authorization and local guardrails (§8, §12, §20) for Node: the classes
//! of `missionweaveprotocol_ffi::policy`, which reads every argument and holds every rule.
//! Arguments cross as JSON objects (and the secret as bytes); the host's randomness is the
//! operating system's (`OsRandom`). Secrets never appear in an envelope.

use missionweaveprotocol_ffi::Held;
use missionweaveprotocol_ffi::policy::{
    self as ffi, Authorization, Guard, MembershipTokens, Meter,
};
use missionweaveprotocol_host::OsRandom;
use napi_derive::napi;

/// Membership tokens (§8): `new PolicyMembershipTokens(secret, optionsJson)`; an empty secret
/// draws 32 random bytes, absent `maximumTtlMs` is the core's maximum.
#[napi]
#[derive(Debug)]
pub struct PolicyMembershipTokens(Held<MembershipTokens>);

#[napi]
impl PolicyMembershipTokens {
    #[napi(constructor, catch_unwind)]
    pub fn new(secret: &[u8], options: String) -> Self {
        Self(Held::made(MembershipTokens::new(
            secret,
            &options,
            Box::new(OsRandom),
        )))
    }

    /// `{"ok":null}` or the construction error.
    #[napi(catch_unwind)]
    pub fn status(&self) -> String {
        self.0.status()
    }

    #[napi(catch_unwind)]
    pub fn verify(&self, token: String, args: String) -> String {
        self.0.with(|s| s.verify(&token, &args))
    }

    #[napi(catch_unwind)]
    pub fn verify_membership(&self, token: String, args: String) -> String {
        self.0.with(|s| s.verify_membership(&token, &args))
    }

    /// Drops the service (and its secret) now; idempotent.
    #[napi(catch_unwind)]
    pub fn free(&mut self) {
        self.0.free("MembershipTokenService");
    }
}

ops!(PolicyMembershipTokens {
    issue(args);
    issue_for_membership(args);
});

/// Capability grants and execution authorization (§12): `new PolicyAuthorization(secret,
/// optionsJson)`.
#[napi]
#[derive(Debug)]
pub struct PolicyAuthorization(Held<Authorization>);

#[napi]
impl PolicyAuthorization {
    #[napi(constructor, catch_unwind)]
    pub fn new(secret: &[u8], options: String) -> Self {
        Self(Held::made(Authorization::new(
            secret,
            &options,
            Box::new(OsRandom),
        )))
    }

    #[napi(catch_unwind)]
    pub fn status(&self) -> String {
        self.0.status()
    }

    #[napi(catch_unwind)]
    pub fn verify(&self, token: String, args: String) -> String {
        self.0.with(|s| s.verify(&token, &args))
    }

    #[napi(catch_unwind)]
    pub fn free(&mut self) {
        self.0.free("AuthorizationService");
    }
}

ops!(PolicyAuthorization {
    issue(args);
    authorize_execution(args);
});

/// A hard local budget meter (§12): `new PolicyBudgetMeter(limitJson)`.
#[napi]
#[derive(Debug)]
pub struct PolicyBudgetMeter(Held<Meter>);

#[napi]
impl PolicyBudgetMeter {
    #[napi(constructor, catch_unwind)]
    pub fn new(limit: String) -> Self {
        Self(Held::made(Meter::new(&limit)))
    }

    #[napi(catch_unwind)]
    pub fn status(&self) -> String {
        self.0.status()
    }

    #[napi(catch_unwind)]
    pub fn free(&mut self) {
        self.0.free("BudgetMeter");
    }
}

ops!(PolicyBudgetMeter {
    consume(delta);
    usage();
    limit();
});

/// The local §20 guard: `new PolicyGuard(limitsJson)` (absent members: the reference's
/// defaults).
#[napi]
#[derive(Debug)]
pub struct PolicyGuard(Held<Guard>);

#[napi]
impl PolicyGuard {
    #[napi(constructor, catch_unwind)]
    pub fn new(limits: String) -> Self {
        Self(Held::made(Guard::new(&limits)))
    }

    #[napi(catch_unwind)]
    pub fn status(&self) -> String {
        self.0.status()
    }

    #[napi(catch_unwind)]
    pub fn check_delegation_depth(&self, depth: f64) -> String {
        self.0.with(|g| g.check_delegation_depth(depth))
    }

    #[napi(catch_unwind)]
    pub fn check_queue(&self, queued: f64, active: f64) -> String {
        self.0.with(|g| g.check_queue(queued, active))
    }

    #[napi(catch_unwind)]
    pub fn check_unresolved_clarifications(&self, unresolved: f64) -> String {
        self.0
            .with(|g| g.check_unresolved_clarifications(unresolved))
    }

    /// `RATE_LIMITED` carries `fields.retryAfterMs`.
    #[napi(catch_unwind)]
    pub fn check_message_rate(
        &mut self,
        principal_id: String,
        group_id: String,
        now: f64,
    ) -> String {
        self.0
            .with_mut(|g| g.check_message_rate(&principal_id, &group_id, now))
    }

    #[napi(catch_unwind)]
    pub fn check_proposal_rate(
        &mut self,
        principal_id: String,
        group_id: String,
        now: f64,
    ) -> String {
        self.0
            .with_mut(|g| g.check_proposal_rate(&principal_id, &group_id, now))
    }

    #[napi(catch_unwind)]
    pub fn check_clarification_rate(
        &mut self,
        principal_id: String,
        group_id: String,
        now: f64,
    ) -> String {
        self.0
            .with_mut(|g| g.check_clarification_rate(&principal_id, &group_id, now))
    }

    #[napi(catch_unwind)]
    pub fn free(&mut self) {
        self.0.free("PolicyGuard");
    }
}

ops!(PolicyGuard {
    limits();
    tracked_keys();
});

/// The reference's §20 defaults (camelCase `CooperationLimits`), from the core's `Default`.
#[napi(catch_unwind)]
pub fn policy_cooperation_limits_defaults() -> String {
    ffi::cooperation_limits_defaults()
}

/// `automatic` or `human_approval_required` (a function: the package's guarded backend keeps
/// only the addon's top-level functions and constructors, not static methods).
#[napi(catch_unwind)]
pub fn policy_classify_action(operation: String) -> String {
    ffi::classify_action(&operation)
}

/// The core's lifetimes: token and grant maxima, session and challenge TTLs (milliseconds).
#[napi(catch_unwind)]
pub fn policy_defaults() -> String {
    ffi::defaults()
}
