//! Store URL parsing and masking: every accepted form of the reference's `SQLStore(url)`, and a
//! typed refusal (class `Argument`, `PROTOCOL_VIOLATION`, a stable reason) for everything else.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use missionweaveprotocol::{DescribeError, ErrorClass, WireCode};
use missionweaveprotocol_store_open::{Dialect, Location, StoreUrl, StoreUrlProblem};

fn sqlite_file(url: &str) -> PathBuf {
    match StoreUrl::parse(url).unwrap().location() {
        Location::SqliteFile(path) => path.clone(),
        other => panic!("{url}: {other:?}"),
    }
}

fn problem(url: &str) -> StoreUrlProblem {
    let error = StoreUrl::parse(url).expect_err(url);
    assert_eq!(error.class(), ErrorClass::Argument, "{url}");
    assert_eq!(error.wire_code(), WireCode::ProtocolViolation, "{url}");
    assert_eq!(error.reason(), error.problem.reason());
    error.problem
}

#[test]
fn sqlite_urls_name_a_file_relative_or_absolute() {
    assert_eq!(
        sqlite_file("sqlite:///relative.db"),
        PathBuf::from("relative.db")
    );
    assert_eq!(
        sqlite_file("sqlite:///./dir/x.db"),
        PathBuf::from("./dir/x.db")
    );
    assert_eq!(
        sqlite_file("sqlite:////abs/path.db"),
        PathBuf::from("/abs/path.db")
    );
    // The reference's default URL and its drivers.
    assert_eq!(
        sqlite_file("sqlite+aiosqlite:///./missionweaveprotocol.db"),
        PathBuf::from("./missionweaveprotocol.db")
    );
    assert_eq!(
        sqlite_file("sqlite+pysqlite:////tmp/a.db"),
        PathBuf::from("/tmp/a.db")
    );
    assert_eq!(sqlite_file("SQLite:///upper.db"), PathBuf::from("upper.db"));
    let url = StoreUrl::parse("sqlite:///relative.db").unwrap();
    assert_eq!(url.dialect(), Dialect::Sqlite);
    assert_eq!(url.dialect_name(), "sqlite");
    assert_eq!(url.masked(), "sqlite:///relative.db");
}

#[test]
fn sqlite_memory_urls() {
    for url in [
        "sqlite:///:memory:",
        "sqlite://",
        "sqlite+aiosqlite:///:memory:",
    ] {
        let parsed = StoreUrl::parse(url).unwrap();
        assert_eq!(parsed.location(), &Location::SqliteMemory, "{url}");
        assert_eq!(parsed.dialect_name(), "sqlite");
        assert_eq!(parsed.masked(), url);
    }
}

#[test]
fn sqlite_paths() {
    let memory = StoreUrl::sqlite_path(":memory:").unwrap();
    assert_eq!(memory.location(), &Location::SqliteMemory);
    assert_eq!(memory.masked(), "sqlite:///:memory:");
    let file = StoreUrl::sqlite_path("/tmp/x?y.db").unwrap();
    assert_eq!(
        file.location(),
        &Location::SqliteFile(PathBuf::from("/tmp/x?y.db"))
    );
    assert_eq!(file.masked(), "sqlite:////tmp/x?y.db");
    assert_eq!(
        StoreUrl::sqlite_path("").unwrap_err().problem,
        StoreUrlProblem::MissingDatabase
    );
    assert_eq!(
        StoreUrl::sqlite_path("a\0b").unwrap_err().problem,
        StoreUrlProblem::Malformed
    );
}

#[test]
fn postgresql_urls_in_every_spelling() {
    for (url, libpq) in [
        ("postgresql://localhost/mwp", "postgresql://localhost/mwp"),
        ("postgres://u@h:5432/db", "postgresql://u@h:5432/db"),
        ("postgresql+asyncpg://u:p@h/db", "postgresql://u:p@h/db"),
        (
            "postgresql+psycopg://h/db?sslmode=require",
            "postgresql://h/db?sslmode=require",
        ),
        (
            "postgresql:///db?host=/var/run/postgresql",
            "postgresql:///db?host=/var/run/postgresql",
        ),
        ("postgresql://", "postgresql://"),
    ] {
        let parsed = StoreUrl::parse(url).unwrap();
        assert_eq!(parsed.dialect(), Dialect::Postgresql, "{url}");
        assert_eq!(parsed.dialect_name(), "postgresql");
        assert_eq!(
            parsed.location(),
            &Location::Postgresql(libpq.to_owned()),
            "{url}"
        );
        assert_eq!(StoreUrl::parse_postgresql(url).unwrap(), parsed);
    }
}

