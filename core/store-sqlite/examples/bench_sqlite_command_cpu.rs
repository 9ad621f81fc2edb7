//! Where one Command's CPU goes on the SQLite store (issue 11, "Performance"): one submitter
//! (or `--threads T`),
//! `mission.create` of distinct Missions (pre-signed and pre-verified before the clock starts),
//! through `Engine<GroupCommit<_>>` as `bench_sqlite_concurrent` runs it, on
//!
//! - `file`: a SQLite file (WAL, `synchronous=FULL`, the default read pool);
//! - `sqlite_memory`: `SqliteStore::in_memory()` (no fsync, no read pool);
//! - `authority_in_memory`: the engine's `InMemoryStore` (no SQLite at all).
//!
//! Each line gives the process CPU per Command and the wall time spent inside each store
//! method per Command (with one thread a read's wall time is its CPU time; a commit's includes
//! its fsync; with several, waits too), with the calls per Command. JSON lines.
//!
//! Run: `cargo run --release -p missionweaveprotocol-store-sqlite --example
//! bench_sqlite_command_cpu -- [--commands N] [--threads T]
//! [--store file|sqlite_memory|authority_in_memory] [--keep DIR] [--page-size BYTES]`
//! (`--page-size`: of the new file store, default `DEFAULT_PAGE_SIZE`)
//! (default 2,000 Commands, every store). For a profile, build with debug symbols
//! (`cargo build --profile bench --example bench_sqlite_command_cpu`) and run one store under
//! `perf record -g` or `valgrind --tool=callgrind`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json;
use missionweaveprotocol::registry::RegistryBuilder;
use missionweaveprotocol::{
    KeyRegistrySnapshot, Principal, PrincipalType, SignedDocumentCodec, SignedDocumentKind,
};
use missionweaveprotocol_engine::engine::Engine;
use missionweaveprotocol_engine::events::{EventIssuer, SequentialEventIds};
use missionweaveprotocol_engine::ingress::{
    AllowAllAuthorizerForTests, CommandIngress, VerifiedCommand,
};
use missionweaveprotocol_engine::store::{
    Aggregate, AggregateKey, DecodedCache, GroupCommit, GroupHead, InMemoryStore, Receipt,
    ReceiptKey, ReplayPage, SnapshotPointer, Store, StoreError, Transaction,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use missionweaveprotocol_store_sqlite::{DEFAULT_PAGE_SIZE, SqliteOptions, SqliteStore};

const ORG: &str = "urn:missionweaveprotocol:organization:acme";
const OWNER: &str = "urn:missionweaveprotocol:human:alice";
const COORDINATOR: &str = "urn:missionweaveprotocol:agent:planner";
const AUTHORITY: &str = "urn:missionweaveprotocol:service:group-authority";
/// 2026-07-15T09:30:00Z.
const NOW: UnixMillis = UnixMillis(1_784_107_800_000);
const NOW_TEXT: &str = "2026-07-15T09:30:00Z";

fn fail(what: &str, e: &dyn std::fmt::Display) -> ! {
    eprintln!("benchmark failed: {what}: {e}");
    std::process::exit(1)
}

fn registry(owner: &SigningKey, authority: &SigningKey) -> Arc<KeyRegistrySnapshot> {
    let mut builder = RegistryBuilder::new(ORG);
    for (key, kind, id) in [
        (owner, PrincipalType::Human, OWNER),
        (authority, PrincipalType::Service, AUTHORITY),
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
    Arc::new(builder.build().unwrap_or_else(|e| fail("registry", &e)).1)
}

/// The same `mission.create` as `bench_sqlite_concurrent`, signed and verified.
fn create(owner: &SigningKey, registry: &Arc<KeyRegistrySnapshot>, i: u64) -> VerifiedCommand {
    let text = format!(
        r#"{{"protocolVersion": "0.1", "actionId": "urn:missionweaveprotocol:action:create-{i}",
        "actor": {{"type": "human", "id": "{OWNER}"}},
        "groupId": "urn:missionweaveprotocol:group:g{i}", "kind": "mission.create",
        "correlationId": "urn:missionweaveprotocol:correlation:1", "issuedAt": "{NOW_TEXT}",
        "payload": {{"missionId": "urn:missionweaveprotocol:mission:m{i}",
          "objective": "Close the July books",
          "definitionOfDone": [{{"criterionId": "ledger-balanced", "description": "The ledger balances",
            "evidenceRequired": ["deterministic_test", "human_review"]}}],
          "budget": {{"modelTokenLimit": 100000, "currency": "EUR", "financialLimit": 50}},
          "deadline": "2026-08-01T00:00:00Z",
          "approvalPolicy": {{"finalHumanApproval": true, "highRiskExecutionApproval": true}},
          "coordinator": {{"agentId": "{COORDINATOR}", "agentCardVersion": 1,
            "leaseId": "urn:missionweaveprotocol:lease:coordinator-1"}},
          "mainConversationId": "urn:missionweaveprotocol:conversation:main"}}}}"#
    );
    let unsigned = json::parse(text.as_bytes()).unwrap_or_else(|e| fail("command", &e));
    let bytes = SignedDocumentCodec::new()
        .sign(SignedDocumentKind::Command, &unsigned, owner)
        .unwrap_or_else(|e| fail("command signing", &e.detail))
        .bytes;
    CommandIngress::new(AllowAllAuthorizerForTests)
        .verify(&bytes, registry, NOW)
        .unwrap_or_else(|e| fail("ingress", &e))
}

