//! Command-line options, the help text and the version line.

use std::ffi::OsString;
use std::path::PathBuf;

use missionweaveprotocol::bundle::SOURCE_COMMIT;
use missionweaveprotocol::conformance::BundleKind;

/// The program name.
pub(crate) const NAME: &str = "missionweaveprotocol-conformance";

/// The one-line synopsis printed after a usage error.
pub const USAGE: &str = "usage: missionweaveprotocol-conformance [--root DIR] [--bundle structural|cryptography|admission|all|behavior] [--json]";

/// What the arguments ask for.
#[derive(Debug)]
pub(crate) enum Command {
    Run(Options),
    Help,
    Version,
}

/// The options of a run.
#[derive(Debug)]
pub(crate) struct Options {
    /// A bundle root directory instead of the embedded bundle.
    pub root: Option<PathBuf>,
    pub bundles: Vec<BundleKind>,
    /// `--bundle behavior`: the engine's evidence matrix instead of the protocol bundles.
    pub behavior: bool,
    pub json: bool,
}

/// `missionweaveprotocol-conformance 0.1.0 (MissionWeaveProtocol 0.1, protocol commit …)`.
pub fn version_line() -> String {
    format!(
        "{NAME} {} (MissionWeaveProtocol {}, protocol commit {SOURCE_COMMIT})",
        env!("CARGO_PKG_VERSION"),
        missionweaveprotocol::PROTOCOL_VERSION,
    )
}

