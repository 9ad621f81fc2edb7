//! The behavior evidence matrix of the authoritative engine (§22 "automated positive and
//! negative evidence for every row"): every core and `ext.` Command kind, every Event kind,
//! every Mission row of §7.1 and every WorkItem row of §10.2, each with a positive and a
//! negative scenario executed in process against the real
//! [`Engine`](missionweaveprotocol_engine::engine::Engine) over an `InMemoryStore`, with
//! Commands signed by Registry keys and passed through `CommandIngress`.
//!
//! ```
//! let report = missionweaveprotocol_behavior::run();
//! assert!(report.ok(), "{:?}", report.lines());
//! assert!(report.summary().ends_with("rules with negative evidence"));
//! ```
//!
//! The runner decides coverage from what the scenarios did, never from a list of claims
//! ([`report`]). `missionweaveprotocol-conformance --bundle behavior` prints it.

pub mod kinds;
pub mod matrix;
pub mod payloads;
pub mod report;
pub mod rules;
pub mod runner;
pub mod scenario;
mod scenarios;
pub mod steps;
pub mod world;

pub use matrix::Matrix;
pub use report::{BehaviorReport, RowReport, RuleReport, Status, run, run_matrix};
pub use runner::{Outcome, run_scenario};
pub use scenario::Scenario;
