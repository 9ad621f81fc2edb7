//! Fenced leases (§11.3, `lease.schema.json`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::WireCode;
use missionweaveprotocol_kernel::lease::{
    Lease, LeaseBinding, LeaseClaim, LeaseError, LeaseState, LeaseType, LeaseWindow, closure_reason,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

const T: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

fn at(s: i64) -> UnixMillis {
    UnixMillis(T + s * 1000)
}

fn binding() -> LeaseBinding {
    LeaseBinding {
        lease_id: "urn:uuid:lease-1".into(),
        mission_id: "urn:uuid:m".into(),
        group_id: "urn:uuid:g".into(),
        holder_agent_id: "urn:agent:w".into(),
        session_epoch: 2,
    }
}

fn window(exp: i64) -> LeaseWindow {
    LeaseWindow {
        issued_at: at(0),
        starts_at: at(0),
        expires_at: at(exp),
    }
}

fn execution() -> Lease {
    Lease::execution(binding(), "urn:uuid:w1", 3, window(60)).unwrap()
}

fn claim<'a>(lease_id: &'a str, session: u64, ownership: u64) -> LeaseClaim<'a> {
    LeaseClaim {
        agent_id: "urn:agent:w",
        lease_id,
        session_epoch: session,
        ownership_epoch: Some(ownership),
        coordinator_epoch: None,
    }
}

#[test]
fn renewal_is_monotonic_extending_and_before_expiry() {
    let mut l = execution();
    l.renew(at(10), at(90)).unwrap();
    assert_eq!(
        (
            l.renewal_count(),
            l.last_renewed_at(),
            l.window().expires_at
        ),
        (1, Some(at(10)), at(90))
    );
    assert_eq!(
        l.renew(at(10), at(120)),
        Err(LeaseError::NonMonotonicRenewal)
    );
    assert_eq!(
        l.renew(at(5), at(120)),
        Err(LeaseError::NonMonotonicRenewal)
    );
    assert_eq!(l.renew(at(20), at(90)), Err(LeaseError::NotExtending));
    assert_eq!(l.renew(at(20), at(80)), Err(LeaseError::NotExtending));
    assert_eq!(
        l.renew(at(90), at(200)).unwrap_err().code(),
        WireCode::WorkLeaseExpired
    );
    assert_eq!(l.renewal_count(), 1, "failed renewals change nothing");
}

#[test]
fn closure_is_immutable_and_idempotent() {
    let mut l = execution();
    assert_eq!(l.release(at(10), "work checkpointed"), Ok(true));
    assert_eq!(
        l.release(at(10), "work checkpointed"),
        Ok(false),
        "identical closure replays"
    );
    assert_eq!(
        l.release(at(11), "work checkpointed"),
        Err(LeaseError::ClosureConflict)
    );
    assert_eq!(
        l.revoke(at(10), "work checkpointed").unwrap_err().code(),
        WireCode::InvalidStateTransition
    );
    assert_eq!(
        l.renew(at(12), at(100)),
        Err(LeaseError::Closed(LeaseState::Released))
    );
    assert_eq!(
        (l.state(), l.closed_at(), l.closure_reason()),
        (
            LeaseState::Released,
            Some(at(10)),
            Some("work checkpointed")
        )
    );
}

#[test]
fn closure_reasons_are_recorded_without_surrounding_whitespace() {
    // The reference strips model strings; a reason is free text, so its trimmed form is kept.
    let mut l = execution();
    assert_eq!(l.release(at(10), "  work checkpointed\n"), Ok(true));
    assert_eq!(l.closure_reason(), Some("work checkpointed"));
    // The same closure with other surrounding whitespace is the identical closure.
    assert_eq!(l.release(at(10), "work checkpointed "), Ok(false));
    assert_eq!(closure_reason(" \t pause "), Ok("pause"));
    // Blank or over-long (after trimming) is refused, and the lease is unchanged.
    for bad in ["", "   ", &"x".repeat(513)] {
        assert_eq!(
            closure_reason(bad),
            Err(LeaseError::InvalidField("closureReason")),
            "{bad:?}"
        );
        let mut l = execution();
        assert_eq!(
            l.release(at(10), bad),
            Err(LeaseError::InvalidField("closureReason"))
        );
        assert_eq!(l.state(), LeaseState::Active);
    }
    assert_eq!(
        closure_reason(&format!(" {} ", "x".repeat(512))).map(str::len),
        Ok(512)
    );
}

