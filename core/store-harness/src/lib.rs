//! The store harness: deterministic Command workloads over any authoritative store, and the
//! `mwp-store-worker` process the crash and cross-process race tests drive (issue 11,
//! "Reliability"; `docs/store.md`, "Crash and race tests").
//!
//! - [`keys`]: the harness Organization (fixed seeds) and its Registry;
//! - [`command`]: signed wire Commands ([`WireCommand`]) at one fixed instant ([`NOW`]);
//! - [`workload`]: [`Workload`] — the core builder over any `S: Store` with the deployment
//!   `OrganizationAuthorizer`, the setup Commands (Sessions, Missions with budgets,
//!   Memberships), the stream where Command `i` is a pure function of `(seed, i)`, race rounds
//!   (one offer, many `work.accept_offer`) and shared-Group Commands;
//! - [`perform`]: sending as a client does (re-send the same bytes while retryable, §19);
//! - [`check`]: replay and verification of every Group, and the all-or-nothing checks of one
//!   stream Command (receipt, Event, aggregate);
//! - [`race`], [`bench`], [`scenario`]: what the worker's subcommands run;
//! - [`store_spec`]: [`open_store_with`], the ONE place a store spec (`sqlite:PATH`,
//!   `postgresql://…?schema=NAME`) becomes a store, with or without group commit.
//!
//! ```
//! use missionweaveprotocol_engine::store::InMemoryStore;
//! use missionweaveprotocol_store_harness::{Workload, perform::apply_all};
//!
//! let workload = Workload::new(7)?;
//! let core = workload.core(InMemoryStore::new())?;
//! apply_all(&core, &workload.setup()?)?;
//! // Command 3 of the stream is the same bytes every time it is generated.
//! let third = workload.stream(3)?;
//! assert_eq!(third.command.bytes, Workload::new(7)?.stream(3)?.command.bytes);
//! let performed = core.perform_bytes(&third.command.bytes, missionweaveprotocol_store_harness::NOW)?;
//! assert_eq!(performed.group_id, third.group);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod bench;
pub mod check;
pub mod command;
pub mod error;
pub mod keys;
pub mod payloads;
pub mod perform;
pub mod race;
pub mod scenario;
pub mod store_spec;
pub mod workload;

pub use command::{CommandSigner, ISSUED_AT, NOW, WireCommand};
pub use error::HarnessError;
pub use keys::Keys;
pub use store_spec::{
    Batching, OpenedStore, SharedStore, StoreSpec, drop_store, open_store, open_store_with,
};
pub use workload::{HarnessCore, RaceRound, StreamCommand, StreamEffect, Workload};
