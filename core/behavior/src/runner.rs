//! Executes one scenario in process against the real engine and records what happened. A
//! scenario passes only if every setup step applied (its Events verified), the act did exactly
//! what it expected, and every check held. Nothing here panics: each failure is a message.

use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol::{DescribeError, WireCode};
use missionweaveprotocol_engine::budget::account::{BudgetAccount, account_key};
use missionweaveprotocol_engine::store::{AggregateKey, Store};
use missionweaveprotocol_engine::work::PROPOSAL_AGGREGATE_KIND;
use missionweaveprotocol_kernel::budget::AccountKind;
use missionweaveprotocol_kernel::resources::Dimension;

use crate::scenario::{Act, Expect, Scenario, Step, Watch};
use crate::steps;
use crate::world::World;

/// What one scenario did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub name: String,
    pub passed: bool,
    /// Why it failed.
    pub failure: Option<String>,
    /// The act's Command kind (`None`: time passed).
    pub act_kind: Option<String>,
    /// The kinds the act emitted, each verified.
    pub emitted: Vec<String>,
    /// The code the act was refused with.
    pub refused: Option<WireCode>,
    /// Where it was refused: `ingress` (§6.4 verification and the Organization's authorizer)
    /// or `engine`.
    pub refused_at: Option<&'static str>,
    pub watch: Option<Watch>,
    /// The watched state before and after the act.
    pub before: Option<String>,
    pub after: Option<String>,
    /// Every Event verified in the scenario (setup and act).
    pub events_verified: usize,
}

impl Outcome {
    fn new(scenario: &Scenario) -> Self {
        Self {
            name: scenario.name.to_owned(),
            passed: false,
            failure: None,
            act_kind: None,
            emitted: Vec::new(),
            refused: None,
            refused_at: None,
            watch: scenario.watch,
            before: None,
            after: None,
            events_verified: 0,
        }
    }
}

/// Runs `scenario` in a fresh world.
pub fn run_scenario(scenario: &Scenario) -> Outcome {
    let mut outcome = Outcome::new(scenario);
    match execute(scenario, &mut outcome) {
        Ok(()) => outcome.passed = true,
        Err(failure) => outcome.failure = Some(failure),
    }
    outcome
}

fn execute(scenario: &Scenario, outcome: &mut Outcome) -> Result<(), String> {
    let world = World::setup(scenario.start)?;
    outcome.events_verified += world.setup_events();
    for (i, step) in scenario.given.iter().enumerate() {
        match step {
            Step::Perform(build) => {
                let command = build(&world).map_err(|e| format!("setup step {}: {e}", i + 1))?;
                let kinds = world
                    .apply(&command)
                    .map_err(|e| format!("setup step {}: {e}", i + 1))?;
                outcome.events_verified += kinds.len();
            }
            Step::Elapse(ms) => world.elapse(*ms),
        }
    }
    let act = scenario.act.as_ref().ok_or("the scenario has no act")?;
    let expect = scenario
        .expect
        .as_ref()
        .ok_or("the scenario expects nothing")?;
    outcome.before = scenario.watch.map(|w| observe(&world, w)).transpose()?;
    let mut group = None;
    let mut heads = world.heads(None)?;
    let organization_before = world.organization_events()?;
    match act {
        Act::Perform(build) => {
            world.take_ingress_refusal();
            let command = match build(&world) {
                Ok(command) => command,
                Err(e) => {
                    // A Command the Group Authority's ingress refused is a refusal like the
                    // engine's; any other build failure fails the scenario.
                    let (kind, code) = world.take_ingress_refusal().ok_or(format!("act: {e}"))?;
                    outcome.act_kind = Some(kind);
                    outcome.refused = Some(code);
                    outcome.refused_at = Some("ingress");
                    return match expect {
                        Expect::Refused(expected) if *expected == code => {
                            finish(scenario, &world, outcome, None, &heads, organization_before)
                        }
                        Expect::Refused(expected) => Err(format!(
                            "expected {}, refused at ingress {} ({e})",
                            expected.as_str(),
                            code.as_str()
                        )),
                        _ => Err(format!("act: {e}")),
                    };
                }
            };
            outcome.act_kind = Some(command.kind().to_owned());
            group = command.group_id().map(str::to_owned);
            heads = world.heads(group.as_deref())?;
            let result = world.perform(&command);
            match (expect, result) {
                (Expect::Events(kinds), Ok(performed)) => {
                    if performed.duplicate {
                        return Err("the act was answered as a duplicate".into());
                    }
                    outcome.emitted = world.verify_events(&performed, &command)?;
                    outcome.events_verified += outcome.emitted.len();
                    if outcome.emitted != *kinds {
                        return Err(format!(
                            "expected Events {kinds:?}, emitted {:?}",
                            outcome.emitted
                        ));
                    }
                }
                (Expect::Events(kinds), Err(e)) => {
                    outcome.refused = Some(e.wire_code());
                    outcome.refused_at = Some("engine");
                    return Err(format!(
                        "expected Events {kinds:?}, refused {} ({e})",
                        e.wire_code().as_str()
                    ));
                }
                (Expect::Refused(code), Err(e)) => {
                    outcome.refused = Some(e.wire_code());
                    outcome.refused_at = Some("engine");
                    if e.wire_code() != *code {
                        return Err(format!(
                            "expected {}, refused {} ({e})",
                            code.as_str(),
                            e.wire_code().as_str()
                        ));
                    }
                }
                (Expect::Refused(code), Ok(performed)) => {
                    let kinds = world
                        .verify_events(&performed, &command)
                        .unwrap_or_default();
                    outcome.emitted = kinds.clone();
                    return Err(format!(
                        "expected {}, applied: emitted {kinds:?}",
                        code.as_str()
                    ));
                }
                (Expect::Nothing, _) => {
                    return Err("a Command act must expect Events or a refusal".into());
                }
            }
        }
        Act::Elapse(ms) => {
            if *expect != Expect::Nothing {
                return Err("time passing can only expect nothing appended".into());
            }
            world.elapse(*ms);
        }
    }
    finish(
        scenario,
        &world,
        outcome,
        group.as_deref(),
        &heads,
        organization_before,
    )
}

