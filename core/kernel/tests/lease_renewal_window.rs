//! §11.3: a Lease cannot be renewed before its window starts (`at < startsAt`); the boundary
//! `at == startsAt` is allowed. Renewal timestamps are monotonic from `startsAt` on.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::WireCode;
use missionweaveprotocol_kernel::lease::{Lease, LeaseBinding, LeaseError, LeaseWindow};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

const T: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

fn at(s: i64) -> UnixMillis {
    UnixMillis(T + s * 1000)
}

/// Issued at 0, starts at 30, expires at 60.
fn deferred() -> Lease {
    Lease::execution(
        LeaseBinding {
            lease_id: "urn:uuid:lease-1".into(),
            mission_id: "urn:uuid:m".into(),
            group_id: "urn:uuid:g".into(),
            holder_agent_id: "urn:agent:w".into(),
            session_epoch: 2,
        },
        "urn:uuid:w1",
        3,
        LeaseWindow {
            issued_at: at(0),
            starts_at: at(30),
            expires_at: at(60),
        },
    )
    .unwrap()
}

#[test]
fn renewal_before_starts_at_is_refused_and_changes_nothing() {
    for early in [0, 1, 29] {
        let mut l = deferred();
        let error = l.renew(at(early), at(90)).unwrap_err();
        assert_eq!(error, LeaseError::NonMonotonicRenewal, "renew at {early}s");
        assert_eq!(error.code(), WireCode::InvalidCommand);
        assert_eq!(
            (
                l.renewal_count(),
                l.last_renewed_at(),
                l.window().expires_at
            ),
            (0, None, at(60)),
            "a refused renewal changes nothing"
        );
    }
    // One millisecond before startsAt is still too early.
    let mut l = deferred();
    assert_eq!(
        l.renew(UnixMillis(at(30).0 - 1), at(90)),
        Err(LeaseError::NonMonotonicRenewal)
    );
}

#[test]
fn renewal_at_or_after_starts_at_is_accepted() {
    let mut l = deferred();
    l.renew(at(30), at(90)).unwrap();
    assert_eq!(
        (
            l.renewal_count(),
            l.last_renewed_at(),
            l.window().expires_at
        ),
        (1, Some(at(30)), at(90))
    );
    let mut l = deferred();
    l.renew(at(45), at(90)).unwrap();
    assert_eq!(l.last_renewed_at(), Some(at(45)));
}
