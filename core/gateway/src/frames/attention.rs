//! The attention filter of one `SUBSCRIBE` Group entry (§8: "live delivery MUST support
//! attention filters"; §17.2: "A filter changes live delivery, not authorization or durable
//! history"), in its wire shape. What it selects is decided by the server
//! (`server::attention`); the client only builds it.

use missionweaveprotocol::json::{Object, Value};

/// `groups[].attention` of a `SUBSCRIBE` frame. Absent members select nothing of their own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attention {
    /// `eventKinds`: Event kinds delivered live.
    pub event_kinds: Option<Vec<String>>,
    /// `conversationIds`: Conversations whose Events are delivered live.
    pub conversation_ids: Option<Vec<String>>,
    /// `workItemIds`: WorkItems whose Events are delivered live.
    pub work_item_ids: Option<Vec<String>>,
    /// `mentionsOnly`: a Message Event is delivered live only when it mentions the Agent.
    pub mentions_only: Option<bool>,
    /// `announcements`: Mission- and Group-level facts (`mission.*`, `group.*`) are delivered.
    pub announcements: Option<bool>,
}

fn texts(value: Option<&Value>) -> Option<Vec<String>> {
    value.and_then(Value::as_array).map(|items| {
        items
            .iter()
            .filter_map(|item| item.as_str().map(str::to_owned))
            .collect()
    })
}

fn array(items: &[String]) -> Value {
    Value::Array(items.iter().map(|s| Value::string(s.as_str())).collect())
}

impl Attention {
    /// The filter of a schema-valid `attention` object.
    pub fn from_value(value: &Value) -> Self {
        Self {
            event_kinds: texts(value.get("eventKinds")),
            conversation_ids: texts(value.get("conversationIds")),
            work_item_ids: texts(value.get("workItemIds")),
            mentions_only: value.get("mentionsOnly").and_then(Value::as_bool),
            announcements: value.get("announcements").and_then(Value::as_bool),
        }
    }

    /// The wire object.
    pub fn to_value(&self) -> Value {
        let mut object = Object::new();
        if let Some(kinds) = &self.event_kinds {
            object.insert("eventKinds", array(kinds));
        }
        if let Some(ids) = &self.conversation_ids {
            object.insert("conversationIds", array(ids));
        }
        if let Some(ids) = &self.work_item_ids {
            object.insert("workItemIds", array(ids));
        }
        if let Some(flag) = self.mentions_only {
            object.insert("mentionsOnly", Value::Bool(flag));
        }
        if let Some(flag) = self.announcements {
            object.insert("announcements", Value::Bool(flag));
        }
        Value::Object(object)
    }

    /// How many list entries the filter holds (what the server's per-entry limit counts).
    pub fn entries(&self) -> usize {
        [
            &self.event_kinds,
            &self.conversation_ids,
            &self.work_item_ids,
        ]
        .into_iter()
        .map(|list| list.as_ref().map_or(0, Vec::len))
        .sum()
    }

    /// Bytes of the listed texts (what the connection's memory bound counts).
    pub fn text_bytes(&self) -> usize {
        [
            &self.event_kinds,
            &self.conversation_ids,
            &self.work_item_ids,
        ]
        .into_iter()
        .flatten()
        .flatten()
        .map(String::len)
        .sum()
    }
}