#[test]
fn release_and_revoke_only_before_expiry_expire_only_after() {
    let mut l = execution();
    assert_eq!(
        l.revoke(at(60), "session replaced"),
        Err(LeaseError::Expired)
    );
    assert_eq!(l.expire(at(59), "timeout"), Err(LeaseError::InvalidWindow));
    assert_eq!(
        l.release(at(10), "   "),
        Err(LeaseError::InvalidField("closureReason"))
    );
    assert_eq!(
        l.release(at(10), &"x".repeat(513)),
        Err(LeaseError::InvalidField("closureReason"))
    );
    assert_eq!(
        l.state_at(at(60)),
        LeaseState::Expired,
        "observed expiry before it is recorded"
    );
    assert_eq!(l.expire(at(60), "lease expired"), Ok(true));
    let mut r = execution();
    assert_eq!(r.revoke(at(1), "session replaced"), Ok(true));
    assert_eq!(r.state(), LeaseState::Revoked);
}

#[test]
fn commands_must_cite_the_current_lease_and_epochs() {
    let l = execution();
    assert_eq!(
        l.check_claim(&claim("urn:uuid:lease-1", 2, 3), at(5)),
        Ok(())
    );
    assert_eq!(
        l.check_claim(&claim("urn:uuid:lease-0", 2, 3), at(5))
            .unwrap_err()
            .code(),
        WireCode::WorkLeaseExpired,
        "older Lease ID, same epoch"
    );
    assert_eq!(
        l.check_claim(&claim("urn:uuid:lease-1", 2, 2), at(5))
            .unwrap_err()
            .code(),
        WireCode::WorkStaleOwnership
    );
    assert_eq!(
        l.check_claim(&claim("urn:uuid:lease-1", 1, 3), at(5))
            .unwrap_err()
            .code(),
        WireCode::AuthStaleSession
    );
    assert_eq!(
        l.check_claim(&claim("urn:uuid:lease-1", 2, 3), at(60)),
        Err(LeaseError::Expired)
    );
    let other = LeaseClaim {
        agent_id: "urn:agent:x",
        ..claim("urn:uuid:lease-1", 2, 3)
    };
    assert_eq!(
        l.check_claim(&other, at(5)).unwrap_err().code(),
        WireCode::AuthForbidden
    );
    let mut closed = execution();
    closed.release(at(1), "submitted").unwrap();
    assert_eq!(
        closed.check_claim(&claim("urn:uuid:lease-1", 2, 3), at(5)),
        Err(LeaseError::Closed(LeaseState::Released))
    );
    let c = Lease::coordinator(binding(), 4, window(60)).unwrap();
    let coord = |e| LeaseClaim {
        agent_id: "urn:agent:w",
        lease_id: "urn:uuid:lease-1",
        session_epoch: 2,
        ownership_epoch: None,
        coordinator_epoch: Some(e),
    };
    assert_eq!(c.check_claim(&coord(4), at(1)), Ok(()));
    assert_eq!(
        c.check_claim(&coord(3), at(1)).unwrap_err().code(),
        WireCode::AuthStaleCoordinator
    );
}

