//! Every scenario of the standard matrix, by aggregate.

mod archive;
mod artifact;
mod budget;
mod child;
mod delegation;
mod execution_approval;
mod fencing;
mod membership;
mod messages;
mod mission;
mod organization;
mod rules;
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
    all.extend(delegation::scenarios());
    all.extend(execution_approval::scenarios());
    all.extend(fencing::scenarios());
    all.extend(variants::scenarios());
    all.extend(archive::scenarios());
    all.extend(child::scenarios());
    all.extend(rules::scenarios());
    all
}
