//! Dev-only support for the project's tests and benchmarks; never published, never a dependency
//! of anything a user installs.
//!
//! - [`scheduling_workload`]: the scheduling benchmark workload (admit, dispatch, complete).
//! - [`fuzz`]: the stable-Rust fuzz targets, mutators and runner behind `mwp-fuzz`.
//! - [`vectors`]: the golden vectors under `tests/vectors/` (writer, drift check).

pub mod fuzz;
pub mod scheduling_workload;
pub mod vectors;
