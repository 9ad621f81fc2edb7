//! Counts of the curve and hashing work a verification does, for the structural test that every
//! stage-3, stage-4 and stage-6 rejection does the same work (§6.4: those rejections are
//! indistinguishable on the wire, so their cost must not tell them apart either). Counting
//! exists only in this crate's test build; elsewhere [`tally`] is an empty inline function.

/// What one thread has done since the last [`take`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct WorkCounts {
    /// Strict `Renc` decodings (decompression, re-encoding, subgroup check).
    pub r_decodings: usize,
    /// Evaluations of the cofactorless equation (challenge hash and double-scalar multiplication).
    pub equations: usize,
    /// Stage-5 signing inputs computed by the verifier.
    pub signing_inputs: usize,
}

#[cfg(test)]
thread_local! {
    static COUNTS: core::cell::Cell<WorkCounts> = const {
        core::cell::Cell::new(WorkCounts { r_decodings: 0, equations: 0, signing_inputs: 0 })
    };
}

/// Records work done on this thread.
#[cfg(test)]
pub(crate) fn tally(record: impl FnOnce(&mut WorkCounts)) {
    COUNTS.with(|cell| {
        let mut counts = cell.get();
        record(&mut counts);
        cell.set(counts);
    });
}

/// Records nothing outside the test build.
#[cfg(not(test))]
#[inline(always)]
pub(crate) fn tally(_: impl FnOnce(&mut WorkCounts)) {}

/// This thread's counts since the last call, reset to zero.
#[cfg(test)]
pub(crate) fn take() -> WorkCounts {
    COUNTS.with(|cell| cell.replace(WorkCounts::default()))
}
