//! Engine benchmarks (issue 10 figures), printed as JSON lines:
//!
//! - `event_stage`: where `EventIssuer::issue` spends its time (build the Event value, JCS,
//!   Ed25519 signature, schema validation, signature re-verification, …), µs per Event;
//! - `engine_perform`: `Engine::perform` of already-verified Commands (signed and passed through
//!   `CommandIngress` before the clock starts), in memory, one thread: `mission.create` of N
//!   distinct Missions (N Groups), then N `mission.renew_coordinator` of one Mission (one Group,
//!   N Events). Performs/s overall, over the first and the last 10 % and their ratio; net bytes
//!   the store grew by per Event (Event, receipt and aggregates together);
//! - `engine_replay`: replay of the resulting log(s), Events/s, and the mean Event size;
//! - `ingress_perform`: six-stage verification alone against ingress + perform from wire bytes
//!   over the same signed Commands, and their ratio;
//! - `engine_perform_threads`: one engine shared by as many threads as cores, each with its own
//!   Groups, against one thread (wall clock).
//!
//! Run: `cargo run --release -p missionweaveprotocol-engine --example bench_engine [N]`
//! (N defaults to 100000). Deterministic inputs: fixed seeds, sequential Event IDs, one `now`.
//! Not a test: nothing here fails because the machine is slow.

use std::alloc::System;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use missionweaveprotocol::crypto::{SigningKey, split_signature};
use missionweaveprotocol::json::{self, Value, canonical_bytes, sha256_prefixed};
use missionweaveprotocol::registry::RegistryBuilder;
use missionweaveprotocol::schema::SchemaCatalog;
use missionweaveprotocol::{
    KeyRegistrySnapshot, Principal, PrincipalType, SignedDocumentCodec, SignedDocumentKind,
};
use missionweaveprotocol_engine::engine::Engine;
use missionweaveprotocol_engine::events::{EventDraft, EventIssuer, SequentialEventIds};
use missionweaveprotocol_engine::ingress::{
    AllowAllAuthorizerForTests, CommandIngress, VerifiedCommand,
};
use missionweaveprotocol_engine::mission;
use missionweaveprotocol_engine::store::{InMemoryStore, Store};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const ORG: &str = "urn:missionweaveprotocol:organization:acme";
const OWNER: &str = "urn:missionweaveprotocol:human:alice";
const COORDINATOR: &str = "urn:missionweaveprotocol:agent:planner";
const AUTHORITY: &str = "urn:missionweaveprotocol:service:group-authority";
/// 2026-07-15T09:30:00Z.
const NOW: UnixMillis = UnixMillis(1_784_107_800_000);
const NOW_TEXT: &str = "2026-07-15T09:30:00Z";
/// Each stage and each replay is repeated until this much clock time has passed: the CPU clock
/// advances in scheduler ticks (a few ms).
const MIN_SECONDS: f64 = 0.3;

struct Setup {
    owner: SigningKey,
    coordinator: SigningKey,
    authority: SigningKey,
    registry: Arc<KeyRegistrySnapshot>,
}

fn fail(what: &str, e: &dyn std::fmt::Display) -> ! {
    eprintln!("benchmark failed: {what}: {e}");
    std::process::exit(1)
}

fn setup() -> Setup {
    let owner = SigningKey::from_seed("urn:missionweaveprotocol:key:owner", &[21; 32]);
    let coordinator = SigningKey::from_seed("urn:missionweaveprotocol:key:planner", &[23; 32]);
    let authority = SigningKey::from_seed("urn:missionweaveprotocol:key:authority", &[30; 32]);
    let mut builder = RegistryBuilder::new(ORG);
    for (key, kind, id) in [
        (&owner, PrincipalType::Human, OWNER),
        (&coordinator, PrincipalType::Agent, COORDINATOR),
        (&authority, PrincipalType::Service, AUTHORITY),
    ] {
        builder
            .add_key(
                key.key_id(),
                Principal::new(kind, id),
                &key.public_key_bytes(),
                "2026-01-01T00:00:00Z",
            )
            .unwrap_or_else(|e| fail("registry", &e));
    }
    let (_, registry) = builder.build().unwrap_or_else(|e| fail("registry", &e));
    Setup {
        owner,
        coordinator,
        authority,
        registry: Arc::new(registry),
    }
}

fn group(i: u64) -> String {
    format!("urn:missionweaveprotocol:group:g{i}")
}

fn mission(i: u64) -> String {
    format!("urn:missionweaveprotocol:mission:m{i}")
}

