//! Membership scenarios (§8, digest §2.7).

use missionweaveprotocol::{Principal, PrincipalType, WireCode};

use crate::scenario::{Scenario, Step};
use crate::steps::by;
use crate::world::{GROUP, OWNER, WORKER, World};

fn change(extra: &str) -> String {
    format!(
        r#"{{"member": {{"type": "agent", "id": "{WORKER}"}}, "role": "worker", "scopes": ["work:execute"]{extra}}}"#
    )
}

fn end() -> String {
    format!(r#"{{"member": {{"type": "agent", "id": "{WORKER}"}}}}"#)
}

/// The Worker's Membership as (state, epoch), if any.
fn worker_membership(w: &World) -> Result<Option<(String, u64)>, String> {
    Ok(w.engine()
        .membership(GROUP, &Principal::new(PrincipalType::Agent, WORKER))
        .map_err(|e| e.to_string())?
        .map(|m| (m.state().as_str().to_owned(), m.epoch())))
}

fn expect_membership(w: &World, expected: Option<(&str, u64)>) -> Result<(), String> {
    let found = worker_membership(w)?;
    if found.as_ref().map(|(s, e)| (s.as_str(), *e)) == expected {
        Ok(())
    } else {
        Err(format!("the Worker's Membership is {found:?}"))
    }
}

pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario::new("membership.change: the MissionOwner adds the Worker (active, epoch 1)")
            .when(by(OWNER, "membership.change", "", change("")))
            .emits(&["membership.changed"])
            .check("the Worker's Membership is active at epoch 1", |w| {
                expect_membership(w, Some(("active", 1)))
            }),
        Scenario::new("membership.change: a provisional Membership without a Context Package")
            .when(by(
                OWNER,
                "membership.change",
                "",
                change(r#", "provisional": true, "provisionalExpiresAt": "2026-07-15T10:30:00Z""#),
            ))
            .refused(WireCode::InvalidCommand)
            .check("no Membership was stored", |w| expect_membership(w, None)),
        Scenario::new("membership.end: the Worker's Membership ends")
            .given(vec![Step::Perform(by(
                OWNER,
                "membership.change",
                "",
                change(""),
            ))])
            .when(by(OWNER, "membership.end", "", end()))
            .emits(&["membership.ended"])
            .check("the Membership is ended at epoch 2", |w| {
                expect_membership(w, Some(("ended", 2)))
            }),
        Scenario::new("membership.end: there is no Membership to end")
            .when(by(OWNER, "membership.end", "", end()))
            .refused(WireCode::MembershipRequired)
            .check("no Membership was stored", |w| expect_membership(w, None)),
    ]
}
