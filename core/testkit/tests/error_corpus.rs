//! The cross-language corpus of failing calls (`tests/errors/failing-calls.json`) run through
//! the Rust core: the expected class, code, reason and fields are the core's own. The Python
//! and JavaScript suites run the same corpus through their public APIs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use missionweaveprotocol::admission::{
    AdmissionLog, AppendOutcome, FirstAdmissionRecord, LookupOutcome, replay_historical,
};
use missionweaveprotocol::bundle::embedded_file;
use missionweaveprotocol::json::{Value, canonical_bytes, parse};
use missionweaveprotocol::registry::AgentRegistryKeyResolver;
use missionweaveprotocol::wire::parse_frame;
use missionweaveprotocol::{
    ArgumentError, DescribeError, FieldValue, SignedDocumentCodec, SignedDocumentKind,
};
use std::sync::Arc;

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::registry::RegistryBuilder;
use missionweaveprotocol::schema_formats::encode_base64url;
use missionweaveprotocol::{Principal, PrincipalType};
use missionweaveprotocol_agent::auth::{AgentKeyRegistry, SessionAuthority, SessionConfig};
use missionweaveprotocol_agent::replay::{AgentLocalStore, GroupReplay, MemoryAgentStore};
use missionweaveprotocol_engine::config::{ConfigError, CoreConfig, OfflineLimitsConfig};
use missionweaveprotocol_engine::service::CoreError;
use missionweaveprotocol_engine::store::InMemoryStore;
use missionweaveprotocol_kernel::budget::{BudgetLedger, BudgetLedgerSnapshot};
use missionweaveprotocol_kernel::resources::{Currency, Dimension, Resources};
use missionweaveprotocol_kernel::scheduler::{self, Scheduler, SchedulerPolicy, WorkOffer};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use missionweaveprotocol_store_open::{ManagedStore, StoreUrl};

/// A log that answers `found` without a usable record (what a JavaScript log's
/// `{status: "found"}` and a Python log's duck-typed reply are read as).
struct FoundWithoutRecord;

impl AdmissionLog for FoundWithoutRecord {
    fn lookup(&self, _: &str, _: &str) -> LookupOutcome {
        LookupOutcome::from_reply(Some("found"), None)
    }
    fn append(&self, _: &FirstAdmissionRecord, _: &[u8]) -> AppendOutcome {
        AppendOutcome::from_reply(None, None)
    }
}

fn corpus() -> Value {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/errors/failing-calls.json");
    parse(&std::fs::read(path).unwrap()).unwrap()
}

fn text<'v>(args: &'v Value, name: &str) -> &'v str {
    args.get(name).and_then(Value::as_str).unwrap()
}

fn resources(value: &Value) -> Resources {
    let mut out = Resources::ZERO;
    for (name, amount) in value.as_object().unwrap().iter() {
        let d = Dimension::parse(name.as_str().unwrap()).unwrap();
        out.set(d, amount.as_number().unwrap().as_u64().unwrap());
    }
    out
}

fn seed_of(args: &Value, name: &str) -> Option<u8> {
    args.get(name)
        .and_then(Value::as_number)
        .and_then(|n| n.as_u64())
        .map(|n| u8::try_from(n).unwrap())
}

const KEY: &str = "urn:missionweaveprotocol:key:authority";
const AUTHORITY: &str = "urn:missionweaveprotocol:service:group-authority";

/// The Registry binding the authority key of seed 30 to the Group Authority.
fn authority_registry() -> (
    Principal,
    Arc<missionweaveprotocol::registry::KeyRegistrySnapshot>,
) {
    let bound = SigningKey::from_seed(KEY, &[30; 32]);
    let authority = Principal::new(PrincipalType::Service, AUTHORITY);
    let mut builder = RegistryBuilder::new("urn:missionweaveprotocol:organization:acme");
    builder
        .add_key(
            KEY,
            authority.clone(),
            &bound.public_key_bytes(),
            "2026-01-01T00:00:00Z",
        )
        .unwrap();
    (authority, Arc::new(builder.build().unwrap().1))
}

/// A Core over a SQLite store (in memory) that is closed after the Core was built: its replay
/// fails on the store (the Python and Node `SQLStore`'s life cycle, `ManagedStore`).
fn core_closed_store(args: &Value) -> CoreError {
    let (authority, registry) = authority_registry();
    let store = Arc::new(ManagedStore::new(
        StoreUrl::parse("sqlite:///:memory:").unwrap(),
    ));
    store.initialize().unwrap();
    let core = CoreConfig::new(&authority)
        .build(
            Arc::clone(&store),
            registry,
            SigningKey::from_seed(KEY, &[30; 32]),
            Box::new(missionweaveprotocol_host::OsRandom),
        )
        .unwrap();
    assert!(store.close());
    core.replay(text(args, "group_id"), 0, 10).unwrap_err()
}

