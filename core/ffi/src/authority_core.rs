//! The authoritative Core (`missionweaveprotocol_engine::service::Core`) behind the
//! JavaScript `Core` and `InMemoryStore` of both bindings: construction from a JSON options
//! object, and `perform`, `query`, `replay` answering one envelope string each. The napi addon
//! runs these on the libuv thread pool, the WebAssembly build on the caller's thread; both get
//! the same text.
//!
//! Answers carrying Events (`perform`, `replay`) are a header envelope followed by each Event's
//! canonical signed bytes, one per line: `{"ok":{…,"events":[{eventId, sequence}, …]}}` `\n`
//! body `\n` body … RFC 8785 text never holds a raw line feed, so the Events cross exactly,
//! without JSON escaping. Errors are one `{"error":…}` envelope with the core's `family`.

use std::sync::Arc;

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol_engine::config::CoreConfig;
use missionweaveprotocol_engine::service::{Core, CoreError};
use missionweaveprotocol_engine::store::{EventRecord, InMemoryStore, Store};
pub use missionweaveprotocol_kernel::random::{RandomSource, RandomUnavailable};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use serde::Deserialize;

use crate::RegistryHandle;
use crate::envelope::{Failure, escape_into, finish};
use crate::shapes::common::Millis;
use crate::shapes::{Res, read};

/// Any store, shared: the in-memory store, or (napi) a durable one by URL; nothing here names
/// a backend.
pub type SharedStore = Arc<dyn Store + Send + Sync>;

/// The store a JavaScript store object holds (an `InMemoryStore` by default); several cores may
/// share it.
#[derive(Clone)]
pub struct StoreHandle(SharedStore);

impl core::fmt::Debug for StoreHandle {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("StoreHandle")
    }
}

impl Default for StoreHandle {
    fn default() -> Self {
        Self(Arc::new(InMemoryStore::new()))
    }
}

impl StoreHandle {
    /// A new in-memory store.
    pub fn new() -> Self {
        Self::default()
    }

    /// A handle on `store` (the napi addon's durable stores).
    pub fn shared(store: SharedStore) -> Self {
        Self(store)
    }
}

/// The arguments of `Core.query` (the reference's `Query`).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct QueryOptions {
    kind: String,
    entity_id: String,
    group_id: Option<String>,
    actor_type: Option<String>,
}

/// The authoritative Core behind a [`CoreHandle`].
pub type Authority = Core<SharedStore, SigningKey>;

/// One authoritative core; cloning shares it (the napi tasks hold a clone while they run).
#[derive(Debug, Clone)]
pub struct CoreHandle(Arc<Authority>);

/// A core error as its envelope: the core's description plus its ErrorCode `family`.
fn core_failure(error: &CoreError) -> String {
    finish(Err(
        Failure::error(error).with_str("family", error.family.as_str())
    ))
}

/// A JavaScript number as integer milliseconds (the wrapper passes `Date.now()`-style values).
fn millis(now: f64, name: &str) -> Res<UnixMillis> {
    let n = integer(now, name)?;
    Millis::try_from(n)
        .map(|m| m.0)
        .map_err(|e| Failure::error(&missionweaveprotocol::ArgumentError::new(name, e)))
}

/// A JavaScript number that must be an integer (the core then checks its range).
fn integer(value: f64, name: &str) -> Res<i64> {
    if value.is_finite() && value.fract() == 0.0 && value.abs() <= 9_007_199_254_740_991.0 {
        // Exact: a safe integer converts without rounding.
        #[allow(clippy::cast_possible_truncation)]
        Ok(value as i64)
    } else {
        Err(Failure::error(&missionweaveprotocol::ArgumentError::new(
            name,
            format!("expected a safe integer, not {value}"),
        )))
    }
}

impl CoreHandle {
    /// The shared Core itself (the napi addon's gateway host serves it: `CoreGateway`).
    pub fn core(&self) -> Arc<Authority> {
        Arc::clone(&self.0)
    }

    /// A core over `store` verifying Commands against `registry`, signing Events with the
    /// authority key `key_id` of `seed`, set up from `options` (the JSON form of
    /// [`CoreConfig`], which owns every set-up rule) and drawing random Event IDs from
    /// `random` (the host's: the OS for napi, `crypto.getRandomValues` for WebAssembly).
    /// Errors are envelopes.
    pub fn new(
        options: &str,
        registry: &RegistryHandle,
        seed: &[u8],
        key_id: &str,
        store: &StoreHandle,
        random: Box<dyn RandomSource>,
    ) -> Result<Self, String> {
        Self::build(options, registry, seed, key_id, store, random).map_err(|f| finish(Err(f)))
    }

    fn build(
        options: &str,
        registry: &RegistryHandle,
        seed: &[u8],
        key_id: &str,
        store: &StoreHandle,
        random: Box<dyn RandomSource>,
    ) -> Res<Self> {
        let config = CoreConfig::from_json(options).map_err(|e| Failure::error(&e))?;
        let snapshot = registry
            .resolver()
            .snapshot()
            .map_err(|e| Failure::error(e))?
            .clone();
        let seed: &[u8; 32] = seed
            .try_into()
            .map_err(|_| Failure::argument("authorityKey: the signing seed must be 32 bytes"))?;
        let key = SigningKey::from_seed(key_id, seed);
        let core = config
            .build(Arc::clone(&store.0), snapshot, key, random)
            .map_err(|e| Failure::error(&e))?;
        Ok(Self(Arc::new(core)))
    }