/// Wall nanoseconds and calls per store method.
#[derive(Debug, Default)]
struct Timings {
    nanos: [AtomicU64; METHODS.len()],
    calls: [AtomicU64; METHODS.len()],
}

const METHODS: [&str; 7] = [
    "commit",
    "commit_many",
    "aggregate",
    "list",
    "receipt",
    "dedup",
    "head",
];

/// A store that times every call to the store it wraps.
#[derive(Debug)]
struct Timed<S> {
    inner: S,
    timings: Timings,
}

impl<S> Timed<S> {
    fn time<T>(&self, method: usize, call: impl FnOnce(&S) -> T) -> T {
        let start = Instant::now();
        let value = call(&self.inner);
        let nanos = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.timings.nanos[method].fetch_add(nanos, Ordering::Relaxed);
        self.timings.calls[method].fetch_add(1, Ordering::Relaxed);
        value
    }
}

impl<S: Store> Store for Timed<S> {
    fn commit(&self, tx: Transaction) -> Result<(), StoreError> {
        self.time(0, |s| s.commit(tx))
    }
    fn commit_many(&self, txs: Vec<Transaction>) -> Vec<Result<(), StoreError>> {
        self.time(1, |s| s.commit_many(txs))
    }
    fn aggregate(&self, key: &AggregateKey) -> Result<Option<Aggregate>, StoreError> {
        self.time(2, |s| s.aggregate(key))
    }
    fn list(&self, kind: &str, id_prefix: &str) -> Result<Vec<(String, Aggregate)>, StoreError> {
        self.time(3, |s| s.list(kind, id_prefix))
    }
    fn receipt(&self, key: &ReceiptKey) -> Result<Option<Receipt>, StoreError> {
        self.time(4, |s| s.receipt(key))
    }
    fn dedup(&self, key: &ReceiptKey, signing_hash: &str) -> Result<Option<Receipt>, StoreError> {
        self.time(5, |s| s.dedup(key, signing_hash))
    }
    fn head(&self, group: &str) -> Result<GroupHead, StoreError> {
        self.time(6, |s| s.head(group))
    }
    fn replay(&self, group: &str, after: u64, limit: usize) -> Result<ReplayPage, StoreError> {
        self.inner.replay(group, after, limit)
    }
    fn decoded_cache(&self) -> Option<&DecodedCache> {
        self.inner.decoded_cache()
    }
    fn archive_before(
        &self,
        group: &str,
        before: u64,
        snapshot: SnapshotPointer,
    ) -> Result<(), StoreError> {
        self.inner.archive_before(group, before, snapshot)
    }
}

/// This process's CPU seconds (user + system) from `/proc/self/stat` (100 ticks per second).
fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

