//! Property: for any verified Command and any Group position, the built Event verifies with
//! the Event profile and carries the position, the Command's hash and cause (§15.2, §6.4).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "ingress_fixture.rs"]
mod fixture;

use fixture::*;
use missionweaveprotocol::json::{Number, Object, Value};
use missionweaveprotocol::{Principal, PrincipalType};
use missionweaveprotocol_engine::events::{EventDraft, EventIssuer, SequentialEventIds};
use missionweaveprotocol_engine::ingress::{AllowAllAuthorizerForTests, CommandIngress};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use proptest::prelude::*;

const MAX_SAFE: u64 = 9_007_199_254_740_991;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn built_events_verify_and_carry_their_inputs(
        sequence in 1..=MAX_SAFE,
        revision in 0..=MAX_SAFE,
        // I-JSON (RFC 7493): JCS writes numbers in ECMAScript form, exact only within ±(2^53−1).
        step in -(MAX_SAFE as i64)..=MAX_SAFE as i64,
        kind in prop::sample::select(vec!["work.checkpointed", "work.progressed", "ext.acme.x.y_done"]),
        later_ms in 0i64..86_400_000,
        group in "[a-z0-9]{1,16}",
    ) {
        let f = fixture();
        let bytes = sign(&agent_command(NOW_TEXT, ""), &f.agent_key);
        let command = CommandIngress::new(AllowAllAuthorizerForTests)
            .verify(&bytes, &f.registry, NOW)
            .unwrap();
        let mut payload = Object::new();
        payload.insert("step", Value::Number(Number::from_i64(step)));
        let group_id = format!("urn:example:group:{group}");
        let draft = EventDraft::for_command(&command, kind, payload).at(&group_id, sequence, revision);
        let issuer = EventIssuer::new(
            Principal::new(PrincipalType::Service, AUTHORITY),
            f.authority_key.clone(),
        );
        let now = UnixMillis(NOW.0 + later_ms);
        let mut ids = SequentialEventIds::new("urn:example:event:");
        let event = issuer.issue(&draft, &mut ids, now).unwrap();
        let verified = event.verify(&f.registry).unwrap();
        let d = verified.document();
        let int = |p: &str| d.pointer(p).and_then(Value::as_number).and_then(|n| n.as_u64());
        prop_assert_eq!(int("/sequence"), Some(sequence));
        prop_assert_eq!(int("/aggregateRevision"), Some(revision));
        prop_assert_eq!(
            d.pointer("/payload/step").and_then(Value::as_number).and_then(|n| n.as_i64()),
            Some(step)
        );
        prop_assert_eq!(d.get("groupId").and_then(Value::as_str), Some(group_id.as_str()));
        prop_assert_eq!(d.get("kind").and_then(Value::as_str), Some(kind));
        prop_assert_eq!(d.get("commandHash").and_then(Value::as_str), Some(command.signing_hash()));
        prop_assert_eq!(d.pointer("/cause/id").and_then(Value::as_str), Some(command.action_id()));
        prop_assert_eq!(verified.protected_time.instant().unix_millis(), now.0);
    }
}
