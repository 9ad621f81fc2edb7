//! `mwp-write-vectors [--check] [DIR]`: writes the golden vectors (`tests/vectors/` by default)
//! from the Rust core, or with `--check` only reports whether the committed files differ from a
//! fresh regeneration (exit 1 on drift). See `missionweaveprotocol_testkit::vectors`.

use std::path::PathBuf;
use std::process::ExitCode;

use missionweaveprotocol_testkit::vectors::{default_dir, drift, generate, write};

fn main() -> ExitCode {
    let mut check = false;
    let mut dir: Option<PathBuf> = None;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--check" => check = true,
            "-h" | "--help" => {
                println!("usage: mwp-write-vectors [--check] [DIR]  (default DIR: tests/vectors)");
                return ExitCode::SUCCESS;
            }
            other if !other.starts_with('-') && dir.is_none() => dir = Some(other.into()),
            other => {
                eprintln!("unknown argument {other:?}; usage: mwp-write-vectors [--check] [DIR]");
                return ExitCode::from(2);
            }
        }
    }
    let dir = dir.unwrap_or_else(default_dir);
    let files = generate();
    if check {
        let problems = drift(&dir, &files);
        if problems.is_empty() {
            println!("{}: {} files up to date", dir.display(), files.len());
            return ExitCode::SUCCESS;
        }
        for p in &problems {
            eprintln!("drift: {p}");
        }
        eprintln!("regenerate with scripts/write-vectors.sh and review the diff");
        return ExitCode::FAILURE;
    }
    if let Err(error) = write(&dir, &files) {
        eprintln!("cannot write {}: {error}", dir.display());
        return ExitCode::FAILURE;
    }
    for f in &files {
        println!("{}/{} {} bytes", dir.display(), f.name, f.bytes.len());
    }
    ExitCode::SUCCESS
}
