//! The TypeScript declarations of the call and answer shapes, generated from the Rust types
//! (ts-rs) into `js/src/ffi-types.d.ts`. The test fails when the committed file differs from
//! what the types generate, so the declarations cannot drift from the reader; with
//! `MWP_WRITE_FFI_TYPES=1` it rewrites the file first:
//!
//! ```text
//! MWP_WRITE_FFI_TYPES=1 cargo test -p missionweaveprotocol-ffi shapes::typescript
//! ```

#![allow(clippy::expect_used)]

use ts_rs::{Config, TS};

use super::auth::*;
use super::authority::*;
use super::common::*;
use super::policy::*;
use super::scheduler::*;

const FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../js/src/ffi-types.d.ts");

/// Names the declarations use but `api.d.ts` owns (vocabularies of the core's enums).
const HEADER: &str = "\
// Generated from core/ffi/src/shapes (Rust, ts-rs): do not edit. Regenerate with
//   MWP_WRITE_FFI_TYPES=1 cargo test -p missionweaveprotocol-ffi shapes::typescript
// The call shapes are what the core reads (unknown members refused, `null` only where a member
// is optional); the answer shapes are what it returns. Times: a Date (converted by the wrapper)
// or integer milliseconds since the Unix epoch in, integer milliseconds out.
import type {
  AdmissionReasonName, DeclineReasonName, DelegationViolationKindName, Dimension, LeaseStateName,
  Millis, RetryReasonName, TimeInput, WireCode, WorkStateName,
} from './api.js';
";

fn push<T: TS + ?Sized>(cfg: &Config, out: &mut String) {
    out.push('\n');
    if let Some(docs) = T::docs() {
        out.push_str(&docs);
    }
    out.push_str("export ");
    out.push_str(&T::decl(cfg));
    out.push('\n');
}

/// Every shape, in a fixed order: common, leases, ledger and grants, retries, scheduler,
/// policy, auth.
fn declarations() -> String {
    // Every integer crosses as a JavaScript number; the core refuses what a double cannot hold.
    let cfg = Config::new().with_large_int("number");
    let mut out = String::from(HEADER);
    macro_rules! declare {
        ($($t:ty),* $(,)?) => { $( push::<$t>(&cfg, &mut out); )* };
    }
    declare!(
        ResourceInput,
        ResourceAmounts,
        Capability,
        WorkLeaseFields,
        OwnershipLeaseFields,
        BlockedLeaseFields,
        CoordinatorLeaseFields,
        LeaseClaim,
        LeaseStateAnswer,
        LeaseCloseAnswer,
        DelegationBudgetInput,
        DelegationGrantFields,
        DelegationBudgetAnswer,
        DelegationGrantAnswer,
        MembershipInput,
        DelegationContextInput,
        WorkItemNodeInput,
        DelegatedWorkInput,
        DelegationViolationAnswer,
        BackoffName,
        RetryPolicyInput,
        RetryOptions,
        AttemptOutcomeInput,
        RetryStateAnswer,
        AttemptAnswer,
        RetryScheduleAnswer,
        GroupPolicyInput,
        SchedulerPolicyInput,
        EligibilityInput,
        WorkOfferInput,
        CheckpointInput,
        TransitionKindName,
        TransitionInput,
        AdmissionDecisionAnswer<'static>,
        CheckpointAnswer<'static>,
        ScheduleActionAnswer<'static>,
        ScheduleDisclosureAnswer,
        SchedulerStatsAnswer,
        TokenServiceOptions,
        MembershipIssueInput,
        MembershipVerifyInput,
        MembershipDocumentIssueInput,
        MembershipDocumentVerifyInput,
        GrantIssueInput,
        GrantVerifyInput,
        AuthorizeExecutionInput,
        GuardLimitsInput,
        PolicyDefaultsAnswer,
        ChallengeAnswer,
        SessionGrantAnswer,
    );
    out
}

#[test]
fn committed_declarations_match_the_rust_shapes() {
    let generated = declarations();
    if std::env::var_os("MWP_WRITE_FFI_TYPES").is_some() {
        std::fs::write(FILE, &generated).expect("write js/src/ffi-types.d.ts");
    }
    let committed = std::fs::read_to_string(FILE).unwrap_or_default();
    assert!(
        committed == generated,
        "js/src/ffi-types.d.ts differs from the Rust shapes; regenerate it with\n  \
         MWP_WRITE_FFI_TYPES=1 cargo test -p missionweaveprotocol-ffi shapes::typescript"
    );
}
