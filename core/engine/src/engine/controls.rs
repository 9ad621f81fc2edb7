//! Rate and runaway controls (§20): Organization policy limits on proposal rates and on active
//! and queued WorkItems, applied around the pure decision of the Commands they govern.
//!
//! A limit refuses the new transition with `RATE_LIMITED` (reason = the reference's
//! `CooperationPolicyName`: `proposal_rate`, `queued_work_items`, `active_work_items`; fields
//! `policy`, `limit` and, for rates, `retry_after_ms`, §19 `retryAfterMs`); it never discards
//! accepted work (§20 "policy limits MUST NOT silently discard accepted work"). The counts are
//! read in the decision's own transaction: the rows they read are checked at commit, so two
//! racing Commands cannot both take the last slot.
//!
//! - `queued_work_items`: per Group, WorkItems not yet started (`open`, `offered`, `queued`);
//!   checked when `work.authorize` adds one;
//! - `active_work_items`: per Group and Worker, WorkItems `active` under that Worker; checked
//!   when `work.start` adds one;
//! - `proposal_rate`: per Group and sender, `work.propose` per minute, over a sliding window
//!   kept as one small aggregate (at most `limit` timestamps).
//!
//! Defaults are the reference's `CooperationLimits` (100 queued, 4 active, 30 proposals per
//! minute). The delegation depth limit (§9.1, §20) applies to `membership.grant_delegation` and
//! delegated `work.authorize`. Any one of these limits is lifted once by a Cooperation Override
//! Grant the Command cites (`cooperation_override/`). Message and clarification limits
//! belong to the Message Commands.

use missionweaveprotocol::json::{self, Object, Value};

use crate::decision::Decision;
use crate::error::EngineError;
use crate::ingress::VerifiedCommand;
use crate::store::{AggregateKey, Blob, Store};
use missionweaveprotocol_kernel::cooperation::CooperationLimits;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// Store kind of a rate window.
pub const RATE_WINDOW_KIND: &str = "rate_window";

/// The window of the per-minute rates.
const MINUTE_MS: i64 = 60_000;

/// Applies the limits that govern `command` to its `decision`: refuses, or adds the reads
/// (checked at commit) and the window write. A Command citing a Cooperation Override Grant
/// (§20, `cooperationOverrideGrantId`) has it checked first (`AUTH_FORBIDDEN` when it does not
/// match); the one limit it names is then lifted, and the Grant consumed with the decision.
pub(crate) fn apply(
    store: &dyn Store,
    limits: &CooperationLimits,
    command: &VerifiedCommand,
    decision: Decision,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let cited = crate::cooperation_override::Cited::read(store, command, now)?;
    let lift = cited.as_ref().map(|c| c.policy().to_owned());
    let mut lifted = false;
    let decision = guard(lift.as_deref(), &mut lifted, decision, |d| {
        limit(store, limits, command, d, now)
    })?;
    let decision = guard(lift.as_deref(), &mut lifted, decision, |d| {
        delegation_depth(limits, command, d)
    })?;
    match cited {
        Some(cited) if lifted => cited.consume(command, decision, now),
        _ => Ok(decision),
    }
}

/// Runs one limit `check`; a refusal of the policy `lift` names is lifted (`lifted` set) and
/// the decision kept as it was.
fn guard(
    lift: Option<&str>,
    lifted: &mut bool,
    decision: Decision,
    check: impl FnOnce(Decision) -> Result<Decision, EngineError>,
) -> Result<Decision, EngineError> {
    let Some(lift) = lift else {
        return check(decision);
    };
    match check(decision.clone()) {
        Err(EngineError::RateLimited { policy, .. }) if policy == lift => {
            *lifted = true;
            Ok(decision)
        }
        other => other,
    }
}

fn limit(
    store: &dyn Store,
    limits: &CooperationLimits,
    command: &VerifiedCommand,
    decision: Decision,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    match command.kind() {
        "work.authorize" => match limits.maximum_queued_work_items {
            Some(limit) => count_rows(store, command, decision, limit, "queued_work_items"),
            None => Ok(decision),
        },
        "work.start" => match limits.maximum_active_work_items {
            Some(limit) => count_rows(store, command, decision, limit, "active_work_items"),
            None => Ok(decision),
        },
        "work.propose" => match limits.maximum_proposal_rate_per_minute {
            Some(limit) => proposal_rate(store, command, decision, limit, now),
            None => Ok(decision),
        },
        _ => Ok(decision),
    }
}