/// A Core built from the case's configuration: the Registry binds the authority key of seed 30
/// to the Group Authority; `key_seed` is the key the Core is given.
fn core_config(args: &Value) -> ConfigError {
    let (authority, registry) = authority_registry();
    let mut config = CoreConfig::new(&authority);
    config.snapshot_authority_key_id = args
        .get("snapshot_authority_key_id")
        .and_then(Value::as_str)
        .map(str::to_owned);
    config.snapshot_authority_public_key = seed_of(args, "snapshot_authority_public_key_seed")
        .map(|seed| encode_base64url(&SigningKey::from_seed(KEY, &[seed; 32]).public_key_bytes()));
    if let Some(limits) = args
        .get("offline_limits")
        .filter(|v| !matches!(v, Value::Null))
    {
        let number = |name: &str| {
            limits
                .get(name)
                .unwrap()
                .as_number()
                .unwrap()
                .as_u64()
                .unwrap()
        };
        config.offline_limits = Some(OfflineLimitsConfig {
            max_disconnect_grace_ms: number("max_disconnect_grace_ms"),
            max_actions: u32::try_from(number("max_actions")).unwrap(),
            max_usage: None,
        });
    }
    let key = SigningKey::from_seed(KEY, &[seed_of(args, "key_seed").unwrap(); 32]);
    match config.build(
        InMemoryStore::new(),
        registry,
        key,
        Box::new(missionweaveprotocol_host::OsRandom),
    ) {
        Ok(_) => panic!("the configuration must be refused"),
        Err(e) => e,
    }
}

/// Runs one failing call; returns the core's error and, for a refusal of the Core, its
/// ErrorCode family.
fn run(op: &str, args: &Value) -> (Box<dyn DescribeError>, Option<&'static str>) {
    if op == "core_closed_store" {
        let e = core_closed_store(args);
        let family = e.family.as_str();
        return (Box::new(e), Some(family));
    }
    (run_error(op, args), None)
}

/// Runs one failing call that is not a refusal of the Core; returns the core's error.
fn run_error(op: &str, args: &Value) -> Box<dyn DescribeError> {
    match op {
        "canonicalize" => match parse(text(args, "text").as_bytes()) {
            Err(e) => Box::new(e),
            Ok(v) => Box::new(canonical_bytes(&v).unwrap_err()),
        },
        "verify" => {
            let Some(kind) = SignedDocumentKind::parse(text(args, "kind")) else {
                return Box::new(ArgumentError::new("kind", "unknown signed document kind"));
            };
            let registry = embedded_file(text(args, "registry")).unwrap();
            let resolver = AgentRegistryKeyResolver::new(registry);
            Box::new(
                SignedDocumentCodec::new()
                    .verify(kind, text(args, "text").as_bytes(), &resolver)
                    .unwrap_err(),
            )
        }
        "parse_frame" => Box::new(parse_frame(text(args, "text").as_bytes()).unwrap_err()),
        "budget_consume" => {
            let limit = resources(args.get("limit").unwrap());
            let mut ledger = BudgetLedger::new();
            ledger
                .register_mission("m", Currency::parse("USD"), limit)
                .unwrap();
            ledger.register_work_item("w", "m", None, limit).unwrap();
            let delta = resources(args.get("delta").unwrap());
            Box::new(ledger.consume(text(args, "work_item"), &delta).unwrap_err())
        }
        "budget_rebuild" => {
            let value = parse(text(args, "text").as_bytes()).unwrap();
            Box::new(BudgetLedgerSnapshot::from_value(&value).unwrap_err())
        }
        "scheduler_reprioritize" | "scheduler_cancel" => {
            let mut s = Scheduler::new(SchedulerPolicy::default()).unwrap();
            assert!(s.admit(&WorkOffer::new("a", "g"), UnixMillis(0)).accepted);
            let work_id = text(args, "work_id");
            if op == "scheduler_cancel" {
                return Box::new(s.cancel(work_id).unwrap_err());
            }
            let priority = args
                .get("priority")
                .and_then(Value::as_number)
                .and_then(|n| n.as_i64())
                .unwrap();
            // The binding passes any integer; the range is the core's rule.
            Box::new(
                scheduler::priority(priority)
                    .and_then(|p| s.reprioritize(work_id, p))
                    .unwrap_err(),
            )
        }
        "replay_found_without_record" => {
            let kind = SignedDocumentKind::parse(text(args, "kind")).unwrap();
            let resolver =
                AgentRegistryKeyResolver::new(embedded_file(text(args, "registry")).unwrap());
            let verified = SignedDocumentCodec::new()
                .verify(
                    kind,
                    embedded_file(text(args, "document")).unwrap(),
                    &resolver,
                )
                .unwrap();
            Box::new(replay_historical(&verified, &FoundWithoutRecord).unwrap_err())
        }
        // The Agent side (§6.3, §16): napi, Python and Rust only (the WebAssembly build has
        // no local store, replay or session authority).
        "session_verify" => {
            let secret = vec![7u8; 32];
            let authority = SessionAuthority::new(
                secret,
                SessionConfig::default(),
                Box::new(missionweaveprotocol_host::OsRandom),
            )
            .unwrap();
            Box::new(
                authority
                    .verify_session(&AgentKeyRegistry::new(), text(args, "token"), UnixMillis(0))
                    .unwrap_err(),
            )
        }
        "local_store_remember_event" => {
            let store = MemoryAgentStore::new();
            let at = |name: &str| {
                let pair = args.get(name).and_then(Value::as_array).unwrap();
                let group = pair[0].as_str().unwrap().to_owned();
                let sequence = pair[1].as_number().unwrap().as_u64().unwrap();
                (group, sequence)
            };
            let event = text(args, "event_id");
            let (group, sequence) = at("first");
            assert!(
                store
                    .remember_event("agent", event, Some((&group, sequence)))
                    .unwrap()
            );
            let (group, sequence) = at("second");
            Box::new(
                store
                    .remember_event("agent", event, Some((&group, sequence)))
                    .unwrap_err(),
            )
        }
        "replay_sequence" => {
            let store = MemoryAgentStore::new();
            let mut replay = GroupReplay::begin(&store, "agent", "g").unwrap();
            let sequence = args
                .get("sequence")
                .and_then(Value::as_number)
                .and_then(|n| n.as_u64())
                .unwrap();
            Box::new(
                replay
                    .check(&store, text(args, "event_id"), "g", sequence)
                    .unwrap_err(),
            )
        }
        "core_config" => Box::new(core_config(args)),
        // `Scheduler.rebuild(source)`: offers go to the core's `Scheduler::from_offers`; any
        // other source than a snapshot or offers (`None`, a number) is refused by the binding's
        // conversion with the argument error every binding gives (argument `source`).
        "scheduler_rebuild" => match args.get("source") {
            Some(Value::Array(items)) => {
                let offers: Vec<WorkOffer> = items
                    .iter()
                    .map(|o| WorkOffer::new(text(o, "work_id"), text(o, "group_id")))
                    .collect();
                Box::new(
                    Scheduler::from_offers(SchedulerPolicy::default(), &offers, UnixMillis(0))
                        .unwrap_err(),
                )
            }
            _ => Box::new(ArgumentError::new(
                "source",
                "must be a Scheduler snapshot or offers",
            )),
        },
        // A snapshot handed over as a host value that is no mapping/object (`None`, a number,
        // a list): the bindings' conversion refuses it as API misuse, not as a damaged snapshot.
        "budget_rebuild_value" | "retry_restore_value" => {
            let value = args.get("value").unwrap();
            assert!(
                value.as_object().is_none(),
                "the corpus gives no object here"
            );
            Box::new(ArgumentError::new("snapshot", "must be a snapshot mapping"))
        }
        other => panic!("unknown op {other}"),
    }
}

