//! §10.2 WorkItem state machine, the 14 rows of part 1 (digest 2.2: all but row 6 and the
//! child-Mission rows 15–17), table-driven: every row is tried from
//! every state; the permitted states must succeed into the row's next state with its Event, every
//! other state must be refused with `INVALID_STATE_TRANSITION`, and nothing changes on refusal.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "work_fixture.rs"]
mod fixture;

use fixture::*;
use missionweaveprotocol::{DescribeError, WireCode};
use missionweaveprotocol_engine::work::fencing::WorkClaim;
use missionweaveprotocol_engine::work::offers;
use missionweaveprotocol_engine::work::transitions::closing::{self, CancelInput, MissionEnd};
use missionweaveprotocol_engine::work::transitions::create::{self, ProposeInput};
use missionweaveprotocol_engine::work::transitions::execution::{
    self, CheckpointInput, UnblockInput,
};
use missionweaveprotocol_engine::work::transitions::review::{self, AcceptResultInput};
use missionweaveprotocol_engine::work::{
    Actor, DependencyGraph, LeaseGrant, ProposalStatus, Transition, WorkError, WorkItem,
    WorkItemState,
};

use WorkItemState::*;

type Attempt = fn(&WorkItem) -> Result<Transition<WorkItem>, WorkError>;

/// One §10.2 row driven against a WorkItem aggregate.
struct Row {
    number: u8,
    command: &'static str,
    from: &'static [WorkItemState],
    to: &'static [WorkItemState],
    event: &'static str,
    attempt: Attempt,
}

/// A claim for any state: the current lease where one exists, else a made-up Lease ID.
fn any_claim(item: &WorkItem) -> WorkClaim {
    match (&item.execution_lease, &item.ownership_lease, item.state) {
        (Some(lease), _, Active) => claim(item, lease.lease_id()),
        (_, Some(lease), _) => claim(item, lease.lease_id()),
        _ => WorkClaim {
            agent_id: W1.into(),
            session_epoch: SESSION,
            ownership_epoch: item.owner.as_ref().map_or(1, |o| o.ownership_epoch),
            lease_id: "urn:mwp:lease:none".into(),
        },
    }
}

fn grant(name: &str) -> LeaseGrant {
    LeaseGrant {
        lease_id: format!("urn:mwp:lease:{name}"),
        expires_at: at(900),
    }
}

