//! One description for every error the core can return (§19).
//!
//! Every error type of the core crates implements [`DescribeError`]: its wire code (the
//! [`WireCode`] enum, never a string), a stable reason slug, a readable message (its
//! `Display`, never a `Debug` dump), the semantic stage where one applies, and structured fields
//! (`dimension`, `account`, `path`, …). Bindings turn any `&dyn DescribeError` into their own
//! exception or `Error` class with one generic function: no binding keeps a per-variant table of
//! codes or messages (`docs/errors.md`).

use core::fmt;

use super::{Stage, WireCode};

/// The family an error belongs to: one exception class per family in every binding.
///
/// The Python and JavaScript class names live here too, so that the vocabulary is written once;
/// the Python names are the reference runtime's (`reference-python.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    /// API misuse: an argument of the wrong type, shape or range (not a wire event).
    Argument,
    /// Strict JSON parsing failed (§6.4 stage 1).
    Parse,
    /// A value outside the I-JSON data model (§6.4 stage 5, RFC 8785).
    Canonicalization,
    /// An instance does not match its schema.
    Schema,
    /// A timestamp outside the §2 RFC 3339 profile.
    Timestamp,
    /// A signed document was rejected (§6.4).
    Verification,
    /// A document cannot be signed: it would not verify.
    Signing,
    /// Registry evidence is not usable (§6.4 stage 4).
    Registry,
    /// First Admission or historical replay failed (§6.4).
    Admission,
    /// A frame failed strict parsing or the frame schema (§17).
    Frame,
    /// The embedded protocol bundle failed its integrity checks (§22).
    Bundle,
    /// A lease operation or lease-bound claim was refused (§11.3).
    Lease,
    /// A budget ledger operation was refused (§12).
    Budget,
    /// Charging or reserving would pass a budget limit (§12): `BUDGET_EXCEEDED`.
    BudgetExceeded,
    /// A Delegation Grant use was refused (§9.1).
    Delegation,
    /// A retry-controller call was refused (§11.4).
    Policy,
    /// The retry loop is over for good (§11.4).
    RetryExhausted,
    /// A Scheduler argument, checkpoint or snapshot was refused (§11.1).
    Scheduler,
    /// A Scheduler call does not fit the WorkItem's state or run (§11.1).
    SchedulerState,
    /// A persisted snapshot document is malformed.
    Snapshot,
    /// Content-addressed Artifact bytes or their manifest were refused (§13.1): a local store
    /// operation, not a wire event.
    Artifact,
    /// An Agent authentication step was refused (§6.3): a HELLO challenge, a session token or
    /// an Agent key.
    Authentication,
    /// An Agent runtime call was refused for an argument or a dispatch the Scheduler does not
    /// have running (§11.3); the session and context refusals have their own classes.
    Agent,
    /// A second Agent Session while one is active: one runtime, one session (§6.3).
    ActiveSession,
    /// A Session Epoch not above every earlier one (§6.3).
    StaleSessionEpoch,
    /// A session that is closed or was replaced (§6.3).
    ClosedSession,
    /// A Group context or credential revision not above the installed one.
    StaleContext,
    /// Offline buffering, rebasing or reconciliation was refused (§11.5).
    Offline,
    /// A replay stopped (§16): a source, store or snapshot failure.
    Replay,
    /// A replay stopped on a Group identifier problem (§16).
    ReplayGroup,
    /// A replay stopped on a sequence or position problem (§16).
    ReplaySequence,
    /// A replay stopped on a projection problem (§16).
    ReplayProjection,
    /// An Agent-local store refused or failed an operation: a local store operation, not a
    /// wire event.
    LocalStore,
    /// A Context Package was refused (§13.3): its scope, Event provenance or version chain.
    Context,
}

impl ErrorClass {
    /// Every class.
    pub const ALL: [ErrorClass; 34] = [
        Self::Argument,
        Self::Parse,
        Self::Canonicalization,
        Self::Schema,
        Self::Timestamp,
        Self::Verification,
        Self::Signing,
        Self::Registry,
        Self::Admission,
        Self::Frame,
        Self::Bundle,
        Self::Lease,
        Self::Budget,
        Self::BudgetExceeded,
        Self::Delegation,
        Self::Policy,
        Self::RetryExhausted,
        Self::Scheduler,
        Self::SchedulerState,
        Self::Snapshot,
        Self::Artifact,
        Self::Authentication,
        Self::Agent,
        Self::ActiveSession,
        Self::StaleSessionEpoch,
        Self::ClosedSession,
        Self::StaleContext,
        Self::Offline,
        Self::Replay,
        Self::ReplayGroup,
        Self::ReplaySequence,
        Self::ReplayProjection,
        Self::LocalStore,
        Self::Context,
    ];

