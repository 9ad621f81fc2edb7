//! Runs a [`Matrix`] and decides each row from what its scenarios did.
//!
//! A row is **covered** only if its positive and its negative scenario both ran and passed and
//! their acts match the row:
//!
//! - Command row `K`: the positive applied a `K` Command (Events emitted and verified), the
//!   negative had a `K` Command refused with its expected code.
//! - Event row `E`: the positive emitted `E`; the negative had the same Command kind refused.
//! - Transition row: the positive's act is the row's trigger and moved the watched aggregate
//!   (Mission for §7.1, WorkItem or Work Proposal for §10.2) from one of the row's `from` states
//!   to one of its `to` states; the negative is refused (for a Command trigger, that same
//!   Command kind) and left the watched state as it was.
//!
//! A row's variants (further `from` states, branches, authorities) must each pass and match it
//! as a positive (applied) or a negative (refused) does.
//!
//! A row whose scenario failed, or whose scenario does not match it, is **failing**; a row
//! with no scenarios is **not covered**, with the reason.

use missionweaveprotocol::json::{Number, Object, Value};

use crate::matrix::{Category, Evidence, Matrix, Row, Subject, Trigger};
use crate::rules::Rule;
use crate::runner::{Outcome, run_scenario};
use crate::scenario::Watch;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Covered,
    Failing,
    NotCovered,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Covered => "covered",
            Self::Failing => "failing",
            Self::NotCovered => "not_covered",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowReport {
    pub id: String,
    pub category: Category,
    pub status: Status,
    pub positive: Option<String>,
    pub negative: Option<String>,
    /// Further scenarios the row relies on (see [`Row::variants`]).
    pub variants: Vec<String>,
    /// Why it is failing or not covered.
    pub detail: Option<String>,
}

/// A rule of §6.3, §7, §10, §12 or §15 ([`crate::rules::RULES`]) and whether each of its
/// negative scenarios passed, refused with the rule's code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleReport {
    pub id: String,
    pub status: Status,
    pub negatives: Vec<String>,
    /// Why it is failing or not covered.
    pub detail: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BehaviorReport {
    pub rows: Vec<RowReport>,
    pub rules: Vec<RuleReport>,
    pub scenarios: Vec<Outcome>,
    /// Problems with the matrix itself (duplicate scenario names, unreadable schemas).
    pub problems: Vec<String>,
}

/// Builds the standard matrix and runs it.
pub fn run() -> BehaviorReport {
    match Matrix::standard() {
        Ok(matrix) => run_matrix(&matrix),
        Err(problem) => BehaviorReport {
            rows: Vec::new(),
            rules: Vec::new(),
            scenarios: Vec::new(),
            problems: vec![problem],
        },
    }
}

/// Runs every scenario of `matrix` once, then decides every row.
pub fn run_matrix(matrix: &Matrix) -> BehaviorReport {
    let mut problems = Vec::new();
    let mut scenarios: Vec<Outcome> = Vec::new();
    for scenario in &matrix.scenarios {
        if scenarios.iter().any(|o| o.name == scenario.name) {
            problems.push(format!("two scenarios are named {:?}", scenario.name));
            continue;
        }
        scenarios.push(run_scenario(scenario));
    }
    let rows = matrix
        .rows
        .iter()
        .map(|row| decide(row, &scenarios))
        .collect();
    let rules = matrix
        .rules
        .iter()
        .map(|rule| decide_rule(rule, &scenarios))
        .collect();
    BehaviorReport {
        rows,
        rules,
        scenarios,
        problems,
    }
}

/// A rule is covered when every negative scenario it names passed, refused with its code.
fn decide_rule(rule: &Rule, outcomes: &[Outcome]) -> RuleReport {
    let mut report = RuleReport {
        id: rule.id.to_owned(),
        status: Status::Covered,
        negatives: rule
            .negatives
            .iter()
            .map(|(n, _)| (*n).to_owned())
            .collect(),
        detail: None,
    };
    if rule.negatives.is_empty() {
        report.status = Status::NotCovered;
        report.detail = Some("no negative scenario".to_owned());
        return report;
    }
    for (name, code) in rule.negatives {
        let refused = find(outcomes, name, "negative").and_then(|o| match o.refused {
            Some(c) if c == *code => Ok(()),
            other => Err(format!(
                "negative scenario {name:?} was refused {}, not {}",
                other.map_or("nothing", |c| c.as_str()),
                code.as_str()
            )),
        });
        if let Err(detail) = refused {
            report.status = Status::Failing;
            report.detail = Some(detail);
            break;
        }
    }
    report
}