/// Signs the Command and passes it through ingress: the "already verified" input of `perform`.
fn verified(s: &Setup, key: &SigningKey, text: &str) -> VerifiedCommand {
    let unsigned = json::parse(text.as_bytes()).unwrap_or_else(|e| fail("command", &e));
    let signed = SignedDocumentCodec::new()
        .sign(SignedDocumentKind::Command, &unsigned, key)
        .unwrap_or_else(|e| fail("command signing", &e.detail));
    CommandIngress::new(AllowAllAuthorizerForTests)
        .verify(&signed.bytes, &s.registry, NOW)
        .unwrap_or_else(|e| fail("ingress", &e))
}

fn create(s: &Setup, i: u64) -> VerifiedCommand {
    verified(s, &s.owner, &create_text(i))
}

/// The wire bytes of `create(i)`, signed by the MissionOwner.
fn create_bytes(s: &Setup, i: u64) -> Vec<u8> {
    let unsigned = json::parse(create_text(i).as_bytes()).unwrap_or_else(|e| fail("command", &e));
    SignedDocumentCodec::new()
        .sign(SignedDocumentKind::Command, &unsigned, &s.owner)
        .unwrap_or_else(|e| fail("command signing", &e.detail))
        .bytes
}

fn create_text(i: u64) -> String {
    format!(
        r#"{{"protocolVersion": "0.1", "actionId": "urn:missionweaveprotocol:action:create-{i}",
        "actor": {{"type": "human", "id": "{OWNER}"}}, "groupId": "{}", "kind": "mission.create",
        "correlationId": "urn:missionweaveprotocol:correlation:1", "issuedAt": "{NOW_TEXT}",
        "payload": {{"missionId": "{}", "objective": "Close the July books",
          "definitionOfDone": [{{"criterionId": "ledger-balanced", "description": "The ledger balances",
            "evidenceRequired": ["deterministic_test", "human_review"]}}],
          "budget": {{"modelTokenLimit": 100000, "currency": "EUR", "financialLimit": 50}},
          "deadline": "2026-08-01T00:00:00Z",
          "approvalPolicy": {{"finalHumanApproval": true, "highRiskExecutionApproval": true}},
          "coordinator": {{"agentId": "{COORDINATOR}", "agentCardVersion": 1,
            "leaseId": "urn:missionweaveprotocol:lease:coordinator-1"}},
          "mainConversationId": "urn:missionweaveprotocol:conversation:main"}}}}"#,
        group(i),
        mission(i)
    )
}

fn renew(s: &Setup, i: u64) -> VerifiedCommand {
    let text = format!(
        r#"{{"protocolVersion": "0.1", "actionId": "urn:missionweaveprotocol:action:renew-{i}",
        "actor": {{"type": "agent", "id": "{COORDINATOR}"}}, "sessionEpoch": 1,
        "membershipEpoch": 1, "coordinatorEpoch": 1, "groupId": "{}",
        "kind": "mission.renew_coordinator", "correlationId": "urn:missionweaveprotocol:correlation:1",
        "issuedAt": "{NOW_TEXT}", "payload": {{"leaseSeconds": 120}}}}"#,
        group(0)
    );
    verified(s, &s.coordinator, &text)
}

type BenchEngine = Engine<InMemoryStore, SigningKey, SequentialEventIds>;

/// An engine in which the Coordinator opened Session Epoch 1 (§6.3: Agent Commands are fenced
/// by their Session Epoch).
fn engine(s: &Setup) -> BenchEngine {
    let engine = Engine::new(
        InMemoryStore::new(),
        EventIssuer::new(
            Principal::new(PrincipalType::Service, AUTHORITY),
            s.authority.clone(),
        ),
        SequentialEventIds::new("urn:missionweaveprotocol:event:bench-"),
    );
    let open = format!(
        r#"{{"protocolVersion": "0.1", "actionId": "urn:missionweaveprotocol:action:session-open",
        "actor": {{"type": "service", "id": "{AUTHORITY}"}},
        "kind": "ext.missionweaveprotocol.identity.session_open",
        "correlationId": "urn:missionweaveprotocol:correlation:1",
        "issuedAt": "{NOW_TEXT}", "payload": {{"agentId": "{COORDINATOR}"}}}}"#
    );
    engine
        .perform(&verified(s, &s.authority, &open), NOW)
        .unwrap_or_else(|e| fail("session_open", &e));
    engine
}

