//! `ExecutionAuthorization` (§12): every live-state rule positive and negative over an
//! in-memory reader, the approval gate through the `ExecutionApprovalLookup` seam, and the
//! engine-backed reader and `LiveDocuments` over a real engine with an active WorkItem.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../../engine/tests/engine_work_fixture.rs"]
mod engine_work_fixture;

use std::collections::HashMap;

use engine_work_fixture::*;
use missionweaveprotocol::WireCode;
use missionweaveprotocol::json::Value;
use missionweaveprotocol_agent::policy::{
    ApprovalDocuments, AuthorizationService, CapabilityBinding, ExecutionApprovalLookup,
    ExecutionApprovalRecord, ExecutionAuthorization, ExecutionRequest, LiveDocuments, LiveMission,
    LiveWorkItem, NoExecutionApprovals, PolicyError, PolicyStateReader,
};
use missionweaveprotocol_engine::engine::{Query, QueryKind};
use missionweaveprotocol_engine::work::WorkItemState;
use missionweaveprotocol_engine::work::scope::{ContractScope, ResourceGrant};
use missionweaveprotocol_kernel::lease::{Lease, LeaseBinding, LeaseWindow};
use missionweaveprotocol_kernel::resources::{Dimension, Resources};
use missionweaveprotocol_kernel::snapshot_json::resources_from_value;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

const SECRET: &[u8; 32] = b"0123456789abcdef0123456789abcdef";
const AGENT: &str = "urn:missionweaveprotocol:agent:worker";
const ITEM: &str = "urn:missionweaveprotocol:work:deploy";
const MISSION_ID: &str = "urn:missionweaveprotocol:mission:m";
const GROUP_ID: &str = "urn:missionweaveprotocol:group:g";
const LEASE_ID: &str = "urn:missionweaveprotocol:lease:exec-1";
const T0: UnixMillis = UnixMillis(1_784_107_800_000);
const MINUTE: u64 = 60_000;

#[derive(Clone, Debug)]
struct World {
    session: Option<u64>,
    item: Option<LiveWorkItem>,
    mission: Option<LiveMission>,
    remaining: Option<Resources>,
}

impl PolicyStateReader for World {
    fn session_epoch(&self, agent_id: &str) -> Result<Option<u64>, PolicyError> {
        Ok(self.session.filter(|_| agent_id == AGENT))
    }
    fn work_item(&self, id: &str) -> Result<Option<LiveWorkItem>, PolicyError> {
        Ok(self.item.clone().filter(|i| i.work_item_id == id))
    }
    fn mission(&self, id: &str) -> Result<Option<LiveMission>, PolicyError> {
        Ok(self.mission.clone().filter(|m| m.mission_id == id))
    }
    fn remaining_budget(&self, _: &str) -> Result<Option<Resources>, PolicyError> {
        Ok(self.remaining)
    }
}

#[derive(Default)]
struct Approvals(HashMap<String, ExecutionApprovalRecord>);