    /// Verifies and applies wire Command `bytes` at `now` (integer ms): the Events, or the
    /// refusal.
    pub fn perform(&self, bytes: &[u8], now: f64) -> String {
        let now = match millis(now, "now") {
            Ok(now) => now,
            Err(failure) => return finish(Err(failure)),
        };
        match self.0.perform_bytes(bytes, now) {
            Ok(performed) => events_answer(
                &[
                    ("groupId", Member::Text(&performed.group_id)),
                    ("duplicate", Member::Bool(performed.duplicate)),
                ],
                &performed.events,
            ),
            Err(error) => core_failure(&error),
        }
    }

    /// One projection; `query` is `{kind, entityId, groupId, actorType}` as JSON.
    pub fn query(&self, query: &str, now: f64) -> String {
        let parsed =
            read::<QueryOptions>(query, "query").and_then(|q| Ok((q, millis(now, "now")?)));
        let (query, now) = match parsed {
            Ok(parsed) => parsed,
            Err(failure) => return finish(Err(failure)),
        };
        match self.0.query_named(
            &query.kind,
            &query.entity_id,
            query.group_id.as_deref(),
            query.actor_type.as_deref(),
            now,
        ) {
            Ok(value) => finish(Ok(value)),
            Err(error) => core_failure(&error),
        }
    }

    /// Up to `limit` Events of `group` after `after` (both integers; the core checks ranges).
    pub fn replay(&self, group: &str, after: f64, limit: f64) -> String {
        let bounds = integer(after, "after").and_then(|a| Ok((a, integer(limit, "limit")?)));
        let (after, limit) = match bounds {
            Ok(bounds) => bounds,
            Err(failure) => return finish(Err(failure)),
        };
        match self.0.replay(group, after, limit) {
            Ok(page) => {
                let continuation = page.continuation.map_or(Member::Null, Member::Number);
                events_answer(
                    &[
                        ("continuation", continuation),
                        ("lastSequence", Member::Number(page.last_sequence)),
                    ],
                    &page.events,
                )
            }
            Err(error) => core_failure(&error),
        }
    }
}

enum Member<'a> {
    Text(&'a str),
    Bool(bool),
    Number(u64),
    Null,
}

