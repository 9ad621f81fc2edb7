//! Reading stored aggregates as the engine's values: a stored aggregate's bytes parsed once
//! through the store's memo ([`decode_shared`]), and a parse failure reported as the engine's
//! `Corrupt` error naming the key (§15.3: aggregates are canonical JSON the engine wrote).

use std::sync::Arc;

use crate::error::EngineError;
use crate::store::decoded::decode_shared;
use crate::store::{Aggregate, AggregateKey, Store};

/// The whole-value parse of a stored aggregate's bytes (`json::parse`): the one decoder whose
/// result is kept as this type, so a hit is always exactly that parse.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Parsed(pub missionweaveprotocol::json::Value);

/// `json::parse` of `stored` through `store`'s memo, a parse error as `Corrupt` at `key`.
pub(crate) fn parsed(
    store: &dyn Store,
    key: &AggregateKey,
    stored: &Aggregate,
) -> Result<Arc<Parsed>, EngineError> {
    decode_shared(store, key, stored, |s| {
        missionweaveprotocol::json::parse_state(&s.value)
            .map(Parsed)
            .map_err(|e| EngineError::Corrupt {
                key: key.clone(),
                detail: e.to_string(),
            })
    })
}
