//! §6.4: stage 3, 4 and 6 rejections are indistinguishable on the wire, so they must not be told
//! apart by their cost either. Pinned structurally (no timing): every such rejection computes
//! one signing input, evaluates the equation once and decodes `R` once, exactly like a stage-6
//! rejection; an accepted document evaluates the equation and skips the decoding of `R`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;

use super::{SignedDocumentCodec, SignedDocumentKind};
use crate::bundle::{embedded_file, embedded_files};
use crate::error::Stage;
use crate::json::parse;
use crate::registry::AgentRegistryKeyResolver;
use crate::work_count::{self, WorkCounts};

const DOCUMENTS: &str = "cryptography/vectors/signed-documents/";
const REGISTRIES: &str = "cryptography/keys/registry-";

const REJECTION: WorkCounts = WorkCounts {
    r_decodings: 1,
    equations: 1,
    signing_inputs: 1,
};
const ACCEPTANCE: WorkCounts = WorkCounts {
    r_decodings: 0,
    equations: 1,
    signing_inputs: 1,
};

/// The golden command naming a registered key bound to another agent (stage 4, signer
/// mismatch), as a command (the bundle's wrong-signer vectors are other profiles).
fn derived_commands() -> Vec<(String, Vec<u8>)> {
    let golden =
        std::str::from_utf8(embedded_file(&format!("{DOCUMENTS}valid/command.json")).unwrap())
            .unwrap();
    let replace = |from: &str, to: &str| {
        assert!(golden.contains(from), "{from}");
        golden.replace(from, to).into_bytes()
    };
    vec![(
        "derived/command-wrong-principal".to_owned(),
        replace(
            "urn:missionweaveprotocol:key:crypto-vector-rfc8032-1",
            "urn:missionweaveprotocol:key:crypto-vector-developer-one",
        ),
    )]
}

/// A verdict: accepted, or the reported stage and reason.
type Verdict = Result<(), (Stage, &'static str)>;

/// Document path, Registry path, verdict, and the work the verification did.
type Outcome = (String, String, Verdict, WorkCounts);

/// Every Signed Document of the cryptography bundle and the derived ones, against every
/// Registry fixture (valid, unusable, or not selecting the key): the work each verification did.
fn outcomes() -> Vec<Outcome> {
    let codec = SignedDocumentCodec::new();
    let registries: Vec<(&str, AgentRegistryKeyResolver)> = embedded_files()
        .filter(|(path, _)| path.starts_with(REGISTRIES))
        .map(|(path, bytes)| (path, AgentRegistryKeyResolver::new(bytes)))
        .collect();
    assert!(registries.len() > 10);
    let documents: Vec<(String, Vec<u8>)> = embedded_files()
        .filter(|(path, _)| path.starts_with(DOCUMENTS))
        .map(|(path, bytes)| (path.to_owned(), bytes.to_vec()))
        .chain(derived_commands())
        .collect();
    let mut outcomes = Vec::new();
    for (path, bytes) in &documents {
        // Stage 1 failures have no kind; stage 2 failures are outside the property.
        let Ok(value) = parse(bytes) else { continue };
        let kinds: Vec<SignedDocumentKind> = codec.detect_kinds(&value);
        for kind in kinds {
            for (registry, resolver) in &registries {
                work_count::take();
                let result = codec.verify(kind, bytes, resolver);
                let work = work_count::take();
                let verdict = result.map(|_| ()).map_err(|e| (e.stage, e.reason));
                outcomes.push((path.clone(), (*registry).to_owned(), verdict, work));
            }
        }
    }
    outcomes
}

#[test]
fn stage_3_4_and_6_rejections_do_the_same_curve_work() {
    let mut seen = BTreeSet::new();
    for (document, registry, verdict, work) in outcomes() {
        let expected = match verdict {
            Ok(()) => ACCEPTANCE,
            Err((stage, _)) => {
                assert!(
                    matches!(
                        stage,
                        Stage::SignatureEnvelope
                            | Stage::KeyResolution
                            | Stage::Canonicalization
                            | Stage::Signature
                    ),
                    "{document} with {registry}: {stage:?}"
                );
                REJECTION
            }
        };
        assert_eq!(work, expected, "{document} with {registry}: {verdict:?}");
        seen.insert(verdict);
    }
    // Not vacuous: every class of the issue occurs (malformed envelope, bad R, unknown key,
    // wrong Principal, unusable evidence, equation failure) and documents are accepted.
    for class in [
        Err((Stage::SignatureEnvelope, "signature-encoding")),
        Err((Stage::SignatureEnvelope, "signature-value-encoding")),
        Err((Stage::SignatureEnvelope, "created-at-mismatch")),
        Err((Stage::KeyResolution, "unknown-key")),
        Err((Stage::KeyResolution, "signer-mismatch")),
        Err((Stage::KeyResolution, "public-key-point")),
        Err((Stage::Signature, "signature-mismatch")),
        Ok(()),
    ] {
        assert!(seen.contains(&class), "{class:?} never occurred: {seen:?}");
    }
}

#[test]
fn the_work_counter_sees_a_skipped_r_decoding() {
    // The counter itself is live: a bare R check and a bare equation are each counted once.
    let stand_in = crate::crypto::stand_in();
    work_count::take();
    assert!(crate::crypto::check_r(&stand_in.r).is_ok());
    assert!(!stand_in.key.verify_equation(&stand_in.r, &stand_in.s, b""));
    assert_eq!(
        work_count::take(),
        WorkCounts {
            r_decodings: 1,
            equations: 1,
            signing_inputs: 0
        }
    );
}

#[test]
fn an_admission_refusal_of_a_genuine_document_does_the_rejection_work() {
    // A genuine document whose First Admission record is missing is refused with
    // `AUTH_INVALID_SIGNATURE`, like a stage-3, 4 or 6 rejection: verify + replay must do the
    // work of a rejection (one signing input, one equation, one `R` decoding), not less.
    use crate::admission::{
        AdmissionLog, AppendOutcome, FirstAdmissionRecord, LookupOutcome, replay_historical,
    };
    struct Absent;
    impl AdmissionLog for Absent {
        fn lookup(&self, _: &str, _: &str) -> LookupOutcome {
            LookupOutcome::from_reply(Some("absent"), None)
        }
        fn append(&self, _: &FirstAdmissionRecord, _: &[u8]) -> AppendOutcome {
            AppendOutcome::from_reply(None, None)
        }
    }
    let codec = SignedDocumentCodec::new();
    let bytes = embedded_file(&format!("{DOCUMENTS}valid/command.json")).unwrap();
    let resolver =
        AgentRegistryKeyResolver::new(embedded_file(&format!("{REGISTRIES}valid.json")).unwrap());
    work_count::take();
    let verified = codec
        .verify(SignedDocumentKind::Command, bytes, &resolver)
        .unwrap();
    let refused = replay_historical(&verified, &Absent).unwrap_err();
    assert_eq!(refused.wire_code(), crate::WireCode::AuthInvalidSignature);
    assert_eq!(work_count::take(), REJECTION);
}
