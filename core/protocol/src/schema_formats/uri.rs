//! Protocol identifiers (§2): absolute RFC 3986 URIs, consumed whole, visible ASCII only,
//! compared byte for byte. Used for the schemas' `format: uri` and for Registry identifiers at
//! stage 4 (where no 512-character limit applies).

/// The longest identifier a document may carry (`common.schema.json#/$defs/id`, `maxLength`).
pub const MAX_ID_CHARS: usize = 512;

/// Whether `text` satisfies `common.schema.json#/$defs/id`, the identifier of every protocol
/// document (§2): an absolute URI ([`is_protocol_uri`]) of at most 512 characters written only
/// with the URI characters of RFC 3986 (unreserved, reserved and `%`).
pub fn is_protocol_id(text: &str) -> bool {
    text.len() <= MAX_ID_CHARS
        && text
            .bytes()
            .all(|b| is_unreserved(b) || is_gen_or_sub_delim(b) || b == b'%')
        && is_protocol_uri(text)
}

fn is_gen_or_sub_delim(b: u8) -> bool {
    matches!(b, b':' | b'/' | b'?' | b'#' | b'[' | b']' | b'@') || is_sub_delim(b)
}

/// Whether `text` is an absolute RFC 3986 URI (`scheme ":" hier-part ["?" query] ["#" fragment]`).
pub fn is_protocol_uri(text: &str) -> bool {
    let bytes = text.as_bytes();
    // The common shape, `scheme:` and a rootless path (every `urn:`): one scan of the path
    // bytes. Anything else (`//`, `?`, `#`, `%`, another byte) takes the general parse below,
    // which gives the same verdict for this shape too.
    if let Some(colon) = bytes.iter().position(|&b| b == b':') {
        let rest = &bytes[colon + 1..];
        if !rest.starts_with(b"//") && rest.iter().all(|&b| PATH[usize::from(b)]) {
            return is_scheme(&bytes[..colon]);
        }
    }
    is_uri_general(text)
}

/// [`is_protocol_uri`] without its shortcut.
fn is_uri_general(text: &str) -> bool {
    let bytes = text.as_bytes();
    if bytes.is_empty() || !bytes.iter().all(|&b| (0x21..=0x7E).contains(&b)) {
        return false;
    }
    let Some(colon) = bytes.iter().position(|&b| b == b':') else {
        return false;
    };
    if !is_scheme(&bytes[..colon]) {
        return false;
    }
    let rest = &bytes[colon + 1..];
    let (rest, fragment) = split_at_first(rest, b'#');
    let (hier, query) = split_at_first(rest, b'?');
    if let Some(fragment) = fragment
        && !all_of(fragment, |b| is_pchar(b) || b == b'/' || b == b'?')
    {
        return false;
    }
    if let Some(query) = query
        && !all_of(query, |b| is_pchar(b) || b == b'/' || b == b'?')
    {
        return false;
    }
    match hier.strip_prefix(b"//") {
        Some(after) => {
            let end = after.iter().position(|&b| b == b'/').unwrap_or(after.len());
            is_authority(&after[..end]) && is_path(&after[end..])
        }
        // path-absolute, path-rootless or path-empty: pchars and slashes.
        None => is_path(hier),
    }
}

/// `scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`.
fn is_scheme(scheme: &[u8]) -> bool {
    scheme.first().is_some_and(u8::is_ascii_alphabetic)
        && scheme
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
}

fn split_at_first(bytes: &[u8], delimiter: u8) -> (&[u8], Option<&[u8]>) {
    match bytes.iter().position(|&b| b == delimiter) {
        Some(index) => (&bytes[..index], Some(&bytes[index + 1..])),
        None => (bytes, None),
    }
}

const fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

const fn is_sub_delim(b: u8) -> bool {
    matches!(
        b,
        b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'='
    )
}

fn is_pchar(b: u8) -> bool {
    PCHAR[usize::from(b)]
}

/// A path byte that needs no further look: `pchar` (without `%`, whose escape is checked
/// apart) or `/`.
const PATH: [bool; 256] = {
    let mut table = PCHAR;
    table[b'/' as usize] = true;
    table
};

/// `pchar` as a table: identifiers are mostly path characters, checked one byte at a time.
const PCHAR: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        let b = byte as u8;
        table[byte] = is_unreserved(b) || is_sub_delim(b) || matches!(b, b':' | b'@');
        byte += 1;
    }
    table
};

/// Every byte satisfies `allowed`, except `%` which must start a `%HH` escape.
fn all_of(bytes: &[u8], allowed: impl Fn(u8) -> bool) -> bool {
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let valid = bytes
                .get(index + 1..index + 3)
                .is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit));
            if !valid {
                return false;
            }
            index += 3;
        } else if allowed(bytes[index]) {
            index += 1;
        } else {
            return false;
        }
    }
    true
}

fn is_path(bytes: &[u8]) -> bool {
    all_of(bytes, |b| is_pchar(b) || b == b'/')
}

/// `authority = [ userinfo "@" ] host [ ":" port ]`.
fn is_authority(bytes: &[u8]) -> bool {
    let (userinfo, host_port) = match bytes.iter().position(|&b| b == b'@') {
        Some(at) => (Some(&bytes[..at]), &bytes[at + 1..]),
        None => (None, bytes),
    };
    if let Some(userinfo) = userinfo
        && !all_of(userinfo, |b| {
            is_unreserved(b) || is_sub_delim(b) || b == b':'
        })
    {
        return false;
    }
    let (host_ok, port) = if host_port.first() == Some(&b'[') {
        let Some(close) = host_port.iter().position(|&b| b == b']') else {
            return false;
        };
        let after = &host_port[close + 1..];
        let port = match after {
            [] => None,
            [b':', port @ ..] => Some(port),
            _ => return false,
        };
        (is_ip_literal(&host_port[1..close]), port)
    } else {
        let (host, port) = split_at_first(host_port, b':');
        // IPv4address is a subset of reg-name, so reg-name alone decides.
        (all_of(host, |b| is_unreserved(b) || is_sub_delim(b)), port)
    };
    host_ok && port.is_none_or(|port| port.iter().all(u8::is_ascii_digit))
}

