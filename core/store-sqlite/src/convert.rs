//! Conversions between the store's types and SQLite values: integers are `INTEGER` (i64),
//! hashes `BLOB`s of 32 bytes. A stored value out of range or of the wrong type is a damaged
//! row, reported as [`StoreError::Corrupt`], never a panic.

use missionweaveprotocol_engine::store::StoreError;
use rusqlite::types::ValueRef;

/// A SQLite failure as the store's error (nothing was committed): SQLite's own verdict that
/// the file is damaged or not a database (`SQLITE_CORRUPT`, `SQLITE_NOTADB`) is damaged data
/// at rest ([`StoreError::Corrupt`], never retryable), any other failure (busy, I/O, a full
/// disk) the transient [`StoreError::Backend`].
pub(crate) fn backend(error: rusqlite::Error) -> StoreError {
    use rusqlite::ErrorCode;
    match error.sqlite_error_code() {
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => StoreError::Corrupt {
            what: "database",
            locator: "file".to_owned(),
            detail: error.to_string(),
        },
        _ => StoreError::Backend {
            detail: error.to_string(),
        },
    }
}

/// A sequence, revision or limit as a SQLite integer: beyond `i64::MAX` is an argument error.
pub(crate) fn to_sql(argument: &'static str, value: u64) -> Result<i64, StoreError> {
    i64::try_from(value).map_err(|_| StoreError::InvalidArgument {
        argument,
        detail: format!("{value} exceeds the largest stored integer ({})", i64::MAX),
    })
}

/// A damaged row of `what` (`event`, `aggregate`, `group`, `receipt`) at `locator`.
pub(crate) fn corrupt(what: &'static str, locator: String, detail: String) -> StoreError {
    StoreError::Corrupt {
        what,
        locator,
        detail,
    }
}

/// A stored integer read back: a negative one is a damaged row.
fn from_sql(
    what: &'static str,
    locator: impl FnOnce() -> String,
    column: &str,
    value: i64,
) -> Result<u64, StoreError> {
    u64::try_from(value).map_err(|_| {
        corrupt(
            what,
            locator(),
            format!("stored {column} {value} is negative"),
        )
    })
}

/// A stored TEXT column read back: anything but valid UTF-8 text is a damaged row (a BLOB
/// written behind the store's back, invalid UTF-8).
pub(crate) fn text(
    what: &'static str,
    locator: impl FnOnce() -> String,
    column: &str,
    value: ValueRef<'_>,
) -> Result<String, StoreError> {
    text_ref(what, locator, column, value).map(str::to_owned)
}

/// [`text`] borrowed from the row.
pub(crate) fn text_ref<'v>(
    what: &'static str,
    locator: impl FnOnce() -> String,
    column: &str,
    value: ValueRef<'v>,
) -> Result<&'v str, StoreError> {
    let ValueRef::Text(bytes) = value else {
        return Err(corrupt(
            what,
            locator(),
            format!("stored {column} is {:?}, not text", value.data_type()),
        ));
    };
    std::str::from_utf8(bytes)
        .map_err(|_| corrupt(what, locator(), format!("stored {column} is not UTF-8")))
}

/// A stored body or value (BLOB; TEXT is read as its bytes, which the integrity check covers)
/// or hash (BLOB) read back as bytes: NULL, an integer or a real is a damaged row.
pub(crate) fn bytes<'v>(
    what: &'static str,
    locator: impl FnOnce() -> String,
    column: &str,
    value: ValueRef<'v>,
) -> Result<&'v [u8], StoreError> {
    match value {
        ValueRef::Blob(bytes) | ValueRef::Text(bytes) => Ok(bytes),
        other => Err(corrupt(
            what,
            locator(),
            format!("stored {column} is {:?}, not a blob", other.data_type()),
        )),
    }
}

/// A stored INTEGER column read back: any other type is a damaged row.
pub(crate) fn integer(
    what: &'static str,
    locator: impl FnOnce() -> String,
    column: &str,
    value: ValueRef<'_>,
) -> Result<u64, StoreError> {
    match value {
        ValueRef::Integer(n) => from_sql(what, locator, column, n),
        other => Err(corrupt(
            what,
            locator(),
            format!("stored {column} is {:?}, not an integer", other.data_type()),
        )),
    }
}
