#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! §6.4 First Admission and historical trust through the in-memory Admission Log and custom
//! adapters: every outcome fails closed with `AUTH_INVALID_SIGNATURE` and a protected reason.

mod common;

use common::{registry, valid_document};
use missionweaveprotocol::admission::{
    AdmissionLog, AdmissionReason as R, AppendOutcome, FirstAdmissionRecord, InMemoryAdmissionLog,
    LookupOutcome, TrustedAcceptanceContext, admit_first, replay_historical,
};
use missionweaveprotocol::signed_documents::{SignedDocumentCodec, SignedDocumentKind};
use missionweaveprotocol::{Principal, PrincipalType, Stage, VerifiedSignedDocument, WireCode};

fn service() -> Principal {
    Principal::new(
        PrincipalType::Service,
        "urn:missionweaveprotocol:service:admission",
    )
}

fn verified(kind: SignedDocumentKind) -> VerifiedSignedDocument {
    SignedDocumentCodec::new()
        .verify(kind, valid_document(kind.as_str()), &registry())
        .unwrap()
}

fn context(id: &str, at: &str) -> impl FnMut() -> TrustedAcceptanceContext {
    let (id, at) = (id.to_owned(), at.to_owned());
    move || TrustedAcceptanceContext {
        admission_record_id: id.clone(),
        trusted_accepted_at: at.clone(),
        accepted_by: service(),
    }
}

#[test]
fn first_admission_appends_once_then_is_idempotent_and_replayable() {
    let log = InMemoryAdmissionLog::new(service());
    let document = verified(SignedDocumentKind::Command);
    let first = admit_first(
        &document,
        &log,
        &mut context("urn:uuid:rec-1", "2026-07-15T00:05:00Z"),
    )
    .unwrap();
    assert!(!first.existing);
    assert_eq!(first.record.signing_hash, document.signing_hash);
    assert_eq!(log.len(), 1);
    // A retry finds the record and never asks for new trusted context.
    let mut asked = false;
    let retry = admit_first(&document, &log, &mut || {
        asked = true;
        context("urn:uuid:rec-2", "2026-07-15T00:06:00Z")()
    })
    .unwrap();
    assert!(retry.existing && !asked);
    assert_eq!(retry.record.admission_record_id, "urn:uuid:rec-1");
    let replayed = replay_historical(&document, &log).unwrap();
    assert_eq!(replayed.record, first.record);
    assert_eq!(log.len(), 1);
}

#[test]
fn trusted_time_must_be_well_formed_and_inside_the_key_interval() {
    let document = verified(SignedDocumentKind::Command);
    let fail = |at: &str| {
        let log = InMemoryAdmissionLog::new(service());
        let error = admit_first(&document, &log, &mut context("urn:uuid:r", at)).unwrap_err();
        assert_eq!(log.len(), 0, "nothing is appended on failure");
        error.reason
    };
    assert_eq!(fail("not-a-timestamp"), R::MalformedTrustedTime);
    assert_eq!(
        fail("2026-07-14T23:59:59Z"),
        R::TrustedTimeOutsideKeyInterval
    );
    assert_eq!(
        fail("2026-07-16T00:00:00Z"),
        R::TrustedTimeOutsideKeyInterval,
        "validUntil is exclusive"
    );
    // Inside, in another offset spelling, is fine.
    let log = InMemoryAdmissionLog::new(service());
    assert!(
        admit_first(
            &document,
            &log,
            &mut context("urn:uuid:r", "2026-07-15T23:59:59+23:59")
        )
        .is_ok()
    );
}

#[test]
fn historical_replay_needs_an_existing_record() {
    let log = InMemoryAdmissionLog::new(service());
    let error = replay_historical(&verified(SignedDocumentKind::Command), &log).unwrap_err();
    assert_eq!(
        (error.reason, error.stage(), error.wire_code()),
        (
            R::RecordMissing,
            Stage::Admission,
            WireCode::AuthInvalidSignature
        )
    );
    assert_eq!(
        error.to_string(),
        "AUTH_INVALID_SIGNATURE: signed document rejected"
    );
}

#[test]
fn record_ids_cannot_be_reused_across_documents() {
    let log = InMemoryAdmissionLog::new(service());
    admit_first(
        &verified(SignedDocumentKind::Command),
        &log,
        &mut context("urn:uuid:same", "2026-07-15T00:05:00Z"),
    )
    .unwrap();
    let error = admit_first(
        &verified(SignedDocumentKind::Approval),
        &log,
        &mut context("urn:uuid:same", "2026-07-15T04:05:00Z"),
    )
    .unwrap_err();
    assert_eq!(error.reason, R::RecordConflict);
}

