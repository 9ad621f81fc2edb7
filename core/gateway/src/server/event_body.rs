//! What delivery reads from a signed Event's canonical JSON bytes without parsing them: whether
//! a member name, or a member with a given string value, occurs. In canonical JSON (RFC 8785) a
//! quotation mark inside a string value is always escaped, so `"name":` can only be a member
//! name; a match in a nested object is a false positive, which only ever costs a store read.

use missionweaveprotocol_engine::archive::GROUP_ARCHIVED;

/// Whether `body` has a member named `membership`: a Membership write's Event carries the new
/// Membership (`membership/decide.rs` of the engine), so such an Event may change who sees
/// its Group.
pub(super) fn may_change_membership(body: &[u8]) -> bool {
    find_all(body, b"\"membership\":").next().is_some()
}

/// Whether `body` is the archival of its Group (`"kind":"group.archived"`).
pub(super) fn is_archival(body: &[u8]) -> bool {
    const KIND: &[u8] = b"\"kind\":\"";
    find_all(body, KIND).any(|at| {
        body[at + KIND.len()..]
            .strip_prefix(GROUP_ARCHIVED.as_bytes())
            .is_some_and(|rest| rest.first() == Some(&b'"'))
    })
}

/// The positions of `needle` in `body`.
fn find_all<'a>(body: &'a [u8], needle: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    body.windows(needle.len())
        .enumerate()
        .filter(move |(_, w)| *w == needle)
        .map(|(at, _)| at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_names_and_kinds_are_found_only_as_written() {
        assert!(may_change_membership(
            br#"{"payload":{"membership":{"state":"ended"}}}"#
        ));
        assert!(!may_change_membership(
            br#"{"text":"a \"membership\": note"}"#
        ));
        assert!(is_archival(br#"{"kind":"group.archived","sequence":5}"#));
        assert!(!is_archival(
            br#"{"kind":"group.archived.not","sequence":5}"#
        ));
        assert!(!is_archival(
            br#"{"kind":"message.posted","text":"group.archived"}"#
        ));
    }
}
