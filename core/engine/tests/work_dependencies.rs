//! The dependency DAG (§10.4): cycles refused on insertion, readiness = all dependencies
//! verified, and an acceptance order that always respects the dependencies.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "work_fixture.rs"]
mod fixture;

use std::collections::BTreeMap;

use fixture::*;
use missionweaveprotocol::WireCode;
use missionweaveprotocol_engine::work::transitions::{create, execution, revise};
use missionweaveprotocol_engine::work::{DependencyGraph, WorkError, WorkItem, WorkItemState};
use proptest::prelude::*;

fn ids(n: usize) -> Vec<String> {
    (0..n).map(|i| wid(&format!("n{i}"))).collect()
}

#[test]
fn cycles_are_refused_with_their_path() {
    let mut g = DependencyGraph::new();
    let [a, b, c] = ["a", "b", "c"].map(|s| s.to_owned());
    g.insert_item(&a, &[]).unwrap();
    g.insert_item(&b, std::slice::from_ref(&a)).unwrap();
    g.insert_item(&c, std::slice::from_ref(&b)).unwrap();
    // a → c would close a → c → b → a.
    let e = g.insert_edge(&a, &c).unwrap_err();
    assert_eq!(
        e,
        WorkError::DependencyCycle(vec![a.clone(), c.clone(), b.clone(), a.clone()])
    );
    assert_eq!(e.code(), WireCode::InvalidCommand);
    assert_eq!(
        g.dependencies(&a).count(),
        0,
        "a refused edge leaves the graph unchanged"
    );
    // Self-dependencies and unknown items are refused too; a valid edge is accepted.
    assert!(matches!(
        g.insert_edge(&a, &a),
        Err(WorkError::DependencyCycle(_))
    ));
    assert!(matches!(
        g.check_new_item("d", &["d".into()]),
        Err(WorkError::DependencyCycle(_))
    ));
    assert!(matches!(
        g.insert_edge(&a, "zz"),
        Err(WorkError::UnknownDependency(_))
    ));
    assert!(matches!(
        g.insert_item("d", &["zz".into()]),
        Err(WorkError::UnknownDependency(_))
    ));
    assert!(g.insert_edge(&c, &a).is_ok());
    assert!(g.insert_edge(&c, &a).is_err(), "duplicate edge");
    assert_eq!(g.topological_order().unwrap().len(), 3);
}

#[test]
fn readiness_means_every_dependency_verified() {
    let states: BTreeMap<&str, WorkItemState> = [
        ("a", WorkItemState::Verified),
        ("b", WorkItemState::Submitted),
    ]
    .into();
    let state_of = |id: &str| states.get(id).copied();
    assert!(DependencyGraph::check_ready(["a"], state_of).is_ok());
    let e = DependencyGraph::check_ready(["a", "b"], state_of).unwrap_err();
    assert_eq!(e, WorkError::DependencyNotReady("b".into()));
    assert!(DependencyGraph::check_ready(["x"], state_of).is_err());
}

#[test]
fn authorize_and_revision_check_the_graph() {
    let mut graph = DependencyGraph::new();
    let a = open_item_with(&wid("a"), contract(), &graph);
    graph.insert_item(&a.work_item_id, &[]).unwrap();
    // Unknown dependency at authorization.
    let bad = contract_with(
        &[wid("zz")],
        &[("c1", &["deterministic_test"])],
        "not_required",
    );
    let e = create::authorize(None, None, &graph, authorize_input(&wid("b"), bad), at(0));
    assert_eq!(e.unwrap_err().reason(), "unknown_dependency");
    let deps = contract_with(
        &[wid("a")],
        &[("c1", &["deterministic_test"])],
        "not_required",
    );
    let b = open_item_with(&wid("b"), deps, &graph);
    graph
        .insert_item(&b.work_item_id, b.contract.dependencies())
        .unwrap();
    // Dynamic insertion a → b closes a cycle: refused.
    let e = revise::add_dependency(&a, &graph, &b.work_item_id, at(1)).unwrap_err();
    assert_eq!(e.reason(), "dependency_cycle");
    // A valid insertion revises the contract (§10.1) and withdraws pending offers.
    let c = open_item_with(&wid("c"), contract(), &graph);
    graph.insert_item(&c.work_item_id, &[]).unwrap();
    let offered_a = offered(&a, &[W1], at(0));
    let t = revise::add_dependency(&offered_a, &graph, &c.work_item_id, at(1)).unwrap();
    assert_eq!(t.events[0].kind, "work.contract.revised");
    assert_eq!(t.state.contract.version(), 2);
    assert_eq!(
        t.state.contract.dependencies(),
        std::slice::from_ref(&c.work_item_id)
    );
    assert_eq!(t.state.state, WorkItemState::Offered);
    assert!(
        t.state
            .offers
            .iter()
            .all(|o| o.status.as_str() == "withdrawn")
    );
    // Owned or finished items refuse a revision.
    for state in [
        WorkItemState::Queued,
        WorkItemState::Active,
        WorkItemState::Blocked,
        WorkItemState::Submitted,
        WorkItemState::Verified,
        WorkItemState::Cancelled,
    ] {
        let e = revise::add_dependency(&item_in(state), &graph, &c.work_item_id, at(1));
        assert_eq!(e.unwrap_err().code(), WireCode::InvalidStateTransition);
    }
}

