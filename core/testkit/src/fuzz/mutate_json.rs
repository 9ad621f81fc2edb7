//! Structure-aware mutation at the JSON-value level: members changed, removed, duplicated or
//! renamed, types swapped, strings, numbers and timestamps tweaked. The tree keeps member order,
//! duplicate members and raw number text, so mutants can be any JSON text, not only what a
//! strict parser would build.

use super::Rng;

/// A JSON value as the mutator sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum J {
    Null,
    Bool(bool),
    /// Raw number text (may be out of range, `-0`, `1e400`, …).
    Num(String),
    Str(String),
    Arr(Vec<J>),
    /// Members in order; duplicates allowed.
    Obj(Vec<(String, J)>),
}

impl J {
    /// Parses JSON text (lenient: what `serde_json` reads), or `None`.
    pub fn parse(bytes: &[u8]) -> Option<J> {
        serde_json::from_slice::<serde_json::Value>(bytes)
            .ok()
            .map(|v| J::from_serde(&v))
    }

    fn from_serde(v: &serde_json::Value) -> J {
        use serde_json::Value as V;
        match v {
            V::Null => J::Null,
            V::Bool(b) => J::Bool(*b),
            V::Number(n) => J::Num(n.to_string()),
            V::String(s) => J::Str(s.clone()),
            V::Array(items) => J::Arr(items.iter().map(J::from_serde).collect()),
            V::Object(map) => J::Obj(
                map.iter()
                    .map(|(k, v)| (k.clone(), J::from_serde(v)))
                    .collect(),
            ),
        }
    }

