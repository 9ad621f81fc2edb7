//! Work Contract validation (§10.1), submission Evidence (§13.2), the stored aggregate document
//! and error descriptions (§19).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "work_fixture.rs"]
mod fixture;

use fixture::*;
use missionweaveprotocol::json::{Object, Value, parse};
use missionweaveprotocol::{DescribeError, WireCode};
use missionweaveprotocol_engine::work::transitions::review;
use missionweaveprotocol_engine::work::{
    AGGREGATE_KIND, EvidenceRef, WorkContract, WorkError, WorkItem, WorkItemState,
};

fn without(member: &str) -> Value {
    let Value::Object(object) = contract() else {
        panic!()
    };
    let mut copy = Object::new();
    for (name, value) in object.iter() {
        let name = name.to_lossy();
        if name != member {
            copy.insert(&name, value.clone());
        }
    }
    Value::Object(copy)
}

fn with(member: &str, json: &str) -> Value {
    let Value::Object(mut object) = contract() else {
        panic!()
    };
    object.insert(member, parse(json.as_bytes()).unwrap());
    Value::Object(object)
}

#[test]
fn every_section_10_1_member_is_required() {
    assert!(WorkContract::from_value(contract()).is_ok());
    for member in [
        "contractVersion",
        "goal",
        "requiredDeliverables",
        "acceptanceCriteria",
        "inputArtifacts",
        "dependencyWorkItemIds",
        "allowedResources",
        "requiredCapabilities",
        "deadline",
        "requestedUrgency",
        "businessImpact",
        "retryPolicy",
        "budget",
        "sideEffectRisk",
        "executionApproval",
    ] {
        let e = WorkContract::from_value(without(member)).unwrap_err();
        assert_eq!(e, WorkError::ContractIncomplete(member), "{member}");
        assert_eq!(e.wire_code(), WireCode::WorkContractIncomplete);
        assert_eq!(DescribeError::reason(&e), "contract_incomplete");
    }
}

