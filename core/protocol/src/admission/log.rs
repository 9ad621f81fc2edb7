//! The Admission Log contract (§6.4): authoritative lookup that distinguishes found from
//! authoritative absence, and one atomic append-or-return-existing. Every other outcome is typed
//! and fails closed; no caller-supplied boolean can stand in for it.

use std::collections::HashMap;
use std::sync::Mutex;

use super::record::FirstAdmissionRecord;
use crate::json::{Value, parse_state};
use crate::principal::Principal;

/// Record bytes as the log returned them, with the service the log authenticated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthenticatedRecord {
    pub bytes: Vec<u8>,
    pub authenticated_service: Principal,
}

/// Result of a lookup by `(organizationId, signingHash)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LookupOutcome {
    Found(AuthenticatedRecord),
    AuthoritativeAbsence,
    Unauthenticated,
    IntegrityFailed,
    Unavailable,
    Indeterminate,
}

/// Result of append-or-return-existing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppendOutcome {
    Committed(AuthenticatedRecord),
    Existing(AuthenticatedRecord),
    Conflict,
    Unauthenticated,
    IntegrityFailed,
    Unavailable,
    Indeterminate,
    CommitFailed,
}

impl LookupOutcome {
    /// The status name used by the admission bundle (`found`, `authoritative-absence`, …).
    pub fn status(&self) -> &'static str {
        match self {
            Self::Found(_) => "found",
            Self::AuthoritativeAbsence => "authoritative-absence",
            Self::Unauthenticated => "unauthenticated",
            Self::IntegrityFailed => "integrity-failed",
            Self::Unavailable => "unavailable",
            Self::Indeterminate => "indeterminate",
        }
    }

    /// Builds an outcome from a status name; `found` needs the record. `None` for an unknown
    /// status or a missing record — callers fail closed on it.
    pub fn from_status(status: &str, record: Option<AuthenticatedRecord>) -> Option<Self> {
        Some(match status {
            "found" => Self::Found(record?),
            "authoritative-absence" => Self::AuthoritativeAbsence,
            "unauthenticated" => Self::Unauthenticated,
            "integrity-failed" => Self::IntegrityFailed,
            "unavailable" => Self::Unavailable,
            "indeterminate" => Self::Indeterminate,
            _ => return None,
        })
    }

    /// The fail-closed reading of a log's reply, shared by every binding: `found` whose record
    /// is missing or unusable is `unauthenticated` (the log answered, but nothing proves who
    /// wrote the record); an unknown status, or a failed call (`status` `None`), is
    /// `indeterminate`. Both make admission fail (§6.4, the Admission Log contract).
    pub fn from_reply(status: Option<&str>, record: Option<AuthenticatedRecord>) -> Self {
        match status {
            Some("found") if record.is_none() => Self::Unauthenticated,
            Some(status) => Self::from_status(status, record).unwrap_or(Self::Indeterminate),
            None => Self::Indeterminate,
        }
    }
}

impl AppendOutcome {
    /// The status name used by the admission bundle (`committed`, `existing`, `conflict`, …).
    pub fn status(&self) -> &'static str {
        match self {
            Self::Committed(_) => "committed",
            Self::Existing(_) => "existing",
            Self::Conflict => "conflict",
            Self::Unauthenticated => "unauthenticated",
            Self::IntegrityFailed => "integrity-failed",
            Self::Unavailable => "unavailable",
            Self::Indeterminate => "indeterminate",
            Self::CommitFailed => "commit-failed",
        }
    }

    /// Builds an outcome from a status name; `committed` and `existing` need the record.
    pub fn from_status(status: &str, record: Option<AuthenticatedRecord>) -> Option<Self> {
        Some(match status {
            "committed" => Self::Committed(record?),
            "existing" => Self::Existing(record?),
            "conflict" => Self::Conflict,
            "unauthenticated" => Self::Unauthenticated,
            "integrity-failed" => Self::IntegrityFailed,
            "unavailable" => Self::Unavailable,
            "indeterminate" => Self::Indeterminate,
            "commit-failed" => Self::CommitFailed,
            _ => return None,
        })
    }

    /// The fail-closed reading of a log's reply, shared by every binding: `committed` or
    /// `existing` whose record is missing or unusable is `unauthenticated`; an unknown status,
    /// or a failed call (`status` `None`), is `indeterminate`.
    pub fn from_reply(status: Option<&str>, record: Option<AuthenticatedRecord>) -> Self {
        match status {
            Some("committed" | "existing") if record.is_none() => Self::Unauthenticated,
            Some(status) => Self::from_status(status, record).unwrap_or(Self::Indeterminate),
            None => Self::Indeterminate,
        }
    }
}

