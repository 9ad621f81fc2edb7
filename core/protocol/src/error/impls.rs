//! [`DescribeError`] for the verification layer's errors (§6.4, §17, §22).

use super::{DescribeError, ErrorClass, Fields, Stage, WireCode};
use crate::admission::AdmissionError;
use crate::bundle::BundleVerificationError;
use crate::json::{CanonicalError, ParseError, ParseErrorKind};
use crate::registry::RegistryError;
use crate::schema::SchemaIssue;
use crate::schema_formats::TimestampError;
use crate::signed_documents::{SigningError, VerificationError};
use crate::wire::FrameError;

impl DescribeError for ParseError {
    fn class(&self) -> ErrorClass {
        ErrorClass::Parse
    }
    fn wire_code(&self) -> WireCode {
        Stage::Parse.wire_code()
    }
    fn reason(&self) -> &str {
        match self.kind {
            ParseErrorKind::ByteOrderMark => "byte-order-mark",
            ParseErrorKind::InvalidUtf8 => "invalid-utf8",
            ParseErrorKind::UnexpectedEnd => "unexpected-end",
            ParseErrorKind::UnexpectedCharacter(_) => "unexpected-character",
            ParseErrorKind::InvalidLiteral => "invalid-literal",
            ParseErrorKind::InvalidNumber => "invalid-number",
            ParseErrorKind::InvalidEscape => "invalid-escape",
            ParseErrorKind::ControlCharacterInString => "control-character-in-string",
            ParseErrorKind::DuplicateMember(_) => "duplicate-member",
            ParseErrorKind::TrailingData => "trailing-data",
            ParseErrorKind::TooDeep => "too-deep",
            ParseErrorKind::LimitExceeded { .. } => "limit-exceeded",
        }
    }
    fn stage(&self) -> Option<Stage> {
        Some(Stage::Parse)
    }
    fn fields(&self) -> Fields {
        let fields =
            Fields::new().integer("offset", i64::try_from(self.offset).unwrap_or(i64::MAX));
        match self.kind {
            ParseErrorKind::LimitExceeded { limit, maximum } => fields
                .text("limit", limit.as_str())
                .integer("maximum", i64::try_from(maximum).unwrap_or(i64::MAX)),
            _ => fields,
        }
    }
}

impl DescribeError for CanonicalError {
    fn class(&self) -> ErrorClass {
        ErrorClass::Canonicalization
    }
    fn wire_code(&self) -> WireCode {
        Stage::Canonicalization.wire_code()
    }
    fn reason(&self) -> &str {
        match self {
            Self::NonFiniteNumber(_) => "non-finite-number",
            Self::UnpairedSurrogate => "unpaired-surrogate",
            Self::NotJson(_) => "not-json",
        }
    }
    fn stage(&self) -> Option<Stage> {
        Some(Stage::Canonicalization)
    }
}

impl DescribeError for SchemaIssue {
    fn class(&self) -> ErrorClass {
        ErrorClass::Schema
    }
    fn wire_code(&self) -> WireCode {
        Stage::Schema.wire_code()
    }
    /// The failing keyword (`required`, `pattern`, …).
    fn reason(&self) -> &str {
        self.keyword
    }
    fn stage(&self) -> Option<Stage> {
        Some(Stage::Schema)
    }
    fn fields(&self) -> Fields {
        Fields::new()
            .text("instance_path", &self.instance_path)
            .text("schema_location", &self.schema_location)
            .text("keyword", self.keyword)
    }
}

impl DescribeError for TimestampError {
    fn class(&self) -> ErrorClass {
        ErrorClass::Timestamp
    }
    fn wire_code(&self) -> WireCode {
        WireCode::SchemaValidationFailed
    }
    fn reason(&self) -> &str {
        match self {
            Self::Syntax => "timestamp-syntax",
            Self::YearZero => "timestamp-year-zero",
            Self::Month => "timestamp-month",
            Self::Day => "timestamp-day",
            Self::Hour => "timestamp-hour",
            Self::Minute => "timestamp-minute",
            Self::LeapSecond => "timestamp-leap-second",
            Self::Second => "timestamp-second",
            Self::UnknownLocalOffset => "timestamp-unknown-local-offset",
            Self::Offset => "timestamp-offset",
        }
    }
    fn stage(&self) -> Option<Stage> {
        Some(Stage::Schema)
    }
}