/// The full `--help` text: synopsis, options and exit statuses.
pub fn help_text() -> String {
    format!(
        "{version}

Runs the MissionWeaveProtocol conformance bundles (§22): the structural vectors, the
cryptography evaluations and the admission evaluations. By default it uses the bundle
embedded at build time, so it works from any directory; that bundle is protocol commit
{SOURCE_COMMIT}.

`--bundle behavior` instead runs the engine's evidence matrix: every Command kind, Event
kind, Mission row (§7.1) and WorkItem row (§10.2) with a positive and a negative scenario
executed in process against the authoritative engine.

{USAGE}
       {NAME} --help | --version

Options:
  --root DIR       Read the bundle from the directory DIR (a protocol checkout holding
                   schemas/, conformance/, cryptography/ and admission/) instead of the
                   embedded bundle.
  --bundle NAME    Run one bundle: structural, cryptography, admission, or all (default: all);
                   or behavior: the evidence matrix, reported as `N/M rows with positive and
                   negative evidence; R/T rules with negative evidence`, one `FAIL [behavior]
                   row: reason` line per failing row or rule and one `NOT COVERED [behavior]
                   row: reason` line per row without scenarios (it reads no bundle root;
                   --json gives every row, rule and scenario).
  --json           Print the report as one line of RFC 8785 JSON:
                   {{\"bundles\":{{\"structural\":{{\"facts\":{{…}},\"failures\":[…],\"ok\":…,
                   \"passed\":…,\"total\":…}},…}},\"ok\":…}}
  -h, --help       Print this help and exit.
  -V, --version    Print the version and the pinned protocol commit and exit.
Options take their value as the next argument or after `=` (--bundle=admission).

Output: `bundle: <source>`, one `FAIL [bundle] id: reason` line per failed evaluation or
integrity problem, then one `passed/total` line per bundle. If standard output is closed
early (`| head -1`), output stops quietly and the exit status is still the verdict.

Exit status:
  0  every selected evaluation passed (behavior: no row failing; rows not covered are listed)
  1  some evaluation failed (a wrong verdict, stage or code, or a bundle integrity problem;
     behavior: a scenario failed or does not match its row)
  2  usage error (unknown option, missing value, unknown bundle name)
  3  a selected bundle is missing or empty: DIR is not a directory, the bundle's manifest
     is absent, or no evaluation could run from it (an empty manifest, no schemas)
  4  the report could not be written (for example, no space left on the device)
",
        version = version_line(),
    )
}

fn text(arg: OsString) -> Result<String, String> {
    arg.into_string()
        .map_err(|arg| format!("argument {arg:?} is not valid UTF-8"))
}

/// Parses the arguments (without the program name). `Err` is a usage error message.
pub(crate) fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, String> {
    let mut options = Options {
        root: None,
        bundles: BundleKind::ALL.to_vec(),
        behavior: false,
        json: false,
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        // `--root` takes any path as a separate argument, UTF-8 or not.
        if arg == "--root" {
            let root = args.next().ok_or("--root needs a value")?;
            options.root = Some(PathBuf::from(root));
            continue;
        }
        let arg = text(arg)?;
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag, Some(value.to_owned())),
            _ => (arg.as_str(), None),
        };
        let mut value = |name: &str| -> Result<String, String> {
            match inline.clone() {
                Some(value) => Ok(value),
                None => text(args.next().ok_or_else(|| format!("{name} needs a value"))?),
            }
        };
        match flag {
            "--root" => options.root = Some(PathBuf::from(value("--root")?)),
            "--bundle" => {
                let name = value("--bundle")?;
                options.behavior = name == "behavior";
                options.bundles = if options.behavior {
                    Vec::new()
                } else if name == "all" {
                    BundleKind::ALL.to_vec()
                } else {
                    vec![
                        BundleKind::parse(&name)
                            .ok_or_else(|| format!("unknown bundle {name:?}"))?,
                    ]
                };
            }
            "--json" if inline.is_none() => options.json = true,
            "-h" | "--help" if inline.is_none() => return Ok(Command::Help),
            "-V" | "--version" if inline.is_none() => return Ok(Command::Version),
            "--json" | "--help" | "--version" => {
                return Err(format!("{flag} takes no value"));
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(Command::Run(options))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    fn parse_strs(args: &[&str]) -> Result<Command, String> {
        parse(args.iter().map(OsString::from))
    }

    #[test]
    fn options_in_both_forms() {
        let Command::Run(options) =
            parse_strs(&["--root", "/x", "--bundle=admission", "--json"]).unwrap()
        else {
            panic!("not a run");
        };
        assert_eq!(options.root, Some(PathBuf::from("/x")));
        assert_eq!(options.bundles, [BundleKind::Admission]);
        assert!(options.json);
        let Command::Run(options) = parse_strs(&["--root=/y", "--bundle", "all"]).unwrap() else {
            panic!("not a run");
        };
        assert_eq!(options.root, Some(PathBuf::from("/y")));
        assert_eq!(options.bundles, BundleKind::ALL);
        assert!(matches!(parse_strs(&["-V"]), Ok(Command::Version)));
        let Command::Run(options) = parse_strs(&["--bundle", "behavior"]).unwrap() else {
            panic!("not a run");
        };
        assert!(options.behavior && options.bundles.is_empty());
        let Command::Run(options) = parse_strs(&["--bundle=behavior", "--bundle=all"]).unwrap()
        else {
            panic!("not a run");
        };
        assert!(!options.behavior && options.bundles == BundleKind::ALL);
        assert!(matches!(
            parse_strs(&["--bundle", "nope", "--help"]),
            Err(message) if message == "unknown bundle \"nope\""
        ));
    }

    #[test]
    fn usage_errors_say_what_is_wrong() {
        for (args, message) in [
            (&["--bundle"][..], "--bundle needs a value"),
            (&["--root"], "--root needs a value"),
            (&["--json=yes"], "--json takes no value"),
            (&["--help=1"], "--help takes no value"),
            (&["extra"], "unknown argument \"extra\""),
            (&["-x"], "unknown argument \"-x\""),
        ] {
            assert_eq!(parse_strs(args).unwrap_err(), message, "{args:?}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn roots_need_not_be_utf8_but_flags_must() {
        use std::os::unix::ffi::OsStringExt;
        let path = OsString::from_vec(vec![b'/', 0xff]);
        let Command::Run(options) = parse([OsString::from("--root"), path.clone()]).unwrap() else {
            panic!("not a run");
        };
        assert_eq!(options.root, Some(PathBuf::from(path.clone())));
        assert!(parse([path]).unwrap_err().contains("not valid UTF-8"));
    }
}
