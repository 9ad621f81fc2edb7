//! The `missionweaveprotocol-conformance` command line as a library.
//!
//! The binary and the Python console script both call [`main_with_args`], so the options, the
//! output and the exit codes ([`Exit`]) have one implementation. The bundle runners themselves
//! are `missionweaveprotocol::conformance` (§22); `--bundle behavior` runs the engine's evidence
//! matrix (`missionweaveprotocol_behavior`).

mod args;
mod behavior;
mod cli_error;
mod directory;
mod output;
mod run;

pub use args::{USAGE, help_text, version_line};
pub use cli_error::{CliError, Exit};
pub use directory::DirectoryBundle;
pub use run::main_with_args;

use missionweaveprotocol::json::{Value, canonical_bytes};

/// One line of JSON (RFC 8785 form) for machine-readable output.
pub fn to_json_line(value: &Value) -> String {
    canonical_bytes(value).map_or_else(
        |_| "{}".to_owned(),
        |bytes| String::from_utf8_lossy(&bytes).into_owned(),
    )
}