fn field_json(value: &FieldValue) -> Value {
    match value {
        FieldValue::Text(t) => Value::string(t.clone()),
        FieldValue::Integer(n) => parse(n.to_string().as_bytes()).unwrap(),
        FieldValue::Bool(b) => Value::Bool(*b),
        FieldValue::Texts(items) => {
            Value::Array(items.iter().map(|t| Value::string(t.clone())).collect())
        }
        FieldValue::Account { kind, id } => {
            Value::Array(vec![Value::string(*kind), Value::string(id.clone())])
        }
    }
}

#[test]
fn every_failing_call_fails_as_the_corpus_says() {
    let corpus = corpus();
    let cases = corpus.get("cases").and_then(Value::as_array).unwrap();
    assert!(cases.len() >= 10);
    for case in cases {
        let name = text(case, "name");
        let expect = case.get("expect").unwrap();
        let (e, family) = run(text(case, "op"), case.get("args").unwrap());
        // A refusal of the Core names its family (the class every binding shows).
        assert_eq!(
            family,
            expect.get("family").and_then(Value::as_str),
            "{name}: family"
        );
        if let Some(retryable) = expect.get("retryable").and_then(Value::as_bool) {
            assert_eq!(e.retryable(), retryable, "{name}: retryable");
        }
        assert_eq!(e.class().as_str(), text(expect, "class"), "{name}");
        assert_eq!(e.wire_code().as_str(), text(expect, "code"), "{name}");
        assert_eq!(e.reason(), text(expect, "reason"), "{name}");
        assert_eq!(
            e.stage().map(|s| s.as_str()),
            expect.get("stage").and_then(Value::as_str),
            "{name}"
        );
        if let Some(fields) = expect.get("fields").and_then(Value::as_object) {
            let actual = e.fields();
            assert_eq!(actual.iter().len(), fields.len(), "{name}: {actual:?}");
            for (field, value) in fields.iter() {
                let got = actual.get(field.as_str().unwrap()).map(field_json);
                assert!(
                    got.as_ref().is_some_and(|g| g.json_eq(value)),
                    "{name}: field {:?} is {got:?}",
                    field.as_str()
                );
            }
        }
        if std::env::var_os("MWP_PRINT_MESSAGES").is_some() {
            println!("MESSAGE\t{name}\t{e}");
        }
        if let Some(message) = expect.get("message").and_then(Value::as_str) {
            assert_eq!(e.to_string(), message, "{name}");
        }
        // Messages are readable, never Debug dumps.
        assert!(!e.to_string().contains("{ "), "{name}: {e}");
    }
}
