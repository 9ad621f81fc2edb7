//! Queries: the projections the engine answers from its store (the reference's
//! `Core.query(Query)`, `reference-python.md` §1.5), by [`QueryKind`].
//!
//! The vocabulary is the reference's 21 kinds, spelled once here; every binding reads it
//! (`vocabularies()`). Each answer is the aggregate's normative document where one exists
//! (`mission.schema.json`, `group.schema.json`, `membership.schema.json`,
//! `work-item.schema.json`, `lease.schema.json`, the signed Artifact manifest), never the
//! reference's compact projections. Kinds whose aggregates this engine does not store yet are
//! refused with `INVALID_COMMAND`, reason `query_kind_not_served`, naming why; absent entities
//! are `Ok(None)` (the caller decides how to report them).

use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol::{Principal, PrincipalType};

use super::core::Engine;
use crate::artifact::ARTIFACT_KIND;
use crate::error::EngineError;
use crate::events::EventIdSource;
use crate::membership::aggregate::Membership;
use crate::mission::aggregate::{GROUP_KIND, MISSION_KIND, Mission};
use crate::store::{Aggregate, AggregateKey, Store};
use crate::work::{
    document::AGGREGATE_KIND as WORK_ITEM_KIND, proposal_document::PROPOSAL_AGGREGATE_KIND,
    state::WorkItem,
};
use missionweaveprotocol::crypto::Signer;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

