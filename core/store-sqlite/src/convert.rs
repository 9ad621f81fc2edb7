//! Conversions between the store's types and SQLite values: integers are `INTEGER` (i64),
//! a stored value out of range is a typed backend error, never a panic.

use missionweaveprotocol_authority::store::StoreError;

/// A SQLite failure as the store's backend error (nothing was committed).
pub(crate) fn backend(error: rusqlite::Error) -> StoreError {
    StoreError::Backend {
        detail: error.to_string(),
    }
}

/// A sequence, revision or limit as a SQLite integer: beyond `i64::MAX` is an argument error.
pub(crate) fn to_sql(argument: &'static str, value: u64) -> Result<i64, StoreError> {
    i64::try_from(value).map_err(|_| StoreError::InvalidArgument {
        argument,
        detail: format!("{value} exceeds the largest stored integer ({})", i64::MAX),
    })
}

/// A stored integer read back: a negative one is a damaged row.
pub(crate) fn from_sql(column: &str, value: i64) -> Result<u64, StoreError> {
    u64::try_from(value).map_err(|_| StoreError::Backend {
        detail: format!("stored {column} {value} is negative: the database is damaged"),
    })
}
