//! `--bundle behavior`: the engine's evidence matrix (`missionweaveprotocol_behavior`), run in
//! process. It reads no bundle root: the scenarios drive the engine built into this binary and
//! the kinds come from the pinned schemas embedded in it.

use missionweaveprotocol::bundle::SOURCE_COMMIT;
use missionweaveprotocol::json::{Object, Value};
use missionweaveprotocol_behavior::BehaviorReport;

use crate::cli_error::{CliError, Exit};
use crate::output::Output;

/// Runs the matrix and writes its report; `Failed` if any row or scenario failed.
pub(crate) fn run(json: bool, out: &mut Output<'_>) -> Result<Exit, CliError> {
    if !json {
        out.line(&format!(
            "behavior: scenarios run in process against the engine (InMemoryStore), kinds from the pinned schemas of protocol commit {SOURCE_COMMIT}"
        ))?;
        out.flush()?;
    }
    finish(&missionweaveprotocol_behavior::run(), json, out)
}

/// Writes `report`; the exit status is its verdict.
fn finish(report: &BehaviorReport, json: bool, out: &mut Output<'_>) -> Result<Exit, CliError> {
    write(report, json, out)?;
    Ok(if report.ok() {
        Exit::Passed
    } else {
        Exit::Failed
    })
}

fn write(report: &BehaviorReport, json: bool, out: &mut Output<'_>) -> Result<(), CliError> {
    if json {
        // The same envelope as the protocol bundles: {"bundles": {"behavior": …}, "ok": …}.
        let mut bundles = Object::new();
        bundles.insert("behavior", report.to_value());
        let mut object = Object::new();
        object.insert("bundles", Value::Object(bundles));
        object.insert("ok", Value::Bool(report.ok()));
        return out.line(&crate::to_json_line(&Value::Object(object)));
    }
    for line in report.lines() {
        out.line(&line)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    use missionweaveprotocol::WireCode;
    use missionweaveprotocol_behavior::Matrix;
    use missionweaveprotocol_behavior::payloads::{self, W1};
    use missionweaveprotocol_behavior::scenario::{Scenario, Watch};
    use missionweaveprotocol_behavior::steps;

    /// A deliberately broken scenario (the wrong code) makes the command exit 1 and name the rows.
    #[test]
    fn a_broken_scenario_is_reported_failing_with_exit_1() {
        let mut matrix = Matrix::standard().unwrap();
        let name = "work.offer: a stale Coordinator Epoch is fenced";
        let slot = matrix
            .scenarios
            .iter_mut()
            .find(|s| s.name == name)
            .unwrap();
        *slot = Scenario::new(name)
            .given(steps::authorized(W1))
            .when(steps::coordinator_at(
                2,
                "work.offer",
                payloads::offer(W1, "r1"),
            ))
            .watch(Watch::WorkItem(W1))
            .refused(WireCode::AuthForbidden);
        let report = missionweaveprotocol_behavior::run_matrix(&matrix);
        let mut bytes = Vec::new();
        let exit = finish(&report, false, &mut Output::new(&mut bytes)).unwrap();
        assert_eq!(exit, Exit::Failed);
        let text = String::from_utf8(bytes).unwrap();
        assert!(
            text.contains("FAIL [behavior] command work.offer: negative scenario"),
            "{text}"
        );
        assert!(text.contains("expected AUTH_FORBIDDEN, refused AUTH_STALE_COORDINATOR"));
        assert!(text.contains("FAIL [behavior] event work.offer.created: "));
        let mut bytes = Vec::new();
        assert_eq!(
            finish(&report, true, &mut Output::new(&mut bytes)).unwrap(),
            Exit::Failed
        );
        let value = missionweaveprotocol::json::parse_state(&bytes).unwrap();
        assert_eq!(value.get("ok"), Some(&Value::Bool(false)));
        assert_eq!(
            value
                .pointer("/bundles/behavior/failing")
                .and_then(Value::as_number)
                .and_then(|n| n.as_u64()),
            Some(2)
        );
    }
}
