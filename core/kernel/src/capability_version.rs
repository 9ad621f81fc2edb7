//! Capability versions: Semantic Versioning 2.0.0 precedence (`common.schema.json#/$defs/semver`).
//!
//! Delegation Grants allow a capability "at or above its minimum version" (§9.1) and the
//! Scheduler checks a Work Contract's required capability versions against what the Worker
//! declares (§10.3), so both need the same ordering. Build metadata is ignored for precedence.

use core::cmp::Ordering;
use core::fmt;

/// One pre-release identifier.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum PreId {
    Numeric(u64),
    Alpha(Box<str>),
}

/// A parsed semantic version.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Version {
    major: u64,
    minor: u64,
    patch: u64,
    pre: Vec<PreId>,
    text: Box<str>,
}

fn numeric(s: &str) -> Option<u64> {
    // No leading zeros (SemVer §2), digits only.
    if s.is_empty() || (s.len() > 1 && s.starts_with('0')) || !s.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    s.parse().ok()
}

fn ident_ok(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

impl Version {
    /// Parses `MAJOR.MINOR.PATCH[-pre][+build]` (at most 128 characters, like the schema).
    pub fn parse(text: &str) -> Option<Version> {
        if text.len() > 128 {
            return None;
        }
        let (rest, build) = match text.split_once('+') {
            Some((r, b)) => (r, Some(b)),
            None => (text, None),
        };
        if let Some(b) = build
            && !b.split('.').all(ident_ok)
        {
            return None;
        }
        let (core_part, pre_part) = match rest.split_once('-') {
            Some((c, p)) => (c, Some(p)),
            None => (rest, None),
        };
        let mut nums = core_part.split('.');
        let major = numeric(nums.next()?)?;
        let minor = numeric(nums.next()?)?;
        let patch = numeric(nums.next()?)?;
        if nums.next().is_some() {
            return None;
        }
        let mut pre = Vec::new();
        if let Some(p) = pre_part {
            for id in p.split('.') {
                if !ident_ok(id) {
                    return None;
                }
                if id.bytes().all(|b| b.is_ascii_digit()) {
                    pre.push(PreId::Numeric(numeric(id)?));
                } else {
                    pre.push(PreId::Alpha(id.into()));
                }
            }
        }
        Some(Version {
            major,
            minor,
            patch,
            pre,
            text: text.into(),
        })
    }

    /// The original text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// SemVer precedence (build metadata ignored).
    pub fn precedence(&self, other: &Version) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(other.major, other.minor, other.patch))
            .then_with(|| match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => {
                    for (a, b) in self.pre.iter().zip(&other.pre) {
                        let ord = match (a, b) {
                            (PreId::Numeric(x), PreId::Numeric(y)) => x.cmp(y),
                            (PreId::Numeric(_), PreId::Alpha(_)) => Ordering::Less,
                            (PreId::Alpha(_), PreId::Numeric(_)) => Ordering::Greater,
                            (PreId::Alpha(x), PreId::Alpha(y)) => x.cmp(y),
                        };
                        if ord != Ordering::Equal {
                            return ord;
                        }
                    }
                    self.pre.len().cmp(&other.pre.len())
                }
            })
    }

    /// True when `self` is at or above `minimum`.
    pub fn satisfies(&self, minimum: &Version) -> bool {
        self.precedence(minimum) != Ordering::Less
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// The lowest version: as a minimum, any version of the capability meets it (the reference
/// runtime's bare capability id).
pub const ANY_VERSION: &str = "0.0.0";

/// The reference runtime's integer capability version `n`, as the SemVer `n.0.0`.
pub fn reference_version(major: u64) -> String {
    format!("{major}.0.0")
}

/// A capability at a version: a Work Contract requirement (`capabilityRef`) or a declared one.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CapabilityRef {
    /// Capability ID (`^[a-z0-9]+(?:[.-][a-z0-9]+)+$`).
    pub id: String,
    /// Version (required minimum, or the version offered).
    pub version: Version,
}

impl CapabilityRef {
    /// Builds from text; `None` if the version does not parse.
    pub fn new(id: &str, version: &str) -> Option<CapabilityRef> {
        Some(CapabilityRef {
            id: id.to_owned(),
            version: Version::parse(version)?,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    #[test]
    fn parses_and_rejects() {
        for ok in [
            "0.0.0",
            "1.2.3",
            "1.2.3-alpha.1",
            "1.0.0+build.5",
            "10.20.30-rc.1+x",
        ] {
            assert!(Version::parse(ok).is_some(), "{ok}");
        }
        for bad in [
            "1.2", "01.2.3", "1.2.3-", "1.2.3-01", "1.2.3+", "a.b.c", "1.2.3.4", "",
        ] {
            assert!(Version::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn the_references_versions() {
        assert_eq!(reference_version(2), "2.0.0");
        assert_eq!(reference_version(0), ANY_VERSION);
        let minimum = v(&reference_version(2));
        assert!(v("2.0.0").satisfies(&minimum) && v("2.1.0").satisfies(&minimum));
        assert!(!v("1.9.9").satisfies(&minimum) && !v("2.0.0-rc.1").satisfies(&minimum));
        let any = v(ANY_VERSION);
        for version in ["0.0.0", "0.0.1", "1.0.0", "10.2.3"] {
            assert!(v(version).satisfies(&any), "{version}");
        }
        assert!(!v("0.0.0-alpha").satisfies(&any));
    }

    #[test]
    fn semver_precedence_chain() {
        let chain = [
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-alpha.beta",
            "1.0.0-beta",
            "1.0.0-beta.2",
            "1.0.0-beta.11",
            "1.0.0-rc.1",
            "1.0.0",
            "1.0.1",
            "1.1.0",
            "2.0.0",
        ];
        for w in chain.windows(2) {
            assert_eq!(v(w[0]).precedence(&v(w[1])), Ordering::Less, "{w:?}");
            assert!(v(w[1]).satisfies(&v(w[0])));
            assert!(!v(w[0]).satisfies(&v(w[1])));
        }
        assert_eq!(v("1.0.0+a").precedence(&v("1.0.0+b")), Ordering::Equal);
    }
}