/// `{"ok":{<members>,"events":[{"eventId":…,"sequence":…},…]}}`, then `\n` and each Event's
/// canonical bytes (see the module documentation).
fn events_answer(members: &[(&str, Member<'_>)], events: &[EventRecord]) -> String {
    let bodies: usize = events.iter().map(|e| e.body.len() + 1).sum();
    let mut out = String::with_capacity(64 + events.len() * 96 + bodies);
    out.push_str(r#"{"ok":{"#);
    for (name, value) in members {
        escape_into(&mut out, name);
        out.push(':');
        match value {
            Member::Text(text) => escape_into(&mut out, text),
            Member::Bool(flag) => out.push_str(if *flag { "true" } else { "false" }),
            Member::Number(n) => out.push_str(&n.to_string()),
            Member::Null => out.push_str("null"),
        }
        out.push(',');
    }
    out.push_str(r#""events":["#);
    for (index, event) in events.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        out.push_str(r#"{"eventId":"#);
        escape_into(&mut out, &event.event_id);
        out.push_str(r#","sequence":"#);
        out.push_str(&event.sequence.to_string());
        out.push('}');
    }
    out.push_str("]}}");
    for event in events {
        out.push('\n');
        // Canonical JSON is UTF-8 (RFC 8785), so nothing is replaced here.
        out.push_str(&String::from_utf8_lossy(&event.body));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::expect_used, clippy::unwrap_used)]

    use missionweaveprotocol::json::{Value, parse};
    use missionweaveprotocol::registry::RegistryBuilder;
    use missionweaveprotocol::{Principal, PrincipalType};

    use super::*;

    const AUTHORITY: &str = "urn:missionweaveprotocol:service:group-authority";
    const KEY: &str = "urn:missionweaveprotocol:key:authority";

    fn registry(bound_to: &str) -> RegistryHandle {
        let key = SigningKey::from_seed(KEY, &[30; 32]);
        let mut builder = RegistryBuilder::new("urn:missionweaveprotocol:organization:acme");
        builder
            .add_key(
                key.key_id(),
                Principal::new(PrincipalType::Service, bound_to),
                &key.public_key_bytes(),
                "2026-01-01T00:00:00Z",
            )
            .unwrap();
        RegistryHandle::new(&builder.build().unwrap().0)
    }

    fn options() -> String {
        format!(
            r#"{{"authority":{{"type":"service","id":"{AUTHORITY}"}},"eventIdPrefix":"urn:missionweaveprotocol:event:t-","maxAgeMs":null}}"#
        )
    }

    /// Randomness is never drawn with an `eventIdPrefix`: a source that fails proves it.
    #[derive(Debug)]
    struct NoRandom;

    impl RandomSource for NoRandom {
        fn fill(&mut self, _: &mut [u8]) -> Result<(), RandomUnavailable> {
            Err(RandomUnavailable)
        }
    }

    fn new_core(
        options: &str,
        registry: &RegistryHandle,
        seed: &[u8],
        store: &StoreHandle,
    ) -> Result<CoreHandle, String> {
        CoreHandle::new(options, registry, seed, KEY, store, Box::new(NoRandom))
    }

    fn error_of(envelope: &str) -> Value {
        parse(envelope.as_bytes())
            .unwrap()
            .get("error")
            .cloned()
            .expect("an error envelope")
    }

    fn text<'a>(value: &'a Value, pointer: &str) -> &'a str {
        value.pointer(pointer).and_then(Value::as_str).unwrap()
    }

    #[test]
    fn events_cross_as_a_header_and_one_canonical_body_per_line() {
        let none = events_answer(&[("continuation", Member::Null)], &[]);
        assert!(!none.contains('\n'));
        let parsed = parse(none.as_bytes()).unwrap();
        assert_eq!(
            parsed.pointer("/ok/events"),
            Some(&Value::Array(Vec::new()))
        );
        let events = [
            EventRecord::new(1, "urn:e:1", br#"{"a":"x"}"#.to_vec()),
            EventRecord::new(2, "urn:e:\"2", br#"{"b":1}"#.to_vec()),
        ];
        let answer = events_answer(
            &[
                ("groupId", Member::Text("urn:g")),
                ("duplicate", Member::Bool(false)),
            ],
            &events,
        );
        let lines: Vec<&str> = answer.split('\n').collect();
        assert_eq!(lines.len(), 3);
        let head = parse(lines[0].as_bytes()).unwrap();
        assert_eq!(text(&head, "/ok/groupId"), "urn:g");
        assert_eq!(head.pointer("/ok/duplicate"), Some(&Value::Bool(false)));
        assert_eq!(text(&head, "/ok/events/1/eventId"), "urn:e:\"2");
        assert_eq!(lines[1..], [r#"{"a":"x"}"#, r#"{"b":1}"#]);
    }

    #[test]
    fn options_and_the_authority_binding_are_checked() {
        let store = StoreHandle::new();
        let bad = error_of(&new_core("{}", &registry(AUTHORITY), &[30; 32], &store).unwrap_err());
        assert_eq!(text(&bad, "/class"), "ArgumentError");
        let unknown = options().replacen('{', r#"{"colour":"red","#, 1);
        let bad =
            error_of(&new_core(&unknown, &registry(AUTHORITY), &[30; 32], &store).unwrap_err());
        assert!(text(&bad, "/message").contains("colour"), "{bad:?}");
        // The key is bound to another service, or the seed is another key's.
        let other = registry("urn:missionweaveprotocol:service:other");
        let bad = error_of(&new_core(&options(), &other, &[30; 32], &store).unwrap_err());
        assert!(text(&bad, "/message").contains("not bound"), "{bad:?}");
        let bad =
            error_of(&new_core(&options(), &registry(AUTHORITY), &[31; 32], &store).unwrap_err());
        assert!(text(&bad, "/message").contains("not bound"), "{bad:?}");
        let short =
            error_of(&new_core(&options(), &registry(AUTHORITY), &[30; 31], &store).unwrap_err());
        assert_eq!(text(&short, "/class"), "ArgumentError");
        let unusable = RegistryHandle::new(b"{}");
        assert!(new_core(&options(), &unusable, &[30; 32], &store).is_err());
    }

    #[test]
    fn refusals_carry_the_family_and_arguments_are_checked() {
        let core = new_core(
            &options(),
            &registry(AUTHORITY),
            &[30; 32],
            &StoreHandle::new(),
        )
        .unwrap();
        let refused = error_of(&core.perform(b"[]", 1_784_107_800_000.0));
        assert_eq!(text(&refused, "/family"), "invalid_command");
        let unknown = error_of(&core.replay("urn:missionweaveprotocol:group:none", 0.0, 10.0));
        assert_eq!(text(&unknown, "/code"), "GROUP_NOT_FOUND");
        assert_eq!(text(&unknown, "/family"), "not_found");
        let limit = error_of(&core.replay("urn:missionweaveprotocol:group:none", 0.0, 0.0));
        assert_eq!(text(&limit, "/code"), "INVALID_COMMAND");
        for now in [f64::NAN, 1.5, 1e300] {
            let bad = error_of(&core.perform(b"{}", now));
            assert_eq!(text(&bad, "/class"), "ArgumentError");
        }
        let query = error_of(&core.query(r#"{"kind":"mission"}"#, 0.0));
        assert_eq!(text(&query, "/class"), "ArgumentError");
        let absent = error_of(&core.query(
            r#"{"kind":"mission","entityId":"urn:missionweaveprotocol:mission:m","groupId":null,"actorType":null}"#,
            0.0,
        ));
        assert_eq!(text(&absent, "/family"), "not_found");
    }
}
