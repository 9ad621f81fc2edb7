//! The client side: [`Session`], the sans-IO machine of one Agent connection (`docs/network.md`,
//! "Client session machine").
//!
//! | file | what | spec |
//! | --- | --- | --- |
//! | `session.rs` | the machine: HELLO, SUBSCRIBE, COMMAND and its resolution, ACK, PING | §6.3, §15.1, §16, §17 |
//! | `ordering.rs` | per-Group order: dedup by Event ID, bounded out-of-order buffer, no Cursor over a gap | §16, digest §2.11 |
//! | `config.rs` | what a session is set up with, and its bounds | — |
//! | `outcome.rs` | what the session hands the host; its errors | §19 |

mod config;
mod ordering;
mod outcome;
mod session;

pub use config::ClientConfig;
pub use outcome::{ClientError, CommandTicket, DeliveredEvent, SessionEvent, SessionToken};
pub use session::Session;
