//! MissionWeaveProtocol 0.1 network machines, sans-IO (`docs/network.md`): bytes and time in,
//! frames and actions out; no sockets, no clocks, no operating-system randomness, so they build
//! for wasm32 and every host (tokio, ASGI, Node, the browser) drives the same decisions.
//!
//! | module | what | spec |
//! | --- | --- | --- |
//! | [`server`] | the per-connection machine [`server::Connection`], the shared [`server::Gateway`], the delivery [`server::Hub`], limits, and the Core seam ([`server::GatewayCore`], [`server::CoreGateway`]) | §6.3, §8, §15, §16, §17, §19 |
//! | [`client`] | the client session machine [`client::Session`] | §6.3, §16, §17 |
//! | [`frames`] | one builder per frame, both sides; the `HELLO` challenge transcript | §17, §19, §6.3 |

pub mod client;
pub mod frames;
pub mod server;
