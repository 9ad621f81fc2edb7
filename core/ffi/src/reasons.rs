//! Every protected failure reason of the six stages (§6.4), explained in one sentence with its
//! spec section. This table is the one place the explanations live: the verifier page and the
//! package (`failureReasons()`, `explainFailure()`) read it from here through the bindings.
//!
//! Reasons are the core's slugs: the string reasons of `signed_documents::verify` (stages 1–3,
//! 5, 6), `registry::RegistryErrorReason` (stage 4) and `admission::AdmissionReason` (the
//! separate `admission` layer after the six stages). A reason is identified by its stage and
//! slug together (`algorithm-unsupported` occurs at stage 3 and at stage 4).

use missionweaveprotocol::Stage;
use missionweaveprotocol::admission::AdmissionReason as A;
use missionweaveprotocol::json::{Number, Value};
use missionweaveprotocol::registry::RegistryErrorReason as R;

use crate::envelope::{Obj, finish};

/// One explained reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Explanation {
    pub stage: Stage,
    pub reason: &'static str,
    /// One sentence for a person reading the result.
    pub sentence: &'static str,
    /// Where the rule is written.
    pub section: &'static str,
}

const S1: &str = "§6.4 stage 1 (parse); §2";
const S2: &str = "§6.4 stage 2 (schema); §2";
const S3: &str = "§6.4 stage 3 (signature-envelope)";
const S3_TIME: &str = "§6.4 stage 3 (signature-envelope); §2 timestamp profile";
const S3_B64: &str = "§6.4 stage 3 (signature-envelope); §2 base64url";
const S4: &str = "§6.4 stage 4 (key-resolution)";
const S4_URI: &str = "§6.4 stage 4 (key-resolution); §2 identifiers";
const S4_TIME: &str = "§6.4 stage 4 (key-resolution); §2 timestamp profile";
const S5: &str = "§6.4 stage 5 (canonicalization); §2 RFC 8785 / I-JSON";
const S6: &str = "§6.4 stage 6 (signature)";

const fn row(
    stage: Stage,
    reason: &'static str,
    sentence: &'static str,
    section: &'static str,
) -> Explanation {
    Explanation {
        stage,
        reason,
        sentence,
        section,
    }
}

/// The reasons of stages 1–3, 5 and 6 (the verifier's string reasons).
const DOCUMENT_REASONS: &[Explanation] = &[
    row(
        Stage::Parse,
        "invalid-json",
        "The bytes are not exactly one strict UTF-8 JSON value: invalid UTF-8, a byte-order mark, trailing data or a duplicate member name.",
        S1,
    ),
    row(
        Stage::Parse,
        "limit-exceeded",
        "The bytes exceed a parse limit of the document profile (size, entries of one object or array, string length, number length; docs/limits.md): refused before the work they would cost.",
        S1,
    ),
    row(
        Stage::Schema,
        "schema-invalid",
        "The document does not satisfy the normative JSON Schema of its kind, with the date-time and uri formats asserted.",
        S2,
    ),
    row(
        Stage::SignatureEnvelope,
        "protected-time-missing",
        "The signed-time field that this kind protects is missing or is not a string.",
        S3,
    ),
    row(
        Stage::SignatureEnvelope,
        "protected-time-malformed",
        "The protected signed time does not follow the timestamp profile.",
        S3_TIME,
    ),
    row(
        Stage::SignatureEnvelope,
        "signature-missing",
        "The top-level signature envelope is missing or is not an object.",
        S3,
    ),
    row(
        Stage::SignatureEnvelope,
        "created-at-missing",
        "signature.createdAt is missing or is not a string.",
        S3,
    ),
    row(
        Stage::SignatureEnvelope,
        "created-at-malformed",
        "signature.createdAt does not follow the timestamp profile.",
        S3_TIME,
    ),
    row(
        Stage::SignatureEnvelope,
        "protected-time-not-utc-z",
        "The protected time and signature.createdAt must both end in an upper-case Z (UTC); an offset is refused even for the same instant.",
        S3_TIME,
    ),
    row(
        Stage::SignatureEnvelope,
        "created-at-mismatch",
        "signature.createdAt is not byte-for-byte identical to the protected signed time.",
        S3,
    ),
    row(
        Stage::SignatureEnvelope,
        "algorithm-unsupported",
        "signature.algorithm is not Ed25519, the only algorithm of protocol version 0.1.",
        S3,
    ),
    row(
        Stage::SignatureEnvelope,
        "key-id-missing",
        "signature.keyId is missing or is not a string.",
        S3,
    ),
    row(
        Stage::SignatureEnvelope,
        "signer-unresolvable",
        "The expected signer that this kind's profile names (a Principal or an Agent ID) cannot be read from the document.",
        S3,
    ),
    row(
        Stage::SignatureEnvelope,
        "signature-value-missing",
        "signature.value is missing or is not a string.",
        S3,
    ),
    row(
        Stage::SignatureEnvelope,
        "signature-value-encoding",
        "signature.value is not canonical unpadded base64url.",
        S3_B64,
    ),
    row(
        Stage::SignatureEnvelope,
        "signature-encoding",
        "The signature is not 64 bytes made of a strictly decoded point R (canonical, on the curve, prime order) and a scalar S below the group order L.",
        S3,
    ),
    row(
        Stage::Canonicalization,
        "not-an-object",
        "The document is not a JSON object, so no signing bytes can be formed.",
        S5,
    ),
    row(
        Stage::Canonicalization,
        "outside-i-json",
        "A value lies outside the RFC 8785 data model (a number beyond binary64 or an unpaired surrogate), so no signing bytes can be formed.",
        S5,
    ),
    row(
        Stage::Signature,
        "signature-mismatch",
        "The Ed25519 equation does not hold: the signed content was changed after signing, or another key signed it.",
        S6,
    ),
];

