#![allow(clippy::unwrap_used, clippy::panic)]
//! The standard matrix runs clean: no failing row, the part-2 kinds listed as not covered.

use missionweaveprotocol_behavior::{Status, run};

#[test]
fn the_standard_matrix_has_no_failing_row() {
    let report = run();
    for line in report.lines() {
        println!("{line}");
    }
    assert!(report.ok(), "{:#?}", report.lines());
}
