//! `examples/connect.rs` run as a process against the TLS test server: the program a user
//! copies connects with a CA file, subscribes, sends one Command and prints its Event.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::PathBuf;

use missionweaveprotocol::schema_formats::encode_base64url;
use support::{COORDINATOR, GROUP, MAIN, TestServer, World, within};

/// `target/<profile>/examples/connect`, built by `cargo test` beside this test.
fn example() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile = exe.parent().unwrap().parent().unwrap();
    profile.join("examples").join("connect")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_connect_example_sends_a_command_and_prints_its_event() {
    let program = example();
    assert!(
        program.exists(),
        "{} (built by cargo test)",
        program.display()
    );
    let world = World::new();
    let server = TestServer::start(&world).await;
    let dir = std::env::temp_dir().join(format!("mwp-client-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca = dir.join("dev-cert.pem");
    std::fs::write(&ca, &server.ca_pem).unwrap();
    let registry = dir.join("registry.json");
    std::fs::write(&registry, &world.registry_bytes).unwrap();
    let command = dir.join("command.json");
    std::fs::write(
        &command,
        format!(
            r#"{{"protocolVersion": "0.1", "actionId": "{}",
            "actor": {{"type": "agent", "id": "{COORDINATOR}"}}, "membershipEpoch": 1,
            "groupId": "{GROUP}", "kind": "message.post",
            "correlationId": "urn:missionweaveprotocol:correlation:example",
            "payload": {{"messageId": "urn:missionweaveprotocol:message:example",
              "conversationId": "{MAIN}", "content": [{{"type": "text", "text": "hello"}}]}}}}"#,
            world.action()
        ),
    )
    .unwrap();
    let head = world.head();
    let args = vec![
        server.url.clone(),
        ca.display().to_string(),
        registry.display().to_string(),
        COORDINATOR.to_owned(),
        world.key(COORDINATOR).key_id().to_owned(),
        encode_base64url(&[23; 32]),
        support::AUTHORITY.to_owned(),
        GROUP.to_owned(),
        command.display().to_string(),
    ];
    let output = within(
        "the example",
        tokio::task::spawn_blocking(move || {
            std::process::Command::new(program)
                .args(args)
                .output()
                .unwrap()
        }),
    )
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let applied = format!("at {GROUP}#{}", head + 1);
    assert!(
        stdout.contains("applied: urn:missionweaveprotocol:event:"),
        "{stdout}"
    );
    assert!(stdout.contains(&applied), "{stdout}");
    assert_eq!(world.head(), head + 1);
    // Every Event of the Group was printed, in order.
    let sequences: Vec<u64> = stdout
        .lines()
        .skip(1)
        .filter_map(|line| line.split(' ').next()?.parse().ok())
        .collect();
    assert_eq!(sequences, (1..=head + 1).collect::<Vec<_>>(), "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}