#[test]
fn passwords_are_masked() {
    for (url, masked) in [
        (
            "postgresql://app:secret@db:5432/mwp",
            "postgresql://app:***@db:5432/mwp",
        ),
        (
            "postgresql+asyncpg://app:s%40cr:et@db/mwp",
            "postgresql+asyncpg://app:***@db/mwp",
        ),
        ("postgres://app:@db/mwp", "postgres://app:***@db/mwp"),
        (
            "postgresql://app:pw@db/mwp?options=a@b",
            "postgresql://app:***@db/mwp?options=a@b",
        ),
        // Nothing to mask.
        ("postgresql://app@db/mwp", "postgresql://app@db/mwp"),
        ("postgresql://db:5432/mwp", "postgresql://db:5432/mwp"),
        (
            "postgresql:///mwp?password=x",
            "postgresql:///mwp?password=x",
        ),
    ] {
        let parsed = StoreUrl::parse(url).unwrap();
        assert_eq!(parsed.masked(), masked, "{url}");
        // Debug shows the masked form only.
        let debug = format!("{parsed:?} {:?}", parsed.location());
        assert!(
            !debug.contains("secret") && !debug.contains(":pw@"),
            "{debug}"
        );
    }
}

#[test]
fn other_schemes_and_drivers_are_refused() {
    assert_eq!(
        problem("mysql://u:p@h/db"),
        StoreUrlProblem::UnsupportedDialect
    );
    assert_eq!(
        problem("sqlite3:///x.db"),
        StoreUrlProblem::UnsupportedDialect
    );
    assert_eq!(
        problem("http://example.org/"),
        StoreUrlProblem::UnsupportedDialect
    );
    assert_eq!(
        problem("sqlite+asyncpg:///x.db"),
        StoreUrlProblem::UnsupportedDriver
    );
    assert_eq!(
        problem("postgresql+aiosqlite://h/db"),
        StoreUrlProblem::UnsupportedDriver
    );
    assert_eq!(
        problem("sqlite+:///x.db"),
        StoreUrlProblem::UnsupportedDriver
    );
}

#[test]
fn malformed_urls_are_refused() {
    for url in [
        "",
        "x.db",
        "/abs/x.db",
        ":memory:",
        "sqlite:x.db",
        "sqlite:/x.db",
        " sqlite:///x.db",
        "sqlite:///x.db\n",
        "sqlite:///a b.db",
        "sqlite:///a\0b.db",
        "sqlite://host/x.db",
    ] {
        assert_eq!(problem(url), StoreUrlProblem::Malformed, "{url:?}");
    }
    assert_eq!(problem("sqlite:///"), StoreUrlProblem::MissingDatabase);
    assert_eq!(
        problem("sqlite:///x.db?mode=ro"),
        StoreUrlProblem::UnsupportedOption
    );
    assert_eq!(
        problem("sqlite:///x.db#frag"),
        StoreUrlProblem::UnsupportedOption
    );
    assert_eq!(
        problem("postgresql://h/db#frag"),
        StoreUrlProblem::UnsupportedOption
    );
}

#[test]
fn refusals_never_repeat_the_url() {
    for url in [
        "mysql://u:topsecret@h/db",
        "postgresql+x://u:topsecret@h/db",
        "topsecret",
    ] {
        let error = StoreUrl::parse(url).unwrap_err();
        assert!(!error.to_string().contains("topsecret"), "{error}");
        assert!(!error.detail().contains("topsecret"));
    }
}

#[test]
fn postgresql_store_refuses_sqlite_urls() {
    let error = StoreUrl::parse_postgresql("sqlite:///x.db").unwrap_err();
    assert_eq!(error.problem, StoreUrlProblem::NotPostgresql);
    assert_eq!(error.class(), ErrorClass::Argument);
    assert_eq!(
        StoreUrl::parse_postgresql("mysql://h/db")
            .unwrap_err()
            .problem,
        StoreUrlProblem::UnsupportedDialect
    );
}
