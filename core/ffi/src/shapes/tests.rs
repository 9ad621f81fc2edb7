#![allow(clippy::expect_used, clippy::panic)]

use missionweaveprotocol::json::{Value, parse};
use missionweaveprotocol_kernel::resources::{Dimension, Resources};
use missionweaveprotocol_kernel::snapshot_json::{dimension_member, resources_to_value};
use serde::de::DeserializeOwned;

use super::authority::{DelegationGrantFields, RetryOptions, WorkItems, WorkLeaseFields};
use super::common::{Millis, ResourceAmounts, ResourceInput};
use super::scheduler::{SchedulerPolicyInput, TransitionInput, WorkOfferInput};
use super::{Call, answer, read};
use crate::envelope::finish;

/// The refusal of `text` read as `T` named `name`: (argument field, message), after checking
/// that it is an `ArgumentError` with code `PROTOCOL_VIOLATION`, reason `invalid-argument`.
fn refused<T: DeserializeOwned + std::fmt::Debug>(text: &str, name: &str) -> (String, String) {
    let failure = match read::<T>(text, name) {
        Ok(value) => panic!("{text} was accepted as {value:?}"),
        Err(failure) => failure,
    };
    let envelope = parse(finish(Err(failure)).as_bytes()).expect("envelope");
    let at = |p: &str| {
        envelope
            .pointer(p)
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    assert_eq!(at("/error/class").as_deref(), Some("ArgumentError"));
    assert_eq!(at("/error/code").as_deref(), Some("PROTOCOL_VIOLATION"));
    assert_eq!(at("/error/reason").as_deref(), Some("invalid-argument"));
    (
        at("/error/fields/argument").expect("argument field"),
        at("/error/message").expect("message"),
    )
}

const OFFER: &str = r#"{"workId":"w1","groupId":"g","priority":-5,"deadline":1700000000000,
  "slots":2,"requiredCapabilities":[{"id":"tool.search","version":"1.2.0"}],
  "eligibility":{"authorized":true}}"#;