/// An Admission Log adapter.
pub trait AdmissionLog {
    /// Authoritative lookup of the record for `(organization_id, signing_hash)`.
    fn lookup(&self, organization_id: &str, signing_hash: &str) -> LookupOutcome;
    /// Atomically appends `candidate` unless a record exists for its key, in which case the
    /// existing record is returned. `candidate_bytes` are the exact bytes to store.
    fn append(&self, candidate: &FirstAdmissionRecord, candidate_bytes: &[u8]) -> AppendOutcome;
}

/// An in-memory Admission Log (tests, single-process deployments). Writes are attributed to the
/// one service it authenticates.
#[derive(Debug)]
pub struct InMemoryAdmissionLog {
    service: Principal,
    state: Mutex<LogState>,
}

#[derive(Debug, Default)]
struct LogState {
    records: HashMap<(String, String), Vec<u8>>,
    record_ids: HashMap<String, (String, String)>,
}

impl InMemoryAdmissionLog {
    /// An empty log whose accepting service is `service`.
    pub fn new(service: Principal) -> Self {
        Self {
            service,
            state: Mutex::new(LogState::default()),
        }
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.state.lock().map_or(0, |state| state.records.len())
    }

    /// Whether the log is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn authenticated(&self, bytes: Vec<u8>) -> AuthenticatedRecord {
        AuthenticatedRecord {
            bytes,
            authenticated_service: self.service.clone(),
        }
    }
}

fn field<'v>(value: &'v Value, name: &str) -> Option<&'v Value> {
    value.get(name)
}

impl AdmissionLog for InMemoryAdmissionLog {
    fn lookup(&self, organization_id: &str, signing_hash: &str) -> LookupOutcome {
        let Ok(state) = self.state.lock() else {
            return LookupOutcome::Unavailable;
        };
        match state
            .records
            .get(&(organization_id.to_owned(), signing_hash.to_owned()))
        {
            Some(bytes) => LookupOutcome::Found(self.authenticated(bytes.clone())),
            None => LookupOutcome::AuthoritativeAbsence,
        }
    }

    fn append(&self, candidate: &FirstAdmissionRecord, candidate_bytes: &[u8]) -> AppendOutcome {
        let Ok(mut state) = self.state.lock() else {
            return AppendOutcome::Unavailable;
        };
        if candidate.accepted_by != self.service {
            return AppendOutcome::Unauthenticated;
        }
        let key = (
            candidate.organization_id.clone(),
            candidate.signing_hash.clone(),
        );
        if let Some(existing) = state.records.get(&key) {
            // Same logical key: compatible only with the same kind, key ID and Principal.
            let Ok(value) = parse_state(existing) else {
                return AppendOutcome::IntegrityFailed;
            };
            let candidate_value = candidate.to_value();
            let compatible = ["documentKind", "keyId", "principal"].iter().all(|name| {
                match (field(&value, name), field(&candidate_value, name)) {
                    (Some(a), Some(b)) => a.json_eq(b),
                    _ => false,
                }
            });
            return if compatible {
                AppendOutcome::Existing(self.authenticated(existing.clone()))
            } else {
                AppendOutcome::Conflict
            };
        }
        // One admissionRecordId never identifies records under different logical keys.
        if state
            .record_ids
            .contains_key(&candidate.admission_record_id)
        {
            return AppendOutcome::Conflict;
        }
        state
            .record_ids
            .insert(candidate.admission_record_id.clone(), key.clone());
        state.records.insert(key, candidate_bytes.to_vec());
        AppendOutcome::Committed(self.authenticated(candidate_bytes.to_vec()))
    }
}