    /// Stable kebab-case name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Argument => "argument",
            Self::Parse => "parse",
            Self::Canonicalization => "canonicalization",
            Self::Schema => "schema",
            Self::Timestamp => "timestamp",
            Self::Verification => "verification",
            Self::Signing => "signing",
            Self::Registry => "registry",
            Self::Admission => "admission",
            Self::Frame => "frame",
            Self::Bundle => "bundle",
            Self::Lease => "lease",
            Self::Budget => "budget",
            Self::BudgetExceeded => "budget-exceeded",
            Self::Delegation => "delegation",
            Self::Policy => "policy",
            Self::RetryExhausted => "retry-exhausted",
            Self::Scheduler => "scheduler",
            Self::SchedulerState => "scheduler-state",
            Self::Snapshot => "snapshot",
            Self::Artifact => "artifact",
            Self::Authentication => "authentication",
            Self::Agent => "agent",
            Self::ActiveSession => "active-session",
            Self::StaleSessionEpoch => "stale-session-epoch",
            Self::ClosedSession => "closed-session",
            Self::StaleContext => "stale-context",
            Self::Offline => "offline",
            Self::Replay => "replay",
            Self::ReplayGroup => "replay-group",
            Self::ReplaySequence => "replay-sequence",
            Self::ReplayProjection => "replay-projection",
            Self::LocalStore => "local-store",
            Self::Context => "context",
        }
    }

    /// Parses [`as_str`](Self::as_str).
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == text)
    }

    /// The exception class of the Python package (`missionweaveprotocol.errors`), named as in
    /// the reference runtime where it has one.
    pub const fn python_name(self) -> &'static str {
        match self {
            Self::Argument => "InvalidInputError",
            Self::Parse => "JsonParseError",
            Self::Canonicalization => "CanonicalizationError",
            Self::Schema => "SchemaValidationError",
            Self::Timestamp => "TimestampError",
            Self::Verification | Self::Registry => "SignedDocumentVerificationError",
            Self::Signing => "SignedDocumentSigningError",
            Self::Admission => "AdmissionError",
            Self::Frame => "FrameError",
            Self::Bundle => "BundleVerificationError",
            Self::Lease => "LeaseError",
            // The reference has one ledger error class.
            Self::Budget | Self::BudgetExceeded => "BudgetLedgerError",
            Self::Delegation => "DelegationViolation",
            Self::Policy => "PolicyError",
            Self::RetryExhausted => "RetryExhausted",
            Self::Scheduler => "SchedulerError",
            Self::SchedulerState => "SchedulerStateError",
            Self::Snapshot => "SnapshotError",
            Self::Artifact => "ArtifactError",
            Self::Authentication => "AuthenticationError",
            Self::Agent => "AgentError",
            Self::ActiveSession => "ActiveSessionError",
            Self::StaleSessionEpoch => "StaleSessionEpochError",
            Self::ClosedSession => "ClosedSessionError",
            Self::StaleContext => "StaleContextError",
            Self::Offline => "OfflinePolicyError",
            Self::Replay => "ReplayError",
            Self::ReplayGroup => "ReplayGroupError",
            Self::ReplaySequence => "ReplaySequenceError",
            Self::ReplayProjection => "ReplayProjectionError",
            Self::LocalStore => "LocalStoreError",
            Self::Context => "ContextPackageError",
        }
    }

    /// The `Error` subclass of the npm package.
    pub const fn js_name(self) -> &'static str {
        match self {
            Self::Argument => "ArgumentError",
            Self::Parse => "ParseError",
            Self::Canonicalization => "CanonicalizationError",
            Self::Schema => "SchemaValidationError",
            Self::Timestamp => "TimestampError",
            Self::Verification => "VerificationError",
            Self::Signing => "SigningError",
            Self::Registry => "RegistryError",
            Self::Admission => "AdmissionError",
            Self::Frame => "FrameError",
            Self::Bundle => "BundleError",
            Self::Lease => "LeaseError",
            Self::Budget => "BudgetLedgerError",
            Self::BudgetExceeded => "BudgetExceededError",
            Self::Delegation => "DelegationViolation",
            Self::Policy => "RetryError",
            Self::RetryExhausted => "RetryExhausted",
            Self::Scheduler => "SchedulerError",
            Self::SchedulerState => "SchedulerStateError",
            Self::Snapshot => "SnapshotError",
            Self::Artifact => "ArtifactError",
            Self::Authentication => "AuthenticationError",
            Self::Agent => "AgentError",
            Self::ActiveSession => "ActiveSessionError",
            Self::StaleSessionEpoch => "StaleSessionEpochError",
            Self::ClosedSession => "ClosedSessionError",
            Self::StaleContext => "StaleContextError",
            Self::Offline => "OfflinePolicyError",
            Self::Replay => "ReplayError",
            Self::ReplayGroup => "ReplayGroupError",
            Self::ReplaySequence => "ReplaySequenceError",
            Self::ReplayProjection => "ReplayProjectionError",
            Self::LocalStore => "LocalStoreError",
            Self::Context => "ContextPackageError",
        }
    }
}