/// §20 delegation depth: a Grant's `maxDescendantDepth`, and the depth of a WorkItem a
/// delegated `work.authorize` creates, stay within the Organization's `maximum_delegation_depth` (§9.1 "Descendant depth MUST
/// satisfy both the Grant maximum and Organization cooperation policy"; the reference's
/// default 3), unless a Cooperation Override Grant lifts it (`RATE_LIMITED`, `delegation_depth`).
fn delegation_depth(
    limits: &CooperationLimits,
    command: &VerifiedCommand,
    decision: Decision,
) -> Result<Decision, EngineError> {
    let Some(maximum) = limits.maximum_delegation_depth else {
        return Ok(decision);
    };
    let depth = match command.kind() {
        "work.authorize" => crate::delegation::links::link_depth(&decision),
        crate::delegation::GRANT_DELEGATION => command
            .payload()
            .get("maxDescendantDepth")
            .and_then(Value::as_number)
            .and_then(|n| n.as_u64())
            .map(|d| u32::try_from(d).unwrap_or(u32::MAX)),
        _ => None,
    };
    match depth {
        Some(depth) if depth > maximum => Err(EngineError::RateLimited {
            policy: "delegation_depth",
            limit: maximum,
            retry_after_ms: None,
        }),
        _ => Ok(decision),
    }
}

/// Counts the Group's WorkItems that `policy` limits, from the index rows the decision wrote
/// (its own WorkItem's new row) and read (every other row of the Mission).
fn count_rows(
    store: &dyn Store,
    command: &VerifiedCommand,
    mut decision: Decision,
    limit: u32,
    policy: &'static str,
) -> Result<Decision, EngineError> {
    // The decision wrote exactly one WorkItem index row: the subject's.
    let Some(own) = decision
        .writes
        .iter()
        .find(|w| w.key.kind == crate::work::read::INDEX_KIND && w.value.is_some())
        .map(|w| w.key.clone())
    else {
        return Ok(decision);
    };
    let Some((mission_id, _)) = own.id.split_once(' ') else {
        return Ok(decision);
    };
    let actor = &command.actor().id;
    let counts = |row: &Value| -> bool {
        let state = row.get("state").and_then(Value::as_str);
        match policy {
            "queued_work_items" => matches!(state, Some("open" | "offered" | "queued")),
            _ => state == Some("active") && row.get("owner").and_then(Value::as_str) == Some(actor),
        }
    };
    let mut count: u64 = 1; // the subject, after the transition
    let prefix = format!("{mission_id} ");
    for (id, row) in store.list(crate::work::read::INDEX_KIND, &prefix)? {
        let key = AggregateKey::new(crate::work::read::INDEX_KIND, id.as_str());
        if key == own {
            continue;
        }
        let value = json::parse_state(&row.value).map_err(|e| EngineError::Corrupt {
            key: key.clone(),
            detail: e.to_string(),
        })?;
        if counts(&value) {
            count += 1;
        }
        // Checked at commit: a concurrent change of any counted row makes this decide again.
        decision = decision.check(key, row.revision);
    }
    if count > u64::from(limit) {
        return Err(EngineError::RateLimited {
            policy,
            limit,
            retry_after_ms: None,
        });
    }
    Ok(decision)
}

/// The sliding one-minute window of `work.propose` per Group and sender.
fn proposal_rate(
    store: &dyn Store,
    command: &VerifiedCommand,
    decision: Decision,
    limit: u32,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let group = command.group_id().unwrap_or_default();
    let actor = command.actor();
    let key = AggregateKey::new(
        RATE_WINDOW_KIND,
        format!("{group} proposal {}:{}", actor.kind.as_str(), actor.id),
    );
    let stored = store.aggregate(&key)?;
    let read_revision = stored.as_ref().map_or(0, |s| s.revision);
    let mut times: Vec<i64> = match &stored {
        None => Vec::new(),
        Some(s) => json::parse_state(&s.value)
            .ok()
            .and_then(|v| {
                v.get("times")?
                    .as_array()?
                    .iter()
                    .map(|t| t.as_number().and_then(|n| n.as_i64()))
                    .collect::<Option<Vec<i64>>>()
            })
            .ok_or_else(|| EngineError::Corrupt {
                key: key.clone(),
                detail: "unreadable rate window".to_owned(),
            })?,
    };
    // Only the last minute counts; the window never holds more than `limit` entries.
    times.retain(|t| now.0 - t < MINUTE_MS);
    if times.len() >= limit as usize {
        let oldest = times.iter().copied().min().unwrap_or(now.0);
        return Err(EngineError::RateLimited {
            policy: "proposal_rate",
            limit,
            retry_after_ms: Some(u64::try_from(oldest + MINUTE_MS - now.0).unwrap_or(0)),
        });
    }
    times.push(now.0);
    let mut window = Object::new();
    window.insert(
        "times",
        Value::Array(
            times
                .into_iter()
                .map(|t| Value::Number(json::Number::from_i64(t)))
                .collect(),
        ),
    );
    let bytes = json::canonical_bytes(&Value::Object(window))
        .map_err(|e| EngineError::invalid("not_canonical", e.to_string()))?;
    Ok(decision.put(key, read_revision, Blob::from(bytes)))
}
