//! The Membership aggregate as stored: the `membership.schema.json` document, as canonical JSON
//! bytes under store kind `membership`, one per (Group, Principal) (§8, digest 2.7).
//!
//! The store ID and the document's `membershipId` are both
//! `<groupId>#membership:<principal type>:<principal id>`: deterministic, so two engines fed the
//! same Commands store the same bytes, and one Principal has at most one Membership per Group.

use missionweaveprotocol::json::{self, Number, Object, Value, View};
use missionweaveprotocol::schema::SchemaCatalog;
use missionweaveprotocol::{Principal, PrincipalType};

use crate::error::EngineError;
use std::sync::Arc;

use crate::store::decoded::decode_shared;
use crate::store::{Aggregate, AggregateKey, Blob, Store};

/// The store kind of Membership aggregates.
pub const MEMBERSHIP_KIND: &str = "membership";

/// The first Membership Epoch (`positiveInteger`).
pub const FIRST_MEMBERSHIP_EPOCH: u64 = 1;

/// `membership.schema.json` `state` (digest 2.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MembershipState {
    Provisional,
    Active,
    Ended,
}

impl MembershipState {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Provisional => "provisional",
            Self::Active => "active",
            Self::Ended => "ended",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text {
            "provisional" => Some(Self::Provisional),
            "active" => Some(Self::Active),
            "ended" => Some(Self::Ended),
            _ => None,
        }
    }
}

/// The Membership ID (and store ID) of `member` in `group_id`.
pub fn membership_id(group_id: &str, member: &Principal) -> String {
    format!(
        "{group_id}#membership:{}:{}",
        member.kind.as_str(),
        member.id
    )
}

/// The store key of `member`'s Membership in `group_id`.
pub fn membership_key(group_id: &str, member: &Principal) -> AggregateKey {
    AggregateKey::new(MEMBERSHIP_KIND, membership_id(group_id, member))
}

/// A Membership as the engine reads and writes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Membership {
    document: Object,
    revision: u64,
    state: MembershipState,
    epoch: u64,
    member: Principal,
    role: String,
}

impl Membership {
    /// A Membership from its document at store `revision`; the document must conform to
    /// `membership.schema.json` (checked here, so no invalid Membership is ever stored).
    pub(crate) fn from_document(document: Object, revision: u64) -> Result<Self, EngineError> {
        // Validated in place through a view: no copy of the document.
        SchemaCatalog::embedded()
            .validate_view("membership", View::Object(document.view()))
            .map_err(|issue| EngineError::SchemaInvalid {
                schema: "membership",
                detail: issue.to_string(),
            })?;
        Ok(Self::from_valid_document(document, revision))
    }

    /// A Membership from a document known to conform to `membership.schema.json` (the schema
    /// guarantees every member read here).
    pub(crate) fn from_valid_document(document: Object, revision: u64) -> Self {
        let text = |name: &str| {
            document
                .get(name)
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        let state = MembershipState::parse(text("state")).unwrap_or(MembershipState::Ended);
        let epoch = document
            .get("membershipEpoch")
            .and_then(Value::as_number)
            .and_then(Number::as_u64)
            .unwrap_or(FIRST_MEMBERSHIP_EPOCH);
        let member = document
            .get("member")
            .and_then(Principal::from_value)
            .unwrap_or_else(|| Principal::new(PrincipalType::Service, ""));
        let role = text("role").to_owned();
        Self {
            document,
            revision,
            state,
            epoch,
            member,
            role,
        }
    }

    /// Reads a stored Membership.
    pub fn from_stored(key: &AggregateKey, stored: &Aggregate) -> Result<Self, EngineError> {
        let corrupt = |detail: String| EngineError::Corrupt {
            key: key.clone(),
            detail,
        };
        let value = json::parse_state(&stored.value).map_err(|e| corrupt(e.to_string()))?;
        let Value::Object(document) = value else {
            return Err(corrupt("not an object".into()));
        };
        Self::from_document(document, stored.revision).map_err(|e| corrupt(e.to_string()))
    }

    /// `member`'s Membership in `group_id`, if any.
    pub fn read(
        store: &dyn Store,
        group_id: &str,
        member: &Principal,
    ) -> Result<Option<Self>, EngineError> {
        Ok(Self::read_shared(store, group_id, member)?.map(|m| (*m).clone()))
    }

    /// [`read`](Self::read) through the store's memo of decoded aggregates: a Membership read
    /// again while unchanged (every fenced Command reads its sender's) is parsed and
    /// schema-checked once per stored revision.
    pub(crate) fn read_shared(
        store: &dyn Store,
        group_id: &str,
        member: &Principal,
    ) -> Result<Option<Arc<Self>>, EngineError> {
        let key = membership_key(group_id, member);
        match store.aggregate(&key)? {
            None => Ok(None),
            Some(stored) => {
                decode_shared(store, &key, &stored, |s| Self::from_stored(&key, s)).map(Some)
            }
        }
    }

    /// The canonical JSON bytes stored.
    pub fn to_blob(&self) -> Result<Blob, EngineError> {
        // Written from a view of the document: no copy of it.
        let mut bytes = Vec::with_capacity(512);
        json::write_view(View::Object(self.document.view()), &mut bytes)
            .map_err(|e| EngineError::invalid("not_canonical", e.to_string()))?;
        Ok(Blob::from(bytes))
    }

    /// The `membership.schema.json` document.
    pub fn to_value(&self) -> Value {
        Value::Object(self.document.clone())
    }

    /// The document, to derive the next version from.
    pub(crate) fn document(&self) -> &Object {
        &self.document
    }

    /// The store revision.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// `state`.
    pub fn state(&self) -> MembershipState {
        self.state
    }

    /// `membershipEpoch`.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// `member`.
    pub fn member(&self) -> &Principal {
        &self.member
    }

    /// `role`.
    pub fn role(&self) -> &str {
        &self.role
    }

    /// `membershipId`.
    pub fn membership_id(&self) -> &str {
        self.document
            .get("membershipId")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// `groupId`.
    pub fn group_id(&self) -> &str {
        self.document
            .get("groupId")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }
}

pub(crate) fn num(n: u64) -> Value {
    Value::Number(Number::from_u64(n))
}
