//! The cross-host corpus of bad input (`tests/errors/gateway-frames.json`): the sans-IO
//! machine every host drives — the Rust server, the Node gateway host, the Python
//! `GroupGateway` — answers each case with exactly the frames and close code written there
//! (`frameId` and `error.occurredAt` differ by run and are normalized). The Node suite checks
//! the same file against the Rust server and the Node host over sockets; this checks the
//! machine itself, so a change of answer shows here first.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::PathBuf;

use common::*;
use missionweaveprotocol_gateway::server::Output;
use serde_json::Value;

fn corpus() -> Value {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/errors/gateway-frames.json");
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

fn normalized(bytes: &[u8]) -> Value {
    let mut frame: Value = serde_json::from_slice(bytes).unwrap();
    let object = frame.as_object_mut().unwrap();
    object.insert("frameId".into(), Value::String("<frame>".into()));
    if let Some(error) = object.get_mut("error").and_then(Value::as_object_mut) {
        error.remove("occurredAt");
    }
    frame
}

#[test]
fn every_case_of_the_corpus_is_answered_as_written() {
    let corpus = corpus();
    let cases = corpus["cases"].as_array().unwrap();
    assert!(cases.len() >= 9);
    let world = World::new();
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let mut connection = world.connection();
        if let Some(text) = case.get("text").and_then(Value::as_str) {
            connection.on_text(text.as_bytes(), NOW);
        } else if let Some(raw) = case.get("textHex").and_then(Value::as_str) {
            connection.on_text(&hex(raw), NOW);
        } else if case.get("binaryHex").is_some() {
            connection.on_binary(NOW);
        } else if case.get("oversizedBytes").is_some() {
            connection.on_too_big(NOW);
        } else {
            panic!("{name}: no input");
        }
        let mut frames = Vec::new();
        let mut close = Value::String("open".into());
        while let Some(output) = connection.poll_output(NOW) {
            match output {
                Output::Frame(bytes) => frames.push(normalized(&bytes)),
                Output::Close(c) => close = Value::from(c.code),
            }
        }
        assert_eq!(Value::Array(frames), case["frames"], "{name}: frames");
        assert_eq!(close, case["close"], "{name}: close");
    }
}
