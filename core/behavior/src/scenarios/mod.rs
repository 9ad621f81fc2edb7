//! Every scenario of the standard matrix, by aggregate.

mod artifact;
mod budget;
mod fencing;
mod membership;
mod messages;
mod mission;
mod organization;
mod variants;
mod work;

use crate::scenario::Scenario;

/// All scenarios, each run once per matrix run.
pub fn all() -> Vec<Scenario> {
    let mut all = mission::scenarios();
    all.extend(membership::scenarios());
    all.extend(messages::scenarios());
    all.extend(work::scenarios());
    all.extend(artifact::scenarios());
    all.extend(organization::scenarios());
    all.extend(budget::scenarios());
    all.extend(fencing::scenarios());
    all.extend(variants::scenarios());
    all
}
