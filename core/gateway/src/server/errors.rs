//! Every refusal of the connection machine as an `error.schema.json` body (§19): the code, a
//! wire-safe message, `retryable` from the core vocabulary, the related frame and Action ID,
//! the Group where relevant — and nothing the Agent may not know.
//!
//! **Non-disclosure (§17.2).** A Group the Agent may not see is answered exactly like a Group
//! that does not exist: [`group_not_found`] is the only way this crate builds a
//! `GROUP_NOT_FOUND`, with one fixed message and the Group ID the Agent itself named, and a
//! Core refusal with that code is rebuilt through it, so its text (which could differ between
//! an absent and a hidden aggregate) never reaches the wire.

use missionweaveprotocol::WireCode;
use missionweaveprotocol::json::{Number, Object, Value};
use missionweaveprotocol::{DescribeError, FieldValue};
use missionweaveprotocol_agent::auth::AuthError;
use missionweaveprotocol_engine::service::CoreError;

use crate::frames::ErrorBody;

/// The one message of every `GROUP_NOT_FOUND` the gateway sends.
pub const GROUP_NOT_FOUND_MESSAGE: &str = "group not found";

/// `GROUP_NOT_FOUND` for `group_id` (absent and hidden alike).
pub(crate) fn group_not_found(group_id: &str) -> ErrorBody {
    ErrorBody::new(WireCode::GroupNotFound, GROUP_NOT_FOUND_MESSAGE).in_group(group_id)
}

fn integer_field(error: &CoreError, name: &str) -> Option<u64> {
    match error.fields.get(name) {
        Some(FieldValue::Integer(value)) => u64::try_from(*value).ok(),
        _ => None,
    }
}

fn text_field(error: &CoreError, name: &str) -> Option<String> {
    match error.fields.get(name) {
        Some(FieldValue::Text(value)) => Some(value.clone()),
        _ => None,
    }
}

/// A refusal of the Core. `retryable` is the vocabulary's and the Core's together: an
/// unchanged retry is called safe only when both say so (an `INTERNAL_ERROR` for a corrupt
/// store row is not retryable although its code usually is). `group_id` is the Group the
/// request named; only protocol-safe fields are copied (revisions, retry time, snapshot).
pub(crate) fn core_error(error: &CoreError, group_id: Option<&str>) -> ErrorBody {
    if error.wire_code == WireCode::GroupNotFound {
        return match group_id {
            Some(group) => group_not_found(group),
            None => ErrorBody::new(WireCode::GroupNotFound, GROUP_NOT_FOUND_MESSAGE),
        };
    }
    let mut body = ErrorBody::new(error.wire_code, error.message.as_str());
    body.retryable = error.wire_code.retryable() && error.retryable;
    body.group_id = group_id.map(str::to_owned);
    body.expected_revision = integer_field(error, "expected_revision");
    body.current_revision = integer_field(error, "current_revision");
    body.retry_after_ms = integer_field(error, "retry_after_ms");
    body.snapshot_artifact_hash = text_field(error, "snapshot_artifact_hash");
    body
}

/// A refusal of authentication (`agent::auth`); never names a secret (`AuthError` has none).
pub(crate) fn auth_error(error: &AuthError) -> ErrorBody {
    let mut body = ErrorBody::new(error.code(), error.to_string());
    body.retryable = DescribeError::retryable(error);
    body
}

/// A limit of [`Limits`](super::Limits) refused the request: `RATE_LIMITED` (§19 "Policy rate
/// or recursion threshold was reached"), with `details {limit, maximum}` naming it.
pub(crate) fn limit(name: &str, maximum: u64) -> ErrorBody {
    let mut details = Object::new();
    details.insert("limit", Value::string(name));
    details.insert("maximum", Value::Number(Number::from_u64(maximum)));
    let mut body = ErrorBody::new(
        WireCode::RateLimited,
        format!("the gateway's {name} limit ({maximum}) was reached"),
    );
    body.details = Some(details);
    body
}

/// A peer that broke framing or a core invariant.
pub(crate) fn violation(message: &str) -> ErrorBody {
    ErrorBody::new(WireCode::ProtocolViolation, message)
}
