//! Dev-only support for the project's tests and benchmarks; never published, never a dependency
//! of anything a user installs.
//!
//! - [`scheduling_workload`]: the scheduling benchmark workload (admit, dispatch, complete).
//! - [`vectors`]: the golden vectors under `tests/vectors/` (writer, drift check).

pub mod scheduling_workload;
pub mod vectors;
