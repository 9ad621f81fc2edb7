//! `missionweaveprotocol-conformance`: runs the structural, cryptography and admission bundles.
//! Options, output and exit statuses: `--help`, or `missionweaveprotocol_cli::main_with_args`.

use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(missionweaveprotocol_cli::main_with_args(
        std::env::args_os().skip(1),
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    ))
}