/// An adapter returning fixed outcomes.
struct Fixed(LookupOutcome, AppendOutcome);
impl AdmissionLog for Fixed {
    fn lookup(&self, _: &str, _: &str) -> LookupOutcome {
        self.0.clone()
    }
    fn append(&self, _: &FirstAdmissionRecord, _: &[u8]) -> AppendOutcome {
        self.1.clone()
    }
}

#[test]
fn every_untrusted_adapter_outcome_fails_closed() {
    let document = verified(SignedDocumentKind::Command);
    let absent = LookupOutcome::AuthoritativeAbsence;
    for (lookup, append, expected) in [
        (
            LookupOutcome::Unauthenticated,
            AppendOutcome::Conflict,
            R::LogAuthenticationFailed,
        ),
        (
            LookupOutcome::IntegrityFailed,
            AppendOutcome::Conflict,
            R::LogAuthenticationFailed,
        ),
        (
            LookupOutcome::Unavailable,
            AppendOutcome::Conflict,
            R::LogUnavailable,
        ),
        (
            LookupOutcome::Indeterminate,
            AppendOutcome::Conflict,
            R::LogIndeterminate,
        ),
        (absent.clone(), AppendOutcome::Conflict, R::RecordConflict),
        (
            absent.clone(),
            AppendOutcome::Unauthenticated,
            R::LogAuthenticationFailed,
        ),
        (
            absent.clone(),
            AppendOutcome::IntegrityFailed,
            R::AppendIntegrityNotEstablished,
        ),
        (
            absent.clone(),
            AppendOutcome::Unavailable,
            R::LogUnavailable,
        ),
        (
            absent.clone(),
            AppendOutcome::Indeterminate,
            R::LogIndeterminate,
        ),
        (absent, AppendOutcome::CommitFailed, R::CommitFailed),
    ] {
        let error = admit_first(
            &document,
            &Fixed(lookup, append),
            &mut context("urn:uuid:r", "2026-07-15T00:05:00Z"),
        )
        .unwrap_err();
        assert_eq!(error.reason, expected);
        assert_eq!(error.wire_code(), WireCode::AuthInvalidSignature);
    }
}

#[test]
fn the_returned_record_is_validated_not_the_candidate() {
    let document = verified(SignedDocumentKind::Command);
    let log = InMemoryAdmissionLog::new(service());
    let good = admit_first(
        &document,
        &log,
        &mut context("urn:uuid:r", "2026-07-15T00:05:00Z"),
    )
    .unwrap();
    let record =
        |bytes: Vec<u8>, by: Principal| missionweaveprotocol::admission::AuthenticatedRecord {
            bytes,
            authenticated_service: by,
        };
    let text = String::from_utf8(good.record_bytes.clone()).unwrap();
    // A concurrent winner with another id and time is fine.
    let winner = text
        .replace("urn:uuid:r", "urn:uuid:winner")
        .replace("00:05:00Z", "00:07:00Z");
    let outcome = admit_first(
        &document,
        &Fixed(
            LookupOutcome::AuthoritativeAbsence,
            AppendOutcome::Existing(record(winner.into_bytes(), service())),
        ),
        &mut context("urn:uuid:r", "2026-07-15T00:05:00Z"),
    )
    .unwrap();
    assert_eq!(outcome.record.admission_record_id, "urn:uuid:winner");
    for (bytes, by, expected) in [
        (
            text.replace(&document.key_id, "urn:missionweaveprotocol:key:other"),
            service(),
            R::RecordBindingMismatch,
        ),
        (
            text.replace("\"command\"", "\"event\""),
            service(),
            R::RecordBindingMismatch,
        ),
        (
            text.clone(),
            Principal::new(PrincipalType::Service, "urn:other:service"),
            R::LogAuthenticationFailed,
        ),
        (
            text.replace("00:05:00Z", "00:05:00"),
            service(),
            R::RecordSchemaInvalid,
        ),
        (
            text.replace("2026-07-15T00:05:00Z", "2026-07-17T00:00:00Z"),
            service(),
            R::TrustedTimeOutsideKeyInterval,
        ),
        ("{".to_owned(), service(), R::RecordSchemaInvalid),
    ] {
        let error = replay_historical(
            &document,
            &Fixed(
                LookupOutcome::Found(record(bytes.into_bytes(), by)),
                AppendOutcome::Conflict,
            ),
        )
        .unwrap_err();
        assert_eq!(error.reason, expected);
    }
}

