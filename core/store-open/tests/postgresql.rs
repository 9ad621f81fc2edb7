//! PostgreSQL through this crate, against a real server (`MWP_POSTGRES_URL`, or a private
//! cluster started by `scripts/pg-cluster.sh`; never skipped): `open(url)` and `ManagedStore`
//! connect, a Core's engine runs a flow, and a new store on the same database (as a later
//! process) replays the same Events and continues the log; every URL spelling the parser
//! accepts reaches libpq (`postgres::Config`) as a URL it reads; a server that cannot be reached
//! is a typed error at `initialize` and the store stays unopened.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod pg;

use std::sync::Arc;

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::{
    DescribeError, ErrorClass, Principal, PrincipalType, SignedDocumentCodec, SignedDocumentKind,
    WireCode,
};
use missionweaveprotocol_engine::engine::Engine;
use missionweaveprotocol_engine::events::{EventIssuer, SequentialEventIds};
use missionweaveprotocol_engine::ingress::VerifiedCommand;
use missionweaveprotocol_engine::store::suite::engine::{
    AUTHORITY, GROUP, Keys, NOW, create_in, keys,
};
use missionweaveprotocol_engine::store::{
    AggregateKey, EventRecord, IntegrityKey, Store, StoreError, StoreOptions, Transaction,
};
use missionweaveprotocol_store_open::{
    Dialect, LifecycleError, Location, ManagedStore, StoreUrl, open, open_with,
};
use pg::FreshDatabase;

fn append(store: &dyn Store, group: &str) -> u64 {
    let next = store.head(group).unwrap().next_sequence;
    let mut tx = Transaction::new();
    tx.append(
        group,
        EventRecord::new(next, &format!("e{next}"), &b"{}"[..]),
    )
    .put(
        AggregateKey::new("mission", format!("m{next}")),
        0,
        b"{}"[..].into(),
    );
    store.commit(tx).unwrap();
    next
}

#[test]
fn a_postgresql_database_keeps_its_log_across_opens() {
    let database = FreshDatabase::new();
    let first = database.open();
    assert_eq!(append(&*first, "g"), 1);
    assert_eq!(append(&*first, "g"), 2);
    drop(first);
    // A new store: connections of its own, as a later process would open.
    let again = database.open();
    assert_eq!(again.head("g").unwrap().next_sequence, 3);
    assert_eq!(append(&*again, "g"), 3);
    assert_eq!(again.replay("g", 0, 10).unwrap().events.len(), 3);
}

/// Every spelling `StoreUrl::parse` accepts for PostgreSQL becomes a libpq URL the backend
/// connects with: the driver suffix goes, the rest (user, password, host, port, database,
/// options) is handed over as written.
#[test]
fn every_postgresql_url_spelling_reaches_the_same_database() {
    let database = FreshDatabase::new();
    for (expected, scheme) in (1..).zip([
        "postgresql",
        "postgres",
        "postgresql+asyncpg",
        "postgresql+psycopg",
        "postgresql+psycopg2",
        "postgres+asyncpg",
        "POSTGRESQL+ASYNCPG",
    ]) {
        let text = database.url_as(scheme);
        let url = StoreUrl::parse(&text).unwrap();
        assert_eq!(url.dialect(), Dialect::Postgresql);
        let Location::Postgresql(libpq) = url.location() else {
            panic!("{scheme}: {url:?}");
        };
        assert!(libpq.starts_with("postgresql://"), "{scheme}");
        assert_eq!(libpq, &database.url_as("postgresql"), "{scheme}");
        let store = open(&url).unwrap();
        assert_eq!(store.head("g").unwrap().next_sequence, expected, "{scheme}");
        assert_eq!(append(&*store, "g"), expected, "{scheme}");
        // PostgreSQLStore(url) takes the same spellings.
        StoreUrl::parse_postgresql(&text).unwrap();
    }
}