/// A clock of this thread's CPU time where the OS offers one (Linux
/// `/proc/thread-self/schedstat`, nanoseconds on CPU), else wall time. The machine the figures
/// come from is shared, so wall time measures the neighbours as much as the engine; every
/// figure names the clock it used.
#[derive(Clone, Copy)]
struct Clock {
    cpu: bool,
    origin: Instant,
}

impl Clock {
    fn new() -> Self {
        Self {
            cpu: cpu_nanos().is_some(),
            origin: Instant::now(),
        }
    }

    fn name(self) -> &'static str {
        if self.cpu { "thread_cpu" } else { "wall" }
    }

    /// Seconds since an arbitrary origin.
    fn now(self) -> f64 {
        match (self.cpu, cpu_nanos()) {
            (true, Some(nanos)) => nanos as f64 / 1e9,
            _ => self.origin.elapsed().as_secs_f64(),
        }
    }
}

fn cpu_nanos() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// µs per call of `f`, called in batches of 100 for at least [`MIN_SECONDS`].
fn per_call<T>(mut f: impl FnMut() -> T) -> f64 {
    let clock = Clock::new();
    let start = clock.now();
    let mut calls = 0u32;
    while clock.now() - start < MIN_SECONDS {
        for _ in 0..100 {
            black_box(f());
        }
        calls += 100;
    }
    (clock.now() - start) * 1e6 / f64::from(calls)
}

fn stage(name: &str, micros: f64) {
    println!(
        "{{\"name\": \"event_stage\", \"stage\": \"{name}\", \"us_per_event\": {micros:.2}, \"per_second\": {:.0}, \"clock\": \"{}\"}}",
        1e6 / micros,
        Clock::new().name()
    );
}

/// The per-stage cost of signing one `mission.created` Event.
fn bench_stages(s: &Setup) {
    let command = create(s, 0);
    let mut payload = json::Object::new();
    payload.insert("missionId", Value::string(mission(0)));
    payload.insert("objective", Value::string("Close the July books"));
    let draft = EventDraft::for_command(&command, "mission.created", payload).at(group(0), 1, 1);
    let authority = Principal::new(PrincipalType::Service, AUTHORITY);
    let issuer = EventIssuer::new(authority.clone(), s.authority.clone());
    let checking = EventIssuer::new(authority, s.authority.clone()).with_self_check(true);
    let event_id = "urn:missionweaveprotocol:event:bench-1";
    let unsigned = issuer
        .unsigned(&draft, event_id, NOW)
        .unwrap_or_else(|e| fail("unsigned", &e));
    let signing_bytes = canonical_bytes(&unsigned).unwrap_or_else(|e| fail("jcs", &e));
    let codec = SignedDocumentCodec::new();
    let strict = codec
        .sign(SignedDocumentKind::Event, &unsigned, &s.authority)
        .unwrap_or_else(|e| fail("strict signing", &e.detail));
    let catalog = SchemaCatalog::embedded();
    let public_key = *s.authority.public_key();
    let parts = split_signature(&s.authority.sign(&signing_bytes))
        .unwrap_or_else(|e| fail("signature", &e));
    let mut ids = SequentialEventIds::new("urn:missionweaveprotocol:event:stage-");

    stage(
        "build_value",
        per_call(|| issuer.unsigned(&draft, event_id, NOW)),
    );
    stage("jcs_unsigned", per_call(|| canonical_bytes(&unsigned)));
    stage(
        "ed25519_sign",
        per_call(|| s.authority.sign(&signing_bytes)),
    );
    stage("jcs_signed", per_call(|| canonical_bytes(&strict.document)));
    stage(
        "sha256_x2",
        per_call(|| {
            (
                sha256_prefixed(&signing_bytes),
                sha256_prefixed(&strict.bytes),
            )
        }),
    );
    stage(
        "schema_validate",
        per_call(|| catalog.validate("event.schema.json", &strict.document)),
    );
    stage(
        "ed25519_reverify",
        per_call(|| public_key.verify_equation(&parts.r, &parts.s, &signing_bytes)),
    );
    stage(
        "issue_sign_once",
        per_call(|| issuer.issue(&draft, &mut ids, NOW)),
    );
    stage(
        "issue_self_checked",
        per_call(|| checking.issue(&draft, &mut ids, NOW)),
    );
    stage(
        "codec_sign_strict",
        per_call(|| codec.sign(SignedDocumentKind::Event, &unsigned, &s.authority)),
    );
    println!(
        "{{\"name\": \"event_bytes\", \"event\": \"mission.created\", \"bytes\": {}}}",
        strict.bytes.len()
    );

    // The engine's own steps before signing (`perform` = these + issue + commit).
    let store = InMemoryStore::new();
    stage(
        "mission_create_read",
        per_call(|| mission::read(&store, &command)),
    );
    let read = mission::read(&store, &command).unwrap_or_else(|e| fail("read", &e));
    stage(
        "mission_create_decide",
        per_call(|| mission::decide(&read, &command, NOW)),
    );
    let renewing = engine(s);
    renewing
        .perform(&command, NOW)
        .unwrap_or_else(|e| fail("mission.create", &e));
    let renewal = renew(s, u64::MAX);
    stage(
        "mission_renew_read",
        per_call(|| mission::read(renewing.store(), &renewal)),
    );
    let read = mission::read(renewing.store(), &renewal).unwrap_or_else(|e| fail("read", &e));
    stage(
        "mission_renew_decide",
        per_call(|| mission::decide(&read, &renewal, NOW)),
    );
}

