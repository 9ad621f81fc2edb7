//! The command: arguments in, report out, exit status back.

use std::ffi::OsString;
use std::io::Write;

use missionweaveprotocol::conformance::{self, BundleSource, ConformanceReport, EmbeddedBundle};

use crate::args::{self, Command, NAME, Options, USAGE};
use crate::cli_error::{CliError, Exit};
use crate::directory::DirectoryBundle;
use crate::output::Output;

/// Runs `missionweaveprotocol-conformance` with `args` (without the program name), writing the
/// report to `stdout` and errors to `stderr`; returns the exit status ([`Exit`]).
///
/// A closed `stdout` (EPIPE) stops the output quietly; the status is still the verdict.
///
/// ```
/// let (mut out, mut err) = (Vec::new(), Vec::new());
/// let code = missionweaveprotocol_cli::main_with_args(["--bundle", "structural"], &mut out, &mut err);
/// assert_eq!(code, 0);
/// assert!(String::from_utf8(out)?.ends_with("58/58 structural vectors passed\n"));
/// assert_eq!(missionweaveprotocol_cli::main_with_args(["--nope"], &mut Vec::new(), &mut err), 2);
/// # Ok::<(), std::string::FromUtf8Error>(())
/// ```
pub fn main_with_args<I>(args: I, stdout: &mut dyn Write, stderr: &mut dyn Write) -> u8
where
    I: IntoIterator,
    I::Item: Into<OsString>,
{
    let mut out = Output::new(stdout);
    let result = args::parse(args.into_iter().map(Into::into))
        .map_err(CliError::Usage)
        .and_then(|command| match command {
            Command::Help => out.text(&args::help_text()).map(|()| Exit::Passed),
            Command::Version => out.line(&args::version_line()).map(|()| Exit::Passed),
            Command::Run(options) => run(&options, &mut out),
        })
        .and_then(|exit| out.flush().map(|()| exit));
    match result {
        Ok(exit) => exit.code(),
        Err(error) => {
            // Nothing useful can be done if stderr is gone as well.
            let _ = write_error(stderr, &error);
            error.exit().code()
        }
    }
}

fn write_error(stderr: &mut dyn Write, error: &CliError) -> std::io::Result<()> {
    match error {
        CliError::Usage(message) => writeln!(
            stderr,
            "error: {message}\n{USAGE}\nRun `{NAME} --help` for the options and exit statuses."
        )?,
        CliError::Bundle(bundle) => {
            for problem in &bundle.problems {
                writeln!(stderr, "error: {problem}")?;
            }
        }
        CliError::Output(_) => writeln!(stderr, "error: {error}")?,
    }
    stderr.flush()
}

fn run(options: &Options, out: &mut Output<'_>) -> Result<Exit, CliError> {
    if options.behavior {
        return crate::behavior::run(options.json, out);
    }
    let directory;
    let source: &dyn BundleSource = match &options.root {
        Some(root) => {
            directory = DirectoryBundle::open(root)
                .map_err(|message| CliError::bundle(format!("bundle root {message}")))?;
            &directory
        }
        None => &EmbeddedBundle,
    };
    let missing: Vec<String> = options
        .bundles
        .iter()
        .filter_map(|kind| match source.read(kind.manifest_path()) {
            Ok(_) => None,
            Err(error) if error.is_missing() => Some(format!(
                "the {} bundle is missing: no {} in {}",
                kind.as_str(),
                kind.manifest_path(),
                source.describe()
            )),
            Err(error) => Some(format!(
                "the {} bundle cannot be read: {error} in {}",
                kind.as_str(),
                source.describe()
            )),
        })
        .collect();
    if !missing.is_empty() {
        return Err(CliError::Bundle(
            missionweaveprotocol::bundle::BundleVerificationError { problems: missing },
        ));
    }
    if !options.json {
        // Written before the run so a reader sees which bundle is being checked.
        out.line(&format!("bundle: {}", source.describe()))?;
        out.flush()?;
    }
    let report = conformance::run(source, &options.bundles);
    write_report(&report, options.json, out)?;
    let empty: Vec<String> = report
        .reports
        .iter()
        .filter(|bundle| bundle.total == 0)
        .map(|bundle| {
            format!(
                "the {} bundle in {} is empty: no evaluation could run from {}",
                bundle.kind.as_str(),
                source.describe(),
                bundle.kind.manifest_path()
            )
        })
        .collect();
    if !empty.is_empty() {
        return Err(CliError::Bundle(
            missionweaveprotocol::bundle::BundleVerificationError { problems: empty },
        ));
    }
    Ok(if report.ok() {
        Exit::Passed
    } else {
        Exit::Failed
    })
}

fn write_report(
    report: &ConformanceReport,
    json: bool,
    out: &mut Output<'_>,
) -> Result<(), CliError> {
    if json {
        return out.line(&crate::to_json_line(&report.to_value()));
    }
    for bundle in &report.reports {
        for failure in &bundle.failures {
            out.line(&format!(
                "FAIL [{}] {}: {}",
                bundle.kind.as_str(),
                failure.id,
                failure.message
            ))?;
        }
    }
    for bundle in &report.reports {
        out.line(&bundle.summary())?;
    }
    Ok(())
}