/// A password (percent-encoded, trust authentication ignores it) and libpq options in the query
/// reach the server; the masked URL hides the password.
#[test]
fn a_url_with_a_password_and_options_connects() {
    let database = FreshDatabase::new();
    let plain = database.url_as("postgresql+asyncpg");
    let (scheme, rest) = plain.split_once("://").unwrap();
    let (user, host) = rest.split_once('@').expect("the server URL names a user");
    let text = format!(
        "{scheme}://{user}:s%40cr%3At@{host}?application_name=mwp-stores&connect_timeout=5"
    );
    let url = StoreUrl::parse(&text).unwrap();
    assert_eq!(
        url.masked(),
        format!("{scheme}://{user}:***@{host}?application_name=mwp-stores&connect_timeout=5")
    );
    let store = open(&url).unwrap();
    assert_eq!(append(&*store, "g"), 1);
    // The option reached the server: this session's application_name is ours.
    let mut client = postgres::Client::connect(&database.url(), postgres::NoTls).unwrap();
    let names: i64 = client
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'mwp-stores' \
             AND datname = current_database()",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(names >= 1, "{names}");
}

/// A closed port: nothing listens there once the listener is dropped.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[test]
fn an_unreachable_server_is_a_typed_error_and_the_store_stays_unopened() {
    let url = format!("postgresql+asyncpg://mwp@127.0.0.1:{}/mwp", closed_port());
    let managed = ManagedStore::new(StoreUrl::parse(&url).unwrap());
    let error = managed.initialize().unwrap_err();
    assert!(
        matches!(error, LifecycleError::Open(StoreError::Backend { .. })),
        "{error:?}"
    );
    assert_eq!(error.wire_code(), WireCode::InternalError);
    assert_eq!(error.reason(), "backend_failure");
    // The message never repeats the URL's password (there is none here) and says what failed.
    assert!(!managed.is_open());
    assert_eq!(
        managed.ensure_open().unwrap_err(),
        LifecycleError::NotInitialized
    );
    assert!(managed.head("g").is_err());
    // Closing a store never opened is allowed and final.
    assert!(!managed.close());
    assert_eq!(managed.initialize().unwrap_err(), LifecycleError::Closed);
}

#[test]
fn a_missing_database_is_a_backend_error() {
    let url = pg::with_database(pg::server_url(), "mwp_no_such_database");
    let error = open(&StoreUrl::parse(&url).unwrap())
        .err()
        .expect("no such database");
    assert!(matches!(error, StoreError::Backend { .. }), "{error:?}");
    assert!(
        error.to_string().contains("mwp_no_such_database"),
        "{error}"
    );
}

