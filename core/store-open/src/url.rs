//! Store URLs: the one parser every binding uses, accepting the URL forms of the reference's
//! `SQLStore(url)` (`reference-python.md` §1.14: SQLAlchemy-style `dialect[+driver]://…`, sqlite
//! or postgres, `ValueError` for anything else) and masking the password as the reference's `url`
//! property does (`***`).
//!
//! Accepted:
//!
//! - `sqlite://` and `sqlite:///:memory:`: a private in-memory database;
//! - `sqlite:///relative/path.db` (relative to the working directory) and
//!   `sqlite:////absolute/path.db`;
//! - `postgresql://[user[:password]@][host][:port][/database][?options]`, also spelled
//!   `postgres://`, handed to the PostgreSQL backend as libpq reads it;
//! - the drivers the reference's URLs name, which change nothing here: `sqlite+aiosqlite`,
//!   `sqlite+pysqlite`, `postgresql+asyncpg`, `postgresql+psycopg`, `postgresql+psycopg2`.
//!
//! Refused with a typed [`StoreUrlError`]: any other scheme or driver, a SQLite URL with a host,
//! options (`?…`) or an empty path (`sqlite:///`, which SQLAlchemy would silently turn into an
//! in-memory store that loses everything), a fragment, whitespace or control characters. Error
//! messages never repeat the URL: it may hold a password.

use core::fmt;
use std::path::PathBuf;

use missionweaveprotocol::{DescribeError, ErrorClass, Fields, WireCode};

/// The database family of a store URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// SQLite: a file, or memory.
    Sqlite,
    /// PostgreSQL: a server.
    Postgresql,
}

impl Dialect {
    /// The reference's `dialect_name`: `sqlite` or `postgresql`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Sqlite => "sqlite",
            Self::Postgresql => "postgresql",
        }
    }
}

/// Where a store URL points.
#[derive(Clone, PartialEq, Eq)]
pub enum Location {
    /// A private in-memory SQLite database: nothing survives the store.
    SqliteMemory,
    /// A SQLite database file, relative to the working directory or absolute.
    SqliteFile(PathBuf),
    /// A PostgreSQL server, as a libpq URL (`postgresql://…`, any driver suffix removed). It may
    /// hold a password: never log it (its `Debug` form is masked).
    Postgresql(String),
}

impl fmt::Debug for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SqliteMemory => f.write_str("SqliteMemory"),
            Self::SqliteFile(path) => f.debug_tuple("SqliteFile").field(path).finish(),
            Self::Postgresql(url) => f.debug_tuple("Postgresql").field(&mask(url)).finish(),
        }
    }
}

/// A parsed store URL. Its `Debug` form shows the masked URL only.
#[derive(Clone, PartialEq, Eq)]
pub struct StoreUrl {
    masked: String,
    dialect: Dialect,
    location: Location,
}

impl fmt::Debug for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreUrl")
            .field("url", &self.masked)
            .field("dialect", &self.dialect)
            .finish_non_exhaustive()
    }
}

const SQLITE_DRIVERS: [&str; 2] = ["aiosqlite", "pysqlite"];
const POSTGRESQL_DRIVERS: [&str; 3] = ["asyncpg", "psycopg", "psycopg2"];
const MEMORY: &str = ":memory:";

