//! `missionweaveprotocol-conformance`: runs the structural, cryptography and admission bundles.
//!
//! ```text
//! missionweaveprotocol-conformance [--root DIR] [--bundle structural|cryptography|admission|all] [--json]
//! ```
//! Exit status 0 only when every selected bundle passes.

use std::process::ExitCode;

use missionweaveprotocol::conformance::{self, BundleKind, BundleSource, EmbeddedBundle};
use missionweaveprotocol_cli::DirectoryBundle;

const USAGE: &str = "usage: missionweaveprotocol-conformance [--root DIR] [--bundle structural|cryptography|admission|all] [--json]";

struct Options {
    root: Option<String>,
    bundles: Vec<BundleKind>,
    json: bool,
}

fn parse_args(args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options = Options {
        root: None,
        bundles: BundleKind::ALL.to_vec(),
        json: false,
    };
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => {
                (flag.to_owned(), Some(value.to_owned()))
            }
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag.as_str() {
            "--root" => options.root = Some(value("--root")?),
            "--bundle" => {
                let name = value("--bundle")?;
                options.bundles = if name == "all" {
                    BundleKind::ALL.to_vec()
                } else {
                    vec![
                        BundleKind::parse(&name)
                            .ok_or_else(|| format!("unknown bundle {name:?}"))?,
                    ]
                };
            }
            "--json" => options.json = true,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
    let options = match parse_args(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) if message.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("error: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let directory;
    let source: &dyn BundleSource = match &options.root {
        Some(root) => match DirectoryBundle::open(root) {
            Ok(bundle) => {
                directory = bundle;
                &directory
            }
            Err(message) => {
                eprintln!("error: {message}");
                return ExitCode::from(2);
            }
        },
        None => &EmbeddedBundle,
    };
    let report = conformance::run(source, &options.bundles);
    if options.json {
        println!(
            "{}",
            missionweaveprotocol_cli::to_json_line(&report.to_value())
        );
    } else {
        println!("bundle: {}", source.describe());
        for bundle in &report.reports {
            for failure in &bundle.failures {
                println!(
                    "FAIL [{}] {}: {}",
                    bundle.kind.as_str(),
                    failure.id,
                    failure.message
                );
            }
        }
        for bundle in &report.reports {
            println!("{}", bundle.summary());
        }
    }
    if report.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