/// Times `perform` over `commands`, printing overall, first-10 % and last-10 % rates.
fn bench_perform(name: &str, engine: &BenchEngine, commands: &[VerifiedCommand]) {
    let n = commands.len();
    let decile = (n / 10).max(1);
    let region = Region::new(GLOBAL);
    let mut marks = Vec::with_capacity(n / decile + 2);
    let clock = Clock::new();
    let wall = Instant::now();
    let start = clock.now();
    let mut events = 0usize;
    for (i, command) in commands.iter().enumerate() {
        if i % decile == 0 {
            marks.push(clock.now());
        }
        let performed = engine
            .perform(command, NOW)
            .unwrap_or_else(|e| fail(command.kind(), &e));
        events += performed.events.len();
    }
    let end = clock.now();
    let wall = wall.elapsed().as_secs_f64();
    let c = region.change();
    let net = c.bytes_allocated as f64 - c.bytes_deallocated as f64;
    let total = end - start;
    let first = marks[1] - marks[0];
    let last_start = marks[(n - decile) / decile];
    let last = end - last_start;
    let first_rate = decile as f64 / first;
    let last_rate = (n - (n - decile) / decile * decile) as f64 / last;
    println!(
        "{{\"name\": \"engine_perform\", \"command\": \"{name}\", \"commands\": {n}, \"events\": {events}, \"seconds\": {total:.3}, \"performs_per_second\": {:.0}, \"first_10pct_per_second\": {}, \"last_10pct_per_second\": {}, \"last_over_first\": {}, \"deciles_measurable\": {}, \"store_bytes_per_event\": {:.0}, \"clock\": \"{}\", \"wall_seconds\": {wall:.3}}}",
        n as f64 / total,
        json_number(first_rate, 0),
        json_number(last_rate, 0),
        json_number(last_rate / first_rate, 3),
        // The CPU clock advances in scheduler ticks: a decile under 50 ms (N too small) is
        // not a measurement.
        first.min(last) >= 0.05,
        net / events as f64,
        clock.name()
    );
}

/// `value` with `decimals`, or `null` when it is not finite (JSON has no infinity).
fn json_number(value: f64, decimals: usize) -> String {
    if value.is_finite() {
        format!("{value:.decimals$}")
    } else {
        "null".to_owned()
    }
}

/// Replays every listed Group's log in pages of 1,000 Events, as many passes as fit in
/// [`MIN_SECONDS`].
fn bench_replay(name: &str, engine: &BenchEngine, groups: &[String]) {
    let clock = Clock::new();
    let start = clock.now();
    let mut events = 0usize;
    let mut bytes = 0usize;
    let mut passes = 0u32;
    while passes == 0 || clock.now() - start < MIN_SECONDS {
        passes += 1;
        replay_once(engine, groups, &mut events, &mut bytes);
    }
    let seconds = clock.now() - start;
    println!(
        "{{\"name\": \"engine_replay\", \"log\": \"{name}\", \"groups\": {}, \"events\": {}, \"passes\": {passes}, \"events_per_second\": {:.0}, \"mean_event_bytes\": {:.0}, \"clock\": \"{}\"}}",
        groups.len(),
        events / passes as usize,
        events as f64 / seconds,
        bytes as f64 / events.max(1) as f64,
        clock.name()
    );
}

fn replay_once(engine: &BenchEngine, groups: &[String], events: &mut usize, bytes: &mut usize) {
    for group in groups {
        let mut after = 0;
        loop {
            let page = engine
                .store()
                .replay(group, after, 1_000)
                .unwrap_or_else(|e| fail("replay", &e));
            for record in &page.events {
                *bytes += black_box(record.body.len());
            }
            *events += page.events.len();
            match page.continuation {
                Some(next) => after = next,
                None => break,
            }
        }
    }
}

