//! Variants of §10.2 rows 4 and 7 for the controls main gained after the matrix was written:
//! Session Epoch fencing (§6.3, §11.3: an Agent without a Session is not authenticated, a
//! replaced Session's runtime is fenced, the re-leased WorkItem is started by the new one) and
//! the §20 runaway control on active WorkItems per Worker and Group (default 4,
//! `RATE_LIMITED`).

use missionweaveprotocol::WireCode;

use crate::payloads::{self, W1};
use crate::scenario::{Scenario, Step, Watch};
use crate::steps::{self, Lease, by, coordinator, worker};
use crate::world::{SESSION_EPOCH, SESSIONLESS, WORKER, World};

/// The default §20 limit of active WorkItems per Worker and Group (`CooperationLimits`).
const ACTIVE_LIMIT: usize = 4;
/// Four WorkItems the Worker runs before it tries to start [`W1`].
const BUSY: [&str; ACTIVE_LIMIT] = [
    "urn:missionweaveprotocol:work:busy-1",
    "urn:missionweaveprotocol:work:busy-2",
    "urn:missionweaveprotocol:work:busy-3",
    "urn:missionweaveprotocol:work:busy-4",
];
const ROUNDS: [&str; ACTIVE_LIMIT] = ["busy-1", "busy-2", "busy-3", "busy-4"];

/// `item` authorized, offered (offer ID from `round`), accepted and started by the Worker.
fn started(item: &'static str, round: &'static str) -> Vec<Step> {
    vec![
        Step::Perform(coordinator(
            "work.authorize",
            payloads::authorize(item, &[]),
        )),
        Step::Perform(coordinator("work.offer", payloads::offer(item, round))),
        Step::Perform(by(
            WORKER,
            "work.accept_offer",
            "",
            payloads::accept_offer(item),
        )),
        Step::Perform(worker("work.start", item, Lease::Ownership, 0, "")),
    ]
}

fn session_is(w: &World, epoch: u64) -> Result<(), String> {
    match w.session_epoch(WORKER)? {
        Some(e) if e == epoch => Ok(()),
        other => Err(format!(
            "the Worker's Session Epoch is {other:?}, not {epoch}"
        )),
    }
}

pub fn scenarios() -> Vec<Scenario> {
    let w1 = Watch::WorkItem(W1);
    let mut busy = Vec::new();
    for (item, round) in BUSY.into_iter().zip(ROUNDS) {
        busy.extend(started(item, round));
    }
    vec![
        Scenario::new("work.accept_offer: an Agent that never opened a Session")
            .given(steps::authorized(W1))
            .given(vec![Step::Perform(coordinator(
                "work.offer",
                payloads::offer(W1, "r1").replace(WORKER, SESSIONLESS),
            ))])
            .when(by(
                SESSIONLESS,
                "work.accept_offer",
                "",
                payloads::accept_offer(W1),
            ))
            .watch(w1)
            .refused(WireCode::AuthRequired)
            .moves("offered", "offered"),
        Scenario::new("work.start: the replacement Session starts the re-leased WorkItem")
            .given(steps::active(W1))
            .given(steps::replace_session(WORKER))
            .when(worker("work.start", W1, Lease::Ownership, 0, ""))
            .watch(w1)
            .emits(&["work.started"])
            .moves("queued", "active")
            .check("the Worker is at Session Epoch 2", |w| session_is(w, 2)),
        Scenario::new("work.start: a runtime of a replaced Session is fenced")
            .given(steps::queued(W1))
            .given(steps::replace_session(WORKER))
            .when(steps::worker_at_session(
                SESSION_EPOCH,
                "work.start",
                W1,
                Lease::Ownership,
            ))
            .watch(w1)
            .refused(WireCode::AuthStaleSession)
            .moves("queued", "queued"),
        Scenario::new("work.start: a fifth active WorkItem of the Worker is rate limited")
            .given(busy)
            .given(steps::queued(W1))
            .when(worker("work.start", W1, Lease::Ownership, 0, ""))
            .watch(w1)
            .refused(WireCode::RateLimited)
            .moves("queued", "queued"),
    ]
}
