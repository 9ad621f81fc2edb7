//! Every scenario of the standard matrix, by aggregate.

mod artifact;
mod membership;
mod mission;
mod variants;
mod work;

use crate::scenario::Scenario;

/// All scenarios, each run once per matrix run.
pub fn all() -> Vec<Scenario> {
    let mut all = mission::scenarios();
    all.extend(membership::scenarios());
    all.extend(work::scenarios());
    all.extend(artifact::scenarios());
    all.extend(variants::scenarios());
    all
}