impl ExecutionApprovalLookup for Approvals {
    fn execution_approval(&self, id: &str) -> Result<Option<ExecutionApprovalRecord>, PolicyError> {
        Ok(self.0.get(id).cloned())
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn lease() -> Lease {
    Lease::execution(
        LeaseBinding {
            lease_id: LEASE_ID.into(),
            mission_id: MISSION_ID.into(),
            group_id: GROUP_ID.into(),
            holder_agent_id: AGENT.into(),
            session_epoch: 3,
        },
        ITEM,
        2,
        LeaseWindow {
            issued_at: T0,
            starts_at: T0,
            expires_at: T0.saturating_add_ms(10 * MINUTE),
        },
    )
    .unwrap()
}

fn world() -> World {
    World {
        session: Some(3),
        item: Some(LiveWorkItem {
            work_item_id: ITEM.into(),
            mission_id: MISSION_ID.into(),
            group_id: GROUP_ID.into(),
            state: WorkItemState::Active,
            owner: Some((AGENT.into(), 2)),
            execution_lease: Some(lease()),
            contract: ContractScope {
                tools: strings(&["shell"]),
                resources: vec![
                    ResourceGrant {
                        resource: "repo:app".into(),
                        operations: strings(&["repo.read", "production.deploy"]),
                    },
                    ResourceGrant {
                        resource: "db:ledger".into(),
                        operations: strings(&["db.read"]),
                    },
                ],
                approval_required: false,
            },
        }),
        mission: Some(LiveMission {
            mission_id: MISSION_ID.into(),
            active: true,
            permissions: None,
        }),
        remaining: Some(Resources::ZERO.with(Dimension::ToolCalls, 10)),
    }
}

fn authority() -> ExecutionAuthorization {
    ExecutionAuthorization::new(AuthorizationService::new(SECRET).unwrap())
}

struct Req {
    session_epoch: u64,
    ownership_epoch: u64,
    tools: Vec<String>,
    resources: Vec<String>,
    operations: Vec<String>,
    budget: Option<Resources>,
    approval_id: Option<String>,
    ttl_ms: u64,
}

fn req(operations: &[&str]) -> Req {
    Req {
        session_epoch: 3,
        ownership_epoch: 2,
        tools: vec![],
        resources: vec![],
        operations: strings(operations),
        budget: None,
        approval_id: None,
        ttl_ms: 5 * MINUTE,
    }
}

fn issue(
    world: &World,
    approvals: &dyn ExecutionApprovalLookup,
    r: &Req,
    now: UnixMillis,
) -> Result<missionweaveprotocol_agent::policy::IssuedCapabilityGrant, PolicyError> {
    let request = ExecutionRequest {
        binding: CapabilityBinding {
            worker_id: AGENT,
            session_epoch: r.session_epoch,
            work_item_id: ITEM,
            ownership_epoch: r.ownership_epoch,
        },
        tools: &r.tools,
        resources: &r.resources,
        operations: &r.operations,
        budget: r.budget,
        approval_id: r.approval_id.as_deref(),
        ttl_ms: r.ttl_ms,
    };
    authority().issue(world, approvals, &request, "grant-1", now)
}

fn refused<T: core::fmt::Debug>(result: Result<T, PolicyError>, code: WireCode, reason: &str) {
    let error = result.expect_err("expected a refusal");
    assert_eq!((error.code(), error.reason()), (code, reason), "{error}");
}

#[test]
fn issues_a_grant_from_live_state_with_the_authoritative_remaining_budget() {
    let w = world();
    let r = Req {
        tools: strings(&["shell"]),
        resources: strings(&["repo:app"]),
        ..req(&["repo.read"])
    };
    let issued = issue(&w, &NoExecutionApprovals, &r, T0).unwrap();
    assert_eq!(
        issued.claims.budget,
        Resources::ZERO.with(Dimension::ToolCalls, 10)
    );
    assert_eq!(issued.claims.approval_id, None);
    assert_eq!(issued.claims.expires_at, T0.saturating_add_ms(5 * MINUTE));
    // The grant verifies with the service that signed it.
    let grant = authority()
        .authorization()
        .verify(
            &issued.token,
            &CapabilityBinding {
                worker_id: AGENT,
                session_epoch: 3,
                work_item_id: ITEM,
                ownership_epoch: 2,
            },
            &lease(),
            Some("repo.read"),
            T0.saturating_add_ms(1),
        )
        .unwrap();
    assert_eq!(grant, issued.claims);
    // A smaller explicit budget is kept.
    let small = Req {
        budget: Some(Resources::ZERO.with(Dimension::ToolCalls, 4)),
        ..req(&[])
    };
    let issued = issue(&w, &NoExecutionApprovals, &small, T0).unwrap();
    assert_eq!(issued.claims.budget.get(Dimension::ToolCalls), 4);
}

#[test]
fn refuses_stale_sessions_owners_epochs_states_and_leases() {
    let w = world();
    refused(
        issue(
            &w,
            &NoExecutionApprovals,
            &Req {
                session_epoch: 2,
                ..req(&[])
            },
            T0,
        ),
        WireCode::AuthStaleSession,
        "session_stale",
    );
    let no_session = World {
        session: None,
        ..world()
    };
    refused(
        issue(&no_session, &NoExecutionApprovals, &req(&[]), T0),
        WireCode::AuthStaleSession,
        "session_stale",
    );
    let no_item = World {
        item: None,
        ..world()
    };
    refused(
        issue(&no_item, &NoExecutionApprovals, &req(&[]), T0),
        WireCode::GroupNotFound,
        "not_found",
    );
    let mut queued = world();
    queued.item.as_mut().unwrap().state = WorkItemState::Queued;
    refused(
        issue(&queued, &NoExecutionApprovals, &req(&[]), T0),
        WireCode::InvalidStateTransition,
        "work_item_not_active",
    );
    let mut other_owner = world();
    other_owner.item.as_mut().unwrap().owner = Some(("urn:x:agent:other".into(), 2));
    refused(
        issue(&other_owner, &NoExecutionApprovals, &req(&[]), T0),
        WireCode::AuthForbidden,
        "not_owner",
    );
    refused(
        issue(
            &w,
            &NoExecutionApprovals,
            &Req {
                ownership_epoch: 1,
                ..req(&[])
            },
            T0,
        ),
        WireCode::WorkStaleOwnership,
        "ownership_stale",
    );
    let mut no_lease = world();
    no_lease.item.as_mut().unwrap().execution_lease = None;
    refused(
        issue(&no_lease, &NoExecutionApprovals, &req(&[]), T0),
        WireCode::WorkLeaseExpired,
        "no_execution_lease",
    );
    let mut revoked = world();
    revoked
        .item
        .as_mut()
        .unwrap()
        .execution_lease
        .as_mut()
        .unwrap()
        .revoke(T0.saturating_add_ms(1), "work cancelled")
        .unwrap();
    refused(
        issue(
            &revoked,
            &NoExecutionApprovals,
            &req(&[]),
            T0.saturating_add_ms(2),
        ),
        WireCode::WorkLeaseExpired,
        "lease_not_live",
    );
    refused(
        issue(
            &w,
            &NoExecutionApprovals,
            &req(&[]),
            T0.saturating_add_ms(10 * MINUTE),
        ),
        WireCode::WorkLeaseExpired,
        "lease_not_live",
    );
    let no_mission = World {
        mission: None,
        ..world()
    };
    refused(
        issue(&no_mission, &NoExecutionApprovals, &req(&[]), T0),
        WireCode::GroupNotFound,
        "not_found",
    );
    let mut cancelled = world();
    cancelled.mission.as_mut().unwrap().active = false;
    refused(
        issue(&cancelled, &NoExecutionApprovals, &req(&[]), T0),
        WireCode::InvalidStateTransition,
        "mission_not_active",
    );
}

#[test]
fn requests_must_be_subsets_of_the_contract_and_mission_permissions() {
    let w = world();
    refused(
        issue(
            &w,
            &NoExecutionApprovals,
            &Req {
                tools: strings(&["browser"]),
                ..req(&[])
            },
            T0,
        ),
        WireCode::AuthForbidden,
        "tool_not_in_contract",
    );
    refused(
        issue(
            &w,
            &NoExecutionApprovals,
            &Req {
                resources: strings(&["repo:other"]),
                ..req(&[])
            },
            T0,
        ),
        WireCode::AuthForbidden,
        "resource_not_in_contract",
    );
    refused(
        issue(&w, &NoExecutionApprovals, &req(&["repo.write"]), T0),
        WireCode::AuthForbidden,
        "operation_not_in_contract",
    );
    // An operation granted only on another resource than the ones requested.
    refused(
        issue(
            &w,
            &NoExecutionApprovals,
            &Req {
                resources: strings(&["db:ledger"]),
                ..req(&["repo.read"])
            },
            T0,
        ),
        WireCode::AuthForbidden,
        "operation_not_in_contract",
    );
    assert!(
        issue(
            &w,
            &NoExecutionApprovals,
            &Req {
                resources: strings(&["db:ledger"]),
                ..req(&["db.read"])
            },
            T0
        )
        .is_ok()
    );
    // Mission permissions narrow the contract when the Mission has a list.
    let mut narrow = world();
    narrow.mission.as_mut().unwrap().permissions = Some(strings(&["repo:app", "repo.read"]));
    assert!(
        issue(
            &narrow,
            &NoExecutionApprovals,
            &Req {
                resources: strings(&["repo:app"]),
                ..req(&["repo.read"])
            },
            T0
        )
        .is_ok()
    );
    refused(
        issue(
            &narrow,
            &NoExecutionApprovals,
            &Req {
                resources: strings(&["db:ledger"]),
                ..req(&["db.read"])
            },
            T0,
        ),
        WireCode::AuthForbidden,
        "mission_permission_exceeded",
    );
}

#[test]
fn budget_escalation_beyond_the_remaining_budget_is_refused() {
    let w = world();
    let over = Req {
        budget: Some(Resources::ZERO.with(Dimension::ToolCalls, 11)),
        ..req(&[])
    };
    let error = issue(&w, &NoExecutionApprovals, &over, T0).unwrap_err();
    assert_eq!(error.code(), WireCode::BudgetExceeded);
    // A dimension with nothing left (unallocated) cannot be requested either.
    let other = Req {
        budget: Some(Resources::ZERO.with(Dimension::ModelTokens, 1)),
        ..req(&[])
    };
    refused(
        issue(&w, &NoExecutionApprovals, &other, T0),
        WireCode::BudgetExceeded,
        "budget_exceeded",
    );
    let exact = Req {
        budget: Some(Resources::ZERO.with(Dimension::ToolCalls, 10)),
        ..req(&[])
    };
    assert!(issue(&w, &NoExecutionApprovals, &exact, T0).is_ok());
    let no_account = World {
        remaining: None,
        ..world()
    };
    refused(
        issue(&no_account, &NoExecutionApprovals, &req(&[]), T0),
        WireCode::GroupNotFound,
        "not_found",
    );
}

fn approval(expires_in: u64) -> ExecutionApprovalRecord {
    ExecutionApprovalRecord {
        approval_id: "approval-1".into(),
        mission_id: MISSION_ID.into(),
        group_id: GROUP_ID.into(),
        work_item_id: ITEM.into(),
        ownership_epoch: 2,
        operations: strings(&["production.deploy", "repo.read"]),
        resources: strings(&["repo:app"]),
        budget: Some(Resources::ZERO.with(Dimension::ToolCalls, 3)),
        expires_at: T0.saturating_add_ms(expires_in),
    }
}

fn approvals(record: ExecutionApprovalRecord) -> Approvals {
    let mut map = HashMap::new();
    map.insert(record.approval_id.clone(), record);
    Approvals(map)
}

fn deploy(approval_id: Option<&str>) -> Req {
    Req {
        resources: strings(&["repo:app"]),
        budget: Some(Resources::ZERO.with(Dimension::ToolCalls, 3)),
        approval_id: approval_id.map(str::to_owned),
        ..req(&["production.deploy"])
    }
}

#[test]
fn high_risk_operations_need_a_persisted_matching_unexpired_approval() {
    let w = world();
    // Without approval state (`NoExecutionApprovals`) the gate holds.
    refused(
        issue(&w, &NoExecutionApprovals, &deploy(None), T0),
        WireCode::ApprovalRequired,
        "approval_missing",
    );
    refused(
        issue(&w, &NoExecutionApprovals, &deploy(Some("approval-1")), T0),
        WireCode::ApprovalRequired,
        "approval_not_found",
    );
    // A forged/unknown approval ID is not trusted.
    let store = approvals(approval(2 * MINUTE));
    refused(
        issue(&w, &store, &deploy(Some("approval-forged")), T0),
        WireCode::ApprovalRequired,
        "approval_not_found",
    );
    // The persisted approval: the grant carries its ID and expires with it.
    let issued = issue(&w, &store, &deploy(Some("approval-1")), T0).unwrap();
    assert_eq!(issued.claims.approval_id.as_deref(), Some("approval-1"));
    assert_eq!(issued.claims.expires_at, T0.saturating_add_ms(2 * MINUTE));
    refused(
        issue(
            &w,
            &store,
            &deploy(Some("approval-1")),
            T0.saturating_add_ms(2 * MINUTE),
        ),
        WireCode::ApprovalRequired,
        "approval_expired",
    );
    let stale = approvals(ExecutionApprovalRecord {
        ownership_epoch: 1,
        ..approval(MINUTE)
    });
    refused(
        issue(&w, &stale, &deploy(Some("approval-1")), T0),
        WireCode::ApprovalRequired,
        "approval_scope_mismatch",
    );
    let other_item = approvals(ExecutionApprovalRecord {
        work_item_id: "urn:x:work:z".into(),
        ..approval(MINUTE)
    });
    refused(
        issue(&w, &other_item, &deploy(Some("approval-1")), T0),
        WireCode::ApprovalRequired,
        "approval_scope_mismatch",
    );
    let narrow = approvals(ExecutionApprovalRecord {
        operations: strings(&["repo.read"]),
        ..approval(MINUTE)
    });
    refused(
        issue(&w, &narrow, &deploy(Some("approval-1")), T0),
        WireCode::ApprovalRequired,
        "approval_operation_not_covered",
    );
    let no_resource = approvals(ExecutionApprovalRecord {
        resources: vec![],
        ..approval(MINUTE)
    });
    refused(
        issue(&w, &no_resource, &deploy(Some("approval-1")), T0),
        WireCode::ApprovalRequired,
        "approval_resource_not_covered",
    );
    let over = Req {
        budget: Some(Resources::ZERO.with(Dimension::ToolCalls, 4)),
        ..deploy(Some("approval-1"))
    };
    refused(
        issue(&w, &store, &over, T0),
        WireCode::ApprovalRequired,
        "approval_budget_exceeded",
    );
}

#[test]
fn contract_required_approval_gates_ordinary_operations_and_token_expiry() {
    let mut w = world();
    w.item.as_mut().unwrap().contract.approval_required = true;
    let read = Req {
        resources: strings(&["repo:app"]),
        budget: Some(Resources::ZERO.with(Dimension::ToolCalls, 1)),
        ..req(&["repo.read"])
    };
    refused(
        issue(&w, &NoExecutionApprovals, &read, T0),
        WireCode::ApprovalRequired,
        "approval_missing",
    );
    let store = approvals(approval(MINUTE));
    let issued = issue(
        &w,
        &store,
        &Req {
            approval_id: Some("approval-1".into()),
            ..read
        },
        T0,
    )
    .unwrap();
    assert_eq!(issued.claims.expires_at, T0.saturating_add_ms(MINUTE));
    // Without the contract requirement the same operation is automatic.
    let plain = world();
    assert!(issue(&plain, &NoExecutionApprovals, &req(&["repo.read"]), T0).is_ok());
}

#[test]
fn contract_scope_reads_the_wire_contract() {
    let contract = missionweaveprotocol::json::parse(
        br#"{"allowedResources":[{"resource":"repo:app","operations":["repo.read"]}],"constraints":{"allowedTools":["shell"]},"executionApproval":"human_required"}"#,
    )
    .unwrap();
    let scope = ContractScope::from_contract(&contract);
    assert_eq!(scope.tools, strings(&["shell"]));
    assert_eq!(scope.resources.len(), 1);
    assert!(scope.approval_required);
    let plain =
        missionweaveprotocol::json::parse(br#"{"executionApproval":"not_required"}"#).unwrap();
    let scope = ContractScope::from_contract(&plain);
    assert!(scope.tools.is_empty() && scope.resources.is_empty() && !scope.approval_required);
}

// ---- the engine's live state ------------------------------------------------------------------

fn active_engine() -> (Fixture, TestEngine) {
    let f = fixture();
    let engine = f.active();
    f.active_item(&engine, W1);
    (f, engine)
}

fn engine_request(epoch: u64, session: u64) -> ExecutionRequest<'static> {
    ExecutionRequest {
        binding: CapabilityBinding {
            worker_id: WORKER,
            session_epoch: session,
            work_item_id: W1,
            ownership_epoch: epoch,
        },
        tools: &[],
        resources: &[],
        operations: &[],
        budget: None,
        approval_id: None,
        ttl_ms: MINUTE,
    }
}

#[test]
fn engine_backed_reader_authorizes_the_live_owner_only() {
    let (_f, engine) = active_engine();
    let (epoch, lease_id) = execution(&engine, W1);
    let issued = authority()
        .issue(
            &engine,
            &NoExecutionApprovals,
            &engine_request(epoch, 1),
            "g",
            NOW,
        )
        .unwrap();
    assert_eq!(issued.claims.execution_lease_id, lease_id);
    // The contract's toolCallLimit 10 is what remains (the Mission's other dimensions are
    // not allocated to the WorkItem).
    assert_eq!(
        issued.claims.budget,
        Resources::ZERO.with(Dimension::ToolCalls, 10)
    );
    refused(
        authority().issue(
            &engine,
            &NoExecutionApprovals,
            &engine_request(epoch, 2),
            "g",
            NOW,
        ),
        WireCode::AuthStaleSession,
        "session_stale",
    );
    refused(
        authority().issue(
            &engine,
            &NoExecutionApprovals,
            &engine_request(epoch + 1, 1),
            "g",
            NOW,
        ),
        WireCode::WorkStaleOwnership,
        "ownership_stale",
    );
    let mut coordinator = engine_request(epoch, 1);
    coordinator.binding.worker_id = COORDINATOR;
    refused(
        authority().issue(&engine, &NoExecutionApprovals, &coordinator, "g", NOW),
        WireCode::AuthForbidden,
        "not_owner",
    );
    let mut over = engine_request(epoch, 1);
    over.budget = Some(Resources::ZERO.with(Dimension::ToolCalls, 11));
    refused(
        authority().issue(&engine, &NoExecutionApprovals, &over, "g", NOW),
        WireCode::BudgetExceeded,
        "budget_exceeded",
    );
    let ops = strings(&["production.deploy"]);
    let mut high = engine_request(epoch, 1);
    high.operations = &ops;
    // The contract allows no resources, so the operation is out of contract first.
    refused(
        authority().issue(&engine, &NoExecutionApprovals, &high, "g", NOW),
        WireCode::AuthForbidden,
        "operation_not_in_contract",
    );
    let mut missing = engine_request(epoch, 1);
    missing.binding.work_item_id = W2;
    refused(
        authority().issue(&engine, &NoExecutionApprovals, &missing, "g", NOW),
        WireCode::GroupNotFound,
        "not_found",
    );
}

#[test]
fn queried_documents_give_the_same_answer_as_the_engine() {
    let (_f, engine) = active_engine();
    let (epoch, _) = execution(&engine, W1);
    let query = |kind, id: &str| engine.query(&Query::new(kind, id), NOW).unwrap().unwrap();
    let remaining =
        |doc: Value| resources_from_value(doc.get("remaining").unwrap(), "/remaining").unwrap();
    let documents = LiveDocuments {
        session: Some((WORKER.into(), 1)),
        work_item: Some(query(QueryKind::WorkItem, W1)),
        execution_lease: Some(query(QueryKind::ExecutionLease, W1)),
        mission: Some(query(QueryKind::Mission, MISSION)),
        mission_permissions: None,
        remaining: vec![
            remaining(query(QueryKind::BudgetRemaining, W1)),
            remaining(query(QueryKind::BudgetRemaining, MISSION)),
        ],
    };
    let from_documents = authority()
        .issue(
            &documents,
            &NoExecutionApprovals,
            &engine_request(epoch, 1),
            "g",
            NOW,
        )
        .unwrap();
    let from_engine = authority()
        .issue(
            &engine,
            &NoExecutionApprovals,
            &engine_request(epoch, 1),
            "g",
            NOW,
        )
        .unwrap();
    assert_eq!(from_documents.claims, from_engine.claims);
    // A document set about another WorkItem answers "not found", not a wrong grant.
    let mut wrong = engine_request(epoch, 1);
    wrong.binding.work_item_id = W2;
    refused(
        authority().issue(&documents, &NoExecutionApprovals, &wrong, "g", NOW),
        WireCode::GroupNotFound,
        "not_found",
    );
}

// ---- the engine's stored Execution Approvals (`approval.grant_execution`) ----------------------

const DEPLOY_RESOURCE: &str = "urn:missionweaveprotocol:resource:prod-app";
const ENGINE_APPROVAL: &str = "urn:missionweaveprotocol:approval:exec-1";

/// An engine whose `W1` requires human execution approval and allows `production.deploy` on
/// [`DEPLOY_RESOURCE`]; the MissionOwner approved it (tool-call ceiling 5, ten minutes) and the
/// Worker started it.
fn approved_engine() -> (Fixture, TestEngine) {
    let f = fixture();
    let engine = f.active();
    let gated = contract(&[])
        .replace(
            r#""allowedResources":[]"#,
            &format!(
                r#""allowedResources":[{{"resource":"{DEPLOY_RESOURCE}","operations":["production.deploy"]}}]"#
            ),
        )
        .replace(
            r#""sideEffectRisk":"none","executionApproval":"not_required""#,
            r#""sideEffectRisk":"high_risk","executionApproval":"human_required""#,
        );
    f.ok(
        &engine,
        &f.by_coordinator(
            "work.authorize",
            1,
            &format!(
                r#"{{"workItemId":"{W1}","conversationId":"{CONVERSATION}","contract":{gated}}}"#
            ),
        ),
        NOW,
    );
    f.ok(&engine, &f.offer(W1, &[WORKER], "r1"), NOW);
    f.ok(&engine, &f.accept(WORKER, W1), NOW);
    f.ok(
        &engine,
        &f.command(
            "approval.grant_execution",
            OWNER,
            "",
            &format!(
                r#"{{"approvalId":"{ENGINE_APPROVAL}","workItemId":"{W1}","ownershipEpoch":1,"operations":["production.deploy"],"resources":["{DEPLOY_RESOURCE}"],"budget":{{"toolCallLimit":5}},"expiresInSeconds":600}}"#
            ),
        ),
        NOW,
    );
    let (epoch, lease) = ownership(&engine, W1);
    f.ok(
        &engine,
        &f.by_worker("work.start", WORKER, W1, epoch, &lease, ""),
        NOW,
    );
    (f, engine)
}

#[test]
fn the_engine_answers_the_approval_lookup_from_its_stored_approvals() {
    let (_f, engine) = approved_engine();
    let (epoch, _) = execution(&engine, W1);
    let ops = strings(&["production.deploy"]);
    let resources = strings(&[DEPLOY_RESOURCE]);
    let mut request = engine_request(epoch, 1);
    request.operations = &ops;
    request.resources = &resources;
    request.budget = Some(Resources::ZERO.with(Dimension::ToolCalls, 5));
    request.approval_id = Some(ENGINE_APPROVAL);
    let record = engine.execution_approval(ENGINE_APPROVAL).unwrap().unwrap();
    assert_eq!(record.ownership_epoch, 1);
    assert_eq!(
        record.budget,
        Some(Resources::ZERO.with(Dimension::ToolCalls, 5))
    );
    let issued = authority()
        .issue(&engine, &engine, &request, "g", NOW)
        .unwrap();
    assert_eq!(issued.claims.approval_id.as_deref(), Some(ENGINE_APPROVAL));
    // The same approval queried as a document (what the Python and Node hosts read).
    let document = engine
        .query(
            &Query::new(QueryKind::ExecutionApproval, ENGINE_APPROVAL),
            NOW,
        )
        .unwrap()
        .unwrap();
    let queried = ApprovalDocuments(vec![document]);
    let from_documents = authority()
        .issue(&engine, &queried, &request, "g", NOW)
        .unwrap();
    assert_eq!(from_documents.claims, issued.claims);
    assert!(
        engine
            .query(&Query::new(QueryKind::ExecutionApproval, "urn:x:none"), NOW)
            .unwrap()
            .is_none()
    );
    // Without the engine's approvals the same request is refused.
    refused(
        authority().issue(&engine, &NoExecutionApprovals, &request, "g", NOW),
        WireCode::ApprovalRequired,
        "approval_not_found",
    );
}

#[test]
fn the_engine_lookup_refuses_unknown_over_budget_and_expired_approvals() {
    let (_f, engine) = approved_engine();
    let (epoch, _) = execution(&engine, W1);
    let ops = strings(&["production.deploy"]);
    let resources = strings(&[DEPLOY_RESOURCE]);
    let mut request = engine_request(epoch, 1);
    request.operations = &ops;
    request.resources = &resources;
    request.budget = Some(Resources::ZERO.with(Dimension::ToolCalls, 5));
    request.approval_id = Some("urn:missionweaveprotocol:approval:forged");
    assert!(
        engine
            .execution_approval("urn:missionweaveprotocol:approval:forged")
            .unwrap()
            .is_none()
    );
    refused(
        authority().issue(&engine, &engine, &request, "g", NOW),
        WireCode::ApprovalRequired,
        "approval_not_found",
    );
    request.approval_id = Some(ENGINE_APPROVAL);
    // Above the approved ceiling (the WorkItem itself still has 10 tool calls).
    request.budget = Some(Resources::ZERO.with(Dimension::ToolCalls, 6));
    refused(
        authority().issue(&engine, &engine, &request, "g", NOW),
        WireCode::ApprovalRequired,
        "approval_budget_exceeded",
    );
    // At the approval's expiry (step 7 answers before the lease is checked in full).
    request.budget = Some(Resources::ZERO.with(Dimension::ToolCalls, 5));
    refused(
        authority().issue(
            &engine,
            &engine,
            &request,
            "g",
            NOW.saturating_add_ms(10 * MINUTE),
        ),
        WireCode::ApprovalRequired,
        "approval_expired",
    );
}
