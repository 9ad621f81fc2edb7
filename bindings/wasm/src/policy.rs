//! Tokens, execution authorization and local guardrails (§8, §12, §20): the classes of
//! `missionweaveprotocol_ffi::policy` (sans-IO: every rule is the core's), with the browser's
//! randomness (`crypto.getRandomValues`) for random secrets and token and grant IDs. The same
//! names and envelopes as the napi addon.

use missionweaveprotocol_ffi::Held;
use missionweaveprotocol_ffi::policy::{
    self as ffi, Authorization, Guard, MembershipTokens, Meter,
};
use wasm_bindgen::prelude::*;

use crate::random::WebRandom;

#[wasm_bindgen]
#[derive(Debug)]
pub struct PolicyMembershipTokens(Held<MembershipTokens>);

#[wasm_bindgen]
impl PolicyMembershipTokens {
    /// `secret` (empty: 32 random bytes) and `options` (`{maximumTtlMs?}`).
    #[wasm_bindgen(constructor)]
    pub fn new(secret: &[u8], options: &str) -> Self {
        Self(Held::made(MembershipTokens::new(
            secret,
            options,
            Box::new(WebRandom),
        )))
    }

    pub fn status(&self) -> String {
        self.0.status()
    }

    pub fn verify(&self, token: &str, args: &str) -> String {
        self.0.with(|s| s.verify(token, args))
    }

    #[wasm_bindgen(js_name = verifyMembership)]
    pub fn verify_membership(&self, token: &str, args: &str) -> String {
        self.0.with(|s| s.verify_membership(token, args))
    }
}

ops!(PolicyMembershipTokens {
    issue as issue(args);
    issue_for_membership as issueForMembership(args);
});

#[wasm_bindgen]
#[derive(Debug)]
pub struct PolicyAuthorization(Held<Authorization>);

#[wasm_bindgen]
impl PolicyAuthorization {
    #[wasm_bindgen(constructor)]
    pub fn new(secret: &[u8], options: &str) -> Self {
        Self(Held::made(Authorization::new(
            secret,
            options,
            Box::new(WebRandom),
        )))
    }

    pub fn status(&self) -> String {
        self.0.status()
    }

    pub fn verify(&self, token: &str, args: &str) -> String {
        self.0.with(|s| s.verify(token, args))
    }
}

ops!(PolicyAuthorization {
    issue as issue(args);
    authorize_execution as authorizeExecution(args);
});

#[wasm_bindgen]
#[derive(Debug)]
pub struct PolicyBudgetMeter(Held<Meter>);

#[wasm_bindgen]
impl PolicyBudgetMeter {
    #[wasm_bindgen(constructor)]
    pub fn new(limit: &str) -> Self {
        Self(Held::made(Meter::new(limit)))
    }

    pub fn status(&self) -> String {
        self.0.status()
    }
}

ops!(PolicyBudgetMeter {
    consume as consume(delta);
    usage as usage();
    limit as limit();
});

#[wasm_bindgen]
#[derive(Debug)]
pub struct PolicyGuard(Held<Guard>);

#[wasm_bindgen]
impl PolicyGuard {
    #[wasm_bindgen(constructor)]
    pub fn new(limits: &str) -> Self {
        Self(Held::made(Guard::new(limits)))
    }

    pub fn status(&self) -> String {
        self.0.status()
    }

    #[wasm_bindgen(js_name = checkDelegationDepth)]
    pub fn check_delegation_depth(&self, depth: f64) -> String {
        self.0.with(|g| g.check_delegation_depth(depth))
    }

    #[wasm_bindgen(js_name = checkQueue)]
    pub fn check_queue(&self, queued: f64, active: f64) -> String {
        self.0.with(|g| g.check_queue(queued, active))
    }

    #[wasm_bindgen(js_name = checkUnresolvedClarifications)]
    pub fn check_unresolved_clarifications(&self, unresolved: f64) -> String {
        self.0
            .with(|g| g.check_unresolved_clarifications(unresolved))
    }

    #[wasm_bindgen(js_name = checkMessageRate)]
    pub fn check_message_rate(&mut self, principal_id: &str, group_id: &str, now: f64) -> String {
        self.0
            .with_mut(|g| g.check_message_rate(principal_id, group_id, now))
    }

    #[wasm_bindgen(js_name = checkProposalRate)]
    pub fn check_proposal_rate(&mut self, principal_id: &str, group_id: &str, now: f64) -> String {
        self.0
            .with_mut(|g| g.check_proposal_rate(principal_id, group_id, now))
    }

    #[wasm_bindgen(js_name = checkClarificationRate)]
    pub fn check_clarification_rate(
        &mut self,
        principal_id: &str,
        group_id: &str,
        now: f64,
    ) -> String {
        self.0
            .with_mut(|g| g.check_clarification_rate(principal_id, group_id, now))
    }
}

ops!(PolicyGuard {
    limits as limits();
    tracked_keys as trackedKeys();
});

#[wasm_bindgen(js_name = policyCooperationLimitsDefaults)]
pub fn policy_cooperation_limits_defaults() -> String {
    ffi::cooperation_limits_defaults()
}

#[wasm_bindgen(js_name = policyClassifyAction)]
pub fn policy_classify_action(operation: &str) -> String {
    ffi::classify_action(operation)
}

#[wasm_bindgen(js_name = policyDefaults)]
pub fn policy_defaults() -> String {
    ffi::defaults()
}
