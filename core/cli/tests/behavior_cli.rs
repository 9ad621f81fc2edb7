#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! `missionweaveprotocol-conformance --bundle behavior` as a real process: the text report and
//! the machine-readable matrix (`--json`).

use std::process::Command;

use missionweaveprotocol::json::{Value, parse};

fn binary() -> Command {
    Command::new(env!("CARGO_BIN_EXE_missionweaveprotocol-conformance"))
}

fn int(value: &Value, pointer: &str) -> u64 {
    value
        .pointer(pointer)
        .and_then(Value::as_number)
        .and_then(|n| n.as_u64())
        .unwrap_or_else(|| panic!("no {pointer}"))
}

#[test]
fn text_report_covers_every_row() {
    let output = binary().args(["--bundle", "behavior"]).output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(output.stderr.is_empty());
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("behavior: scenarios run in process against the engine"));
    let last = lines.last().unwrap();
    // `N/M rows with positive and negative evidence; R/T rules with negative evidence (F
    // failing, U not covered; S scenarios run, E Events verified)`.
    let (counts, rest) = last
        .split_once(" rows with positive and negative evidence; ")
        .unwrap();
    let (covered, total) = counts.split_once('/').unwrap();
    let (covered, total): (u64, u64) = (covered.parse().unwrap(), total.parse().unwrap());
    assert_eq!(total, 104);
    assert_eq!(covered, total, "{last}");
    let (rules, rest) = rest.split_once(" rules with negative evidence (").unwrap();
    let (rules_covered, rules_total) = rules.split_once('/').unwrap();
    let (rules_covered, rules_total): (u64, u64) =
        (rules_covered.parse().unwrap(), rules_total.parse().unwrap());
    assert!(rules_total >= 50, "{last}");
    assert_eq!(rules_covered, rules_total, "{last}");
    assert!(rest.starts_with("0 failing, 0 not covered; "), "{last}");
    assert!(!text.contains("NOT COVERED ["), "{text}");
    assert!(!text.contains("FAIL ["), "{text}");
    // The service kinds, the usage record and the engine's lease revocation have evidence.
    for kind in [
        "ext.missionweaveprotocol.identity.session_open",
        "ext.missionweaveprotocol.registry.agent_card_register",
        "ext.missionweaveprotocol.core.resource_usage_record",
        "ext.missionweaveprotocol.core.work_execution_lease_revoked",
    ] {
        assert!(!text.contains(kind), "{kind} is listed:\n{text}");
    }
}

#[test]
fn json_report_is_the_matrix() {
    let output = binary()
        .args(["--bundle=behavior", "--json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let report = parse(&output.stdout).unwrap();
    assert_eq!(report.get("ok"), Some(&Value::Bool(true)));
    let behavior = report.pointer("/bundles/behavior").unwrap();
    let rows = behavior.get("rows").and_then(Value::as_array).unwrap();
    assert_eq!(rows.len() as u64, int(behavior, "/total"));
    assert_eq!(
        int(behavior, "/covered") + int(behavior, "/notCovered") + int(behavior, "/failing"),
        int(behavior, "/total")
    );
    assert_eq!(int(behavior, "/failing"), 0);
    let mut per_category = std::collections::BTreeMap::new();
    for row in rows {
        let text = |name: &str| row.get(name).and_then(Value::as_str);
        let status = text("status").unwrap();
        *per_category
            .entry(text("category").unwrap().to_owned())
            .or_insert(0) += 1;
        assert!(text("id").is_some());
        match status {
            "covered" => assert!(text("positive").is_some() && text("negative").is_some()),
            "not_covered" => assert!(text("detail").is_some()),
            other => panic!("row status {other}"),
        }
    }
    // Every rule of §6.3, §7, §10, §12 and §15 has its negative evidence.
    let rules = behavior.get("rules").and_then(Value::as_array).unwrap();
    assert_eq!(rules.len() as u64, int(behavior, "/rulesTotal"));
    assert_eq!(int(behavior, "/rulesCovered"), int(behavior, "/rulesTotal"));
    for rule in rules {
        assert_eq!(rule.get("status").and_then(Value::as_str), Some("covered"));
        assert!(
            !rule
                .get("negatives")
                .and_then(Value::as_array)
                .unwrap()
                .is_empty()
        );
    }
    assert_eq!(
        per_category.into_iter().collect::<Vec<_>>(),
        [
            ("command".to_owned(), 38),
            ("event".to_owned(), 40),
            ("mission_transition".to_owned(), 8),
            ("work_item_transition".to_owned(), 18),
        ]
    );
    // Every named scenario ran, passed and verified Events.
    let scenarios = behavior.get("scenarios").and_then(Value::as_array).unwrap();
    for scenario in scenarios {
        assert_eq!(scenario.get("passed"), Some(&Value::Bool(true)));
        assert!(int(scenario, "/eventsVerified") >= 1);
    }
    for row in rows.iter().filter(|r| r.get("positive").is_some()) {
        for role in ["positive", "negative"] {
            let name = row.get(role).and_then(Value::as_str).unwrap();
            assert!(
                scenarios
                    .iter()
                    .any(|s| s.get("name").and_then(Value::as_str) == Some(name)),
                "{name}"
            );
        }
    }
}
