//! Delegated authority and cooperation controls (§9.1, §20; digest 2.12, 2.13):
//! `membership.grant_delegation` by the current Coordinator, the grantee's `work.authorize` /
//! `work.offer` under the Grant, `policy.grant_cooperation_override` by the MissionOwner, and
//! its one-shot use lifting the Organization's delegation-depth limit.

use missionweaveprotocol::WireCode;
use missionweaveprotocol_engine::cooperation_override::OVERRIDE_KIND;
use missionweaveprotocol_engine::delegation::GRANT_KIND;
use missionweaveprotocol_engine::store::{AggregateKey, Store};

use crate::payloads::{self, W1, W2};
use crate::scenario::{Build, Scenario, Step, Watch};
use crate::steps::{self, by, coordinator};
use crate::world::{COORDINATOR, OTHER_HUMAN, OWNER, WORKER, World};

const GRANT: &str = "urn:missionweaveprotocol:grant:ledger";
const OVERRIDE: &str = "urn:missionweaveprotocol:grant:override-depth";
const EXPIRES: &str = "2026-07-15T10:30:00Z";

/// A `membership.grant_delegation` payload: `WORKER` may work under `W1`, 25 tool calls,
/// descendants `depth` deep.
fn grant(depth: u64) -> String {
    format!(
        r#"{{"grantId":"{GRANT}","granteeAgentId":"{WORKER}","targetWorkItemId":"{W1}",
        "allowedCapabilities":[{{"id":"text.summarise","version":"1.0.0"}}],
        "budget":{{"currency":"EUR","financialLimit":0,"modelTokenLimit":0,"toolCallLimit":25,
          "computeSecondsLimit":0,"wallClockSecondsLimit":0,"externalSideEffectLimit":0}},
        "maxDescendantDepth":{depth},"expiresAt":"{EXPIRES}"}}"#
    )
}

/// The Worker's Membership with `role` (§8).
fn member(role: &str) -> Vec<Step> {
    vec![Step::Perform(by(
        OWNER,
        "membership.change",
        "",
        format!(
            r#"{{"member":{{"type":"agent","id":"{WORKER}"}},"role":"{role}","scopes":["work:delegate"]}}"#
        ),
    ))]
}

/// The Worker a `work_delegate`, `W1` authorized by the Coordinator.
fn delegate_and_target() -> Vec<Step> {
    let mut steps = member("work_delegate");
    steps.extend(steps::authorized(W1));
    steps
}

/// … and Grant `GRANT` over `W1` issued.
fn granted() -> Vec<Step> {
    let mut steps = delegate_and_target();
    steps.push(Step::Perform(coordinator(
        "membership.grant_delegation",
        grant(2),
    )));
    steps
}

/// `payload` (a JSON object text) with member `name` set to `value` (a string).
fn with_member(payload: &str, name: &str, value: &str) -> String {
    let open = payload.trim_end();
    let open = open.strip_suffix('}').unwrap_or(open);
    format!(r#"{open},"{name}":"{value}"}}"#)
}

/// `payload` with `delegationGrantId` added.
fn citing(payload: String, grant: &str) -> String {
    with_member(&payload, "delegationGrantId", grant)
}

/// The Worker's delegated `work.authorize` of `W2` under `W1`.
fn delegated_authorize(grant: &str) -> Build {
    let payload = citing(payloads::authorize(W2, &[]), grant);
    by(
        WORKER,
        "work.authorize",
        "",
        with_member(&payload, "parentWorkItemId", W1),
    )
}

fn stored(w: &World, kind: &str, id: &str) -> Result<Option<String>, String> {
    w.engine()
        .store()
        .aggregate(&AggregateKey::new(kind, id))
        .map_err(|e| e.to_string())
        .map(|a| a.map(|a| String::from_utf8_lossy(&a.value).into_owned()))
}

fn expect_grant(w: &World, present: bool) -> Result<(), String> {
    match stored(w, GRANT_KIND, GRANT)? {
        Some(_) if present => Ok(()),
        None if !present => Ok(()),
        found => Err(format!("the Delegation Grant is {found:?}")),
    }
}

/// The Action ID the Command built `ahead` Commands after this call will carry: the world
/// numbers Action IDs in order, so a throwaway Command (never performed) reveals the counter.
fn action_ahead(w: &World, ahead: u64) -> Result<String, String> {
    let probe = w.command("work.propose", OWNER, "", "{}")?;
    let n: u64 = probe
        .action_id()
        .rsplit(':')
        .next()
        .and_then(|n| n.parse().ok())
        .ok_or("unnumbered Action ID")?;
    Ok(format!("urn:missionweaveprotocol:action:{}", n + ahead))
}

/// The MissionOwner's one-shot override of `delegation_depth` for the Coordinator's very next
/// `membership.grant_delegation` (the Command right after this one).
fn depth_override() -> Build {
    Box::new(|w: &World| {
        let target = action_ahead(w, 2)?;
        w.command(
            "policy.grant_cooperation_override",
            OWNER,
            "",
            &override_payload(&target),
        )
    })
}

fn override_payload(target: &str) -> String {
    format!(
        r#"{{"grantId":"{OVERRIDE}","policyName":"delegation_depth",
        "beneficiary":{{"type":"agent","id":"{COORDINATOR}"}},
        "targetCommandKind":"membership.grant_delegation","targetActionId":"{target}",
        "reason":"the ledger split needs four levels","expiresAt":"{EXPIRES}"}}"#
    )
}

