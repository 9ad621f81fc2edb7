//! MissionWeaveProtocol 0.1 server (`docs/network.md`, "The server"): hosts the sans-IO
//! machines of `missionweaveprotocol-gateway` — every frame decision stays there; this crate
//! only moves bytes, runs timers and wakes connections.
//!
//! | module | what |
//! | --- | --- |
//! | [`cli`] | flags and environment variables (the reference server's, plus `--dev`), checks |
//! | [`run`] | the whole command: arguments → exit code (the binary and the Python console script) |
//! | [`app`] | start-up: Registry, authority key, Agent Cards, store, Core (`CoreConfig`), gateway, TLS, fan-out, listener |
//! | [`server`] | accept, admission limits, TLS, HTTP routing, WebSocket upgrade, graceful shutdown |
//! | [`conn`] | one connection: reader, driver (the machine on blocking threads), writer |
//! | [`fanout`] | local wake-ups; PostgreSQL `NOTIFY`/`LISTEN mwp_group_head` between processes |
//! | [`http`] | the request head, `/healthz`, `/metrics`, `/ws`, `/app/` |
//! | [`app_files`] | the approval page's static files (`--app-dir`) and `/app/config.json` |
//! | [`tls`] | rustls (ring), TLS 1.3 only; the `--dev` certificate |
//! | [`clock`] | the wall clock, or a controlled one for demonstrations (`--clock manual:…`) |
//! | [`control`] | `POST /control`: the relay of one signed human Command (§15) |
//! | [`cards`] | the Agent Card file and its bootstrap through `agent_card_register` |
//! | [`metrics`], [`timed_store`] | Prometheus text; store latency |

pub mod app;
pub mod app_files;
pub mod cards;
pub mod cli;
pub mod clock;
pub mod conn;
pub mod control;
pub mod fanout;
pub mod http;
pub mod metrics;
pub mod run;
pub mod server;
pub mod timed_store;
pub mod tls;
