//! The WebSocket frames of §17 (`websocket-frame.schema.json`), built in one place for both
//! sides: the server's connection machine and the client's session machine use these builders
//! and nothing else, so a frame shape is written once.
//!
//! | file | what |
//! | --- | --- |
//! | `build.rs` | one builder per frame (and `HELLO` phase); RFC 8785 bytes, schema-checked |
//! | `attention.rs` | the `SUBSCRIBE` attention filter's wire shape (§8, §17.2) |
//! | `error_body.rs` | the `error.schema.json` object of an `ERROR` frame (§19) |
//! | `challenge.rs` | the `HELLO` challenge on the wire and the transcript both sides sign (§6.3) |
//! | `received.rs` | a received `EVENT` frame with the exact bytes of its Event |
//! | `ids.rs` | frame IDs and nonces from the host's randomness |
//!
//! Frames built from values go through `wire::encode_frame` (the frame schema, every build).
//! The two frames that carry a signed document (`COMMAND`, `EVENT`) are spliced around the
//! document's bytes, so a Command is relayed exactly as signed and an Event exactly as stored
//! (§17.4: hashes and signatures are over JCS, the wire form need not be); their envelope is
//! written here and the whole frame is checked against the schema in debug builds and tests.

mod attention;
mod build;
mod challenge;
mod error_body;
mod ids;
mod received;

pub use attention::Attention;
pub use build::{
    Acknowledgement, SubscribeGroup, ack, command, error, event, hello_client_init,
    hello_client_response, hello_server_accept, hello_server_challenge, ping, subscribe,
};
pub use challenge::{challenge_from_wire, wire_challenge};
pub use error_body::{ErrorBody, MAX_ERROR_MESSAGE_CHARS};
pub use ids::{FrameIds, random_nonce};
pub use received::{ReceivedEvent, ReceivedServerFrame, parse_server_frame};

/// The wire `protocolVersion` (§21).
pub const PROTOCOL_VERSION: &str = missionweaveprotocol::PROTOCOL_VERSION;
