//! Artifact scenarios (§13.1, §11.3: publication cites the current Lease ID).

use missionweaveprotocol::WireCode;
use missionweaveprotocol_engine::artifact::ARTIFACT_KIND;
use missionweaveprotocol_engine::store::{AggregateKey, Store};

use crate::payloads::{ARTIFACT, W1};
use crate::scenario::{Scenario, Watch};
use crate::steps;
use crate::world::{COORDINATOR, WORKER, World};

fn stored(w: &World) -> Result<bool, String> {
    w.engine()
        .store()
        .aggregate(&AggregateKey::new(ARTIFACT_KIND, ARTIFACT))
        .map(|a| a.is_some())
        .map_err(|e| e.to_string())
}

pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario::new("artifact.publish: the owner publishes its signed manifest")
            .given(steps::active(W1))
            .when(steps::publish(WORKER, WORKER))
            .watch(Watch::WorkItem(W1))
            .emits(&["artifact.published"])
            .moves("active", "active")
            .check("the Artifact is stored", |w| {
                stored(w)?.then_some(()).ok_or("not stored".into())
            }),
        Scenario::new("artifact.publish: the manifest's producer is not the actor")
            .given(steps::active(W1))
            .when(steps::publish(COORDINATOR, WORKER))
            .watch(Watch::WorkItem(W1))
            .refused(WireCode::AuthForbidden)
            .check("no Artifact is stored", |w| {
                (!stored(w)?).then_some(()).ok_or("stored".into())
            }),
    ]
}
