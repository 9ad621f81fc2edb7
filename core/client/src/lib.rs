//! MissionWeaveProtocol 0.1 — the Agent client: the tokio host of the sans-IO client session
//! machine (`missionweaveprotocol_gateway::client::Session`). Every protocol decision (the
//! `HELLO` transcript, Event verification, per-Group order and deduplication, Command
//! correlation, no cursor over a gap) is the machine's; this crate moves bytes, runs the
//! timers and reconnects (`docs/network.md`, "The client").
//!
//! | file | what | spec |
//! | --- | --- | --- |
//! | `client.rs` | [`Client`]: connect, subscribe, send, events, acknowledge/advance, ping, close | §15.1, §16, §17 |
//! | `driver.rs` | the task: the socket loop, routing, Command waiters, reconnection and resumption | §16, §17.3, §19 |
//! | `transport.rs` | TCP, TLS 1.3 only (rustls, `ring`, the caller's roots), the WebSocket handshake | §17.1 |
//! | `options.rs` | [`ClientOptions`], [`TlsOptions`], [`ClientLimits`], [`Backoff`], [`Resigner`] | §6.3, §19 |
//! | `notice.rs` | [`Notice`], [`ConnectionState`] | §16, §17.3 |
//! | `error.rs` | [`ClientError`] with wire codes | §19 |
//!
//! ```no_run
//! # async fn example(options: missionweaveprotocol_client::ClientOptions, command: Vec<u8>)
//! # -> Result<(), missionweaveprotocol_client::ClientError> {
//! use missionweaveprotocol_client::Client;
//! let client = Client::connect("wss://localhost:8443/", options).await?;
//! let mut events = client.events("urn:missionweaveprotocol:group:finance")?;
//! client.subscribe_durable(&["urn:missionweaveprotocol:group:finance"]).await?;
//! let accepted = client.send(command).await?; // the Command's verified Event(s)
//! while let Some(event) = events.recv().await {
//!     // persist its effects, then move the durable cursor and ACK
//!     client.advance(&event).await?;
//! }
//! # Ok(()) }
//! ```

mod client;
mod driver;
mod error;
mod notice;
mod options;
mod transport;

pub use client::{Client, EventStream, Subscription};
pub use driver::VerifiedEvent;
pub use error::ClientError;
pub use missionweaveprotocol_gateway::frames::{Attention, ErrorBody};
pub use notice::{ConnectionState, Notice, Notices};
pub use options::{
    Backoff, ClientLimits, ClientOptions, EpochResigner, Resigner, SharedSigner, SharedStore,
    TlsOptions,
};
pub use rustls::RootCertStore;
