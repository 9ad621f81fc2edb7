//! [`PolicyError`]: every refusal of the policy layer, with its §19 wire code.
//!
//! One struct rather than one variant per rule: each constructor names the rule (a stable
//! `reason` slug programs match on), the §19 code, a readable message and structured fields.
//! Messages and fields never carry a secret, a MAC or a token (§12 "tokens and secrets MUST NOT
//! appear in …"): only identifiers, epochs, dimensions and limits.

use core::fmt;

use missionweaveprotocol::{DescribeError, ErrorClass, Fields, WireCode};

use missionweaveprotocol_kernel::resources::Dimension;

/// A policy refusal: §19 code, reason slug, message and fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyError {
    code: WireCode,
    reason: &'static str,
    message: String,
    fields: Fields,
    retry_after_ms: Option<u64>,
}

impl PolicyError {
    /// A refusal with `code`, `reason` and `message`.
    pub fn new(code: WireCode, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
            fields: Fields::new(),
            retry_after_ms: None,
        }
    }

    /// The same refusal with one more text field.
    pub fn with_text(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.fields = self.fields.text(name, value);
        self
    }

    /// The same refusal with one more integer field (saturating at `i64::MAX`).
    pub fn with_integer(mut self, name: &'static str, value: u64) -> Self {
        self.fields = self
            .fields
            .integer(name, i64::try_from(value).unwrap_or(i64::MAX));
        self
    }

    /// An argument outside its rule (`INVALID_COMMAND`, reason `invalid_argument`).
    pub fn invalid(field: &'static str, message: impl Into<String>) -> Self {
        Self::new(WireCode::InvalidCommand, "invalid_argument", message).with_text("field", field)
    }

    /// A token that is not `b64url(claims).b64url(mac)` of a claims object
    /// (`AUTH_INVALID_SIGNATURE`: the credential check failed, §19).
    pub fn malformed_token(message: impl Into<String>) -> Self {
        Self::new(WireCode::AuthInvalidSignature, "token_malformed", message)
    }

    /// A token whose MAC does not verify under this service's secret.
    pub fn forged_token() -> Self {
        Self::new(
            WireCode::AuthInvalidSignature,
            "token_forged",
            "the token's MAC does not verify",
        )
    }

    /// `BUDGET_EXCEEDED` naming the dimension (§12).
    pub fn budget_exceeded(dimension: Dimension, message: impl Into<String>) -> Self {
        Self::new(WireCode::BudgetExceeded, "budget_exceeded", message)
            .with_text("dimension", dimension.as_str())
    }

    /// `RATE_LIMITED` for `policy` with retry guidance (§20, §19 `retryAfterMs`).
    pub fn rate_limited(policy: &'static str, retry_after_ms: u64) -> Self {
        Self::rate_limited_as("rate_limited", policy, retry_after_ms)
    }

    /// `RATE_LIMITED` with another reason slug.
    pub fn rate_limited_as(
        reason: &'static str,
        policy: &'static str,
        retry_after_ms: u64,
    ) -> Self {
        let mut error = Self::new(
            WireCode::RateLimited,
            reason,
            format!("{policy} limit reached; retry after {retry_after_ms} ms"),
        )
        .with_text("policy", policy)
        .with_integer("retry_after_ms", retry_after_ms);
        error.retry_after_ms = Some(retry_after_ms);
        error
    }

    /// `APPROVAL_REQUIRED` (§12 execution-approval gate).
    pub fn approval_required(reason: &'static str, message: impl Into<String>) -> Self {
        Self::new(WireCode::ApprovalRequired, reason, message)
    }

    /// The §19 code.
    pub fn code(&self) -> WireCode {
        self.code
    }

    /// The stable reason slug.
    pub fn reason(&self) -> &'static str {
        self.reason
    }

    /// The readable message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// `retryAfterMs` of a `RATE_LIMITED` refusal.
    pub fn retry_after_ms(&self) -> Option<u64> {
        self.retry_after_ms
    }
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PolicyError {}

impl DescribeError for PolicyError {
    fn class(&self) -> ErrorClass {
        ErrorClass::Policy
    }
    fn wire_code(&self) -> WireCode {
        self.code
    }
    fn reason(&self) -> &str {
        self.reason
    }
    fn fields(&self) -> Fields {
        self.fields.clone()
    }
    fn retryable(&self) -> bool {
        // A rate limit clears by itself after `retryAfterMs` (§20); everything else (a
        // recursion threshold included) needs a new token, epoch, approval or policy first.
        self.retry_after_ms.is_some()
    }
}