fn rows() -> Vec<Row> {
    vec![
        Row {
            number: 3,
            command: "work.offer",
            from: &[Open, Offered, Queued, Active, Blocked, Failed],
            to: &[Offered],
            event: "work.offer.created",
            // After every lease of the fixture lapsed: "with no live owner".
            attempt: |item| offers::offer(item, offer_input(&[W2], "row3", at(4000)), at(2000)),
        },
        Row {
            number: 4,
            command: "work.accept_offer",
            from: &[Offered],
            to: &[Queued],
            event: "work.offer.accepted",
            attempt: |item| offers::accept_offer(item, accept_input(W1, "row4", at(1)), at(1)),
        },
        Row {
            number: 7,
            command: "work.start",
            from: &[Queued],
            to: &[Active],
            event: "work.started",
            attempt: |item| {
                let input = execution::StartInput {
                    claim: any_claim(item),
                    execution_lease: grant("row7"),
                    execution_approved: false,
                };
                execution::start(item, input, no_deps, at(1))
            },
        },
        Row {
            number: 8,
            command: "work.checkpoint",
            from: &[Active],
            to: &[Queued],
            event: "work.checkpointed",
            attempt: |item| {
                let input = CheckpointInput {
                    claim: any_claim(item),
                    checkpoint: progress(),
                    ownership_lease: grant("row8"),
                };
                execution::checkpoint(item, input, at(1))
            },
        },
        Row {
            number: 9,
            command: "work.block",
            from: &[Active],
            to: &[Blocked],
            event: "work.blocked",
            attempt: |item| {
                let mut input = block_input_any(item);
                input.claim = any_claim(item);
                execution::block(item, input, at(1))
            },
        },
        Row {
            number: 10,
            command: "work.unblock",
            from: &[Blocked],
            to: &[Queued, Open],
            event: "work.unblocked",
            attempt: |item| {
                let input = UnblockInput {
                    ownership_lease: Some(grant("row10")),
                };
                execution::unblock(item, input, at(1))
            },
        },
        Row {
            number: 11,
            command: "work.submit",
            from: &[Active],
            to: &[Submitted],
            event: "work.submitted",
            attempt: |item| {
                let mut input = submit_input_any(item);
                input.claim = any_claim(item);
                review::submit(item, input, at(1))
            },
        },
        Row {
            number: 12,
            command: "work.accept_result",
            from: &[Submitted],
            to: &[Verified],
            event: "work.result.accepted",
            attempt: |item| review::accept_result(item, review_input(item), at(1)),
        },
        Row {
            number: 13,
            command: "work.fail",
            from: &[Open, Offered, Queued, Active, Blocked, Submitted],
            to: &[Failed],
            event: "work.failed",
            attempt: |item| closing::fail(item, fail_input(), at(1)),
        },
        Row {
            number: 18,
            command: "mission.fail (propagated)",
            from: &[Open, Offered, Queued, Active, Blocked, Submitted],
            to: &[Failed],
            event: "work.failed",
            attempt: |item| {
                closing::propagate_mission_end(item, MissionEnd::Failed, "mission failed", at(1))
            },
        },
        Row {
            number: 18,
            command: "mission.cancel (propagated)",
            from: &[Open, Offered, Queued, Active, Blocked, Submitted],
            to: &[Cancelled],
            event: "work.cancelled",
            attempt: |item| {
                closing::propagate_mission_end(item, MissionEnd::Cancelled, "stopped", at(1))
            },
        },
        Row {
            number: 14,
            command: "work.cancel",
            from: &[Open, Offered, Queued, Active, Blocked, Submitted],
            to: &[Cancelled],
            event: "work.cancelled",
            attempt: |item| {
                let input = CancelInput {
                    reason: "superseded".into(),
                };
                closing::cancel(item, input, at(1))
            },
        },
    ]
}

fn block_input_any(item: &WorkItem) -> execution::BlockInput {
    execution::BlockInput {
        claim: any_claim(item),
        reason: "waiting for data".into(),
        checkpoint: progress(),
        blocked_lease: grant("row9"),
    }
}

fn submit_input_any(item: &WorkItem) -> review::SubmitInput {
    review::SubmitInput {
        claim: any_claim(item),
        artifact_hashes: vec![HASH.into()],
        evidence: vec![evidence(item, "row11", "deterministic_test", &["c1"])],
    }
}

/// Rows 3, 4, 7–14 and 18 from each of the nine states.
#[test]
fn every_row_from_every_state() {
    let mut coverage = Vec::new();
    for row in rows() {
        let (mut positive, mut negative) = (0, 0);
        for state in WorkItemState::ALL {
            let item = item_in(state);
            let before = item.clone();
            let result = (row.attempt)(&item);
            assert_eq!(item, before, "row {} mutated its input", row.number);
            if row.from.contains(&state) {
                let transition = result
                    .unwrap_or_else(|e| panic!("row {} from {}: {e}", row.number, state.as_str()));
                assert!(
                    row.to.contains(&transition.state.state),
                    "row {}",
                    row.number
                );
                assert_eq!(transition.state.revision, item.revision + 1);
                assert_eq!(transition.events.len(), 1);
                assert_eq!(transition.events[0].kind, row.event);
                // The new state is always a schema-valid WorkItem document.
                let document = transition.state.to_schema_document().unwrap();
                missionweaveprotocol::schema::SchemaCatalog::embedded()
                    .validate("work-item", &document)
                    .unwrap_or_else(|e| panic!("row {}: {e}", row.number));
                positive += 1;
            } else {
                let error = result.expect_err(row.command);
                assert_eq!(
                    error.wire_code(),
                    WireCode::InvalidStateTransition,
                    "row {} from {}: {error}",
                    row.number,
                    state.as_str()
                );
                assert_eq!(error.reason(), "invalid_transition");
                negative += 1;
            }
        }
        coverage.push((row.number, row.command, positive, negative));
    }
    coverage.extend(special_rows());
    coverage.sort_by_key(|c| c.0);
    println!("| row | command | permitted states passed | refused states passed |");
    for (n, command, p, q) in &coverage {
        println!("| {n} | {command} | {p} | {q} |");
    }
    let numbers: Vec<u8> = coverage.iter().map(|c| c.0).collect();
    let mut distinct = numbers.clone();
    distinct.dedup();
    assert_eq!(distinct, [1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 18]);
    assert!(coverage.iter().all(|c| c.2 > 0 && c.3 > 0));
}