fn expect_override(w: &World, consumed: bool) -> Result<(), String> {
    let value = stored(w, OVERRIDE_KIND, OVERRIDE)?.ok_or("no override stored")?;
    if value.contains("\"consumed\"") == consumed {
        Ok(())
    } else {
        Err(format!("the override is {value}"))
    }
}

pub fn scenarios() -> Vec<Scenario> {
    let mut deep_then_cited = delegate_and_target();
    deep_then_cited.push(Step::Perform(depth_override()));
    vec![
        Scenario::new(
            "membership.grant_delegation: the Coordinator grants the work_delegate W1's subtree",
        )
        .given(delegate_and_target())
        .when(coordinator("membership.grant_delegation", grant(2)))
        .emits(&["membership.delegation.granted"])
        .check("the Grant is stored", |w| expect_grant(w, true)),
        Scenario::new("membership.grant_delegation: the grantee is a worker, not a work_delegate")
            .given(member("worker"))
            .given(steps::authorized(W1))
            .when(coordinator("membership.grant_delegation", grant(2)))
            .refused(WireCode::MembershipRequired)
            .check("no Grant is stored", |w| expect_grant(w, false)),
        Scenario::new("membership.grant_delegation: another Agent is not the Coordinator")
            .given(delegate_and_target())
            .when(by(
                WORKER,
                "membership.grant_delegation",
                r#""coordinatorEpoch": 1"#,
                grant(2),
            ))
            .refused(WireCode::AuthForbidden),
        Scenario::new(
            "membership.grant_delegation: deeper than Organization policy is rate limited",
        )
        .given(delegate_and_target())
        .when(coordinator("membership.grant_delegation", grant(4)))
        .refused(WireCode::RateLimited),
        Scenario::new(
            "membership.grant_delegation: a Cooperation Override Grant lifts the depth limit once",
        )
        .given(deep_then_cited)
        .when(Box::new(|w: &World| {
            w.command(
                "membership.grant_delegation",
                COORDINATOR,
                &format!(r#""coordinatorEpoch": 1, "cooperationOverrideGrantId": "{OVERRIDE}""#),
                &grant(4),
            )
        }))
        .emits(&["membership.delegation.granted"])
        .check("the override is consumed", |w| expect_override(w, true)),
        Scenario::new(
            "policy.grant_cooperation_override: the MissionOwner grants a one-shot override",
        )
        .when(by(
            OWNER,
            "policy.grant_cooperation_override",
            "",
            override_payload("urn:missionweaveprotocol:action:target"),
        ))
        .emits(&["policy.cooperation_override.granted"])
        .check("the override is stored unconsumed", |w| {
            expect_override(w, false)
        }),
        Scenario::new("policy.grant_cooperation_override: another human is not the MissionOwner")
            .when(by(
                OTHER_HUMAN,
                "policy.grant_cooperation_override",
                "",
                override_payload("urn:missionweaveprotocol:action:target"),
            ))
            .refused(WireCode::AuthForbidden)
            .check("no override is stored", |w| {
                match stored(w, OVERRIDE_KIND, OVERRIDE)? {
                    None => Ok(()),
                    Some(v) => Err(format!("stored {v}")),
                }
            }),
        Scenario::new("work.authorize: the grantee adds a linked descendant under its Grant")
            .given(granted())
            .when(delegated_authorize(GRANT))
            .watch(Watch::WorkItem(W2))
            .emits(&["work.authorized"])
            .moves("none", "open"),
        Scenario::new("work.authorize: a forged Delegation Grant authorizes nothing")
            .given(granted())
            .when(delegated_authorize("urn:missionweaveprotocol:grant:forged"))
            .watch(Watch::WorkItem(W2))
            .refused(WireCode::AuthForbidden)
            .moves("none", "none"),
        Scenario::new("work.offer: the grantee offers the Grant's target")
            .given(granted())
            .when(by(
                WORKER,
                "work.offer",
                "",
                citing(payloads::offer(W1, "d1"), GRANT),
            ))
            .watch(Watch::WorkItem(W1))
            .emits(&["work.offer.created"])
            .moves("open", "offered"),
        Scenario::new("work.offer: a WorkItem outside the Grant's subtree")
            .given(granted())
            .given(steps::authorized(W2))
            .when(by(
                WORKER,
                "work.offer",
                "",
                citing(payloads::offer(W2, "d1"), GRANT),
            ))
            .watch(Watch::WorkItem(W2))
            .refused(WireCode::AuthForbidden)
            .moves("open", "open"),
    ]
}