    /// Compact JSON text.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut Vec<u8>) {
        match self {
            J::Null => out.extend_from_slice(b"null"),
            J::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
            J::Num(n) => out.extend_from_slice(n.as_bytes()),
            J::Str(s) => write_string(s, out),
            J::Arr(items) => {
                out.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    item.write(out);
                }
                out.push(b']');
            }
            J::Obj(members) => {
                out.push(b'{');
                for (i, (key, value)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    write_string(key, out);
                    out.push(b':');
                    value.write(out);
                }
                out.push(b'}');
            }
        }
    }

    /// The member `name` of an object.
    pub fn get(&self, name: &str) -> Option<&J> {
        match self {
            J::Obj(members) => members.iter().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The member `name` of an object, mutably.
    pub fn get_mut(&mut self, name: &str) -> Option<&mut J> {
        match self {
            J::Obj(members) => members.iter_mut().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Removes every member `name` of an object; returns the first removed.
    pub fn remove(&mut self, name: &str) -> Option<J> {
        let J::Obj(members) = self else { return None };
        let index = members.iter().position(|(k, _)| k == name)?;
        let removed = members.remove(index).1;
        members.retain(|(k, _)| k != name);
        Some(removed)
    }

    /// Sets (or appends) the member `name`.
    pub fn set(&mut self, name: &str, value: J) {
        if let Some(slot) = self.get_mut(name) {
            *slot = value;
        } else if let J::Obj(members) = self {
            members.push((name.to_owned(), value));
        }
    }

    fn count(&self) -> usize {
        1 + match self {
            J::Arr(items) => items.iter().map(J::count).sum(),
            J::Obj(members) => members.iter().map(|(_, v)| v.count()).sum(),
            _ => 0,
        }
    }

    /// The `n`-th node in pre-order.
    fn nth_mut(&mut self, n: usize) -> Option<&mut J> {
        if n == 0 {
            return Some(self);
        }
        let mut rest = n - 1;
        let children: Vec<&mut J> = match self {
            J::Arr(items) => items.iter_mut().collect(),
            J::Obj(members) => members.iter_mut().map(|(_, v)| v).collect(),
            _ => return None,
        };
        for child in children {
            let size = child.count();
            if rest < size {
                return child.nth_mut(rest);
            }
            rest -= size;
        }
        None
    }
}

fn write_string(s: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            c if (c as u32) < 0x20 => {
                out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes())
            }
            c => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    out.push(b'"');
}

const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "1",
    "-1",
    "2",
    "255",
    "65536",
    "4294967296",
    "9007199254740991",
    "9007199254740992",
    "9007199254740993",
    "18446744073709551615",
    "18446744073709551616",
    "-9223372036854775808",
    "1.5",
    "1e2",
    "1E400",
    "1e-400",
    "0.0000001",
];

const STRINGS: &[&str] = &[
    "",
    "0.1",
    "0.2",
    "Ed25519",
    "ed25519",
    "agent",
    "service",
    "human",
    "urn:missionweaveprotocol:agent:x",
    "urn:missionweaveprotocol:key:unknown",
    "urn:uuid:00000000-0000-4000-8000-000000000001",
    "urn:",
    "https://example.com/a%zz",
    "2026-07-15T09:30:00Z",
    "2026-07-15T09:30:00z",
    "2026-07-15T09:30:00+00:00",
    "2026-07-15T09:30:60Z",
    "2026-02-30T00:00:00Z",
    "0000-01-01T00:00:00Z",
    "9999-12-31T23:59:59.999999999Z",
    "2026-07-15T09:30:00.1234567891Z",
    "2026-07-15T09:30:00-23:59",
    "AAAA",
    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
    "USD",
    "usd",
    "\u{FFFD}",
    "\u{1F600}",
    "a\u{0000}b",
    "Running",
    "running",
    "ready",
    "blocked",
];

/// A random scalar of any type.
fn random_value(rng: &mut Rng) -> J {
    match rng.below(6) {
        0 => J::Null,
        1 => J::Bool(rng.chance(50)),
        2 => J::Num((*rng.pick(NUMBERS)).to_owned()),
        3 => J::Str((*rng.pick(STRINGS)).to_owned()),
        4 => J::Arr(Vec::new()),
        _ => J::Obj(Vec::new()),
    }
}

/// Tweaks a timestamp-looking string: one digit, the zone, the fraction.
fn tweak_timestamp(rng: &mut Rng, s: &str) -> String {
    let mut bytes: Vec<u8> = s.as_bytes().to_vec();
    match rng.below(5) {
        0 => {
            let digits: Vec<usize> = (0..bytes.len())
                .filter(|&i| bytes[i].is_ascii_digit())
                .collect();
            if !digits.is_empty() {
                let i = *rng.pick(&digits);
                bytes[i] = b'0' + rng.below(10) as u8;
            }
        }
        1 => {
            if bytes.last() == Some(&b'Z') {
                bytes.pop();
                let zone: &[u8] = rng
                    .pick(&["+00:00", "z", "+01:00", "-00:00", "Z"])
                    .as_bytes();
                bytes.extend_from_slice(zone);
            }
        }
        2 => {
            if let Some(z) = bytes.iter().position(|&b| b == b'Z' || b == b'+') {
                let fraction = rng.pick(&[".5", ".000", ".123456789", "."]).bytes();
                bytes.splice(z..z, fraction);
            }
        }
        3 => {
            // Move the time by a year either way (validity windows, key history).
            if bytes.len() >= 4 && bytes[..4].iter().all(u8::is_ascii_digit) {
                let year: u32 = std::str::from_utf8(&bytes[..4])
                    .ok()
                    .and_then(|y| y.parse().ok())
                    .unwrap_or(2026);
                let year = if rng.chance(50) {
                    year.saturating_add(1)
                } else {
                    year.saturating_sub(1)
                };
                bytes.splice(0..4, format!("{year:04}").bytes());
            }
        }
        _ => return (*rng.pick(STRINGS)).to_owned(),
    }
    String::from_utf8(bytes).unwrap_or_default()
}

fn tweak_string(rng: &mut Rng, s: &str) -> String {
    if s.len() >= 19 && s.as_bytes().get(4) == Some(&b'-') && s.as_bytes().get(10) == Some(&b'T') {
        return tweak_timestamp(rng, s);
    }
    let mut chars: Vec<char> = s.chars().collect();
    match rng.below(6) {
        0 if !chars.is_empty() => {
            let i = rng.below(chars.len());
            chars[i] = *rng.pick(&['a', 'Z', '0', '-', '_', '%', ':', '/', '\u{e9}', ' ']);
        }
        1 => chars.push(*rng.pick(&['x', '\n', '=', '%', '\u{301}'])),
        2 if !chars.is_empty() => {
            chars.truncate(rng.below(chars.len()));
        }
        3 => return s.to_uppercase(),
        4 => return s.repeat(1 + rng.below(3)),
        _ => return (*rng.pick(STRINGS)).to_owned(),
    }
    chars.into_iter().collect()
}

/// Applies one to three structure-aware edits to `value`.
pub fn mutate(rng: &mut Rng, value: &mut J) {
    for _ in 0..=rng.below(3) {
        let n = rng.below(value.count());
        // A copy of some other node, for "replace with a sibling" edits.
        let donor = {
            let m = rng.below(value.count());
            value.nth_mut(m).map(|v| v.clone())
        };
        let Some(node) = value.nth_mut(n) else {
            continue;
        };
        mutate_node(rng, node, donor);
    }
}

/// Changes one scalar in place, keeping its type (numbers ±1 or boundary values, strings and
/// timestamps tweaked, booleans flipped): the shape stays valid, so mutants reach the semantic
/// checks behind the format checks.
pub fn tweak_leaf(rng: &mut Rng, value: &mut J) {
    let leaves: Vec<usize> = (0..value.count())
        .filter(|&i| matches!(value.nth_mut(i), Some(J::Num(_) | J::Str(_) | J::Bool(_))))
        .collect();
    if leaves.is_empty() {
        return;
    }
    let n = *rng.pick(&leaves);
    if let Some(leaf) = value.nth_mut(n) {
        match leaf {
            J::Num(_) | J::Str(_) | J::Bool(_) => mutate_node(rng, leaf, None),
            _ => {}
        }
    }
}

fn mutate_node(rng: &mut Rng, node: &mut J, donor: Option<J>) {
    if let Some(donor) = donor {
        if rng.chance(8) {
            *node = random_value(rng);
            return;
        }
        if rng.chance(5) {
            *node = donor;
            return;
        }
    }
    match node {
        J::Obj(members) => match rng.below(6) {
            0 if !members.is_empty() => {
                let i = rng.below(members.len());
                members.remove(i);
            }
            1 if !members.is_empty() => {
                // Duplicate member, same name (§6.4 stage 1 must refuse it).
                let i = rng.below(members.len());
                let copy = members[i].clone();
                members.insert(rng.below(members.len() + 1), copy);
            }
            2 => {
                let name = (*rng.pick(&["extra", "x-ext", "signature", "kind", "id", "__proto__"]))
                    .to_owned();
                members.push((name, random_value(rng)));
            }
            3 if !members.is_empty() => {
                let i = rng.below(members.len());
                members[i].0 = tweak_string(rng, &members[i].0);
            }
            4 if members.len() > 1 => {
                let (a, b) = (rng.below(members.len()), rng.below(members.len()));
                let va = members[a].1.clone();
                members[a].1 = std::mem::replace(&mut members[b].1, va);
            }
            _ => members.reverse(),
        },
        J::Arr(items) if rng.chance(4) && !items.is_empty() => {
            // Amplification shapes (issue 9 item 1): many copies of one element, so the memory
            // oracle sees large inputs too (the runner cuts inputs at 64 KiB).
            let copy = items[rng.below(items.len())].clone();
            let n = 16 << rng.below(7);
            items.extend(std::iter::repeat_n(copy, n));
        }
        J::Arr(items) => match rng.below(4) {
            0 if !items.is_empty() => {
                let i = rng.below(items.len());
                items.remove(i);
            }
            1 if !items.is_empty() => {
                let i = rng.below(items.len());
                let copy = items[i].clone();
                items.insert(rng.below(items.len() + 1), copy);
            }
            2 => items.push(random_value(rng)),
            _ => items.clear(),
        },
        J::Str(s) => *s = tweak_string(rng, s),
        J::Num(n) => {
            *n = match rng.below(3) {
                0 => (*rng.pick(NUMBERS)).to_owned(),
                1 => n
                    .parse::<i64>()
                    .map(|v| {
                        v.wrapping_add(if rng.chance(50) { 1 } else { -1 })
                            .to_string()
                    })
                    .unwrap_or_else(|_| "0".into()),
                _ => format!("{n}.0"),
            }
        }
        J::Bool(b) => *b = !*b,
        J::Null => *node = random_value(rng),
    }
}