/// Rows 1, 2 and 5 have no WorkItem "from" state (1, 2) or no Command (5): driven directly.
fn special_rows() -> Vec<(u8, &'static str, usize, usize)> {
    let propose_input = |id: &str| ProposeInput {
        proposal_id: format!("urn:mwp:proposal:{id}"),
        mission_id: "urn:mwp:mission:m".into(),
        group_id: "urn:mwp:group:g".into(),
        proposed_by: Actor::human("urn:mwp:human:alice"),
        contract: contract(),
    };
    // Row 1: none → open Work Proposal; an existing proposal refuses.
    let proposal = create::propose(None, propose_input("p1"), at(0)).unwrap();
    assert_eq!(proposal.state.status, ProposalStatus::Open);
    assert_eq!(proposal.events[0].kind, "work.proposed");
    let again = create::propose(Some(&proposal.state), propose_input("p1"), at(0)).unwrap_err();
    assert_eq!(again.code(), WireCode::InvalidStateTransition);

    // Row 2: none or open proposal → open; an existing WorkItem in any state refuses, and so
    // does an already authorized proposal.
    let graph = DependencyGraph::new();
    let mut input = authorize_input(&wid("w1"), contract());
    let plain = create::authorize(None, None, &graph, input.clone(), at(0)).unwrap();
    assert_eq!(plain.state.item.state, Open);
    assert_eq!(plain.events[0].kind, "work.authorized");
    input.contract = None;
    input.proposal_id = Some(proposal.state.proposal_id.clone());
    let from_proposal =
        create::authorize(None, Some(&proposal.state), &graph, input.clone(), at(0)).unwrap();
    assert_eq!(
        from_proposal.state.item.created_by,
        Actor::human("urn:mwp:human:alice")
    );
    let authorized = from_proposal.state.proposal.unwrap();
    assert_eq!(authorized.status, ProposalStatus::Authorized);
    let mut refused = 0;
    for state in WorkItemState::ALL {
        let existing = item_in(state);
        let e = create::authorize(Some(&existing), None, &graph, input.clone(), at(0)).unwrap_err();
        assert_eq!(e.code(), WireCode::InvalidStateTransition);
        refused += 1;
    }
    let e = create::authorize(None, Some(&authorized), &graph, input, at(0)).unwrap_err();
    assert_eq!(e.code(), WireCode::InvalidStateTransition);
    refused += 1;

    // Row 5: offer expiry appends nothing and changes nothing; acceptance after it is refused.
    let offered_item = item_in(Offered);
    let expiry = offered_item.offers[0].expires_at;
    assert!(offers::expired_offers(&offered_item, at(1)).is_empty());
    assert_eq!(offers::expired_offers(&offered_item, expiry).len(), 2);
    let late = offers::accept_offer(&offered_item, accept_input(W1, "late", expiry), expiry);
    assert_eq!(late.unwrap_err().code(), WireCode::WorkOfferExpired);
    assert_eq!(offered_item.state, Offered);
    let in_time = offers::accept_offer(&offered_item, accept_input(W1, "ok", at(1)), at(1));
    assert_eq!(in_time.unwrap().state.state, Queued);

    vec![
        (1, "work.propose", 1, 1),
        (2, "work.authorize", 2, refused),
        (5, "offer expiry", 1, 1),
    ]
}

