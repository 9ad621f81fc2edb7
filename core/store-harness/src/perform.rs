//! Performing wire Commands the way a client does: re-send the same bytes while the refusal
//! is retryable (§19: `INTERNAL_ERROR` `contended`, a backend busy past its timeout), up to a
//! bound. A re-send is safe: the same signed Command is applied at most once (§15.1).

use std::time::Duration;

use missionweaveprotocol_engine::engine::Performed;
use missionweaveprotocol_engine::service::CoreError;
use missionweaveprotocol_engine::store::Store;

use crate::command::{NOW, WireCommand};
use crate::error::HarnessError;
use crate::workload::HarnessCore;

/// How often a retryable refusal is re-sent before it is reported.
pub const MAX_SENDS: u32 = 200;

/// The answer to a Command and how many sends it took.
#[derive(Debug, Clone)]
pub struct Sent {
    /// The core's last answer.
    pub result: Result<Performed, CoreError>,
    /// Sends (1 = no retry).
    pub sends: u32,
}

/// Sends `command` at [`NOW`], re-sending the same bytes after a short pause while the refusal
/// is retryable, at most [`MAX_SENDS`] times.
pub fn send<S: Store>(core: &HarnessCore<S>, command: &WireCommand) -> Sent {
    let mut sends = 0;
    loop {
        sends += 1;
        let result = core.perform_bytes(&command.bytes, NOW);
        match &result {
            Err(e) if e.retryable && sends < MAX_SENDS => {
                // Back off a little, more after each loss, so contenders spread out.
                std::thread::sleep(Duration::from_micros(100 * u64::from(sends.min(20))));
            }
            _ => return Sent { result, sends },
        }
    }
}

/// Sends `command` ([`send`]) and requires it to apply (or to have been applied: a duplicate
/// answer is the original Event, §15.1).
pub fn apply<S: Store>(
    core: &HarnessCore<S>,
    command: &WireCommand,
) -> Result<Performed, HarnessError> {
    send(core, command)
        .result
        .map_err(|error| HarnessError::Refused {
            command: format!("{} {}", command.kind, command.action_id),
            error: Box::new(error),
        })
}

/// Applies every Command of `commands` in order ([`apply`]).
pub fn apply_all<S: Store>(
    core: &HarnessCore<S>,
    commands: &[WireCommand],
) -> Result<Vec<Performed>, HarnessError> {
    commands.iter().map(|c| apply(core, c)).collect()
}