impl fmt::Display for ErrorClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A structured field's value. Names are snake_case; JavaScript shows them in camelCase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldValue {
    /// Text.
    Text(String),
    /// An integer (a safe integer wherever it can reach JSON).
    Integer(i64),
    /// A flag.
    Bool(bool),
    /// A list of texts.
    Texts(Vec<String>),
    /// A budget account: kind (`mission` or `work_item`) and ID. Python shows it as the
    /// reference's `AccountRef` tuple, JavaScript as `{kind, id}`.
    Account {
        /// `mission` or `work_item`.
        kind: &'static str,
        /// The account's ID.
        id: String,
    },
}

/// An error's structured fields, in a stable order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fields(Vec<(&'static str, FieldValue)>);

impl Fields {
    /// No fields.
    pub const fn new() -> Self {
        Self(Vec::new())
    }

    /// Adds a text field.
    pub fn text(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.0.push((name, FieldValue::Text(value.into())));
        self
    }

    /// Adds a text field when `value` is set.
    pub fn opt_text(self, name: &'static str, value: Option<impl Into<String>>) -> Self {
        match value {
            Some(value) => self.text(name, value),
            None => self,
        }
    }

    /// Adds an integer field.
    pub fn integer(mut self, name: &'static str, value: i64) -> Self {
        self.0.push((name, FieldValue::Integer(value)));
        self
    }

    /// Adds a flag.
    pub fn flag(mut self, name: &'static str, value: bool) -> Self {
        self.0.push((name, FieldValue::Bool(value)));
        self
    }

    /// Adds a list of texts.
    pub fn texts(mut self, name: &'static str, values: Vec<String>) -> Self {
        self.0.push((name, FieldValue::Texts(values)));
        self
    }

    /// Adds a budget account.
    pub fn account(mut self, name: &'static str, kind: &'static str, id: &str) -> Self {
        self.0.push((
            name,
            FieldValue::Account {
                kind,
                id: id.to_owned(),
            },
        ));
        self
    }

    /// The fields, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &(&'static str, FieldValue)> {
        self.0.iter()
    }

    /// The field named `name`.
    pub fn get(&self, name: &str) -> Option<&FieldValue> {
        self.0.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// No fields?
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// What every core error tells about itself. See the module documentation.
pub trait DescribeError: fmt::Display + fmt::Debug {
    /// The exception class family.
    fn class(&self) -> ErrorClass;

    /// The §19 wire code.
    fn wire_code(&self) -> WireCode;

    /// A stable reason slug: what a program matches on (the message may be reworded).
    fn reason(&self) -> &str;

    /// The semantic stage (§6.4), for errors of verification stages.
    fn stage(&self) -> Option<Stage> {
        None
    }

    /// The protected diagnostic: the readable message unless the error has a separate
    /// audit-only detail (verification failures show only their wire view in `Display`).
    fn detail(&self) -> String {
        self.to_string()
    }

    /// Structured fields (`dimension`, `account`, `path`, …).
    fn fields(&self) -> Fields {
        Fields::new()
    }

    /// Whether an unchanged retry can succeed (§19).
    fn retryable(&self) -> bool {
        self.wire_code().retryable()
    }
}

/// API misuse: an argument of the wrong type, shape or range. Every binding reports it with
/// the same §19 code, `PROTOCOL_VIOLATION` (the input does not follow the protocol's rules;
/// §19 has no code reserved for local API misuse), reason `invalid-argument`, and the name of
/// the argument in `argument` when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentError {
    /// The argument (path), when known.
    pub argument: Option<String>,
    /// What is wrong with it.
    pub detail: String,
}

impl ArgumentError {
    /// An error about `argument`.
    pub fn new(argument: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            argument: Some(argument.into()),
            detail: detail.into(),
        }
    }

    /// An error not tied to one argument.
    pub fn general(detail: impl Into<String>) -> Self {
        Self {
            argument: None,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for ArgumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.argument {
            Some(argument) => write!(f, "{argument}: {}", self.detail),
            None => f.write_str(&self.detail),
        }
    }
}

impl std::error::Error for ArgumentError {}

impl DescribeError for ArgumentError {
    fn class(&self) -> ErrorClass {
        ErrorClass::Argument
    }
    fn wire_code(&self) -> WireCode {
        WireCode::ProtocolViolation
    }
    fn reason(&self) -> &str {
        "invalid-argument"
    }
    fn fields(&self) -> Fields {
        Fields::new().opt_text("argument", self.argument.clone())
    }
}