/// `Display` is the wire view (`CODE: signed document rejected`); the stage, reason and detail
/// are protected (§6.4: stages 3, 4 and 6 are indistinguishable on the wire).
impl DescribeError for VerificationError {
    fn class(&self) -> ErrorClass {
        ErrorClass::Verification
    }
    fn wire_code(&self) -> WireCode {
        VerificationError::wire_code(self)
    }
    fn reason(&self) -> &str {
        self.reason
    }
    fn stage(&self) -> Option<Stage> {
        Some(self.stage)
    }
    fn detail(&self) -> String {
        self.detail.clone()
    }
    fn fields(&self) -> Fields {
        Fields::new()
            .integer("stage_number", i64::from(self.stage.number()))
            .text("wire_message", self.wire_message())
    }
    fn retryable(&self) -> bool {
        false
    }
}

impl DescribeError for SigningError {
    fn class(&self) -> ErrorClass {
        ErrorClass::Signing
    }
    fn wire_code(&self) -> WireCode {
        self.stage.wire_code()
    }
    fn reason(&self) -> &str {
        match self.limit {
            Some(_) => "limit-exceeded",
            None => "unsignable",
        }
    }
    fn fields(&self) -> Fields {
        match self.limit {
            Some((limit, maximum)) => Fields::new()
                .text("limit", limit.as_str())
                .integer("maximum", i64::try_from(maximum).unwrap_or(i64::MAX)),
            None => Fields::new(),
        }
    }
    fn stage(&self) -> Option<Stage> {
        Some(self.stage)
    }
    fn detail(&self) -> String {
        self.detail.clone()
    }
    fn retryable(&self) -> bool {
        false
    }
}

impl DescribeError for RegistryError {
    fn class(&self) -> ErrorClass {
        ErrorClass::Registry
    }
    fn wire_code(&self) -> WireCode {
        Stage::KeyResolution.wire_code()
    }
    fn reason(&self) -> &str {
        self.reason.as_str()
    }
    fn stage(&self) -> Option<Stage> {
        Some(Stage::KeyResolution)
    }
    fn detail(&self) -> String {
        self.detail.clone()
    }
    fn retryable(&self) -> bool {
        false
    }
}

/// Like verification failures, `Display` is the wire view only.
impl DescribeError for AdmissionError {
    fn class(&self) -> ErrorClass {
        ErrorClass::Admission
    }
    fn wire_code(&self) -> WireCode {
        AdmissionError::wire_code(self)
    }
    fn reason(&self) -> &str {
        self.reason.as_str()
    }
    fn stage(&self) -> Option<Stage> {
        Some(Stage::Admission)
    }
    fn detail(&self) -> String {
        self.detail.clone()
    }
    fn fields(&self) -> Fields {
        Fields::new().text("wire_message", crate::signed_documents::WIRE_MESSAGE)
    }
    fn retryable(&self) -> bool {
        false
    }
}

impl DescribeError for FrameError {
    fn class(&self) -> ErrorClass {
        ErrorClass::Frame
    }
    fn wire_code(&self) -> WireCode {
        self.code
    }
    fn reason(&self) -> &str {
        match self.code {
            WireCode::SchemaValidationFailed => "frame-schema",
            WireCode::UnsupportedVersion => "frame-version",
            _ => "frame-malformed",
        }
    }
    fn detail(&self) -> String {
        self.detail.clone()
    }
}

impl DescribeError for BundleVerificationError {
    fn class(&self) -> ErrorClass {
        ErrorClass::Bundle
    }
    /// A local fault: the pinned bundle is not what was pinned.
    fn wire_code(&self) -> WireCode {
        WireCode::InternalError
    }
    fn reason(&self) -> &str {
        "bundle-integrity"
    }
    fn fields(&self) -> Fields {
        Fields::new().texts("problems", self.problems.clone())
    }
    /// Retrying cannot repair a bundle.
    fn retryable(&self) -> bool {
        false
    }
}
