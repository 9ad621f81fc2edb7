//! Size limits applied while parsing untrusted JSON (§6.4 stage 1). Exceeding one is a typed
//! stage-1 error raised before the work it would cost is done: the document size is checked
//! before the first byte is read, the others as soon as the offending token has been scanned and
//! before anything is allocated for it. Nesting depth is fixed at [`super::MAX_DEPTH`].

/// Limits on one parsed document. The two profiles are documented in `docs/limits.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseLimits {
    /// Largest document, in bytes.
    pub max_document_bytes: usize,
    /// Most members in one object, or items in one array.
    pub max_container_entries: usize,
    /// Longest string (member names included), in source bytes between the quotes.
    pub max_string_bytes: usize,
    /// Longest number, in characters of its source text.
    pub max_number_chars: usize,
}

impl ParseLimits {
    /// For one Signed Document or WebSocket frame received from a peer. The largest string the
    /// schemas allow is 100 000 characters (`maxLength`), up to 600 000 bytes when every
    /// character is a `\uXXXX` escape; a frame carries one document plus its envelope. The
    /// limits leave 2× headroom over those figures and refuse anything larger before parsing.
    pub const DOCUMENT: Self = Self {
        max_document_bytes: 4 << 20,
        max_container_entries: 65_536,
        max_string_bytes: 1 << 20,
        max_number_chars: 256,
    };

    /// For state an operator stores and loads: Registry snapshots (a 100 000-key Registry is
    /// about 30 MB), budget, scheduler and lease snapshots, conformance bundles.
    pub const STATE: Self = Self {
        max_document_bytes: 512 << 20,
        max_container_entries: 1 << 24,
        max_string_bytes: 64 << 20,
        // Exact big integers stay readable (Python's `parse_json` returns them as `int`).
        max_number_chars: 1 << 20,
    };
}

impl ParseLimits {
    /// Limits chosen by a caller: each must be at least 1 (a zero limit would refuse every
    /// document); otherwise an [`ArgumentError`](crate::ArgumentError) naming the limit. The
    /// one check every binding's constructor goes through.
    pub fn checked(
        max_document_bytes: usize,
        max_container_entries: usize,
        max_string_bytes: usize,
        max_number_chars: usize,
    ) -> Result<Self, crate::ArgumentError> {
        for (name, value) in [
            ("max_document_bytes", max_document_bytes),
            ("max_container_entries", max_container_entries),
            ("max_string_bytes", max_string_bytes),
            ("max_number_chars", max_number_chars),
        ] {
            if value == 0 {
                return Err(crate::ArgumentError::new(
                    name,
                    "a parse limit must be at least 1",
                ));
            }
        }
        Ok(Self {
            max_document_bytes,
            max_container_entries,
            max_string_bytes,
            max_number_chars,
        })
    }
}

impl Default for ParseLimits {
    /// [`ParseLimits::DOCUMENT`]: an input may come from outside unless the caller says
    /// otherwise; [`ParseLimits::STATE`] is always an explicit choice (`json::parse_state`).
    fn default() -> Self {
        Self::DOCUMENT
    }
}

/// Which limit a document exceeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Limit {
    DocumentBytes,
    ContainerEntries,
    StringBytes,
    NumberChars,
}

impl Limit {
    /// The stable spelling used in error reasons and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::DocumentBytes => "document-bytes",
            Self::ContainerEntries => "container-entries",
            Self::StringBytes => "string-bytes",
            Self::NumberChars => "number-chars",
        }
    }

    pub(crate) fn maximum(self, limits: &ParseLimits) -> usize {
        match self {
            Self::DocumentBytes => limits.max_document_bytes,
            Self::ContainerEntries => limits.max_container_entries,
            Self::StringBytes => limits.max_string_bytes,
            Self::NumberChars => limits.max_number_chars,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn caller_limits_must_each_be_at_least_one() {
        let limits = ParseLimits::checked(1, 2, 3, 4).unwrap();
        assert_eq!((limits.max_document_bytes, limits.max_number_chars), (1, 4));
        let error = ParseLimits::checked(10, 0, 3, 4).unwrap_err();
        assert_eq!(error.argument.as_deref(), Some("max_container_entries"));
        assert!(ParseLimits::checked(0, 1, 1, 1).is_err());
        assert!(ParseLimits::checked(1, 1, 1, 0).is_err());
    }
}