/// Ingress + perform from wire bytes against six-stage verification alone, over the same `m`
/// signed `mission.create` Commands in the same run (issue target: ratio ≥ 0.8).
fn bench_ingress(s: &Setup, m: u64) {
    let bytes: Vec<Vec<u8>> = (0..m).map(|i| create_bytes(s, 1_000_000 + i)).collect();
    let codec = SignedDocumentCodec::new();
    let clock = Clock::new();
    let start = clock.now();
    for b in &bytes {
        black_box(
            codec
                .verify(SignedDocumentKind::Command, b, &s.registry)
                .unwrap_or_else(|e| fail("verify", &e)),
        );
    }
    let verify_rate = m as f64 / (clock.now() - start);
    let engine = engine(s);
    let ingress = CommandIngress::new(AllowAllAuthorizerForTests);
    let start = clock.now();
    for b in &bytes {
        let command = ingress
            .verify(b, &s.registry, NOW)
            .unwrap_or_else(|e| fail("ingress", &e));
        black_box(
            engine
                .perform(&command, NOW)
                .unwrap_or_else(|e| fail("perform", &e)),
        );
    }
    let perform_rate = m as f64 / (clock.now() - start);
    println!(
        "{{\"name\": \"ingress_perform\", \"command\": \"mission.create\", \"commands\": {m}, \"verify_only_per_second\": {verify_rate:.0}, \"ingress_and_perform_per_second\": {perform_rate:.0}, \"ratio\": {:.3}, \"clock\": \"{}\"}}",
        perform_rate / verify_rate,
        clock.name()
    );
}

/// `perform` of already-verified `mission.create` Commands of distinct Groups from `threads`
/// threads sharing one engine, against one thread, by wall clock (each thread its own Groups:
/// Commands of different Groups never contend, §15.2).
fn bench_threads(s: &Setup, per_thread: u64, threads: u64) {
    let run = |threads: u64| -> f64 {
        let engine = engine(s);
        let batches: Vec<Vec<VerifiedCommand>> = (0..threads)
            .map(|t| {
                (0..per_thread)
                    .map(|i| create(s, 2_000_000 + t * per_thread + i))
                    .collect()
            })
            .collect();
        let wall = Instant::now();
        std::thread::scope(|scope| {
            for batch in &batches {
                let engine = &engine;
                scope.spawn(move || {
                    for command in batch {
                        engine
                            .perform(command, NOW)
                            .unwrap_or_else(|e| fail("perform", &e));
                    }
                });
            }
        });
        (threads * per_thread) as f64 / wall.elapsed().as_secs_f64()
    };
    let one = run(1);
    let many = run(threads);
    println!(
        "{{\"name\": \"engine_perform_threads\", \"command\": \"mission.create\", \"threads\": {threads}, \"commands_per_thread\": {per_thread}, \"one_thread_per_second\": {one:.0}, \"threads_per_second\": {many:.0}, \"speedup\": {:.2}, \"clock\": \"wall\"}}",
        many / one
    );
}

fn main() {
    let n: u64 = match std::env::args().nth(1) {
        None => 100_000,
        Some(text) => text.parse().unwrap_or_else(|e| fail("N", &e)),
    };
    if n < 10 {
        fail("N", &"at least 10 Commands");
    }
    let s = setup();
    bench_stages(&s);
    bench_ingress(&s, (n / 10).clamp(1_000, 20_000));
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get() as u64);
    bench_threads(&s, (n / 10).clamp(1_000, 20_000), cores.max(2));

    let creates: Vec<VerifiedCommand> = (0..n).map(|i| create(&s, i)).collect();
    let engine_a = engine(&s);
    bench_perform("mission.create", &engine_a, &creates);
    drop(creates);
    let groups: Vec<String> = (0..n).map(group).collect();
    bench_replay("mission.create", &engine_a, &groups);
    drop(engine_a);

    let engine_b = engine(&s);
    engine_b
        .perform(&create(&s, 0), NOW)
        .unwrap_or_else(|e| fail("mission.create", &e));
    let renewals: Vec<VerifiedCommand> = (0..n).map(|i| renew(&s, i)).collect();
    bench_perform("mission.renew_coordinator", &engine_b, &renewals);
    bench_replay("mission.renew_coordinator", &engine_b, &[group(0)]);
}