#[test]
fn a_valid_offer_parses_with_the_core_defaults() {
    let offer = read::<WorkOfferInput>(OFFER, "offer")
        .expect("valid")
        .into_offer()
        .expect("in range");
    assert_eq!((offer.work_id.as_str(), offer.slots), ("w1", 2));
    assert_eq!(offer.deadline.map(|t| t.0), Some(1_700_000_000_000));
    assert_eq!(offer.required_capabilities.len(), 1);
    assert!(offer.preemptible && offer.eligibility.budget_available);
    // Optional members may be null: the default applies.
    let offer = read::<WorkOfferInput>(r#"{"workId":"w","groupId":"g","slots":null}"#, "offer")
        .expect("null optional")
        .into_offer()
        .expect("in range");
    assert_eq!(offer.slots, 1);
}

#[test]
fn each_malformed_member_is_refused_by_name() {
    let cases: &[(&str, &str, &str)] = &[
        // missing, unknown, duplicate
        (r#"{"workId":"z"}"#, "offer.groupId", "required"),
        (
            r#"{"workId":"z","groupId":"g","colour":"red"}"#,
            "offer.colour",
            r#"unknown member "colour""#,
        ),
        (
            r#"{"workId":"z","groupId":"g","groupId":"h"}"#,
            "offer",
            r#"duplicate member "groupId""#,
        ),
        // null where required, wrong type, non-integer, negative, out of range
        (r#"{"workId":null,"groupId":"g"}"#, "offer.workId", "null"),
        (
            r#"{"workId":"z","groupId":"g","priority":"high"}"#,
            "offer.priority",
            "string",
        ),
        (
            r#"{"workId":"z","groupId":"g","slots":1.5}"#,
            "offer.slots",
            "floating point",
        ),
        (
            r#"{"workId":"z","groupId":"g","slots":1.0}"#,
            "offer.slots",
            "floating point",
        ),
        (
            r#"{"workId":"z","groupId":"g","slots":-1}"#,
            "offer.slots",
            "-1",
        ),
        (
            r#"{"workId":"z","groupId":"g","slots":65536}"#,
            "offer.slots",
            "65536",
        ),
        (
            r#"{"workId":"z","groupId":"g","deadline":9007199254740992}"#,
            "offer.deadline",
            "safe integer range",
        ),
        (
            r#"{"workId":"z","groupId":"g","eligibility":{"authorised":true}}"#,
            "offer.eligibility.authorised",
            r#"unknown member "authorised""#,
        ),
        (
            r#"{"workId":"z","groupId":"g","requiredCapabilities":[{"id":"x.y","version":"1.0"}]}"#,
            "offer.requiredCapabilities[0]",
            "not a semantic version",
        ),
    ];
    for (text, argument, detail) in cases {
        let (got, message) = refused::<WorkOfferInput>(text, "offer");
        assert_eq!(&got, argument, "{text}: {message}");
        assert!(
            message.starts_with(&format!("{argument}: ")) && message.contains(detail),
            "{text}: {message}"
        );
    }
}

#[test]
fn positional_arguments_are_named_and_arrays_indexed() {
    let call =
        Call::parse(r#"[[{"workId":"a","groupId":"g"},{"groupId":"g"}],17]"#).expect("array");
    assert_eq!(call.arg::<Millis>(1, "now").expect("now").0.0, 17);
    let failure = call
        .arg::<Vec<WorkOfferInput>>(0, "offers")
        .expect_err("second offer has no workId");
    let text = finish(Err(failure));
    assert!(text.contains("offers[1].workId: required"), "{text}");
    // A position the caller left out reads as null: refused where required.
    assert!(call.arg::<Millis>(2, "now").is_err());
    assert!(
        call.arg::<Option<Millis>>(2, "deadline")
            .expect("optional")
            .is_none()
    );
    // The arguments are one JSON array.
    assert!(Call::parse(r#"{"now":1}"#).is_err());
    assert!(Call::parse("[1] trailing").is_err());
}

#[test]
fn the_policy_reader_keeps_defaults_and_refuses_repeated_groups() {
    let p: SchedulerPolicyInput = read(
        r#"{"capacitySlots":3,"groups":{"a":{"weight":2},"b":{"slotQuota":null}},"preemptionMargin":5}"#,
        "policy",
    )
    .expect("valid");
    let policy = missionweaveprotocol_kernel::scheduler::SchedulerPolicy::from(p);
    assert_eq!(policy.capacity_slots, 3);
    assert_eq!(policy.groups.get("a").map(|g| g.weight), Some(2));
    assert_eq!(policy.groups.get("b").map(|g| g.weight), Some(1));
    let d = missionweaveprotocol_kernel::scheduler::SchedulerPolicy::default();
    assert_eq!(policy.max_work_items, d.max_work_items);
    let (argument, message) = refused::<SchedulerPolicyInput>(
        r#"{"groups":{"a":{"weight":1},"a":{"weight":2}}}"#,
        "policy",
    );
    assert_eq!(argument, "policy.groups");
    assert!(message.contains(r#"duplicate member "a""#), "{message}");
    let (argument, _) = refused::<SchedulerPolicyInput>(r#"{"preemptionMargin":256}"#, "policy");
    assert_eq!(argument, "policy.preemptionMargin");
    let (_, message) = refused::<SchedulerPolicyInput>(r#"{"capacitySlotz":1}"#, "policy");
    assert!(message.contains(r#"unknown member "capacitySlotz""#));
}

#[test]
fn transitions_check_the_members_of_their_kind() {
    let ok = |text: &str| {
        read::<TransitionInput>(text, "transition").and_then(TransitionInput::into_transition)
    };
    assert!(ok(r#"{"kind":"completed","generation":1}"#).is_ok());
    assert!(
        ok(r#"{"kind":"blocked","generation":1,"checkpoint":{"checkpointId":"c"},"reason":"io","retryAt":5}"#)
            .is_ok()
    );
    let message = |text: &str| finish(Err(ok(text).expect_err(text)));
    assert!(message(r#"{"kind":"exploded","generation":1}"#).contains("transition.kind"));
    assert!(
        message(r#"{"kind":"blocked","generation":1,"reason":"io"}"#)
            .contains("transition.checkpoint: required")
    );
    assert!(
        message(r#"{"kind":"completed","generation":1,"reason":"x"}"#)
            .contains(r#"unknown member \"reason\""#)
    );
    assert!(message(r#"{"kind":"completed","generation":-1}"#).contains("transition.generation"));
}

const LEASE: &str = r#"{"leaseId":"l","missionId":"m","groupId":"g","holderAgentId":"a",
  "sessionEpoch":1,"issuedAt":0,"startsAt":0,"expiresAt":60000,"workItemId":"w",
  "ownershipEpoch":1}"#;

#[test]
fn authority_shapes_parse_and_refuse_by_name() {
    let lease: WorkLeaseFields = read(LEASE, "lease").expect("valid");
    assert_eq!(lease.binding().1.expires_at.0, 60_000);
    let with = |extra: &str| LEASE.replacen('}', &format!(",{extra}}}"), 1);
    let (_, message) = refused::<WorkLeaseFields>(&with(r#""startBy":1"#), "lease");
    assert!(message.contains(r#"unknown member "startBy""#), "{message}");
    let (argument, _) = refused::<WorkLeaseFields>(
        &LEASE.replace(r#""sessionEpoch":1"#, r#""sessionEpoch":9007199254740992"#),
        "lease",
    );
    assert_eq!(argument, "lease.sessionEpoch");

    let grant = r#"{"grantId":"g1","granteeAgentId":"a","missionId":"m","groupId":"g",
      "targetWorkItemId":"w","allowedCapabilities":[{"id":"tool.search","version":"1.0.0"}],
      "budget":{"currency":"EUR","toolCalls":3},"maxDescendantDepth":2,
      "granteeMembershipEpoch":1,"coordinatorEpoch":1,"grantedBy":"c","grantedAt":0,"expiresAt":10}"#;
    let fields: DelegationGrantFields = read(grant, "grant").expect("valid");
    let core = missionweaveprotocol_kernel::delegation::DelegationGrant::from(fields);
    assert_eq!(core.ceilings.get(Dimension::ToolCalls), 3);
    let (argument, message) =
        refused::<DelegationGrantFields>(&grant.replace(r#""currency":"EUR","#, ""), "grant");
    assert_eq!(
        (argument.as_str(), message.as_str()),
        ("grant.budget.currency", "grant.budget.currency: required")
    );
    let (argument, _) =
        refused::<DelegationGrantFields>(&grant.replace("\"EUR\"", "\"eur\""), "grant");
    assert_eq!(argument, "grant.budget.currency");

    let (argument, _) = refused::<RetryOptions>(
        r#"{"policy":{"maxAttempts":1,"backoff":"random"},"missionId":"m","workItemId":"w","ownershipEpoch":1}"#,
        "options",
    );
    assert_eq!(argument, "options.policy.backoff");
    let (argument, _) =
        refused::<WorkItems>(r#"{"w":{"missionId":"m","closed":"no"}}"#, "workItems");
    assert_eq!(argument, "workItems.w.closed");
}

#[test]
fn resource_members_are_the_cores() {
    let (argument, message) = refused::<ResourceInput>(r#"{"dollars":1}"#, "delta");
    assert_eq!(argument, "delta.dollars");
    assert!(message.contains(r#"unknown member "dollars""#));
    let (argument, _) = refused::<ResourceInput>(r#"{"toolCalls":9007199254740992}"#, "delta");
    assert_eq!(argument, "delta.toolCalls");
    // Every dimension read under the core's member name, written back the same way.
    let mut r = Resources::ZERO;
    for (i, d) in Dimension::ALL.into_iter().enumerate() {
        r.set(d, i as u64 + 1);
    }
    let text = Dimension::ALL
        .into_iter()
        .enumerate()
        .map(|(i, d)| format!("\"{}\":{}", dimension_member(d), i + 1))
        .collect::<Vec<_>>()
        .join(",");
    let read_back: ResourceInput = read(&format!("{{{text}}}"), "amount").expect("valid");
    assert_eq!(Resources::from(read_back), r);
    assert_eq!(
        answer(&ResourceAmounts::from(r)).expect("answer"),
        resources_to_value(&r)
    );
}