/// Every stage-4 reason, in declaration order. [`registry_row`] matches exhaustively, so a new
/// core reason does not compile until it is explained; add it here as well.
const REGISTRY_REASONS: [R; 25] = [
    R::EvidenceUnavailable,
    R::EvidenceIncomplete,
    R::MalformedEvidence,
    R::OrganizationId,
    R::NoBindings,
    R::BindingShape,
    R::KeyIdNotUri,
    R::PrincipalShape,
    R::Algorithm,
    R::PublicKeyEncoding,
    R::PublicKeyPoint,
    R::ValidFrom,
    R::HistoryShape,
    R::HistoryTimestamp,
    R::KeyIdReused,
    R::PublicKeyReused,
    R::KeyIdAlias,
    R::HistorySequence,
    R::HistoryOrder,
    R::HistoryMovedLater,
    R::UnknownKey,
    R::SignerMismatch,
    R::NotYetValid,
    R::Expired,
    R::Revoked,
];

const fn registry_row(reason: R) -> Explanation {
    let (sentence, section) = match reason {
        R::EvidenceUnavailable => (
            "No Registry evidence could be obtained for the document's Organization, so no key can be trusted.",
            S4,
        ),
        R::EvidenceIncomplete => (
            "The Registry evidence cannot be shown to be complete for the Organization, so no key can be trusted from it.",
            S4,
        ),
        R::MalformedEvidence => (
            "The Registry evidence is not strict JSON of the form {organizationId, bindings}.",
            S4,
        ),
        R::OrganizationId => (
            "The Registry's organizationId is not an absolute URI.",
            S4_URI,
        ),
        R::NoBindings => ("The Registry evidence holds no key bindings.", S4),
        R::BindingShape => (
            "A Registry binding does not have exactly keyId, principal, algorithm, publicKey, validFrom and validityHistory.",
            S4,
        ),
        R::KeyIdNotUri => ("A Registry binding's keyId is not an absolute URI.", S4_URI),
        R::PrincipalShape => (
            "A Registry binding's principal is not {type: agent, human or service, id: an absolute URI}.",
            S4_URI,
        ),
        R::Algorithm => ("A Registry binding's algorithm is not Ed25519.", S4),
        R::PublicKeyEncoding => (
            "A Registry public key is not canonical unpadded base64url of exactly 32 bytes.",
            "§6.4 stage 4 (key-resolution); §2 base64url",
        ),
        R::PublicKeyPoint => (
            "A Registry public key is not a strict Ed25519 point (canonical, on the curve, prime order, not the identity).",
            S4,
        ),
        R::ValidFrom => (
            "A Registry binding's validFrom does not follow the timestamp profile.",
            S4_TIME,
        ),
        R::HistoryShape => (
            "A validity-history record is not {sequence, recordedAt, validUntil?, revokedAt?} with a positive safe-integer sequence.",
            S4,
        ),
        R::HistoryTimestamp => (
            "A validity-history timestamp does not follow the timestamp profile.",
            S4_TIME,
        ),
        R::KeyIdReused => (
            "One key ID is declared with two different Principals, keys or validFrom values; a key ID is bound once and never reused.",
            S4,
        ),
        R::PublicKeyReused => (
            "The same public key is registered under another Principal or another key ID.",
            S4,
        ),
        R::KeyIdAlias => (
            "The same Principal and public key are registered under two key IDs (an alias).",
            S4,
        ),
        R::HistorySequence => (
            "A key's validity-history sequences are not exactly 1, 2, …, n.",
            S4,
        ),
        R::HistoryOrder => (
            "A key's validity-history recordedAt values go backwards.",
            S4,
        ),
        R::HistoryMovedLater => (
            "A validity-history record moves validUntil or revokedAt later; they may only be added or moved earlier.",
            S4,
        ),
        R::UnknownKey => ("The Registry has no binding for signature.keyId.", S4),
        R::SignerMismatch => (
            "The key is bound to a Principal other than the document's expected signer.",
            S4,
        ),
        R::NotYetValid => (
            "The protected signed time is before the key's validFrom.",
            S4,
        ),
        R::Expired => (
            "The protected signed time is at or after the key's validUntil.",
            S4,
        ),
        R::Revoked => (
            "The protected signed time is at or after the key's revokedAt.",
            S4,
        ),
    };
    row(Stage::KeyResolution, reason.as_str(), sentence, section)
}

