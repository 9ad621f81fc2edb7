//! Target `budget`: a persisted budget ledger (`BudgetLedgerSnapshot::from_value`, then
//! `BudgetLedger::rebuild`), as bindings restore it from JSON text.
//!
//! Oracles: no panic; errors are typed with a §19 code; an accepted snapshot round-trips: the
//! rebuilt ledger's snapshot, written as JSON text, read and rebuilt again, is the same snapshot.

use missionweaveprotocol::WireCode;
use missionweaveprotocol::json::{canonical_bytes, parse_state};
use missionweaveprotocol_kernel::budget::{BudgetLedger, BudgetLedgerSnapshot};
use missionweaveprotocol_kernel::resources::{Currency, Resources};

use super::super::{OracleFailure, Outcome, Rng, Target, Verdict, first_difference, typed_error};
use super::{mutate_json_or_bytes, parse_stage};

const CODES: &[WireCode] = &[
    WireCode::ProtocolViolation,
    WireCode::InternalError,
    WireCode::InvalidCommand,
    WireCode::BudgetExceeded,
];

/// The budget target.
#[derive(Debug, Clone, Copy, Default)]
pub struct BudgetTarget;

fn seed_ledger(deep: bool) -> Option<Vec<u8>> {
    let mut l = BudgetLedger::new();
    l.register_mission("m", Currency::parse("USD"), Resources::splat(100))
        .ok()?;
    l.register_work_item("w1", "m", None, Resources::splat(60))
        .ok()?;
    if deep {
        l.register_child_mission("c", "w1", None, Resources::splat(40))
            .ok()?;
        l.register_work_item("w2", "c", None, Resources::splat(30))
            .ok()?;
        l.register_work_item("w3", "c", Some("w2"), Resources::splat(20))
            .ok()?;
        l.consume("w3", &Resources::new(1, 2, 3, 4, 5, 6)).ok()?;
        l.consume("w2", &Resources::splat(1)).ok()?;
    } else {
        l.consume("w1", &Resources::splat(7)).ok()?;
    }
    canonical_bytes(&l.snapshot().to_value()).ok()
}

/// The snapshot of `ledger` through JSON text and a rebuild.
fn through_text(snapshot: &BudgetLedgerSnapshot) -> Result<BudgetLedgerSnapshot, String> {
    let text = canonical_bytes(&snapshot.to_value()).map_err(|e| e.to_string())?;
    let value = parse_state(&text).map_err(|e| e.to_string())?;
    let read = BudgetLedgerSnapshot::from_value(&value).map_err(|e| format!("{e:?}"))?;
    let ledger = BudgetLedger::rebuild(&read).map_err(|e| format!("{e:?}"))?;
    Ok(ledger.snapshot())
}

impl Target for BudgetTarget {
    fn name(&self) -> &'static str {
        "budget"
    }

    fn memory_factor(&self) -> f64 {
        // a ledger snapshot is read into an owned tree, then rebuilt into accounts.
        48.0
    }

    fn buckets(&self) -> &'static [&'static str] {
        &["1-parse", "2-format", "3-invariants", "accepted"]
    }

    fn seeds(&self) -> Vec<Vec<u8>> {
        [seed_ledger(false), seed_ledger(true)]
            .into_iter()
            .flatten()
            .collect()
    }

    fn mutate(&self, rng: &mut Rng, base: &[u8]) -> Vec<u8> {
        mutate_json_or_bytes(rng, base, 85)
    }

    fn execute(&self, input: &[u8]) -> Verdict {
        let value = match parse_stage("budget parse", input, CODES)? {
            Ok(value) => value,
            Err(refused) => return Ok(refused),
        };
        let snapshot = match BudgetLedgerSnapshot::from_value(&value) {
            Ok(snapshot) => snapshot,
            Err(error) => {
                typed_error("budget format", &error, CODES)?;
                return Ok(Outcome {
                    bucket: 1,
                    signal: format!(
                        "format:{}",
                        error
                            .path
                            .split('/')
                            .filter(|s| s.parse::<usize>().is_err())
                            .collect::<Vec<_>>()
                            .join("/")
                    ),
                });
            }
        };
        let ledger = match BudgetLedger::rebuild(&snapshot) {
            Ok(ledger) => ledger,
            Err(error) => {
                let reason = typed_error("budget rebuild", &error, CODES)?;
                return Ok(Outcome {
                    bucket: 2,
                    signal: format!("rebuild:{reason}"),
                });
            }
        };
        let first = ledger.snapshot();
        let again = through_text(&first).map_err(|e| {
            OracleFailure(format!(
                "a rebuilt ledger does not restore from its own snapshot: {e}"
            ))
        })?;
        if again != first {
            return Err(OracleFailure(format!(
                "budget round trip changed the ledger: {}",
                first_difference(&first, &again)
            )));
        }
        Ok(Outcome {
            bucket: 3,
            signal: format!("accepted:{}", first.missions.len().min(4)),
        })
    }
}