#[test]
fn empty_information_is_incomplete_and_wrong_shapes_fail_the_schema() {
    for (member, json) in [
        ("goal", r#""  ""#),
        ("acceptanceCriteria", "[]"),
        ("requiredDeliverables", "[]"),
        ("requiredCapabilities", "[]"),
        ("budget", "{}"),
        ("retryPolicy", r#"{"maxAttempts":1}"#),
        (
            "acceptanceCriteria",
            r#"[{"criterionId":"c1","description":"d","evidenceRequired":[]}]"#,
        ),
    ] {
        let e = WorkContract::from_value(with(member, json)).unwrap_err();
        assert_eq!(
            e.code(),
            WireCode::WorkContractIncomplete,
            "{member} {json}"
        );
    }
    let e = WorkContract::from_value(with("requestedUrgency", r#""asap""#)).unwrap_err();
    assert_eq!(e.code(), WireCode::SchemaValidationFailed);
    assert_eq!(e.reason(), "contract_schema");
    // High-risk work cannot skip the pre-execution approval (§10.1, §12).
    let risky = with("sideEffectRisk", r#""high_risk""#);
    assert_eq!(
        WorkContract::from_value(risky).unwrap_err(),
        WorkError::ContractIncomplete("executionApproval")
    );
    let Value::Object(mut ok) = with("sideEffectRisk", r#""destructive""#) else {
        panic!()
    };
    ok.insert("executionApproval", Value::string("human_required"));
    assert!(WorkContract::from_value(Value::Object(ok)).is_ok());
}

#[test]
fn submit_without_evidence_covering_every_criterion_is_refused() {
    let terms = contract_with(
        &[],
        &[
            ("c1", &["deterministic_test"]),
            ("c2", &["schema_validation"]),
        ],
        "not_required",
    );
    let open = open_item_with(&wid("we"), terms, &Default::default());
    let item = active(&open, at(0));
    let mut input = submit_input(&item);
    // Only c1 is mapped.
    let e = review::submit(&item, input.clone(), at(1)).unwrap_err();
    assert_eq!(e, WorkError::CriterionNotCovered("c2".into()));
    assert_eq!(e.code(), WireCode::InvalidCommand);
    // No Evidence at all; no Artifact; a malformed hash; Evidence about another WorkItem; an
    // unknown criterion.
    let mut none = input.clone();
    none.evidence.clear();
    assert_eq!(
        review::submit(&item, none, at(1)).unwrap_err().code(),
        WireCode::InvalidCommand
    );
    let mut no_artifacts = input.clone();
    no_artifacts.artifact_hashes.clear();
    assert!(review::submit(&item, no_artifacts, at(1)).is_err());
    let mut bad_hash = input.clone();
    bad_hash.artifact_hashes = vec!["sha256:XYZ".into()];
    assert!(review::submit(&item, bad_hash, at(1)).is_err());
    let mut elsewhere = input.clone();
    elsewhere.evidence[0].work_item_id = wid("other");
    assert_eq!(
        review::submit(&item, elsewhere, at(1))
            .unwrap_err()
            .reason(),
        "evidence_mismatch"
    );
    let mut unknown = input.clone();
    unknown.evidence[0].criterion_ids = vec!["c9".into()];
    assert_eq!(
        review::submit(&item, unknown, at(1)).unwrap_err().reason(),
        "evidence_mismatch"
    );
    // Covering both criteria succeeds and releases the Execution Lease.
    input
        .evidence
        .push(evidence(&item, "e2", "schema_validation", &["c2"]));
    let done = review::submit(&item, input, at(1)).unwrap().state;
    assert_eq!(done.state, WorkItemState::Submitted);
    assert_eq!(
        done.execution_lease.as_ref().unwrap().state().as_str(),
        "released"
    );
}

#[test]
fn evidence_refs_read_from_evidence_documents() {
    let doc = parse(br#"{"evidenceId":"urn:e:1","workItemId":"urn:w:1","type":"deterministic_test","criterionIds":["c1"],"result":"passed"}"#).unwrap();
    let e = EvidenceRef::from_document(&doc).unwrap();
    assert_eq!(e.criterion_ids, ["c1"]);
    let bad = parse(br#"{"evidenceId":"urn:e:1","workItemId":"urn:w:1","type":"x","criterionIds":["c1"],"result":"maybe"}"#).unwrap();
    assert!(EvidenceRef::from_document(&bad).is_none());
}

#[test]
fn the_stored_aggregate_round_trips_in_every_state() {
    assert_eq!(AGGREGATE_KIND, "work_item");
    for state in WorkItemState::ALL {
        let item = item_in(state);
        let bytes = item.to_canonical_bytes().unwrap();
        let back = WorkItem::from_json(&bytes).unwrap();
        // Same canonical form; and once read, the aggregate is a fixed point of the round trip.
        assert_eq!(
            back.to_canonical_bytes().unwrap(),
            bytes,
            "{}",
            state.as_str()
        );
        assert_eq!(WorkItem::from_json(&bytes).unwrap(), back);
        assert_eq!(
            (
                back.state,
                back.revision,
                back.contract.clone(),
                back.offers.clone()
            ),
            (
                item.state,
                item.revision,
                item.contract.clone(),
                item.offers.clone()
            )
        );
        assert_eq!(back.ownership_lease, item.ownership_lease);
        assert_eq!(back.execution_lease, item.execution_lease);
        assert_eq!(back.submission, item.submission);
        missionweaveprotocol::schema::SchemaCatalog::embedded()
            .validate("work-item", &item.to_schema_document().unwrap())
            .unwrap();
    }
}

#[test]
fn malformed_stored_documents_are_refused() {
    let item = item_in(WorkItemState::Active);
    assert_eq!(
        WorkItem::from_json(b"{").unwrap_err().code(),
        WireCode::SchemaValidationFailed
    );
    let Value::Object(mut doc) = item.to_value().unwrap() else {
        panic!()
    };
    doc.insert("executionLease", parse(br#"{"leaseId":"x"}"#).unwrap());
    let e = WorkItem::from_value(&Value::Object(doc)).unwrap_err();
    assert_eq!(e, WorkError::Document("executionLease"));
    assert!(WorkItem::from_value(&parse(b"{}").unwrap()).is_err());
}

#[test]
fn errors_describe_themselves_with_section_19_codes() {
    let cases = [
        (
            WorkError::OfferExpired,
            "WORK_OFFER_EXPIRED",
            "offer_expired",
        ),
        (
            WorkError::AlreadyOwned,
            "WORK_ALREADY_OWNED",
            "already_owned",
        ),
        (
            WorkError::StaleOwnership {
                claimed: 1,
                current: 2,
            },
            "WORK_STALE_OWNERSHIP",
            "stale_ownership",
        ),
        (
            WorkError::ApprovalRequired,
            "APPROVAL_REQUIRED",
            "execution_approval_required",
        ),
        (
            WorkError::ContractIncomplete("goal"),
            "WORK_CONTRACT_INCOMPLETE",
            "contract_incomplete",
        ),
        (
            WorkError::InvalidTransition {
                command: "work.start",
                from: Some(WorkItemState::Open),
            },
            "INVALID_STATE_TRANSITION",
            "invalid_transition",
        ),
        (
            WorkError::DependencyCycle(vec!["a".into(), "a".into()]),
            "INVALID_COMMAND",
            "dependency_cycle",
        ),
    ];
    for (error, code, reason) in cases {
        assert_eq!(error.wire_code().as_str(), code);
        assert_eq!(DescribeError::reason(&error), reason);
        assert!(!error.to_string().is_empty());
    }
    let e = WorkError::InvalidTransition {
        command: "work.start",
        from: Some(WorkItemState::Open),
    };
    assert_eq!(e.to_string(), "work.start is not permitted from state open");
    assert!(!e.fields().is_empty());
}

#[test]
fn the_stored_work_proposal_round_trips() {
    use missionweaveprotocol_engine::work::transitions::create::{self, ProposeInput};
    use missionweaveprotocol_engine::work::{Actor, PROPOSAL_AGGREGATE_KIND, WorkProposal};
    assert_eq!(PROPOSAL_AGGREGATE_KIND, "work_proposal");
    let input = ProposeInput {
        proposal_id: "urn:mwp:proposal:p".into(),
        mission_id: "urn:mwp:mission:m".into(),
        group_id: "urn:mwp:group:g".into(),
        proposed_by: Actor::human("urn:mwp:human:alice"),
        contract: contract(),
    };
    let proposal = create::propose(None, input.clone(), at(0)).unwrap().state;
    let bytes = proposal.to_canonical_bytes().unwrap();
    let back = WorkProposal::from_json(&bytes).unwrap();
    assert_eq!(back, proposal);
    assert!(WorkProposal::from_json(b"{}").is_err());
    // An incomplete contract is refused at proposal time too (§10.1).
    let e = create::propose(
        None,
        ProposeInput {
            contract: without("goal"),
            ..input
        },
        at(0),
    )
    .unwrap_err();
    assert_eq!(e.code(), WireCode::WorkContractIncomplete);
}