const ADMISSION: &str = "§6.4 First Admission and historical replay (admission)";

/// The admission layer (§6.4: "not a seventh cryptographic stage"; every failure is
/// `AUTH_INVALID_SIGNATURE`). The match is exhaustive over `AdmissionReason::ALL`.
const fn admission_row(reason: A) -> Explanation {
    let sentence = match reason {
        A::RecordMissing => {
            "Historical replay found no First-Admission Record for the document; replay never creates one."
        }
        A::RecordBindingMismatch => {
            "The First-Admission Record does not name the verified Organization, kind, signing hash, key ID and Principal, or its acceptedBy is not the authenticated log service."
        }
        A::TrustedTimeOutsideKeyInterval => {
            "The trusted acceptance time is outside the key's validity interval, so a backdated protected time cannot be admitted."
        }
        A::MalformedTrustedTime => {
            "The trusted acceptance time does not follow the timestamp profile."
        }
        A::RecordConflict => {
            "The Admission Log already holds a different record for the same Organization and signing hash."
        }
        A::RecordSchemaInvalid => {
            "The First-Admission Record is not strict JSON satisfying its schema."
        }
        A::LogAuthenticationFailed => {
            "The Admission Log's answer could not be authenticated as coming from its service."
        }
        A::AppendIntegrityNotEstablished => {
            "The Admission Log could not establish the integrity of its lookup or append result."
        }
        A::LogUnavailable => "The Admission Log was unavailable, so admission fails closed.",
        A::LogIndeterminate => {
            "The Admission Log gave no definite answer (an error or an unexpected reply), so admission fails closed."
        }
        A::CommitFailed => "The Admission Log could not commit the new record.",
        A::EventSelfAnchoring => "A signed Event cannot serve as its own First-Admission Record.",
    };
    row(Stage::Admission, reason.as_str(), sentence, ADMISSION)
}