#[test]
fn start_waits_for_dependencies() {
    let mut graph = DependencyGraph::new();
    let a = open_item_with(&wid("a"), contract(), &graph);
    graph.insert_item(&a.work_item_id, &[]).unwrap();
    let deps = contract_with(
        &[wid("a")],
        &[("c1", &["deterministic_test"])],
        "not_required",
    );
    let b = queued(&open_item_with(&wid("b"), deps, &graph), at(0));
    let submitted_state = |_: &str| Some(WorkItemState::Submitted);
    let e = execution::start(&b, start_input(&b, at(1)), submitted_state, at(1)).unwrap_err();
    assert_eq!(e.reason(), "dependency_not_ready");
    let verified_state = |_: &str| Some(WorkItemState::Verified);
    assert!(execution::start(&b, start_input(&b, at(1)), verified_state, at(1)).is_ok());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random edge insertions never accept a cycle: after any sequence, the graph has a
    /// topological order, and every refused edge really would have closed a cycle.
    #[test]
    fn random_insertions_never_accept_a_cycle(
        n in 2usize..12,
        edges in proptest::collection::vec((0usize..12, 0usize..12), 0..60),
    ) {
        let names = ids(n);
        let mut g = DependencyGraph::new();
        for name in &names {
            g.insert_item(name, &[]).unwrap();
        }
        for (from, to) in edges {
            let (from, to) = (&names[from % n], &names[to % n]);
            match g.insert_edge(from, to) {
                Ok(()) => prop_assert!(g.topological_order().is_some()),
                Err(WorkError::DependencyCycle(path)) => {
                    // The reported path is a real cycle through existing edges plus the new one.
                    prop_assert_eq!(path.first(), Some(from));
                    prop_assert_eq!(path.last(), Some(from));
                    prop_assert_eq!(&path[1], to);
                    for pair in path[1..].windows(2) {
                        prop_assert!(g.dependencies(&pair[0]).any(|d| d == pair[1]));
                    }
                }
                Err(WorkError::InvalidInput(..)) => {
                    prop_assert!(g.dependencies(from).any(|d| d == to.as_str()));
                }
                Err(other) => prop_assert!(false, "unexpected {other}"),
            }
        }
        prop_assert!(g.topological_order().is_some());
    }

    /// Driving random DAG items through the real transitions (start only succeeds when the
    /// dependencies are verified) yields an acceptance order that respects every dependency.
    #[test]
    fn acceptance_order_respects_dependencies(
        n in 2usize..8,
        edges in proptest::collection::vec((0usize..8, 0usize..8), 0..20),
        picks in proptest::collection::vec(0usize..8, 1..80),
    ) {
        let names = ids(n);
        let mut graph = DependencyGraph::new();
        let mut items: BTreeMap<String, WorkItem> = BTreeMap::new();
        for name in &names {
            let item = open_item_with(name, contract(), &graph);
            graph.insert_item(name, &[]).unwrap();
            items.insert(name.clone(), item);
        }
        for (from, to) in edges {
            let (from, to) = (&names[from % n], &names[to % n]);
            if let Ok(t) = revise::add_dependency(&items[from], &graph, to, at(0)) {
                graph.insert_edge(from, to).unwrap();
                items.insert(from.clone(), t.state);
            }
        }
        let mut order: Vec<String> = Vec::new();
        for pick in picks {
            let id = names[pick % n].clone();
            let item = items[&id].clone();
            if item.state != WorkItemState::Open {
                continue;
            }
            let q = queued(&item, at(0));
            let states: BTreeMap<String, WorkItemState> =
                items.iter().map(|(k, v)| (k.clone(), v.state)).collect();
            let state_of = |d: &str| states.get(d).copied();
            let Ok(started) = execution::start(&q, start_input(&q, at(1)), state_of, at(1)) else {
                continue;
            };
            let done = submitted_to_verified(started.state);
            order.push(id.clone());
            items.insert(id, done);
        }
        for (position, id) in order.iter().enumerate() {
            for dep in graph.dependencies(id) {
                let before = order[..position].iter().any(|o| o == dep);
                prop_assert!(before, "{} verified before its dependency {}", id, dep);
            }
        }
    }
}

fn submitted_to_verified(active: WorkItem) -> WorkItem {
    use missionweaveprotocol_engine::work::transitions::review;
    let s = review::submit(&active, submit_input(&active), at(2))
        .unwrap()
        .state;
    review::accept_result(&s, review_input(&s), at(3))
        .unwrap()
        .state
}

#[test]
fn the_graph_rebuilds_from_stored_items() {
    let mut graph = DependencyGraph::new();
    let a = open_item_with(&wid("a"), contract(), &graph);
    graph.insert_item(&a.work_item_id, &[]).unwrap();
    let deps = contract_with(
        &[wid("a")],
        &[("c1", &["deterministic_test"])],
        "not_required",
    );
    let b = open_item_with(&wid("b"), deps, &graph);
    // Order of the stored items does not matter.
    let rebuilt = DependencyGraph::from_items([&b, &a]).unwrap();
    assert_eq!(
        rebuilt.dependencies(&b.work_item_id).collect::<Vec<_>>(),
        [a.work_item_id.as_str()]
    );
    // A dangling reference is refused.
    assert!(matches!(
        DependencyGraph::from_items([&b]),
        Err(WorkError::UnknownDependency(_))
    ));
}