#[test]
fn row_3_refuses_a_live_owner() {
    for state in [Queued, Active, Blocked] {
        let item = item_in(state);
        let e = offers::offer(&item, offer_input(&[W2], "again", at(600)), at(1)).unwrap_err();
        assert_eq!(e.code(), WireCode::InvalidStateTransition);
        assert_eq!(e.reason(), "owner_live");
    }
}

#[test]
fn row_10_unblock_goes_to_open_after_the_blocked_lease_lapsed() {
    let item = item_in(Blocked);
    let lapse = item.ownership_lease.as_ref().unwrap().window().expires_at;
    let next = execution::unblock(
        &item,
        UnblockInput {
            ownership_lease: None,
        },
        lapse,
    )
    .unwrap();
    assert_eq!(next.state.state, Open);
    // The fenced owner's blocked lease is recorded expired; the item can be re-offered.
    assert_eq!(
        next.state
            .ownership_lease
            .as_ref()
            .unwrap()
            .state()
            .as_str(),
        "expired"
    );
    let reoffered = offers::offer(&next.state, offer_input(&[W2], "re", at(2000)), lapse).unwrap();
    let won = offers::accept_offer(&reoffered.state, accept_input(W2, "w2", lapse), lapse).unwrap();
    assert_eq!(won.state.owner.as_ref().unwrap().ownership_epoch, 2);
    // While live, unblocking needs the new ownership lease.
    let e = execution::unblock(
        &item,
        UnblockInput {
            ownership_lease: None,
        },
        at(1),
    )
    .unwrap_err();
    assert_eq!(e.code(), WireCode::InvalidCommand);
}

#[test]
fn row_12_review_without_the_required_evidence_is_refused() {
    // The contract requires a passing reviewer assessment besides the submitted test.
    let terms = contract_with(
        &[],
        &[("c1", &["deterministic_test", "reviewer_assessment"])],
        "not_required",
    );
    let open = open_item_with(&wid("w9"), terms, &DependencyGraph::new());
    let item = submitted(&open, at(0));
    let human_only = AcceptResultInput {
        evidence: vec![evidence(&item, "r", "human_review", &["c1"])],
    };
    let e = review::accept_result(&item, human_only, at(1)).unwrap_err();
    assert_eq!(e.code(), WireCode::InvalidCommand);
    assert_eq!(e.reason(), "criterion_not_satisfied");
    let mut failing = evidence(&item, "r2", "reviewer_assessment", &["c1"]);
    failing.result = missionweaveprotocol_engine::work::EvidenceResult::Failed;
    let e = review::accept_result(
        &item,
        AcceptResultInput {
            evidence: vec![failing],
        },
        at(1),
    );
    assert_eq!(e.unwrap_err().reason(), "criterion_not_satisfied");
    let e = review::accept_result(&item, AcceptResultInput { evidence: vec![] }, at(1));
    assert_eq!(e.unwrap_err().code(), WireCode::InvalidCommand);
    let ok = review::accept_result(&item, review_input(&item), at(1)).unwrap();
    assert_eq!(ok.state.state, Verified);
}

#[test]
fn row_18_revokes_leases_and_withdraws_offers() {
    let active = item_in(Active);
    let t = closing::propagate_mission_end(&active, MissionEnd::Cancelled, "stop", at(1)).unwrap();
    assert_eq!(
        t.state.execution_lease.as_ref().unwrap().state().as_str(),
        "revoked"
    );
    assert_eq!(
        t.events[0].payload.get("cause").unwrap().as_str(),
        Some("mission.cancel")
    );
    let offered_item = item_in(Offered);
    let t = closing::propagate_mission_end(&offered_item, MissionEnd::Failed, "x", at(1)).unwrap();
    assert!(
        t.state
            .offers
            .iter()
            .all(|o| o.status.as_str() == "withdrawn")
    );
    let e = closing::propagate_mission_end(&active, MissionEnd::Failed, " ", at(1)).unwrap_err();
    assert_eq!(e.code(), WireCode::InvalidCommand);
}
