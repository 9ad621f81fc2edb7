//! The WorkItem dependency graph (§10.4): an evolving DAG.
//!
//! An edge `item → dependency` means `item` may start only after `dependency` is `verified`
//! (the contract's dependency policy in 0.1: all declared dependencies accepted). Inserting an
//! edge that would close a cycle is refused with the cycle's path; the graph is unchanged.

use std::collections::{BTreeMap, BTreeSet};

use super::error::WorkError;
use super::state::{WorkItem, WorkItemState};

/// The dependency DAG of one Mission's WorkItems.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DependencyGraph {
    /// item → the items it depends on.
    edges: BTreeMap<String, BTreeSet<String>>,
}

impl DependencyGraph {
    /// An empty graph.
    pub fn new() -> Self {
        Self::default()
    }

    /// The graph of a Mission's WorkItems as stored (each contract's `dependencyWorkItemIds`),
    /// re-checked edge by edge: a stored set with a cycle or a dangling reference is refused.
    pub fn from_items<'a>(
        items: impl IntoIterator<Item = &'a WorkItem>,
    ) -> Result<Self, WorkError> {
        let items: Vec<&WorkItem> = items.into_iter().collect();
        let mut graph = Self::new();
        for item in &items {
            graph.insert_item(&item.work_item_id, &[])?;
        }
        for item in &items {
            for dependency in item.contract.dependencies() {
                graph.insert_edge(&item.work_item_id, dependency)?;
            }
        }
        Ok(graph)
    }

    /// Whether `id` is a known WorkItem.
    pub fn contains(&self, id: &str) -> bool {
        self.edges.contains_key(id)
    }

    /// The dependencies of `id`.
    pub fn dependencies(&self, id: &str) -> impl Iterator<Item = &str> {
        self.edges
            .get(id)
            .into_iter()
            .flat_map(|deps| deps.iter().map(String::as_str))
    }

    /// Number of WorkItems.
    pub fn len(&self) -> usize {
        self.edges.len()
    }

    /// No WorkItems.
    pub fn is_empty(&self) -> bool {
        self.edges.is_empty()
    }

    /// Checks a new WorkItem `id` with `dependencies` (`work.authorize`): the ID is new, no
    /// self-dependency, every dependency known. A new node cannot close a cycle.
    pub fn check_new_item(&self, id: &str, dependencies: &[String]) -> Result<(), WorkError> {
        if self.contains(id) {
            return Err(WorkError::AlreadyExists("WorkItem"));
        }
        for dependency in dependencies {
            if dependency == id {
                return Err(WorkError::DependencyCycle(vec![
                    id.to_owned(),
                    id.to_owned(),
                ]));
            }
            if !self.contains(dependency) {
                return Err(WorkError::UnknownDependency(dependency.clone()));
            }
        }
        Ok(())
    }

    /// Adds a new WorkItem (after [`check_new_item`](Self::check_new_item)).
    pub fn insert_item(&mut self, id: &str, dependencies: &[String]) -> Result<(), WorkError> {
        self.check_new_item(id, dependencies)?;
        self.edges
            .insert(id.to_owned(), dependencies.iter().cloned().collect());
        Ok(())
    }

    /// Checks the edge `item → dependency` (`work.contract.revised`): both known, not already
    /// present, and no path `dependency ⇝ item` (which the edge would close into a cycle).
    pub fn check_edge(&self, item: &str, dependency: &str) -> Result<(), WorkError> {
        if !self.contains(item) {
            return Err(WorkError::UnknownDependency(item.to_owned()));
        }
        if !self.contains(dependency) {
            return Err(WorkError::UnknownDependency(dependency.to_owned()));
        }
        if self.edges[item].contains(dependency) {
            return Err(WorkError::InvalidInput(
                "dependencyId",
                "the dependency is already declared",
            ));
        }
        if let Some(mut path) = self.path(dependency, item) {
            // item → dependency ⇝ item
            path.insert(0, item.to_owned());
            return Err(WorkError::DependencyCycle(path));
        }
        Ok(())
    }

    /// Inserts the edge `item → dependency` after [`check_edge`](Self::check_edge).
    pub fn insert_edge(&mut self, item: &str, dependency: &str) -> Result<(), WorkError> {
        self.check_edge(item, dependency)?;
        if let Some(deps) = self.edges.get_mut(item) {
            deps.insert(dependency.to_owned());
        }
        Ok(())
    }

    /// A dependency path `from ⇝ to` (both included), if any (iterative DFS).
    fn path(&self, from: &str, to: &str) -> Option<Vec<String>> {
        let mut parent: BTreeMap<&str, &str> = BTreeMap::new();
        let mut seen: BTreeSet<&str> = BTreeSet::from([from]);
        let mut stack = vec![from];
        while let Some(node) = stack.pop() {
            if node == to {
                let mut path = vec![to.to_owned()];
                let mut at = to;
                while let Some(&p) = parent.get(at) {
                    path.push(p.to_owned());
                    at = p;
                }
                path.reverse();
                return Some(path);
            }
            for next in self.dependencies(node) {
                if seen.insert(next) {
                    parent.insert(next, node);
                    stack.push(next);
                }
            }
        }
        None
    }

    /// §10.4 eligibility: every dependency of `dependencies` is `verified` according to
    /// `state_of`; otherwise the first one that is not.
    pub fn check_ready<'a>(
        dependencies: impl IntoIterator<Item = &'a str>,
        state_of: impl Fn(&str) -> Option<WorkItemState>,
    ) -> Result<(), WorkError> {
        for dependency in dependencies {
            if state_of(dependency) != Some(WorkItemState::Verified) {
                return Err(WorkError::DependencyNotReady(dependency.to_owned()));
            }
        }
        Ok(())
    }

    /// A topological order (dependencies first), or `None` if the graph had a cycle (it never
    /// does when built through the checked insertions).
    pub fn topological_order(&self) -> Option<Vec<String>> {
        let mut remaining: BTreeMap<&str, usize> = self
            .edges
            .iter()
            .map(|(id, deps)| (id.as_str(), deps.len()))
            .collect();
        let mut dependents: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (id, deps) in &self.edges {
            for dep in deps {
                dependents
                    .entry(dep.as_str())
                    .or_default()
                    .push(id.as_str());
            }
        }
        let mut ready: Vec<&str> = remaining
            .iter()
            .filter(|(_, n)| **n == 0)
            .map(|(id, _)| *id)
            .collect();
        let mut order = Vec::with_capacity(self.edges.len());
        while let Some(id) = ready.pop() {
            order.push(id.to_owned());
            for dependent in dependents.get(id).into_iter().flatten() {
                if let Some(n) = remaining.get_mut(dependent) {
                    *n -= 1;
                    if *n == 0 {
                        ready.push(dependent);
                    }
                }
            }
        }
        (order.len() == self.edges.len()).then_some(order)
    }
}
