//! Lossless JSON: the strict parser of §6.4 stage 1, the value it builds, RFC 8785 output and
//! exact decimal arithmetic for schema comparisons.

mod canonical;
#[cfg(test)]
mod canonical_source_tests;
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
    MAX_DEPTH, ParseError, ParseErrorKind, check_limits, parse, parse_state, parse_with_limits,
    parse_with_member_spans,
};
pub use value::{JsonString, Number, Object, Value};
pub use view::{ArrayIter, ArrayView, NumberRef, ObjectIter, ObjectView, Str, View};

/// Sorts indices by `order` (unstable). The parser's member-name check and the canonical
/// writer's member order both sort `u32` indices through this one heapsort: O(n log n) with no
/// allocation, and far less code than the standard library's sorts, whose instantiations would
/// push the verify-only WebAssembly module past its size budget. Up to 24 indices (the members
/// of a typical object) are sorted by insertion, which makes about half the comparisons.
pub(crate) fn sort_indices(indices: &mut [u32], order: &dyn Fn(u32, u32) -> std::cmp::Ordering) {
    if indices.len() <= 24 {
        for end in 1..indices.len() {
            let mut at = end;
            while at > 0 && order(indices[at], indices[at - 1]).is_lt() {
                indices.swap(at, at - 1);
                at -= 1;
            }
        }
        return;
    }
    fn sift_down(
        indices: &mut [u32],
        mut root: usize,
        end: usize,
        order: &dyn Fn(u32, u32) -> std::cmp::Ordering,
    ) {
        loop {
            let mut child = 2 * root + 1;
            if child >= end {
                return;
            }
            if child + 1 < end && order(indices[child], indices[child + 1]).is_lt() {
                child += 1;
            }
            if !order(indices[root], indices[child]).is_lt() {
                return;
            }
            indices.swap(root, child);
            root = child;
        }
    }
    let len = indices.len();
    for root in (0..len / 2).rev() {
        sift_down(indices, root, len, order);
    }
    for end in (1..len).rev() {
        indices.swap(0, end);
        sift_down(indices, 0, end, order);
    }
}

#[cfg(test)]
mod sort_tests {
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn sort_indices_sorts(mut values in proptest::collection::vec(0u32..50, 0..200)) {
            let mut expected = values.clone();
            expected.sort_unstable();
            super::sort_indices(&mut values, &|a, b| a.cmp(&b));
            prop_assert_eq!(values, expected);
        }
    }
}