#[test]
fn construction_rules_per_type() {
    assert_eq!(
        Lease::execution(binding(), "urn:uuid:w", 0, window(60)).unwrap_err(),
        LeaseError::InvalidField("ownershipEpoch")
    );
    assert_eq!(
        Lease::execution(
            LeaseBinding {
                session_epoch: 0,
                ..binding()
            },
            "urn:uuid:w",
            1,
            window(60)
        )
        .unwrap_err(),
        LeaseError::InvalidField("sessionEpoch")
    );
    assert_eq!(
        Lease::execution(
            LeaseBinding {
                lease_id: "".into(),
                ..binding()
            },
            "urn:uuid:w",
            1,
            window(60)
        )
        .unwrap_err(),
        LeaseError::InvalidField("leaseId")
    );
    assert_eq!(
        Lease::execution(binding(), "urn:uuid:w", 1, window(0)).unwrap_err(),
        LeaseError::InvalidWindow
    );
    assert_eq!(
        Lease::ownership(binding(), "urn:uuid:w", 1, at(61), window(60)).unwrap_err(),
        LeaseError::InvalidWindow
    );
    assert_eq!(
        Lease::blocked(binding(), "urn:uuid:w", 1, window(60), Some(at(59))).unwrap_err(),
        LeaseError::InvalidWindow
    );
    let o = Lease::ownership(binding(), "urn:uuid:w", 1, at(30), window(60)).unwrap();
    assert_eq!(o.check_start_by(at(30)), Ok(()));
    assert_eq!(
        o.check_start_by(at(31)),
        Err(LeaseError::Expired),
        "missed start-by (§11.5)"
    );
    let mut b = Lease::blocked(binding(), "urn:uuid:w", 1, window(60), Some(at(100))).unwrap();
    assert_eq!(
        b.renew(at(1), at(101)),
        Err(LeaseError::NotExtending),
        "grace bound"
    );
    b.renew(at(1), at(100)).unwrap();
    assert_eq!(b.lease_type(), LeaseType::Blocked);
}

