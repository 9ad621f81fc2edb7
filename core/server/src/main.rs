//! `missionweaveprotocol-server`: see `docs/network.md`, "The server". Exit codes: 0 after a
//! graceful shutdown (SIGTERM/SIGINT), 1 when start-up fails, 2 for a flag problem. The command
//! itself is [`run::run_with_args`], shared with the Python console script.

use missionweaveprotocol_server::run;

fn main() {
    let code = run::run_with_args(
        std::env::args_os().skip(1),
        &mut std::io::stdout(),
        &mut std::io::stderr(),
        run::shutdown_signal,
    );
    std::process::exit(code);
}
