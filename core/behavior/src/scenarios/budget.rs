//! Budget scenarios (§12): `ext.missionweaveprotocol.core.resource_usage_record` charges a
//! nonzero delta to the WorkItem's account and its ancestors under the owner's Execution Lease;
//! an overflow in any account charges nothing (`BUDGET_EXCEEDED`).

use missionweaveprotocol::WireCode;

use crate::payloads::W1;
use crate::scenario::{Scenario, Watch};
use crate::steps;

/// `ext.missionweaveprotocol.core.resource_usage_recorded`.
const RECORDED: &str = "ext.missionweaveprotocol.core.resource_usage_recorded";

pub fn scenarios() -> Vec<Scenario> {
    // The contract of `payloads::contract` grants the WorkItem 10 tool calls.
    let usage = Watch::Usage(W1);
    vec![
        Scenario::new("resource_usage_record: the Worker records 3 tool calls")
            .given(steps::active(W1))
            .when(steps::record_usage(W1, 3))
            .watch(usage)
            .emits(&[RECORDED])
            .moves("0 tool calls used", "3 tool calls used"),
        Scenario::new("resource_usage_record: 11 tool calls overflow the WorkItem's 10")
            .given(steps::active(W1))
            .when(steps::record_usage(W1, 11))
            .watch(usage)
            .refused(WireCode::BudgetExceeded)
            .moves("0 tool calls used", "0 tool calls used"),
        Scenario::new("resource_usage_record: the rest of the budget is used up exactly")
            .given(steps::active(W1))
            .given(steps::usage_recorded(W1, 8))
            .when(steps::record_usage(W1, 2))
            .watch(usage)
            .emits(&[RECORDED])
            .moves("8 tool calls used", "10 tool calls used"),
        Scenario::new("resource_usage_record: an overflow after 8 tool calls charges nothing")
            .given(steps::active(W1))
            .given(steps::usage_recorded(W1, 8))
            .when(steps::record_usage(W1, 3))
            .watch(usage)
            .refused(WireCode::BudgetExceeded)
            .moves("8 tool calls used", "8 tool calls used"),
    ]
}