fn decide(row: &Row, outcomes: &[Outcome]) -> RowReport {
    let mut report = RowReport {
        id: row.id.clone(),
        category: row.category,
        status: Status::NotCovered,
        positive: None,
        negative: None,
        variants: row.variants.iter().map(|v| (*v).to_owned()).collect(),
        detail: None,
    };
    let (positive, negative) = match &row.evidence {
        Evidence::NotCovered(reason) => {
            report.detail = Some((*reason).to_owned());
            return report;
        }
        Evidence::Scenarios { positive, negative } => (*positive, *negative),
    };
    report.positive = Some(positive.to_owned());
    report.negative = Some(negative.to_owned());
    match check(row, positive, negative, outcomes) {
        Ok(()) => report.status = Status::Covered,
        Err(detail) => {
            report.status = Status::Failing;
            report.detail = Some(detail);
        }
    }
    report
}

fn find<'a>(outcomes: &'a [Outcome], name: &str, role: &str) -> Result<&'a Outcome, String> {
    let outcome = outcomes
        .iter()
        .find(|o| o.name == name)
        .ok_or_else(|| format!("{role} scenario {name:?} does not exist"))?;
    match &outcome.failure {
        None if outcome.passed => Ok(outcome),
        failure => Err(format!(
            "{role} scenario {name:?} failed: {}",
            failure.as_deref().unwrap_or("unknown")
        )),
    }
}

fn kind_of(o: &Outcome) -> String {
    o.act_kind.clone().unwrap_or_else(|| "(time)".to_owned())
}

fn check(row: &Row, positive: &str, negative: &str, outcomes: &[Outcome]) -> Result<(), String> {
    let pos = find(outcomes, positive, "positive")?;
    let neg = find(outcomes, negative, "negative")?;
    applied_matches(row, pos, "positive")?;
    refused_matches(row, neg, pos, "negative")?;
    for name in &row.variants {
        let variant = find(outcomes, name, "variant")?;
        if variant.refused.is_some() {
            refused_matches(row, variant, pos, &format!("variant {name:?}"))?;
        } else {
            applied_matches(row, variant, &format!("variant {name:?}"))?;
        }
    }
    Ok(())
}

/// The watched aggregate fits the row's table.
fn watches_row(row: &Row, o: &Outcome, role: &str) -> Result<(), String> {
    let fits = match row.category {
        Category::MissionTransition => matches!(o.watch, Some(Watch::Mission(_))),
        _ => matches!(o.watch, Some(Watch::WorkItem(_) | Watch::Proposal(_))),
    };
    if fits {
        Ok(())
    } else {
        Err(format!("the {role} scenario watches {:?}", o.watch))
    }
}

fn triggered(trigger: &Trigger, o: &Outcome) -> bool {
    match trigger {
        Trigger::Command(kinds) => kinds.iter().any(|k| o.act_kind.as_deref() == Some(*k)),
        Trigger::Time => o.act_kind.is_none(),
    }
}