macro_rules! query_kinds {
    ($($variant:ident => $name:literal,)*) => {
        /// What a query asks for: the reference's `QueryKind` (21 snake_case names).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum QueryKind {
            $(
                #[doc = concat!("`", $name, "`")]
                $variant,
            )*
        }

        impl QueryKind {
            /// Every kind, in the reference's order.
            pub const ALL: [QueryKind; 21] = [$(Self::$variant,)*];

            /// The snake_case name.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $name,)*
                }
            }

            /// The kind named `text`, if any.
            pub fn parse(text: &str) -> Option<Self> {
                match text {
                    $($name => Some(Self::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

query_kinds! {
    Command => "command",
    AgentCard => "agent_card",
    SessionEpoch => "session_epoch",
    Mission => "mission",
    Group => "group",
    Membership => "membership",
    Conversation => "conversation",
    Message => "message",
    MessageAmendment => "message_amendment",
    WorkProposal => "work_proposal",
    WorkItem => "work_item",
    MissionWorkItems => "mission_work_items",
    Artifact => "artifact",
    Approval => "approval",
    ExecutionApproval => "execution_approval",
    CooperationOverrideGrant => "cooperation_override_grant",
    PolicyLog => "policy_log",
    GroupSnapshot => "group_snapshot",
    DelegationGrant => "delegation_grant",
    ExecutionLease => "execution_lease",
    BudgetRemaining => "budget_remaining",
}

impl QueryKind {
    /// Why the engine cannot answer this kind yet, or `None` when it can.
    pub const fn not_served(self) -> Option<&'static str> {
        match self {
            Self::Mission
            | Self::Group
            | Self::Membership
            | Self::WorkProposal
            | Self::WorkItem
            | Self::MissionWorkItems
            | Self::Artifact
            | Self::ExecutionLease
            | Self::AgentCard
            | Self::SessionEpoch
            | Self::BudgetRemaining
            | Self::DelegationGrant
            | Self::CooperationOverrideGrant
            | Self::ExecutionApproval
            | Self::Message
            | Self::GroupSnapshot => None,
            Self::Command => Some(
                "Commands are not stored: each Event carries its Command's verified commandHash (§16)",
            ),
            Self::Conversation => Some(
                "a Conversation is named by its Mission or WorkItem; its Messages are queried by ID (message)",
            ),
            Self::MessageAmendment => Some(
                "an amendment is a Message of its own: query it as message (its kind says which)",
            ),
            Self::Approval => Some(
                "Approval documents are not stored yet (mission.approve binds the Mission revision and Artifact set)",
            ),
            Self::PolicyLog => Some(
                "the Policy Log is the Group log: override issuance and consumption are its Events (replay)",
            ),
        }
    }
}

/// One query: the reference's `Query(kind, entity_id, group_id=None, actor_type=None)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    /// What is asked for.
    pub kind: QueryKind,
    /// The entity: a Mission, Group, WorkItem, Work Proposal or Artifact ID; the member's ID
    /// for `membership`; the WorkItem ID for `execution_lease` (an Execution Lease lives in its
    /// WorkItem, §11.3); the Mission ID for `mission_work_items`.
    pub entity_id: String,
    /// The Group (`membership` only).
    pub group_id: Option<String>,
    /// The member's Principal type (`membership` only): `agent`, `human` or `service`.
    pub actor_type: Option<String>,
}

impl Query {
    /// A query of `kind` for `entity_id` without Group or actor type.
    pub fn new(kind: QueryKind, entity_id: impl Into<String>) -> Self {
        Self {
            kind,
            entity_id: entity_id.into(),
            group_id: None,
            actor_type: None,
        }
    }
}

fn parsed(key: &AggregateKey, stored: &Aggregate) -> Result<Value, EngineError> {
    json::parse_state(&stored.value).map_err(|e| EngineError::Corrupt {
        key: key.clone(),
        detail: e.to_string(),
    })
}

fn work_item(key: &AggregateKey, stored: &Aggregate) -> Result<WorkItem, EngineError> {
    WorkItem::from_json(&stored.value).map_err(|e| EngineError::Corrupt {
        key: key.clone(),
        detail: e.to_string(),
    })
}

fn corrupt(key: &AggregateKey, detail: impl ToString) -> EngineError {
    EngineError::Corrupt {
        key: key.clone(),
        detail: detail.to_string(),
    }
}

impl<S: Store, G: Signer, I: EventIdSource> Engine<S, G, I> {
    /// Answers `query` at `now` (lease states are projected at `now`: an active lease past its
    /// expiry is `expired`). `Ok(None)`: no such entity.
    pub fn query(&self, query: &Query, now: UnixMillis) -> Result<Option<Value>, EngineError> {
        if let Some(why) = query.kind.not_served() {
            return Err(EngineError::invalid(
                "query_kind_not_served",
                format!("query kind {} is not served: {why}", query.kind.as_str()),
            ));
        }
        let store = self.store();
        let id = query.entity_id.as_str();
        let read = |kind: &str| -> Result<Option<(AggregateKey, Aggregate)>, EngineError> {
            let key = AggregateKey::new(kind, id);
            Ok(store.aggregate(&key)?.map(|stored| (key, stored)))
        };
        match query.kind {
            QueryKind::Mission => Ok(match read(MISSION_KIND)? {
                Some((key, stored)) => Some(crate::mission::read::full_document(
                    store,
                    &Mission::from_stored(&key, &stored)?,
                )?),
                None => None,
            }),
            QueryKind::Group | QueryKind::WorkProposal | QueryKind::Artifact => {
                let kind = match query.kind {
                    QueryKind::Group => GROUP_KIND,
                    QueryKind::WorkProposal => PROPOSAL_AGGREGATE_KIND,
                    _ => ARTIFACT_KIND,
                };
                read(kind)?
                    .map(|(key, stored)| parsed(&key, &stored))
                    .transpose()
            }
            QueryKind::Membership => self.query_membership(query),
            QueryKind::WorkItem => match read(WORK_ITEM_KIND)? {
                Some((key, stored)) => {
                    let item = work_item(&key, &stored)?;
                    Ok(Some(
                        item.to_schema_document().map_err(|e| corrupt(&key, e))?,
                    ))
                }
                None => Ok(None),
            },
            QueryKind::MissionWorkItems => self.query_mission_work_items(id),
            QueryKind::ExecutionLease => match read(WORK_ITEM_KIND)? {
                Some((key, stored)) => {
                    let item = work_item(&key, &stored)?;
                    let Some(lease) = item.execution_lease else {
                        return Ok(None);
                    };
                    let text = lease.to_json_string().map_err(|e| corrupt(&key, e))?;
                    let mut document =
                        json::parse_state(text.as_bytes()).map_err(|e| corrupt(&key, e))?;
                    if let Value::Object(members) = &mut document {
                        members.insert("state", Value::string(lease.state_at(now).as_str()));
                    }
                    Ok(Some(document))
                }
                None => Ok(None),
            },
            // The signed Agent Card as registered (`agent_card_register`).
            QueryKind::AgentCard => self.agent_card(id),
            // `{"agentId", "sessionEpoch"}`: the Agent's current Session Epoch (§6.3).
            QueryKind::SessionEpoch => Ok(self.session_epoch(id)?.map(|epoch| {
                let mut o = json::Object::new();
                o.insert("agentId", Value::string(id));
                o.insert("sessionEpoch", Value::Number(json::Number::from_u64(epoch)));
                Value::Object(o)
            })),
            // What the WorkItem's or the Mission's account has left (§12): `{account, limit,
            // usage, remaining}`, the six dimensions as the reference's `ResourceUsage`.
            QueryKind::BudgetRemaining => self.query_budget(id),
            // The stored Grant `{grant, uses}` (§9.1; `grant` is a `membership.schema.json`
            // `delegationGrants[]` item) and the Cooperation Override Grant `{grant,
            // consumed?}` (§20), by Grant ID.
            QueryKind::DelegationGrant | QueryKind::CooperationOverrideGrant => {
                let kind = match query.kind {
                    QueryKind::DelegationGrant => crate::delegation::stored::GRANT_KIND,
                    _ => crate::cooperation_override::stored::OVERRIDE_KIND,
                };
                read(kind)?
                    .map(|(key, stored)| parsed(&key, &stored))
                    .transpose()
            }
            // The stored Execution Approval by Approval ID (§12; `crate::approval::record`).
            QueryKind::ExecutionApproval => read(crate::approval::record::EXECUTION_APPROVAL_KIND)?
                .map(|(key, stored)| parsed(&key, &stored))
                .transpose(),
            // §9: a Message by ID within its Group (`group_id`; Message IDs are Group-scoped):
            // `{message, state, workItemId?, lastAmendmentId?}` (`message::aggregate`).
            QueryKind::Message => {
                let Some(group) = &query.group_id else {
                    return Err(EngineError::invalid(
                        "message_query_incomplete",
                        "a message query needs group_id (Message IDs are scoped to their Group)",
                    ));
                };
                let key = crate::message::aggregate::message_key(group, id);
                store
                    .aggregate(&key)?
                    .map(|stored| parsed(&key, &stored))
                    .transpose()
            }
            // §7.4: the signed Group Snapshot an archived Group keeps, by Group ID.
            QueryKind::GroupSnapshot => Ok(crate::archive::snapshot::read_snapshot(store, id)?
                .map(|snapshot| snapshot.document)),
            // `not_served` answered every other kind above.
            _ => Err(EngineError::invalid(
                "query_kind_not_served",
                format!("query kind {} is not served", query.kind.as_str()),
            )),
        }
    }

    fn query_membership(&self, query: &Query) -> Result<Option<Value>, EngineError> {
        // The reference requires both (InvalidCommand otherwise).
        let (Some(group), Some(actor_type)) = (&query.group_id, &query.actor_type) else {
            return Err(EngineError::invalid(
                "membership_query_incomplete",
                "a membership query needs group_id and actor_type",
            ));
        };
        let Some(kind) = PrincipalType::parse(actor_type) else {
            return Err(EngineError::invalid(
                "unknown_actor_type",
                format!("actor_type {actor_type:?} is not agent, human or service"),
            ));
        };
        let member = Principal::new(kind, query.entity_id.as_str());
        Ok(Membership::read(self.store(), group, &member)?.map(|m| m.to_value()))
    }

    fn query_mission_work_items(&self, mission_id: &str) -> Result<Option<Value>, EngineError> {
        let store = self.store();
        if store
            .aggregate(&AggregateKey::new(MISSION_KIND, mission_id))?
            .is_none()
        {
            return Ok(None);
        }
        // Through the Mission's index rows: O(its WorkItems), in WorkItem ID order.
        let mut items = Vec::new();
        for (_, item) in crate::work::read::mission_items(store, mission_id)? {
            let key = AggregateKey::new(WORK_ITEM_KIND, item.work_item_id.as_str());
            items.push(item.to_schema_document().map_err(|e| corrupt(&key, e))?);
        }
        Ok(Some(Value::Array(items)))
    }

    fn query_budget(&self, id: &str) -> Result<Option<Value>, EngineError> {
        use crate::budget::account::{BudgetAccount, account_key};
        use missionweaveprotocol_kernel::budget::AccountKind;
        use missionweaveprotocol_kernel::snapshot_json::resources_to_value;
        for kind in [AccountKind::WorkItem, AccountKind::Mission] {
            let key = account_key(kind, id);
            if let Some(stored) = self.store().aggregate(&key)? {
                let account = BudgetAccount::from_stored(&stored.value)
                    .ok_or_else(|| corrupt(&key, "unreadable budget account"))?;
                let mut o = json::Object::new();
                o.insert("account", Value::string(kind.as_str()));
                o.insert("id", Value::string(id));
                if let Some(c) = account.currency {
                    o.insert("currency", Value::string(c.as_str()));
                }
                o.insert("limit", resources_to_value(&account.limit));
                o.insert("reserved", resources_to_value(&account.reserved));
                o.insert("usage", resources_to_value(&account.usage));
                o.insert("remaining", resources_to_value(&account.remaining()));
                return Ok(Some(Value::Object(o)));
            }
        }
        Ok(None)
    }
}
