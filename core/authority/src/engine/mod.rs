//! The authoritative engine: verified Commands in, signed ordered Events out (§15, §16).
//!
//! [`Engine::perform`] runs, for one [`VerifiedCommand`](crate::ingress::VerifiedCommand):
//!
//! 1. idempotency through the store receipt (§15.1): the same signing hash answers with the
//!    original Event and appends nothing; another hash is `ACTION_ID_COLLISION`;
//! 2. refusal of unknown critical extensions (§18, `UNKNOWN_CRITICAL_EXTENSION`);
//! 3. reads of the aggregates the kind needs, then a pure decision
//!    `(state read, command, now) → Decision { events, writes }` or a typed §19 error
//!    (`mission::decide` for the Mission rows);
//! 4. signing each Event at its Group's next sequence with the Group Authority's
//!    [`EventIssuer`](crate::events::EventIssuer) and committing one store transaction: the
//!    appends, the aggregate writes and checks with the revisions read, and the receipt;
//! 5. on store contention (another Command of the Group committed first) steps 3–4 run again
//!    on fresh state, a bounded number of times; nothing is ever half-applied.
//!
//! Deterministic: with the same Event ID source and the same `now`, two engines fed the same
//! Commands emit byte-identical Events (Ed25519 signatures are deterministic).

mod core;
mod decision;
mod dispatch;
mod error;

pub use self::core::{DEFAULT_MAX_ATTEMPTS, Engine, Performed};
pub use decision::{Decision, PlannedEvent, PlannedWrite};
pub use error::EngineError;