#[test]
fn an_event_never_anchors_itself() {
    let event = verified(SignedDocumentKind::Event);
    let found = LookupOutcome::Found(missionweaveprotocol::admission::AuthenticatedRecord {
        bytes: valid_document("event").to_vec(),
        authenticated_service: service(),
    });
    let error = replay_historical(&event, &Fixed(found, AppendOutcome::Conflict)).unwrap_err();
    assert_eq!(error.reason, R::EventSelfAnchoring);
}

#[test]
fn the_step_wise_flow_serves_asynchronous_logs() {
    use missionweaveprotocol::admission::{AdmissionFlow, AdmissionMode, AdmissionStep};
    let document = verified(SignedDocumentKind::Command);
    let log = InMemoryAdmissionLog::new(service());
    let mut flow = AdmissionFlow::new(&document, AdmissionMode::FirstAdmission);
    let AdmissionStep::Lookup {
        organization_id,
        signing_hash,
    } = flow.step().clone()
    else {
        panic!("lookup first")
    };
    assert_eq!(
        (organization_id.as_str(), signing_hash.as_str()),
        (
            document.organization_id.as_str(),
            document.signing_hash.as_str()
        )
    );
    flow.on_lookup(log.lookup(&organization_id, &signing_hash));
    assert_eq!(flow.step(), &AdmissionStep::TrustedContext);
    flow.on_trusted_context(context("urn:uuid:async", "2026-07-15T00:05:00Z")());
    let AdmissionStep::Append {
        candidate,
        candidate_bytes,
    } = flow.step().clone()
    else {
        panic!("append next")
    };
    flow.on_append(log.append(&candidate, &candidate_bytes));
    assert_eq!(flow.step(), &AdmissionStep::Done);
    let admitted = flow.result().unwrap().unwrap();
    assert_eq!(admitted.record.admission_record_id, "urn:uuid:async");
    // Replay: one lookup, then done.
    let mut replay = AdmissionFlow::new(&document, AdmissionMode::HistoricalReplay);
    replay.on_lookup(LookupOutcome::AuthoritativeAbsence);
    assert_eq!(replay.step(), &AdmissionStep::Done);
    assert_eq!(
        replay.result().unwrap().unwrap_err().reason,
        R::RecordMissing
    );
}

#[test]
fn outcomes_fed_out_of_order_fail_closed() {
    use missionweaveprotocol::admission::{AdmissionFlow, AdmissionMode};
    let document = verified(SignedDocumentKind::Command);
    let mut flow = AdmissionFlow::new(&document, AdmissionMode::FirstAdmission);
    flow.on_append(AppendOutcome::Conflict);
    assert_eq!(
        flow.result().unwrap().unwrap_err().reason,
        R::LogIndeterminate
    );
    let mut flow = AdmissionFlow::new(&document, AdmissionMode::HistoricalReplay);
    flow.on_trusted_context(context("urn:uuid:x", "2026-07-15T00:05:00Z")());
    assert!(flow.result().unwrap().is_err());
    let unfinished = AdmissionFlow::new(&document, AdmissionMode::FirstAdmission);
    assert!(unfinished.result().is_none());
}

#[test]
fn outcome_status_names_round_trip() {
    let record = missionweaveprotocol::admission::AuthenticatedRecord {
        bytes: b"{}".to_vec(),
        authenticated_service: service(),
    };
    for status in [
        "found",
        "authoritative-absence",
        "unauthenticated",
        "integrity-failed",
        "unavailable",
        "indeterminate",
    ] {
        let outcome = LookupOutcome::from_status(status, Some(record.clone())).unwrap();
        assert_eq!(outcome.status(), status);
    }
    for status in [
        "committed",
        "existing",
        "conflict",
        "unauthenticated",
        "integrity-failed",
        "unavailable",
        "indeterminate",
        "commit-failed",
    ] {
        assert_eq!(
            AppendOutcome::from_status(status, Some(record.clone()))
                .unwrap()
                .status(),
            status
        );
    }
    assert_eq!(
        LookupOutcome::from_status("found", None),
        None,
        "found needs a record"
    );
    assert_eq!(AppendOutcome::from_status("existing", None), None);
    assert_eq!(LookupOutcome::from_status("trusted", None), None);
}
