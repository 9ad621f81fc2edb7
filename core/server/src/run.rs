//! The whole command, from arguments to exit code, writing to the streams it is given: the
//! binary (`main.rs`) and the Python console script (`bindings/python`, in-process with the GIL
//! released) both run this, so flags, environment variables, messages and exit codes are
//! written once. Exit codes: 0 after a graceful shutdown, 1 when start-up fails, 2 for a flag
//! problem (0 for `--help`/`--version`).

use std::ffi::OsString;
use std::future::Future;
use std::io::Write;

use clap::Parser;
use tracing_subscriber::EnvFilter;

use crate::app;
use crate::cli::{Args, Transport};

/// The program name in usage messages (the binary's, whichever host runs it).
pub const PROGRAM: &str = "missionweaveprotocol-server";

/// Runs the server with `args` (without the program name): parses and checks them with
/// [`Args`], starts, prints the "listening on" line to `stdout`, serves until the future made
/// by `stop` resolves (it is made once the server is listening, inside the runtime, before the
/// line is printed), shuts down gracefully and returns the exit code. Log lines go to the
/// process's standard error (`MISSIONWEAVEPROTOCOL_LOG` filters them; the first run of a
/// process installs the subscriber).
pub fn run_with_args<I, S, F>(
    args: I,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
    stop: S,
) -> i32
where
    I: IntoIterator,
    I::Item: Into<OsString>,
    S: FnOnce() -> F,
    F: Future<Output = ()>,
{
    let argv = std::iter::once(OsString::from(PROGRAM)).chain(args.into_iter().map(Into::into));
    let checked = match Args::try_parse_from(argv).and_then(Args::check) {
        Ok(checked) => checked,
        Err(error) => {
            // As clap's own `exit`: help and version to stdout (0), problems to stderr (2).
            let stream: &mut dyn Write = if error.use_stderr() { stderr } else { stdout };
            let _ = write!(stream, "{}", error.render());
            let _ = stream.flush();
            return error.exit_code();
        }
    };
    // Only the first run in a process installs the subscriber (an embedding host may run the
    // server again, or have installed its own).
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_env("MISSIONWEAVEPROTOCOL_LOG")
                .unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        // Colour codes only for a terminal: a log file or collector gets plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder
        .enable_all()
        .thread_name("mwp-server")
        .max_blocking_threads(usize::try_from(checked.args.blocking_threads).unwrap_or(16));
    if checked.args.worker_threads > 0 {
        builder.worker_threads(checked.args.worker_threads);
    }
    let runtime = match builder.build() {
        Ok(runtime) => runtime,
        Err(error) => {
            let _ = writeln!(stderr, "error: cannot start the runtime: {error}");
            let _ = stderr.flush();
            return 1;
        }
    };
    let code = runtime.block_on(async move {
        if checked.transport == Transport::Insecure {
            tracing::warn!(
                "--allow-insecure: plain ws:// WITHOUT TLS on {}; for local development only, never in production",
                checked.listen
            );
            let _ = writeln!(
                stderr,
                "WARNING: --allow-insecure serves plain ws:// without TLS: local development only"
            );
            let _ = stderr.flush();
        }
        let started = match app::start(checked).await {
            Ok(started) => started,
            Err(error) => {
                tracing::error!(code = error.code, "{error}");
                let _ = writeln!(stderr, "error: {error}");
                let _ = stderr.flush();
                return error.code;
            }
        };
        // Made before the "listening on" line: a signal sent as soon as it is read stops the
        // server cleanly rather than killing it by the default action.
        let stop = stop();
        if let Some((path, fingerprint)) = &started.dev_certificate {
            let _ = writeln!(
                stdout,
                "development certificate (self-signed, localhost/127.0.0.1): {}",
                path.display()
            );
            let _ = writeln!(stdout, "  SHA-256 fingerprint: {fingerprint}");
            let _ = writeln!(
                stdout,
                "  trust it in a client: its CA file is that PEM (e.g. curl --cacert {} https://127.0.0.1:PORT/healthz)",
                path.display()
            );
        }
        let _ = writeln!(stdout, "{PROGRAM} listening on {}", started.url);
        let _ = stdout.flush();
        if started.clock.is_manual() {
            // After the "listening on" line: the driver reads that line first, then one
            // "clock …" line per "advance" line it writes.
            crate::clock::spawn_stdin_control(started.clock.clone());
        }
        tracing::info!(url = %started.url, cards_new = started.cards.0, cards_unchanged = started.cards.1, "ready");
        started.run(stop).await;
        tracing::info!("stopped");
        0
    });
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    code
}

/// How often [`poll_stop`] asks.
pub const STOP_POLL: std::time::Duration = std::time::Duration::from_millis(100);

/// Resolves once `stopped()` returns true, asked every [`STOP_POLL`]: the stop of a host that
/// takes the process's signals itself (Python handles SIGINT/SIGTERM on its main thread, where
/// the runtime polls this future).
pub async fn poll_stop(mut stopped: impl FnMut() -> bool) {
    loop {
        tokio::time::sleep(STOP_POLL).await;
        if stopped() {
            return;
        }
    }
}

/// SIGTERM or SIGINT (Ctrl-C), listened for from this call on (the handlers are installed
/// here, not when the future is first polled). Call it inside the runtime.
pub fn shutdown_signal() -> impl Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let handlers = signal(SignalKind::terminate())
            .and_then(|term| Ok((term, signal(SignalKind::interrupt())?)));
        async move {
            match handlers {
                Ok((mut term, mut int)) => {
                    tokio::select! {
                        _ = term.recv() => tracing::info!("SIGTERM"),
                        _ = int.recv() => tracing::info!("SIGINT"),
                    }
                }
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