#[test]
fn a_url_libpq_cannot_read_is_an_argument_error() {
    // The store URL parser leaves the authority to libpq, which refuses a port that is no number.
    let url = StoreUrl::parse("postgresql://mwp@127.0.0.1:notaport/mwp").unwrap();
    let error = open(&url).err().expect("bad port");
    assert!(
        matches!(
            error,
            StoreError::InvalidArgument {
                argument: "url",
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(error.class(), ErrorClass::Argument);
}

fn create(keys: &Keys, mission: &str, action: &str) -> VerifiedCommand {
    create_in(keys, GROUP, mission, action)
}

type Core = Engine<Arc<ManagedStore>, SigningKey, SequentialEventIds>;

/// An engine over an initialized `ManagedStore` (what the bindings build a Core over).
fn core(keys: &Keys, url: &str, prefix: &str) -> (Arc<ManagedStore>, Core) {
    let managed = Arc::new(ManagedStore::new(StoreUrl::parse(url).unwrap()));
    managed.initialize().unwrap();
    let engine = Engine::new(
        Arc::clone(&managed),
        EventIssuer::new(
            Principal::new(PrincipalType::Service, AUTHORITY),
            keys.authority.clone(),
        ),
        SequentialEventIds::new(prefix),
    );
    (managed, engine)
}

#[test]
fn a_core_flow_survives_close_and_a_new_store_continues_it() {
    let keys = keys();
    let database = FreshDatabase::new();
    let url = database.url_as("postgresql+asyncpg");
    let first_mission = "urn:missionweaveprotocol:mission:close-books";
    let command = create(&keys, first_mission, "0b6d1c1e-6f0a-4b7e-9a53-2f1f0c9e7d11");

    let (managed, engine) = core(&keys, &url, "urn:missionweaveprotocol:event:first-");
    let performed = engine.perform(&command, NOW).unwrap();
    assert!(!performed.duplicate);
    assert_eq!(performed.events[0].sequence, 1);
    let first = performed.events;
    assert!(managed.close());
    // After close the Core no longer reaches the database: a typed store error, nothing applied.
    let refused = engine.perform(
        &create(
            &keys,
            "urn:missionweaveprotocol:mission:late",
            "00000000-0000-4000-8000-000000000001",
        ),
        NOW,
    );
    assert!(refused.is_err());
    drop(engine);

    // A new store on the same database (another spelling of its URL), a new Core.
    let (managed, engine) = core(
        &keys,
        &database.url_as("postgres"),
        "urn:missionweaveprotocol:event:second-",
    );
    let page = engine.replay(GROUP, 0, 100).unwrap();
    assert_eq!(page.events, first);
    for event in &page.events {
        SignedDocumentCodec::new()
            .verify(SignedDocumentKind::Event, &event.body, &keys.registry)
            .unwrap();
    }
    assert_eq!(
        engine
            .mission(first_mission)
            .unwrap()
            .unwrap()
            .state()
            .as_str(),
        "active"
    );
    // The same signed Command: its first Event, nothing appended (§15.1).
    let again = engine.perform(&command, NOW).unwrap();
    assert!(again.duplicate);
    assert_eq!(again.events[0], first[0]);
    // The log continues where it stopped (the Python and Node tests continue one Group's Work
    // flow; here a Mission in a second Group, and the first Group's next append).
    let head = managed.head(GROUP).unwrap().next_sequence;
    assert_eq!(head, first.len() as u64 + 1);
    let other = "urn:missionweaveprotocol:group:audit";
    let next = engine
        .perform(
            &create_in(
                &keys,
                other,
                "urn:missionweaveprotocol:mission:audit",
                "7c1e2d3f-4a5b-4c6d-8e7f-8091a2b3c4d5",
            ),
            NOW,
        )
        .unwrap();
    assert!(!next.duplicate);
    assert_eq!(next.events[0].sequence, 1);
    assert_eq!(append(&*managed, GROUP), head);
    assert_eq!(
        engine.replay(GROUP, 0, 100).unwrap().events.len() as u64,
        head
    );
    assert!(managed.close());
}

/// A PostgreSQL store sealed under an integrity key opens again (as a later process would)
/// with that key only, through `open_with` and `ManagedStore::with_options`.
#[test]
fn a_keyed_postgresql_store_opens_with_its_key_only() {
    let database = FreshDatabase::new();
    let url = StoreUrl::parse(&database.url()).unwrap();
    let key = |byte: u8| IntegrityKey::new(vec![byte; 32]).unwrap();
    let first = open_with(&url, &StoreOptions::keyed(key(1))).unwrap();
    assert_eq!(append(&*first, "g"), 1);
    drop(first);
    for refused in [StoreOptions::default(), StoreOptions::keyed(key(2))] {
        let e = open_with(&url, &refused).err().expect("refused");
        assert_eq!(e.wire_code(), WireCode::InternalError, "{e}");
        assert_eq!(DescribeError::reason(&e), "integrity_key_refused");
        let managed = ManagedStore::with_options(url.clone(), refused);
        assert!(matches!(
            managed.initialize(),
            Err(LifecycleError::Open(StoreError::IntegrityKeyRefused { .. }))
        ));
    }
    let managed = ManagedStore::with_options(url, StoreOptions::keyed(key(1)));
    managed.initialize().unwrap();
    assert_eq!(append(&managed, "g"), 2);
    assert_eq!(managed.replay("g", 0, 10).unwrap().events.len(), 2);
}