#[test]
fn projects_to_the_schema_shape() {
    let mut l = execution();
    assert_eq!(
        l.to_json_string().unwrap(),
        r#"{"expiresAt":"2026-01-01T00:01:00.000Z","groupId":"urn:uuid:g","holderAgentId":"urn:agent:w","issuedAt":"2026-01-01T00:00:00.000Z","leaseId":"urn:uuid:lease-1","leaseType":"execution","missionId":"urn:uuid:m","ownershipEpoch":3,"renewalCount":0,"sessionEpoch":2,"startsAt":"2026-01-01T00:00:00.000Z","state":"active","workItemId":"urn:uuid:w1"}"#
    );
    l.renew(at(10), at(90)).unwrap();
    l.release(at(20), "work \"checkpointed\"").unwrap();
    let json = l.to_json_string().unwrap();
    assert!(json.starts_with(r#"{"closedAt":"2026-01-01T00:00:20.000Z","closureReason":"work \"checkpointed\"","expiresAt":"2026-01-01T00:01:30.000Z""#), "{json}");
    assert!(
        json.contains(r#""lastRenewedAt":"2026-01-01T00:00:10.000Z","#)
            && json.contains(r#""renewalCount":1,"#)
            && json.contains(r#""state":"released""#)
    );
    let o = Lease::ownership(binding(), "urn:uuid:w", 1, at(30), window(60))
        .unwrap()
        .to_json_string()
        .unwrap();
    assert!(
        o.contains(r#""startBy":"2026-01-01T00:00:30.000Z""#)
            && o.contains(r#""leaseType":"ownership""#)
    );
    let c = Lease::coordinator(binding(), 7, window(60))
        .unwrap()
        .to_json_string()
        .unwrap();
    assert!(
        c.contains(r#""coordinatorEpoch":7"#)
            && !c.contains("workItemId")
            && !c.contains("ownershipEpoch")
    );
    let far = Lease::execution(
        binding(),
        "urn:uuid:w",
        1,
        LeaseWindow {
            issued_at: at(0),
            starts_at: at(0),
            expires_at: UnixMillis(i64::MAX),
        },
    )
    .unwrap();
    assert_eq!(far.to_json_string(), Err(LeaseError::UnrenderableTimestamp));
}

#[test]
fn every_lease_type_and_state_is_schema_valid() {
    use missionweaveprotocol::json::parse;
    use missionweaveprotocol::schema::SchemaCatalog;
    let catalog = SchemaCatalog::embedded();
    let valid = |lease: &Lease| {
        let text = lease.to_json_string().unwrap();
        let value = parse(text.as_bytes()).unwrap();
        assert_eq!(catalog.validate("lease", &value), Ok(()), "{text}");
    };
    let mut active = execution();
    valid(&active);
    active.renew(at(10), at(90)).unwrap();
    valid(&active);
    let mut released = execution();
    released.release(at(20), "checkpointed").unwrap();
    valid(&released);
    let mut revoked = execution();
    revoked.revoke(at(20), "session replaced").unwrap();
    valid(&revoked);
    let mut expired = execution();
    expired.expire(at(61), "lease expired").unwrap();
    valid(&expired);
    valid(&Lease::ownership(binding(), "urn:uuid:w1", 1, at(30), window(60)).unwrap());
    valid(&Lease::coordinator(binding(), 7, window(60)).unwrap());
    valid(&Lease::blocked(binding(), "urn:uuid:w1", 1, window(60), Some(at(100))).unwrap());
    // Negative: the schema rejects what the record type cannot produce.
    let text = execution()
        .to_json_string()
        .unwrap()
        .replace("\"renewalCount\":0", "\"renewalCount\":1");
    assert!(
        catalog
            .validate("lease", &parse(text.as_bytes()).unwrap())
            .is_err(),
        "renewed without lastRenewedAt"
    );
}

#[test]
fn documents_read_back_to_the_same_lease() {
    use missionweaveprotocol_kernel::lease::LeaseDocumentError;
    let mut renewed = execution();
    renewed.renew(at(10), at(90)).unwrap();
    let mut released = execution();
    released.renew(at(5), at(80)).unwrap();
    released.release(at(20), "checkpointed").unwrap();
    let mut revoked = execution();
    revoked.revoke(at(20), "session replaced").unwrap();
    let mut expired = execution();
    expired.expire(at(61), "lease expired").unwrap();
    for lease in [
        execution(),
        renewed,
        released,
        revoked,
        expired,
        Lease::ownership(binding(), "urn:uuid:w1", 1, at(30), window(60)).unwrap(),
        Lease::coordinator(binding(), 7, window(60)).unwrap(),
        Lease::blocked(binding(), "urn:uuid:w1", 1, window(60), Some(at(100))).unwrap(),
        Lease::blocked(binding(), "urn:uuid:w1", 1, window(60), None).unwrap(),
    ] {
        let text = lease.to_json_string().unwrap();
        assert_eq!(Lease::from_json(text.as_bytes()), Ok(lease), "{text}");
    }
    // Negative: what the record type could not have produced is refused.
    let base = execution().to_json_string().unwrap();
    let refuse = |text: String| Lease::from_json(text.as_bytes()).unwrap_err();
    assert!(matches!(refuse("{".into()), LeaseDocumentError::Parse(_)));
    assert!(matches!(
        refuse(base.replace("\"state\":\"active\"", "\"state\":\"paused\"")),
        LeaseDocumentError::Schema(_)
    ));
    assert!(matches!(
        refuse(base.replace(
            "\"startsAt\":\"2026-01-01T00:00:00.000Z\"",
            "\"startsAt\":\"2026-01-01T00:00:00.0001Z\""
        )),
        LeaseDocumentError::Precision("startsAt")
    ));
    assert!(matches!(
        refuse(base.replace(
            "\"state\":\"active\"",
            "\"closedAt\":\"2026-01-01T00:00:20.000Z\",\"closureReason\":\"x\",\"state\":\"active\""
        )),
        LeaseDocumentError::Inconsistent(_) | LeaseDocumentError::Schema(_)
    ));
    assert!(matches!(
        refuse(base.replace("\"state\":\"active\"", "\"closedAt\":\"2026-01-01T00:00:20.000Z\",\"closureReason\":\"x\",\"state\":\"expired\"")),
        LeaseDocumentError::Inconsistent(LeaseError::InvalidWindow)
    ));
    assert!(matches!(
        refuse(base.replace(
            "\"renewalCount\":0",
            "\"lastRenewedAt\":\"2026-01-01T00:05:00.000Z\",\"renewalCount\":1"
        )),
        LeaseDocumentError::Inconsistent(LeaseError::InvalidField("lastRenewedAt"))
    ));
    assert!(matches!(
        refuse(base.replace(
            "\"leaseType\":\"execution\"",
            "\"coordinatorEpoch\":3,\"leaseType\":\"execution\""
        )),
        LeaseDocumentError::Inconsistent(LeaseError::InvalidField("leaseType"))
            | LeaseDocumentError::Schema(_)
    ));
    assert!(matches!(
        refuse(base.replace(
            "\"expiresAt\":\"2026-01-01T00:01:00.000Z\"",
            "\"expiresAt\":\"2025-01-01T00:01:00.000Z\""
        )),
        LeaseDocumentError::Inconsistent(LeaseError::InvalidWindow)
    ));
    assert_eq!(refuse("{".into()).code(), WireCode::ProtocolViolation);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Whatever sequence of operations a lease went through, its document reads back equal.
    #[test]
    fn any_history_round_trips(ops in proptest::collection::vec((0u8..5, 0i64..120, 0i64..200), 0..8)) {
        let mut lease = execution();
        for (op, a, b) in ops {
            let _ = match op {
                0 | 1 => lease.renew(at(a), at(a + b)).map(|_| true),
                2 => lease.release(at(a), "released"),
                3 => lease.revoke(at(a), "revoked"),
                _ => lease.expire(at(a), "expired"),
            };
        }
        let text = lease.to_json_string().unwrap();
        proptest::prop_assert_eq!(Lease::from_json(text.as_bytes()), Ok(lease));
    }
}

/// The identifiers a lease accepts are exactly those `lease.schema.json` accepts
/// (`common.schema.json#/$defs/id`, §2), so every constructed lease reads back from its document.
#[test]
fn lease_identifiers_follow_the_lease_schema() {
    use missionweaveprotocol::json::{Value, parse};
    use missionweaveprotocol::schema::SchemaCatalog;

    let long = format!("urn:x:{}", "a".repeat(506));
    let too_long = format!("urn:x:{}", "a".repeat(507));
    let candidates = [
        ("urn:uuid:lease-2", true),
        ("https://example.org/leases/7?x=1#f", true),
        ("urn:x:%41", true),
        (long.as_str(), true),
        ("lease-1", false),
        ("", false),
        ("urn:x:a b", false),
        ("urn:x:\u{e9}", false),
        ("urn:x:a\"b", false),
        ("urn:x:a{b}", false),
        ("1urn:x", false),
        ("urn:x:%4", false),
        (too_long.as_str(), false),
    ];
    let document = parse(execution().to_json_string().unwrap().as_bytes()).unwrap();
    let fields = [
        "leaseId",
        "missionId",
        "groupId",
        "holderAgentId",
        "workItemId",
    ];
    for (candidate, expected) in candidates {
        for field in fields {
            let mut b = binding();
            let mut work_item = "urn:uuid:w1";
            match field {
                "leaseId" => b.lease_id = candidate.into(),
                "missionId" => b.mission_id = candidate.into(),
                "groupId" => b.group_id = candidate.into(),
                "holderAgentId" => b.holder_agent_id = candidate.into(),
                _ => work_item = candidate,
            }
            let built = Lease::execution(b, work_item, 3, window(60));
            let mut edited = document.clone();
            if let Value::Object(object) = &mut edited {
                object.insert(field, Value::string(candidate));
            }
            let schema_valid = SchemaCatalog::embedded().is_valid("lease", &edited);
            assert_eq!(schema_valid, expected, "{field} {candidate:?} (schema)");
            match built {
                Ok(lease) => {
                    assert!(expected, "{field} {candidate:?} was accepted");
                    let text = lease.to_json_string().unwrap();
                    assert_eq!(Lease::from_json(text.as_bytes()).unwrap(), lease);
                }
                Err(error) => {
                    assert!(!expected, "{field} {candidate:?} was refused");
                    assert!(matches!(error, LeaseError::InvalidField(f) if f == field));
                }
            }
        }
    }
}
