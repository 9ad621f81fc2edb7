//! `missionweaveprotocol-server`: see `docs/network.md`, "The server". Exit codes: 0 after a
//! graceful shutdown (SIGTERM/SIGINT), 1 when start-up fails, 2 for a flag problem.

use std::io::Write as _;

use clap::Parser;
use missionweaveprotocol_server::app;
use missionweaveprotocol_server::cli::Args;
use tracing_subscriber::EnvFilter;

fn main() {
    let checked = match Args::parse().check() {
        Ok(checked) => checked,
        Err(error) => error.exit(),
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_env("MISSIONWEAVEPROTOCOL_LOG")
                .unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        // Colour codes only for a terminal: a log file or collector gets plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("mwp-server")
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the runtime: {error}");
            std::process::exit(1);
        }
    };
    let code = runtime.block_on(async move {
        if checked.transport == missionweaveprotocol_server::cli::Transport::Insecure {
            tracing::warn!(
                "--allow-insecure: plain ws:// WITHOUT TLS on {}; for local development only, never in production",
                checked.listen
            );
            eprintln!(
                "WARNING: --allow-insecure serves plain ws:// without TLS: local development only"
            );
        }
        let started = match app::start(checked).await {
            Ok(started) => started,
            Err(error) => {
                tracing::error!(code = error.code, "{error}");
                eprintln!("error: {error}");
                return error.code;
            }
        };
        // Installed before the "listening on" line: a signal sent as soon as it is read stops
        // the server cleanly rather than killing it by the default action.
        let shutdown = shutdown_signal();
        let mut out = std::io::stdout().lock();
        if let Some((path, fingerprint)) = &started.dev_certificate {
            let _ = writeln!(out, "development certificate (self-signed, localhost/127.0.0.1): {}", path.display());
            let _ = writeln!(out, "  SHA-256 fingerprint: {fingerprint}");
            let _ = writeln!(out, "  trust it in a client: its CA file is that PEM (e.g. curl --cacert {} https://127.0.0.1:PORT/healthz)", path.display());
        }
        let _ = writeln!(out, "missionweaveprotocol-server listening on {}", started.url);
        let _ = out.flush();
        drop(out);
        tracing::info!(url = %started.url, cards_new = started.cards.0, cards_unchanged = started.cards.1, "ready");
        started.run(shutdown).await;
        tracing::info!("stopped");
        0
    });
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    std::process::exit(code);
}

/// SIGTERM or SIGINT (Ctrl-C), listened for from this call on (the handlers are installed
/// here, not when the future is first polled).
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
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
