//! §20 rate and runaway controls through the engine: queued and active WorkItem limits and the
//! proposal rate refuse the new transition with `RATE_LIMITED` and never touch accepted work.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_work_fixture.rs"]
mod fixture;

use fixture::*;
use missionweaveprotocol::{DescribeError, FieldValue, WireCode};
use missionweaveprotocol_engine::ingress::VerifiedCommand;
use missionweaveprotocol_kernel::cooperation::CooperationLimits;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

const W3: &str = "urn:missionweaveprotocol:work:audit";

fn limits(queued: Option<u32>, active: Option<u32>, rate: Option<u32>) -> CooperationLimits {
    CooperationLimits {
        maximum_queued_work_items: queued,
        maximum_active_work_items: active,
        maximum_proposal_rate_per_minute: rate,
        ..CooperationLimits::default()
    }
}

fn int(error: &dyn DescribeError, name: &str) -> Option<i64> {
    match error.fields().get(name) {
        Some(FieldValue::Integer(v)) => Some(*v),
        _ => None,
    }
}

fn propose(f: &Fixture, id: &str) -> VerifiedCommand {
    f.command(
        "work.propose",
        WORKER,
        "",
        &format!(
            r#"{{"proposalId":"urn:missionweaveprotocol:proposal:{id}","contract":{}}}"#,
            contract(&[])
        ),
    )
}

#[test]
fn the_defaults_are_the_references() {
    let d = CooperationLimits::default();
    assert_eq!(d.maximum_queued_work_items, Some(100));
    assert_eq!(d.maximum_active_work_items, Some(4));
    assert_eq!(d.maximum_proposal_rate_per_minute, Some(30));
}

#[test]
fn queued_work_items_are_limited_per_group() {
    let f = fixture();
    let engine = f
        .active()
        .with_cooperation_limits(limits(Some(2), None, None));
    f.ok(&engine, &f.authorize(W1, &[]), NOW);
    f.ok(&engine, &f.authorize(W2, &[]), NOW);
    let error = f.refused(&engine, &f.authorize(W3, &[]), NOW, WireCode::RateLimited);
    assert_eq!(error.reason(), "queued_work_items");
    assert_eq!(int(&error, "limit"), Some(2));
    assert_eq!(int(&error, "retry_after_ms"), None);
    // Starting one frees a slot: only work not yet started counts.
    let (epoch, lease) = {
        f.ok(&engine, &f.offer(W1, &[WORKER], "r1"), NOW);
        f.ok(&engine, &f.accept(WORKER, W1), NOW);
        ownership(&engine, W1)
    };
    f.ok(
        &engine,
        &f.by_worker("work.start", WORKER, W1, epoch, &lease, ""),
        NOW,
    );
    f.ok(&engine, &f.authorize(W3, &[]), NOW);
    // The accepted work was never touched.
    assert_eq!(item_state(&engine, W1), "active");
    assert_eq!(item_state(&engine, W2), "open");
}

#[test]
fn active_work_items_are_limited_per_worker() {
    let f = fixture();
    let engine = f
        .active()
        .with_cooperation_limits(limits(None, Some(1), None));
    f.active_item(&engine, W1);
    f.queued(&engine, W2);
    let (epoch, lease) = ownership(&engine, W2);
    let start = f.by_worker("work.start", WORKER, W2, epoch, &lease, "");
    let error = f.refused(&engine, &start, NOW, WireCode::RateLimited);
    assert_eq!(error.reason(), "active_work_items");
    assert_eq!(item_state(&engine, W2), "queued");
    // Once W1 is submitted, W2 may start: the same signed Command applies now (a refusal
    // leaves no receipt, §19).
    f.publish_artifact(&engine, W1);
    let (epoch1, exec1) = execution(&engine, W1);
    f.ok(
        &engine,
        &f.by_worker(
            "work.submit",
            WORKER,
            W1,
            epoch1,
            &exec1,
            &Fixture::submit_members(W1),
        ),
        NOW,
    );
    f.ok(&engine, &start, NOW);
    assert_eq!(item_state(&engine, W2), "active");
}

#[test]
fn the_proposal_rate_is_a_sliding_minute_with_retry_guidance() {
    let f = fixture();
    let engine = f
        .active()
        .with_cooperation_limits(limits(None, None, Some(2)));
    f.ok(&engine, &propose(&f, "p1"), NOW);
    let second = UnixMillis(NOW.0 + 10_000);
    f.ok(&engine, &propose(&f, "p2"), second);
    let third = propose(&f, "p3");
    let error = f.refused(
        &engine,
        &third,
        UnixMillis(NOW.0 + 20_000),
        WireCode::RateLimited,
    );
    assert_eq!(error.reason(), "proposal_rate");
    // The first proposal leaves the window 60 s after it was accepted.
    assert_eq!(int(&error, "retry_after_ms"), Some(40_000));
    assert!(error.retryable());
    // Another sender has its own window.
    let by_owner = f.command(
        "work.propose",
        OWNER,
        "",
        &format!(
            r#"{{"proposalId":"urn:missionweaveprotocol:proposal:o1","contract":{}}}"#,
            contract(&[])
        ),
    );
    f.ok(&engine, &by_owner, UnixMillis(NOW.0 + 20_000));
    // After the retry guidance, the same Command applies.
    f.ok(&engine, &third, UnixMillis(NOW.0 + 60_000));
}

#[test]
fn no_limits_means_none() {
    let f = fixture();
    let engine = f.active().with_cooperation_limits(CooperationLimits::NONE);
    for i in 0..35 {
        f.ok(&engine, &propose(&f, &format!("n{i}")), NOW);
    }
}

#[test]
fn the_default_proposal_rate_refuses_the_thirty_first() {
    let f = fixture();
    let engine = f.active();
    for i in 0..30 {
        f.ok(&engine, &propose(&f, &format!("d{i}")), NOW);
    }
    f.refused(&engine, &propose(&f, "d30"), NOW, WireCode::RateLimited);
}