/// After the act: exactly the returned Events were appended (none if refused), the watched
/// state moved as expected (unchanged if refused), and every check holds.
fn finish(
    scenario: &Scenario,
    world: &World,
    outcome: &mut Outcome,
    group: Option<&str>,
    heads: &[u64],
    organization_before: usize,
) -> Result<(), String> {
    let after: Vec<u64> = world.heads(group)?;
    // Heads never move back; the act appends exactly the Events it returned (none if refused):
    // Group Events to their Group's log, Organization-scoped ones (§15.2) to none.
    let organization_after = world.organization_events()?;
    let appended: Option<u64> = after
        .iter()
        .zip(heads)
        .map(|(a, b)| a.checked_sub(*b))
        .chain([organization_after
            .checked_sub(organization_before)
            .map(|n| n as u64)])
        .sum();
    let expected = outcome.emitted.len() as u64;
    if appended != Some(expected) {
        return Err(format!(
            "the act appended {appended:?} Events, expected {expected} (Group heads {heads:?} → {after:?}, Organization Events {organization_before} → {organization_after})"
        ));
    }
    outcome.after = scenario.watch.map(|w| observe(world, w)).transpose()?;
    if let Some((from, to)) = scenario.states {
        let (before, after) = (outcome.before.as_deref(), outcome.after.as_deref());
        if before != Some(from) || after != Some(to) {
            return Err(format!(
                "expected {from} → {to}, observed {} → {}",
                before.unwrap_or("?"),
                after.unwrap_or("?")
            ));
        }
    }
    if outcome.refused.is_some() && outcome.before != outcome.after {
        return Err(format!(
            "a refused act changed the watched state: {:?} → {:?}",
            outcome.before, outcome.after
        ));
    }
    for (label, check) in &scenario.checks {
        check(world).map_err(|e| format!("check {label:?}: {e}"))?;
    }
    Ok(())
}

/// The watched aggregate's state, `none` when it does not exist.
pub fn observe(world: &World, watch: Watch) -> Result<String, String> {
    match watch {
        Watch::Mission(id) => Ok(world
            .engine()
            .mission(id)
            .map_err(|e| format!("reading {id}: {e}"))?
            .map_or_else(|| "none".to_owned(), |m| m.state().as_str().to_owned())),
        Watch::WorkItem(id) => Ok(steps::work_item(world, id)?
            .map_or_else(|| "none".to_owned(), |w| w.state.as_str().to_owned())),
        Watch::Proposal(id) => {
            let stored = world
                .engine()
                .store()
                .aggregate(&AggregateKey::new(PROPOSAL_AGGREGATE_KIND, id))
                .map_err(|e| format!("reading {id}: {e}"))?;
            let Some(stored) = stored else {
                return Ok("none".to_owned());
            };
            let value =
                json::parse_state(&stored.value).map_err(|e| format!("stored {id}: {e}"))?;
            value
                .get("status")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| format!("stored {id} has no status"))
        }
        Watch::Session(agent) => Ok(world
            .session_epoch(agent)?
            .map_or_else(|| "none".to_owned(), |e| format!("epoch {e}"))),
        Watch::AgentCard(agent) => {
            let card = world
                .engine()
                .agent_card(agent)
                .map_err(|e| format!("reading the Agent Card of {agent}: {e}"))?;
            let Some(card) = card else {
                return Ok("none".to_owned());
            };
            card.get("cardVersion")
                .and_then(Value::as_number)
                .and_then(|n| n.as_u64())
                .map(|v| format!("version {v}"))
                .ok_or_else(|| format!("the Agent Card of {agent} has no cardVersion"))
        }
        Watch::Usage(item) => {
            let stored = world
                .engine()
                .store()
                .aggregate(&account_key(AccountKind::WorkItem, item))
                .map_err(|e| format!("reading the budget account of {item}: {e}"))?;
            let Some(stored) = stored else {
                return Ok("none".to_owned());
            };
            let account = BudgetAccount::from_stored(&stored.value)
                .ok_or_else(|| format!("the budget account of {item} is malformed"))?;
            Ok(format!(
                "{} tool calls used",
                account.usage.get(Dimension::ToolCalls)
            ))
        }
    }
}