/// `o` (passed) is evidence that the row applies.
fn applied_matches(row: &Row, o: &Outcome, role: &str) -> Result<(), String> {
    let time = matches!(
        row.subject,
        Subject::Transition {
            trigger: Trigger::Time,
            ..
        }
    );
    if o.refused.is_some() || (o.emitted.is_empty() && !time) {
        return Err(format!("the {role} scenario applied nothing"));
    }
    match &row.subject {
        Subject::Command(kind) if o.act_kind.as_deref() != Some(kind) => {
            Err(format!("the {role} scenario's act is {}", kind_of(o)))
        }
        Subject::Event(kind) if !o.emitted.iter().any(|k| k == kind) => {
            Err(format!("the {role} scenario emitted {:?}", o.emitted))
        }
        Subject::Transition { from, trigger, to } => {
            watches_row(row, o, role)?;
            if !triggered(trigger, o) {
                return Err(format!("the {role} scenario's act is {}", kind_of(o)));
            }
            let (before, after) = (o.before.as_deref(), o.after.as_deref());
            if !before.is_some_and(|s| from.contains(&s)) || !after.is_some_and(|s| to.contains(&s))
            {
                return Err(format!(
                    "the {role} scenario moved {before:?} → {after:?}, not {} → {}",
                    from.join("|"),
                    to.join("|")
                ));
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// `o` (passed) is evidence that the row refuses; `positive` is the row's positive outcome.
fn refused_matches(row: &Row, o: &Outcome, positive: &Outcome, role: &str) -> Result<(), String> {
    if o.refused.is_none() {
        return Err(format!("the {role} scenario was not refused"));
    }
    match &row.subject {
        Subject::Command(kind) if o.act_kind.as_deref() != Some(kind) => {
            Err(format!("the {role} scenario's act is {}", kind_of(o)))
        }
        Subject::Event(_) if o.act_kind != positive.act_kind => Err(format!(
            "the {role} scenario refused {}, the positive applied {}",
            kind_of(o),
            kind_of(positive)
        )),
        Subject::Transition { trigger, .. } => {
            watches_row(row, o, role)?;
            if matches!(trigger, Trigger::Command(_)) && !triggered(trigger, o) {
                return Err(format!("the {role} scenario's act is {}", kind_of(o)));
            }
            if o.before != o.after {
                return Err(format!("the {role} scenario changed the watched state"));
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

impl BehaviorReport {
    pub fn total(&self) -> usize {
        self.rows.len()
    }

    fn count(&self, status: Status) -> usize {
        self.rows.iter().filter(|r| r.status == status).count()
    }

    pub fn covered(&self) -> usize {
        self.count(Status::Covered)
    }

    pub fn failing(&self) -> usize {
        self.count(Status::Failing)
    }

    pub fn not_covered(&self) -> usize {
        self.count(Status::NotCovered)
    }

    fn count_rules(&self, status: Status) -> usize {
        self.rules.iter().filter(|r| r.status == status).count()
    }

    /// Rules whose every negative scenario passed with the rule's code.
    pub fn rules_covered(&self) -> usize {
        self.count_rules(Status::Covered)
    }

    pub fn rules_failing(&self) -> usize {
        self.count_rules(Status::Failing)
    }

    pub fn rules_not_covered(&self) -> usize {
        self.count_rules(Status::NotCovered)
    }

    /// No failing or uncovered row, no failed scenario, no matrix problem, and at least one row.
    pub fn ok(&self) -> bool {
        // §22 full conformance: a row without both scenarios fails the run like a failing one.
        self.failing() == 0
            && self.not_covered() == 0
            && self.rules_failing() == 0
            && self.rules_not_covered() == 0
            && self.problems.is_empty()
            && !self.rows.is_empty()
            && self.scenarios.iter().all(|s| s.passed)
    }

    /// `N/M rows with positive and negative evidence; R/T rules with negative evidence`.
    pub fn summary(&self) -> String {
        format!(
            "{}/{} rows with positive and negative evidence; {}/{} rules with negative evidence",
            self.covered(),
            self.total(),
            self.rules_covered(),
            self.rules.len()
        )
    }

    /// The text report: one `FAIL [behavior]` line per failing row, scenario or problem, one
    /// `NOT COVERED [behavior]` line per uncovered row, then the summary with the counts.
    pub fn lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .problems
            .iter()
            .map(|p| format!("FAIL [behavior] matrix: {p}"))
            .collect();
        for row in &self.rows {
            let detail = row.detail.as_deref().unwrap_or("");
            match row.status {
                Status::Failing => lines.push(format!("FAIL [behavior] {}: {detail}", row.id)),
                Status::NotCovered => {
                    lines.push(format!("NOT COVERED [behavior] {}: {detail}", row.id));
                }
                Status::Covered => {}
            }
        }
        for rule in &self.rules {
            let detail = rule.detail.as_deref().unwrap_or("");
            match rule.status {
                Status::Failing => {
                    lines.push(format!("FAIL [behavior] rule {}: {detail}", rule.id))
                }
                Status::NotCovered => {
                    lines.push(format!("NOT COVERED [behavior] rule {}: {detail}", rule.id));
                }
                Status::Covered => {}
            }
        }
        for outcome in self.scenarios.iter().filter(|o| !o.passed) {
            if !self.rows.iter().any(|r| {
                r.positive.as_deref() == Some(&outcome.name)
                    || r.negative.as_deref() == Some(&outcome.name)
                    || r.variants.contains(&outcome.name)
            }) && !self
                .rules
                .iter()
                .any(|r| r.negatives.contains(&outcome.name))
            {
                lines.push(format!(
                    "FAIL [behavior] scenario {:?}: {}",
                    outcome.name,
                    outcome.failure.as_deref().unwrap_or("")
                ));
            }
        }
        lines.push(format!(
            "{} ({} failing, {} not covered; {} scenarios run, {} Events verified)",
            self.summary(),
            self.failing() + self.rules_failing(),
            self.not_covered() + self.rules_not_covered(),
            self.scenarios.len(),
            self.scenarios
                .iter()
                .map(|s| s.events_verified)
                .sum::<usize>()
        ));
        lines
    }

    /// The machine-readable matrix:
    /// `{"covered", "failing", "notCovered", "total", "ok", "summary", "problems", "rows": [{"id",
    /// "category", "status", "positive"?, "negative"?, "variants"?, "detail"?}], "scenarios": [{"name",
    /// "passed", "act"?, "emitted", "refused"?, "refusedAt"? (`ingress` | `engine`), "before"?,
    /// "after"?, "eventsVerified",
    /// "failure"?}]}`.
    pub fn to_value(&self) -> Value {
        let n = |v: usize| Value::Number(Number::from_u64(v as u64));
        let s = |t: &str| Value::string(t);
        let mut o = Object::new();
        o.insert("covered", n(self.covered()));
        o.insert("failing", n(self.failing()));
        o.insert("notCovered", n(self.not_covered()));
        o.insert("total", n(self.total()));
        o.insert("rulesCovered", n(self.rules_covered()));
        o.insert("rulesFailing", n(self.rules_failing()));
        o.insert("rulesNotCovered", n(self.rules_not_covered()));
        o.insert("rulesTotal", n(self.rules.len()));
        o.insert("ok", Value::Bool(self.ok()));
        o.insert("summary", s(&self.summary()));
        o.insert(
            "problems",
            Value::Array(self.problems.iter().map(|p| s(p)).collect()),
        );
        let rows = self
            .rows
            .iter()
            .map(|r| {
                let mut row = Object::new();
                row.insert("id", s(&r.id));
                row.insert("category", s(r.category.as_str()));
                row.insert("status", s(r.status.as_str()));
                if !r.variants.is_empty() {
                    row.insert(
                        "variants",
                        Value::Array(r.variants.iter().map(|v| s(v)).collect()),
                    );
                }
                for (name, value) in [
                    ("positive", &r.positive),
                    ("negative", &r.negative),
                    ("detail", &r.detail),
                ] {
                    if let Some(v) = value {
                        row.insert(name, s(v));
                    }
                }
                Value::Object(row)
            })
            .collect();
        o.insert("rows", Value::Array(rows));
        let rules = self
            .rules
            .iter()
            .map(|r| {
                let mut rule = Object::new();
                rule.insert("id", s(&r.id));
                rule.insert("status", s(r.status.as_str()));
                rule.insert(
                    "negatives",
                    Value::Array(r.negatives.iter().map(|v| s(v)).collect()),
                );
                if let Some(detail) = &r.detail {
                    rule.insert("detail", s(detail));
                }
                Value::Object(rule)
            })
            .collect();
        o.insert("rules", Value::Array(rules));
        let scenarios = self
            .scenarios
            .iter()
            .map(|x| {
                let mut sc = Object::new();
                sc.insert("name", s(&x.name));
                sc.insert("passed", Value::Bool(x.passed));
                sc.insert(
                    "emitted",
                    Value::Array(x.emitted.iter().map(|k| s(k)).collect()),
                );
                sc.insert("eventsVerified", n(x.events_verified));
                for (name, value) in [
                    ("act", x.act_kind.as_deref()),
                    ("refused", x.refused.map(|c| c.as_str())),
                    ("refusedAt", x.refused_at),
                    ("before", x.before.as_deref()),
                    ("after", x.after.as_deref()),
                    ("failure", x.failure.as_deref()),
                ] {
                    if let Some(v) = value {
                        sc.insert(name, s(v));
                    }
                }
                Value::Object(sc)
            })
            .collect();
        o.insert("scenarios", Value::Array(scenarios));
        Value::Object(o)
    }
}
