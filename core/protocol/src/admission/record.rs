//! First-Admission Records (`first-admission-record.schema.json`): Organization-controlled
//! acceptance metadata outside the Signed Document. Not signed, not self-authenticating.

use crate::json::{Object, Value};
use crate::principal::Principal;
use crate::schema_formats::Timestamp;
use crate::signed_documents::SignedDocumentKind;

/// Trusted acceptance context from a trusted seam (never from the signer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustedAcceptanceContext {
    pub admission_record_id: String,
    /// Kept verbatim; parsed under the timestamp profile by the admission flow.
    pub trusted_accepted_at: String,
    /// The authenticated accepting service.
    pub accepted_by: Principal,
}

/// A validated First-Admission Record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirstAdmissionRecord {
    pub admission_record_id: String,
    pub organization_id: String,
    pub document_kind: SignedDocumentKind,
    pub signing_hash: String,
    pub key_id: String,
    pub principal: Principal,
    pub trusted_accepted_at: Timestamp,
    pub accepted_by: Principal,
}

impl FirstAdmissionRecord {
    /// The record as a JSON object, members in schema order.
    pub fn to_value(&self) -> Value {
        let mut object = Object::new();
        object.insert("protocolVersion", Value::string("0.1"));
        object.insert(
            "admissionRecordId",
            Value::string(self.admission_record_id.clone()),
        );
        object.insert(
            "organizationId",
            Value::string(self.organization_id.clone()),
        );
        object.insert("documentKind", Value::string(self.document_kind.as_str()));
        object.insert("signingHash", Value::string(self.signing_hash.clone()));
        object.insert("keyId", Value::string(self.key_id.clone()));
        object.insert("principal", self.principal.to_value());
        object.insert(
            "trustedAcceptedAt",
            Value::string(self.trusted_accepted_at.as_str()),
        );
        object.insert("acceptedBy", self.accepted_by.to_value());
        Value::Object(object)
    }

    /// Record bytes in the layout of the admission bundle's fixtures (two-space indentation,
    /// `": "` separators, a trailing newline). The layout is not normative; it lets a fixture
    /// log compare a candidate with a committed record byte for byte.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(640);
        crate::json::write_indented(&self.to_value(), 2, &mut out);
        out.push(b'\n');
        out
    }
}
