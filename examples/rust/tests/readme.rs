//! The README's quickstart is the `sign_and_verify` program, verbatim: the code a new user
//! copies is the code CI runs.

#[test]
fn the_readme_quickstart_is_sign_and_verify() {
    let readme = include_str!("../../../README.md");
    let program = include_str!("../src/bin/sign_and_verify.rs");
    // The program is its `//!` header, a blank line, then the README's code block.
    let code = program
        .split_once("\n\n")
        .map(|(_, code)| code)
        .unwrap_or_default();
    assert!(code.starts_with("use "), "unexpected program layout");
    assert!(
        readme.contains(&format!("```rust\n{code}```\n")),
        "README.md's quickstart differs from examples/rust/src/bin/sign_and_verify.rs"
    );
}