impl StoreUrl {
    /// Parses a sqlite or postgres URL (see the module documentation for the forms).
    pub fn parse(url: &str) -> Result<Self, StoreUrlError> {
        if url.is_empty() {
            return Err(StoreUrlError::new(
                StoreUrlProblem::Malformed,
                "the URL is empty",
            ));
        }
        if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(StoreUrlError::new(
                StoreUrlProblem::Malformed,
                "the URL holds whitespace or a control character",
            ));
        }
        let Some((scheme, rest)) = url.split_once("://") else {
            return Err(StoreUrlError::new(
                StoreUrlProblem::Malformed,
                "not a store URL: expected sqlite:///path.db or postgresql://host/database",
            ));
        };
        let scheme = scheme.to_ascii_lowercase();
        let (dialect, driver) = match scheme.split_once('+') {
            Some((dialect, driver)) => (dialect, Some(driver)),
            None => (scheme.as_str(), None),
        };
        let (dialect, drivers): (Dialect, &[&str]) = match dialect {
            "sqlite" => (Dialect::Sqlite, &SQLITE_DRIVERS),
            "postgresql" | "postgres" => (Dialect::Postgresql, &POSTGRESQL_DRIVERS),
            other => {
                return Err(StoreUrlError::new(
                    StoreUrlProblem::UnsupportedDialect,
                    format!(
                        "unsupported database {other:?}: a store URL is sqlite:// or postgresql://"
                    ),
                ));
            }
        };
        if let Some(driver) = driver
            && !drivers.contains(&driver)
        {
            return Err(StoreUrlError::new(
                StoreUrlProblem::UnsupportedDriver,
                format!(
                    "unsupported {} driver {driver:?} (accepted: {})",
                    dialect.name(),
                    drivers.join(", ")
                ),
            ));
        }
        match dialect {
            Dialect::Sqlite => Self::sqlite_rest(url, rest),
            Dialect::Postgresql => Self::postgresql_rest(&scheme, rest),
        }
    }

    /// Parses a URL that must be a PostgreSQL one (the reference's `PostgreSQLStore(url)`): a
    /// valid SQLite URL is refused too.
    pub fn parse_postgresql(url: &str) -> Result<Self, StoreUrlError> {
        let parsed = Self::parse(url)?;
        if parsed.dialect != Dialect::Postgresql {
            return Err(StoreUrlError::new(
                StoreUrlProblem::NotPostgresql,
                "PostgreSQLStore needs a postgresql:// or postgres:// URL",
            ));
        }
        Ok(parsed)
    }

    /// The SQLite store at `path` (the reference's `SQLiteStore(path)`): `:memory:` is a private
    /// in-memory database, anything else a file path taken as it is (no URL decoding).
    pub fn sqlite_path(path: &str) -> Result<Self, StoreUrlError> {
        if path.is_empty() {
            return Err(StoreUrlError::new(
                StoreUrlProblem::MissingDatabase,
                "the SQLite path is empty (use \":memory:\" for an in-memory store)",
            ));
        }
        if path.contains('\0') {
            return Err(StoreUrlError::new(
                StoreUrlProblem::Malformed,
                "the SQLite path holds a NUL character",
            ));
        }
        let location = if path == MEMORY {
            Location::SqliteMemory
        } else {
            Location::SqliteFile(PathBuf::from(path))
        };
        Ok(Self {
            masked: format!("sqlite:///{path}"),
            dialect: Dialect::Sqlite,
            location,
        })
    }

    fn sqlite_rest(url: &str, rest: &str) -> Result<Self, StoreUrlError> {
        if rest.contains(['?', '#']) {
            return Err(StoreUrlError::new(
                StoreUrlProblem::UnsupportedOption,
                "SQLite URL options (?…) and fragments (#…) are not supported",
            ));
        }
        let location = if rest.is_empty() {
            // `sqlite://`: SQLAlchemy's spelling of an in-memory database.
            Location::SqliteMemory
        } else {
            let Some(path) = rest.strip_prefix('/') else {
                return Err(StoreUrlError::new(
                    StoreUrlProblem::Malformed,
                    "a SQLite URL names no host: sqlite:///relative.db or sqlite:////absolute.db",
                ));
            };
            match path {
                "" => {
                    return Err(StoreUrlError::new(
                        StoreUrlProblem::MissingDatabase,
                        "the SQLite URL names no database file (sqlite:///:memory: is the \
                         in-memory store)",
                    ));
                }
                MEMORY => Location::SqliteMemory,
                file => Location::SqliteFile(PathBuf::from(file)),
            }
        };
        Ok(Self {
            masked: url.to_owned(),
            dialect: Dialect::Sqlite,
            location,
        })
    }

    fn postgresql_rest(scheme: &str, rest: &str) -> Result<Self, StoreUrlError> {
        if rest.contains('#') {
            return Err(StoreUrlError::new(
                StoreUrlProblem::UnsupportedOption,
                "PostgreSQL URL fragments (#…) are not supported",
            ));
        }
        let libpq = format!("postgresql://{rest}");
        Ok(Self {
            masked: format!("{scheme}://{}", mask_rest(rest)),
            dialect: Dialect::Postgresql,
            location: Location::Postgresql(libpq),
        })
    }

    /// The database family.
    pub const fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// `sqlite` or `postgresql` (the reference's `dialect_name`).
    pub const fn dialect_name(&self) -> &'static str {
        self.dialect.name()
    }

    /// The URL with its password replaced by `***` (the reference's `url` property).
    pub fn masked(&self) -> &str {
        &self.masked
    }

    /// Where the store lives.
    pub const fn location(&self) -> &Location {
        &self.location
    }
}

