//! Why a run did not pass, and the exit status each reason maps to.

use core::fmt;
use std::io;

use missionweaveprotocol::bundle::BundleVerificationError;

/// The exit statuses of `missionweaveprotocol-conformance` (listed in `--help`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    /// Every selected evaluation passed (also `--help` and `--version`).
    Passed = 0,
    /// Some evaluation failed: a wrong verdict, stage or code, or a bundle integrity problem.
    Failed = 1,
    /// The arguments could not be parsed.
    Usage = 2,
    /// A selected bundle is missing or empty: the root is not a directory, a manifest is
    /// absent, or no evaluation could run from it.
    Bundle = 3,
    /// The report could not be written (a closed pipe is not an error: output stops quietly).
    Output = 4,
}

impl Exit {
    /// The process exit status.
    pub const fn code(self) -> u8 {
        self as u8
    }
}

/// A run that could not produce a verdict.
#[derive(Debug)]
pub enum CliError {
    /// Bad arguments; the message says which.
    Usage(String),
    /// A missing or empty bundle; each problem names the bundle and the file.
    Bundle(BundleVerificationError),
    /// Writing the report failed with something other than a closed pipe.
    Output(io::Error),
}

impl CliError {
    /// A bundle problem with one message.
    pub(crate) fn bundle(problem: impl Into<String>) -> Self {
        Self::Bundle(BundleVerificationError {
            problems: vec![problem.into()],
        })
    }

    /// The exit status for this error.
    pub const fn exit(&self) -> Exit {
        match self {
            Self::Usage(_) => Exit::Usage,
            Self::Bundle(_) => Exit::Bundle,
            Self::Output(_) => Exit::Output,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Usage(message) => f.write_str(message),
            Self::Bundle(error) => f.write_str(&error.problems.join("; ")),
            Self::Output(error) => write!(f, "cannot write the report: {error}"),
        }
    }
}

impl std::error::Error for CliError {}
