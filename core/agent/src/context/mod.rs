//! Context Packages (§13.3): signed, versioned, Group-scoped summaries with Event provenance,
//! never an authoritative replacement for history.
//!
//! A generator [`publish`]es a [`ContextPackageDraft`]: its source Events must be one
//! contiguous ascending range of one Group's log, each decision cites Events of that range, and
//! an update (version ≥ 2) names the package it supersedes. The wire document carries no `null`
//! members (the reference signs a dump with `null`s, so a package without `workItemId` or
//! `previousContextPackageId` fails the normative codec at stage `signature`), and the codec
//! validates the schema before it signs. A receiver [`verify`]s the bytes (the six stages,
//! then the same rules) and [`install_values`] gives what an Agent runtime installs for the
//! package's Group only: Group content never enters another Mission's context (§13.3).
//!
//! The reference's `context` module also holds knowledge publication ([`knowledge`]) and the
//! archival service's Group Snapshots ([`snapshot`]); both are here with the same rules for
//! every binding.

mod call;
mod error;
mod install;
pub mod knowledge;
mod package;
mod resolver;
pub mod snapshot;

pub use call::{call, ops};
pub use error::ContextError;
pub use install::{VerifiedContextPackage, install_values, verify};
pub use knowledge::{CLASSIFICATIONS, KnowledgeDraft};
pub use package::{ContextDecision, ContextPackageDraft, SourceEvent, check, publish};
pub use resolver::{LOCAL_ORGANIZATION, single_key_resolver};
pub use snapshot::{SnapshotRequest, VerifiedSnapshot};
