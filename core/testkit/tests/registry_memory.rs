//! Registry evidence costs memory in proportion to what validates, not to the entry count an
//! attacker writes: `{"bindings": [null, null, …]}` is refused at the first entry, and before the
//! fix the snapshot reader had already reserved four maps for every entry (≈ 1.3 KiB per 5-byte
//! `null,`, 270× the input; a `registry` fuzz finding). One test in its own binary: the counting
//! allocator sees only this test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::KeyRegistrySnapshot;
use missionweaveprotocol::bundle::embedded_file;
use mwp_alloc_count::Counting;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn peak_of(run: impl Fn()) -> usize {
    run();
    let live = mwp_alloc_count::begin();
    run();
    mwp_alloc_count::peak_since(live)
}

#[test]
fn refused_entries_reserve_nothing_and_valid_evidence_still_loads() {
    let mut nulls =
        br#"{"organizationId":"urn:missionweaveprotocol:organization:acme","bindings":["#.to_vec();
    nulls.extend_from_slice(&[b"null,".as_slice(); 20_000].concat());
    nulls.extend_from_slice(b"null]}");
    let peak = peak_of(|| {
        let error = KeyRegistrySnapshot::from_bytes(&nulls).unwrap_err();
        assert_eq!(error.reason.as_str(), "binding-shape");
    });
    // The parsed array itself (a few tens of bytes per element today, issue 9 item 1 brings
    // it under 4×) is all that may remain; the reserved maps alone were ≈ 270×.
    let ratio = peak as f64 / nulls.len() as f64;
    assert!(
        ratio < 20.0,
        "peak {peak} bytes for {} bytes ({ratio:.1}x)",
        nulls.len()
    );
    // Positive: the bundle's valid evidence loads with every binding.
    let valid = embedded_file("cryptography/keys/registry-valid.json").unwrap();
    let snapshot = KeyRegistrySnapshot::from_bytes(valid).unwrap();
    assert!(snapshot.len() >= 7);
}