fn run<S: Store + Sync>(
    name: &str,
    store: S,
    commands: &[VerifiedCommand],
    threads: usize,
    authority: &SigningKey,
) {
    let engine = Engine::new(
        GroupCommit::new(Timed {
            inner: store,
            timings: Timings::default(),
        }),
        EventIssuer::new(
            Principal::new(PrincipalType::Service, AUTHORITY),
            authority.clone(),
        ),
        SequentialEventIds::new("urn:missionweaveprotocol:event:cpu-"),
    );
    let n = commands.len() as f64;
    let cpu = process_cpu_seconds();
    let start = Instant::now();
    // Thread `t` performs Commands t, t + threads, …; all start together.
    let barrier = std::sync::Barrier::new(threads);
    std::thread::scope(|scope| {
        for t in 0..threads {
            let (engine, barrier) = (&engine, &barrier);
            scope.spawn(move || {
                barrier.wait();
                for command in commands.iter().skip(t).step_by(threads) {
                    engine
                        .perform(command, NOW)
                        .unwrap_or_else(|e| fail("perform", &e));
                }
            });
        }
    });
    let wall = start.elapsed().as_secs_f64();
    let cpu = match (cpu, process_cpu_seconds()) {
        (Some(before), Some(after)) => format!("{:.0}", (after - before) * 1e6 / n),
        _ => "null".to_owned(),
    };
    let timings = &engine.store().inner().timings;
    let methods: Vec<String> = METHODS
        .iter()
        .enumerate()
        .filter(|(i, _)| timings.calls[*i].load(Ordering::Relaxed) > 0)
        .map(|(i, method)| {
            format!(
                "\"{method}\": {{\"calls_per_command\": {:.2}, \"us_per_command\": {:.1}}}",
                timings.calls[i].load(Ordering::Relaxed) as f64 / n,
                timings.nanos[i].load(Ordering::Relaxed) as f64 / 1e3 / n
            )
        })
        .collect();
    println!(
        "{{\"name\": \"sqlite_command_cpu\", \"command\": \"mission.create\", \"store\": \"{name}\", \"threads\": {threads}, \"commands\": {n}, \"wall_us_per_command\": {:.1}, \"cpu_us_per_command\": {cpu}, \"store_calls\": {{{}}}, \"mean_batch\": {:.1}, \"clock\": \"wall per call, process CPU\"}}",
        wall * 1e6 / n,
        methods.join(", "),
        engine.store().stats().mean_batch()
    );
}

fn main() {
    let mut n = 2_000u64;
    let mut only: Option<String> = None;
    let mut threads = 1usize;
    let mut keep: Option<std::path::PathBuf> = None;
    let mut page_size = DEFAULT_PAGE_SIZE;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .unwrap_or_else(|| fail("arguments", &format!("{flag} needs a value")));
        match flag.as_str() {
            "--commands" => n = value.parse().unwrap_or_else(|e| fail("--commands", &e)),
            "--store" => only = Some(value),
            "--keep" => keep = Some(value.into()),
            "--page-size" => {
                page_size = value.parse().unwrap_or_else(|e| fail("--page-size", &e));
            }
            "--threads" => {
                threads = value
                    .parse::<usize>()
                    .unwrap_or_else(|e| fail("--threads", &e))
                    .max(1);
            }
            other => fail("arguments", &format!("unknown option {other}")),
        }
    }
    let owner = SigningKey::from_seed("urn:missionweaveprotocol:key:owner", &[21; 32]);
    let authority = SigningKey::from_seed("urn:missionweaveprotocol:key:authority", &[30; 32]);
    let registry = registry(&owner, &authority);
    let commands: Vec<VerifiedCommand> = (0..n).map(|i| create(&owner, &registry, i)).collect();
    let temp = tempfile::tempdir().unwrap_or_else(|e| fail("tempdir", &e));
    // `--keep DIR`: the file store stays there afterwards (to inspect its pages).
    let dir = keep.unwrap_or_else(|| temp.path().to_owned());
    let wanted = |name: &str| only.as_deref().is_none_or(|o| o == name);
    if wanted("file") {
        let options = SqliteOptions {
            page_size,
            ..SqliteOptions::default()
        };
        let store = SqliteStore::open_with(dir.join("cpu.sqlite"), &options)
            .unwrap_or_else(|e| fail("open", &e));
        run("file", store, &commands, threads, &authority);
    }
    if wanted("sqlite_memory") {
        let store = SqliteStore::in_memory().unwrap_or_else(|e| fail("open", &e));
        run("sqlite_memory", store, &commands, threads, &authority);
    }
    if wanted("authority_in_memory") {
        run(
            "authority_in_memory",
            InMemoryStore::new(),
            &commands,
            threads,
            &authority,
        );
    }
}
