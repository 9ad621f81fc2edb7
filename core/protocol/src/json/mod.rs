//! Lossless JSON: the strict parser of §6.4 stage 1, the value it builds, RFC 8785 output and
//! exact decimal arithmetic for schema comparisons.

mod canonical;
mod decimal;
mod document;
mod indent;
mod limits;
mod parse;
mod value;
mod view;

pub(crate) use canonical::write_object;
pub use canonical::{
    CanonicalError, canonical_bytes, canonical_hash, sha256_prefixed, write_canonical,
    write_json_string, write_view,
};
pub use decimal::Decimal;
pub use document::Document;
pub use indent::write_indented;
pub use limits::{Limit, ParseLimits};
pub use parse::{
    MAX_DEPTH, ParseError, ParseErrorKind, parse, parse_with_limits, parse_with_member_spans,
};
pub use value::{JsonString, Number, Object, Value};
pub use view::{ArrayIter, ArrayView, MemberHandle, NumberRef, ObjectIter, ObjectView, Str, View};