/// All explained reasons, in stage order (the admission layer last).
pub fn all() -> Vec<Explanation> {
    let mut rows: Vec<Explanation> = DOCUMENT_REASONS.to_vec();
    rows.extend(REGISTRY_REASONS.iter().map(|r| registry_row(*r)));
    rows.extend(A::ALL.iter().map(|r| admission_row(*r)));
    rows.sort_by_key(|e| e.stage.number());
    rows
}

/// The explanation of `reason` at `stage`, if the core knows it.
pub fn explain(stage: &str, reason: &str) -> Option<Explanation> {
    all()
        .into_iter()
        .find(|e| e.stage.as_str() == stage && e.reason == reason)
}

fn value(e: &Explanation) -> Value {
    Obj::new()
        .str("stage", e.stage.as_str())
        .value(
            "stageNumber",
            if e.stage == Stage::Admission {
                Value::Null
            } else {
                Value::Number(Number::from_u64(u64::from(e.stage.number())))
            },
        )
        .str("reason", e.reason)
        .str("code", e.stage.wire_code().as_str())
        .str("explanation", e.sentence)
        .str("section", e.section)
        .build()
}

/// `[{stage, stageNumber, reason, code, explanation, section}, …]` (`stageNumber` null for the
/// admission layer, which is not a seventh stage).
pub fn failure_reasons() -> String {
    finish(Ok(Value::Array(all().iter().map(value).collect())))
}

/// One row, or `null` for a reason the table does not hold.
pub fn explain_failure(stage: &str, reason: &str) -> String {
    finish(Ok(explain(stage, reason).map_or(Value::Null, |e| value(&e))))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The verifier's string reasons, read from its source: a reason added there without an
    /// explanation here fails this test.
    fn reasons_in_verifier_source() -> Vec<String> {
        let source = include_str!("../../protocol/src/signed_documents/verify.rs");
        let mut found = Vec::new();
        for piece in source.split('"').skip(1).step_by(2) {
            let kebab = piece.contains('-')
                && piece
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
            if kebab && !found.iter().any(|f: &String| f == piece) {
                found.push(piece.to_owned());
            }
        }
        found
    }

    #[test]
    fn every_reason_of_the_verifier_is_explained() {
        let reasons = reasons_in_verifier_source();
        assert!(reasons.len() >= 18, "{reasons:?}");
        for reason in reasons {
            assert!(
                DOCUMENT_REASONS.iter().any(|e| e.reason == reason),
                "{reason} has no explanation"
            );
        }
        for reason in REGISTRY_REASONS {
            assert!(explain("key-resolution", reason.as_str()).is_some());
        }
        for reason in A::ALL {
            assert!(explain("admission", reason.as_str()).is_some());
        }
    }

    #[test]
    fn one_sentence_each_with_a_section_and_unique_keys() {
        let rows = all();
        assert_eq!(
            rows.len(),
            DOCUMENT_REASONS.len() + REGISTRY_REASONS.len() + A::ALL.len()
        );
        for (i, e) in rows.iter().enumerate() {
            assert!(e.sentence.ends_with('.'), "{}", e.reason);
            assert_eq!(
                e.sentence.matches(". ").count(),
                0,
                "one sentence: {}",
                e.reason
            );
            assert!(e.section.starts_with("§6.4 "), "{}", e.reason);
            assert!(
                e.section.contains(&format!("({})", e.stage.as_str())),
                "{}",
                e.reason
            );
            assert!(
                !rows[..i]
                    .iter()
                    .any(|o| o.stage == e.stage && o.reason == e.reason)
            );
        }
    }

    #[test]
    fn lookups() {
        let e = explain("key-resolution", "algorithm-unsupported").map(|e| e.sentence);
        assert_eq!(e, Some("A Registry binding's algorithm is not Ed25519."));
        assert!(explain("signature-envelope", "algorithm-unsupported").is_some());
        assert!(explain("signature", "no-such-reason").is_none());
        assert_eq!(explain_failure("parse", "nope"), r#"{"ok":null}"#);
        assert!(failure_reasons().contains("\"code\":\"AUTH_INVALID_SIGNATURE\""));
    }
}