/// `url` with the password of its user information replaced by `***` (`scheme://rest` form;
/// anything else is returned as it is).
fn mask(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => format!("{scheme}://{}", mask_rest(rest)),
        None => url.to_owned(),
    }
}

/// The part after `://` with the password masked. The authority ends at the first `/`, `?` or
/// `#`; its user information at its last `@` (an `@` inside a password is percent-encoded);
/// the password follows the first `:` of the user information.
fn mask_rest(rest: &str) -> String {
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let Some(at) = authority.rfind('@') else {
        return rest.to_owned();
    };
    let (userinfo, host) = authority.split_at(at);
    match userinfo.split_once(':') {
        Some((user, _password)) => format!("{user}:***{host}{tail}"),
        None => rest.to_owned(),
    }
}

/// What is wrong with a store URL (its stable reason slug is [`StoreUrlProblem::reason`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreUrlProblem {
    /// Not `scheme://…`, empty, or holding whitespace, control or NUL characters.
    Malformed,
    /// A scheme other than sqlite, postgresql or postgres.
    UnsupportedDialect,
    /// A `+driver` the reference's URLs do not name.
    UnsupportedDriver,
    /// SQLite options or a fragment.
    UnsupportedOption,
    /// A SQLite URL or path naming no database.
    MissingDatabase,
    /// A URL that is not PostgreSQL where PostgreSQL is required.
    NotPostgresql,
}

impl StoreUrlProblem {
    /// The stable reason slug.
    pub const fn reason(self) -> &'static str {
        match self {
            Self::Malformed => "malformed-store-url",
            Self::UnsupportedDialect => "unsupported-store-dialect",
            Self::UnsupportedDriver => "unsupported-store-driver",
            Self::UnsupportedOption => "unsupported-store-url-option",
            Self::MissingDatabase => "missing-store-database",
            Self::NotPostgresql => "not-a-postgresql-url",
        }
    }
}

/// A refused store URL: API misuse (class `Argument`, §19 `PROTOCOL_VIOLATION`, like every
/// argument error), `ValueError` in Python, `ArgumentError` in JavaScript. The message never
/// repeats the URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreUrlError {
    /// What is wrong.
    pub problem: StoreUrlProblem,
    /// A readable explanation.
    pub detail: String,
}

impl StoreUrlError {
    fn new(problem: StoreUrlProblem, detail: impl Into<String>) -> Self {
        Self {
            problem,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for StoreUrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "url: {}", self.detail)
    }
}

impl std::error::Error for StoreUrlError {}

impl DescribeError for StoreUrlError {
    fn class(&self) -> ErrorClass {
        ErrorClass::Argument
    }

    fn wire_code(&self) -> WireCode {
        WireCode::ProtocolViolation
    }

    fn reason(&self) -> &str {
        self.problem.reason()
    }

    fn fields(&self) -> Fields {
        Fields::new().text("argument", "url")
    }
}
