//! Property: any valid Agent Command signed inside the window comes out of ingress with every
//! envelope field as signed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "ingress_fixture.rs"]
mod fixture;

use fixture::*;
use missionweaveprotocol::json::Value;
use missionweaveprotocol_engine::ingress::{
    AllowAllAuthorizerForTests, CommandIngress, FreshnessWindow,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use proptest::prelude::*;

const MAX_SAFE: u64 = 9_007_199_254_740_991;

fn id() -> impl Strategy<Value = String> {
    "[a-z0-9]{1,12}".prop_map(|s| format!("urn:example:{s}"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn fields_round_trip(
        action in id(),
        correlation in id(),
        group in id(),
        session in 1..=MAX_SAFE,
        membership in 1..=MAX_SAFE,
        coordinator in proptest::option::of(1..=MAX_SAFE),
        revision in proptest::option::of(0..=MAX_SAFE),
        work_item in proptest::option::of(id()),
        offset in -300_000i64..=30_000,
        step in any::<i32>(),
    ) {
        let f = fixture();
        let issued_at = UnixMillis(NOW.0 + offset).to_rfc3339().unwrap();
        let mut extra = String::new();
        if let Some(c) = coordinator { extra.push_str(&format!(r#""coordinatorEpoch": {c},"#)); }
        if let Some(r) = revision { extra.push_str(&format!(r#""expectedRevision": {r},"#)); }
        if let Some(w) = &work_item { extra.push_str(&format!(r#""workItemId": "{w}","#)); }
        let text = format!(
            r#"{{{extra} "protocolVersion": "0.1", "actionId": "{action}",
            "actor": {{"type": "agent", "id": "{AGENT}"}},
            "sessionEpoch": {session}, "membershipEpoch": {membership}, "groupId": "{group}",
            "kind": "work.checkpoint", "correlationId": "{correlation}",
            "issuedAt": "{issued_at}", "payload": {{"step": {step}}}}}"#
        );
        let unsigned = missionweaveprotocol::json::parse(text.as_bytes()).unwrap();
        let bytes = sign(&unsigned, &f.agent_key);
        let c = CommandIngress::new(AllowAllAuthorizerForTests)
            .with_window(FreshnessWindow::default())
            .verify(&bytes, &f.registry, NOW)
            .unwrap();
        prop_assert_eq!(c.action_id(), action.as_str());
        prop_assert_eq!(c.correlation_id(), correlation.as_str());
        prop_assert_eq!(c.group_id(), Some(group.as_str()));
        prop_assert_eq!(c.session_epoch(), Some(session));
        prop_assert_eq!(c.membership_epoch(), Some(membership));
        prop_assert_eq!(c.coordinator_epoch(), coordinator);
        prop_assert_eq!(c.expected_revision(), revision);
        prop_assert_eq!(c.work_item_id(), work_item.as_deref());
        prop_assert_eq!(c.issued_at().as_str(), issued_at.as_str());
        prop_assert_eq!(
            c.payload().get("step").and_then(Value::as_number).and_then(|n| n.as_i64()),
            Some(i64::from(step))
        );
        prop_assert_eq!(c.actor().id.as_str(), AGENT);
        prop_assert_eq!(c.bytes(), &bytes[..]);
    }
}
