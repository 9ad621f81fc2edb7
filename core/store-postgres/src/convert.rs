//! Conversions between the store's types and PostgreSQL values: integers are `BIGINT` (i64),
//! text may not hold NUL (PostgreSQL `TEXT` cannot), a stored value out of range is a damaged
//! row. Every failure is a typed error, never a panic.

use missionweaveprotocol_engine::store::StoreError;

/// A PostgreSQL or connection failure as the store's backend error (nothing was committed,
/// or, for a failure while `COMMIT` was in flight, the outcome is unknown: a retry with the
/// same Action ID is answered from the receipt).
///
/// The server's own verdict that stored data is damaged (SQLSTATE `XX001` data_corrupted,
/// `XX002` index_corrupted) is damaged data at rest ([`StoreError::Corrupt`], never retryable).
pub(crate) fn backend(error: postgres::Error) -> StoreError {
    let detail = match error.as_db_error() {
        Some(db) => format!("{} ({}): {}", db.severity(), db.code().code(), db.message()),
        None => match std::error::Error::source(&error) {
            Some(source) => format!("{error}: {source}"),
            None => error.to_string(),
        },
    };
    let code = error.code().map(postgres::error::SqlState::code);
    if matches!(code, Some("XX001" | "XX002")) {
        return StoreError::Corrupt {
            what: "database",
            locator: "relation".to_owned(),
            detail,
        };
    }
    StoreError::Backend { detail }
}

/// A sequence or revision as a PostgreSQL integer: beyond `i64::MAX` is an argument error.
pub(crate) fn to_sql(argument: &'static str, value: u64) -> Result<i64, StoreError> {
    i64::try_from(value).map_err(|_| StoreError::InvalidArgument {
        argument,
        detail: format!("{value} exceeds the largest stored integer ({})", i64::MAX),
    })
}

/// A stored integer read back: a negative one is a damaged row.
pub(crate) fn from_sql(column: &'static str, value: i64) -> Result<u64, StoreError> {
    u64::try_from(value).map_err(|_| StoreError::Corrupt {
        what: column,
        locator: column.to_owned(),
        detail: format!("stored {column} {value} is negative"),
    })
}

/// Text to be written: PostgreSQL `TEXT` cannot hold NUL, so such a key is refused before
/// anything is written (a read of such a key finds nothing: it can never have been stored).
pub(crate) fn text(argument: &'static str, value: &str) -> Result<(), StoreError> {
    if storable(value) {
        Ok(())
    } else {
        Err(StoreError::InvalidArgument {
            argument,
            detail: "PostgreSQL text cannot hold a NUL character".to_owned(),
        })
    }
}

/// Can `value` be stored as PostgreSQL text?
pub(crate) fn storable(value: &str) -> bool {
    !value.contains('\0')
}

/// The smallest string greater than every string that starts with `prefix` (code point order
/// is UTF-8 byte order, the `"C"` collation's), `None` when no upper bound exists.
pub(crate) fn prefix_successor(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        let mut next = u32::from(last) + 1;
        if (0xD800..0xE000).contains(&next) {
            next = 0xE000;
        }
        if let Some(c) = char::from_u32(next) {
            chars.push(c);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_successor_bounds_exactly_the_strings_with_the_prefix() {
        assert_eq!(prefix_successor("ab").as_deref(), Some("ac"));
        assert_eq!(prefix_successor(""), None);
        assert_eq!(prefix_successor("\u{10FFFF}"), None);
        assert_eq!(prefix_successor("a\u{10FFFF}").as_deref(), Some("b"));
        assert_eq!(prefix_successor("\u{D7FF}").as_deref(), Some("\u{E000}"));
        let bound = prefix_successor("w/").unwrap();
        for inside in ["w/", "w/\u{10FFFF}\u{10FFFF}", "w/zzz"] {
            assert!(inside < bound.as_str(), "{inside}");
        }
        assert!("w0" >= bound.as_str());
    }

    #[test]
    fn nul_is_refused_and_integers_stay_in_range() {
        assert!(text("group", "g").is_ok());
        assert!(matches!(
            text("group", "g\0"),
            Err(StoreError::InvalidArgument {
                argument: "group",
                ..
            })
        ));
        assert_eq!(to_sql("sequence", 7).unwrap(), 7);
        assert!(to_sql("sequence", u64::MAX).is_err());
        assert!(matches!(
            from_sql("revision", -1),
            Err(StoreError::Corrupt { .. })
        ));
    }
}