/// `IP-literal` contents: `IPv6address / IPvFuture` (`v` case-insensitive, as in the ABNF).
fn is_ip_literal(bytes: &[u8]) -> bool {
    match bytes.first() {
        Some(b'v' | b'V') => is_ipv_future(&bytes[1..]),
        _ => is_ipv6(bytes),
    }
}

/// After the `v`: `1*HEXDIG "." 1*( unreserved / sub-delims / ":" )`.
fn is_ipv_future(bytes: &[u8]) -> bool {
    let Some(dot) = bytes.iter().position(|&b| b == b'.') else {
        return false;
    };
    let (version, tail) = (&bytes[..dot], &bytes[dot + 1..]);
    !version.is_empty()
        && version.iter().all(u8::is_ascii_hexdigit)
        && !tail.is_empty()
        && tail
            .iter()
            .all(|&b| is_unreserved(b) || is_sub_delim(b) || b == b':')
}

/// `dec-octet`: 0–255 without leading zeros.
fn is_dec_octet(bytes: &[u8]) -> bool {
    match bytes {
        [d] => d.is_ascii_digit(),
        [b'1'..=b'9', d] => d.is_ascii_digit(),
        [b'1', d1, d2] => d1.is_ascii_digit() && d2.is_ascii_digit(),
        [b'2', b'0'..=b'4', d] => d.is_ascii_digit(),
        [b'2', b'5', b'0'..=b'5'] => true,
        _ => false,
    }
}

fn is_ipv4(bytes: &[u8]) -> bool {
    let mut count = 0;
    for part in bytes.split(|&b| b == b'.') {
        if !is_dec_octet(part) {
            return false;
        }
        count += 1;
    }
    count == 4
}

fn is_h16(bytes: &[u8]) -> bool {
    (1..=4).contains(&bytes.len()) && bytes.iter().all(u8::is_ascii_hexdigit)
}

/// Counts the 16-bit pieces of one side of an IPv6 address; an IPv4 tail (allowed only at the
/// very end of the address) counts as two. `None` when a piece is malformed.
fn ipv6_pieces(bytes: &[u8], may_end_in_ipv4: bool) -> Option<usize> {
    if bytes.is_empty() {
        return Some(0);
    }
    let parts: Vec<&[u8]> = bytes.split(|&b| b == b':').collect();
    let last = parts.len() - 1;
    let mut count = 0;
    for (index, part) in parts.iter().enumerate() {
        if index == last && may_end_in_ipv4 && part.contains(&b'.') {
            if !is_ipv4(part) {
                return None;
            }
            count += 2;
        } else if is_h16(part) {
            count += 1;
        } else {
            return None;
        }
    }
    Some(count)
}

fn is_ipv6(bytes: &[u8]) -> bool {
    let elision = bytes.windows(2).position(|w| w == b"::");
    match elision {
        None => ipv6_pieces(bytes, true) == Some(8),
        Some(at) => {
            let (left, right) = (&bytes[..at], &bytes[at + 2..]);
            if right.windows(2).any(|w| w == b"::") {
                return false;
            }
            match (ipv6_pieces(left, false), ipv6_pieces(right, true)) {
                (Some(l), Some(r)) => l + r <= 7,
                _ => false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{is_protocol_uri, is_uri_general};

    proptest::proptest! {
        #[test]
        fn the_shortcut_gives_the_general_verdict(text in "[a-zA-Z0-9:/?#@%+.\\-_~!$&'()*,;=\\[\\] é]{0,24}") {
            proptest::prop_assert_eq!(is_protocol_uri(&text), is_uri_general(&text));
        }
    }

    #[test]
    fn accepts_the_contract_samples() {
        let long = format!("https://example.com/{}", "a".repeat(513));
        for text in [
            "example:",
            "example:/path",
            "urn:example:%E2%82%AC",
            "https://[2001:db8::1]/path",
            "x://[V01.a]/",
            "x://[v01.a]/",
            "x://[::ffff:192.168.1.1]/",
            long.as_str(),
            "urn:uuid:6e8bc430-9c3a-11d9-9669-0800200c9a66",
            "urn:missionweaveprotocol:key:crypto-vector-rfc8032-1",
            "https://user:pw@example.com:8443/a/b?c=d#e",
            "x://[::]/",
            "x://[1:2:3:4:5:6:7:8]",
            "x://[1:2:3:4:5:6:1.2.3.4]",
            "mailto:a@b",
        ] {
            assert!(is_protocol_uri(text), "{text}");
        }
    }

    #[test]
    fn rejects_the_contract_samples() {
        for text in [
            "",
            "relative/path",
            "1example:path",
            "https://例え.テスト/",
            "urn:example:%GG",
            "example:/path\n",
            "https://[not-an-ip]/",
            "x://[::ffff:192.168.001.1]/",
            "x://[::ffff:192.168.01.1]/",
            "x://[::ffff:192.168.1.01]/",
            "a b:c",
            "a:\u{7f}",
            "organizations/acme",
            "x://[1:2:3:4:5:6:7:8:9]",
            "x://[1::2::3]",
            "x://[v.a]/",
            "x://[v1.]/",
            "x://host:80a/",
            "x://[::1]x/",
            "x:a%4",
            "x://a/b#c#d",
        ] {
            assert!(!is_protocol_uri(text), "{text:?}");
        }
    }
}
