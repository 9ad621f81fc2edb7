//! Durable SQLite figures under concurrency (issue 11, "Performance"), printed as JSON lines,
//! wall clock (the machine is shared, so they are indications, not guarantees):
//!
//! - `sqlite_group_commit_engine`: one engine over a SQLite file (WAL, `synchronous=FULL`)
//!   wrapped in `GroupCommit`, T submitter threads (default 64) each performing
//!   `mission.create` of distinct Missions (pre-signed, pre-verified before the clock starts,
//!   as `bench_engine` does): Commands/s, the mean batch size, process CPU per Command and
//!   the store reads per Command; R rounds (default 3), each on a fresh file, alternating with
//!   the raw floor; then the same Commands on `GroupCommit<InMemoryStore>` as a CPU reference;
//! - `sqlite_group_commit_core_bytes`: the same through `Core::perform_bytes` from
//!   wire bytes (ingress verification included);
//! - `sqlite_raw_floor`: the very rows the engine's run wrote (receipts, Events, Group heads,
//!   aggregates: the recorded write sets, byte for byte), written by one thread with plain
//!   rusqlite in the same batches into a fresh file with the same schema and settings, no reads
//!   and no checks: transactions/s, and the engine/raw ratio (the issue wants ≥ 0.5), with
//!   the medians over the rounds in `sqlite_engine_over_raw`;
//! - `sqlite_single_submitter`: latency of one `perform` on the file store, p50 and p99 (and,
//!   to compare, without read connections and on `:memory:`);
//! - `sqlite_flat`: `--flat N` Commands through `Core::perform_bytes` by T threads,
//!   the rate over the first and the last 10 % and their ratio (the issue wants ≥ 0.8 for
//!   N = 1,000,000); the middle 80 % are signed on the fly and only fill the store;
//! - `sqlite_replay`: Events/s replayed from the file: one long Group log (`--replay N`
//!   `mission.renew_coordinator` Events) and the many short logs of the concurrent run.
//!
//! Run: `cargo run --release -p missionweaveprotocol-store-sqlite --example
//! bench_sqlite_concurrent -- [--commands N] [--rounds R] [--threads T] [--latency N] [--flat N]
//! [--replay N] [--dir PATH] [--page-size BYTES]` (`--page-size`: of every new file, default
//! `DEFAULT_PAGE_SIZE`). Deterministic inputs (fixed seeds, sequential IDs, one `now`).
//! Not a test: nothing here fails because the disk is slow.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};
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
use missionweaveprotocol_engine::service::Core;
use missionweaveprotocol_engine::store::{
    Aggregate, AggregateKey, DecodedCache, GroupCommit, GroupHead, InMemoryStore, Receipt,
    ReceiptKey, ReplayPage, SnapshotPointer, Store, StoreError, Transaction,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use missionweaveprotocol_store_sqlite::{DEFAULT_PAGE_SIZE, SqliteOptions, SqliteStore};
use rusqlite::params;

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

struct Setup {
    owner: SigningKey,
    coordinator: SigningKey,
    authority: SigningKey,
    registry: Arc<KeyRegistrySnapshot>,
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

fn create_text(i: u64) -> String {
    format!(
        r#"{{"protocolVersion": "0.1", "actionId": "urn:missionweaveprotocol:action:create-{i}",
        "actor": {{"type": "human", "id": "{OWNER}"}}, "groupId": "{}", "kind": "mission.create",
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
          "mainConversationId": "urn:missionweaveprotocol:conversation:main"}}}}"#,
        group(i)
    )
}

/// Signed wire bytes of `text` by `key`.
fn signed(key: &SigningKey, text: &str) -> Vec<u8> {
    let unsigned = json::parse(text.as_bytes()).unwrap_or_else(|e| fail("command", &e));
    SignedDocumentCodec::new()
        .sign(SignedDocumentKind::Command, &unsigned, key)
        .unwrap_or_else(|e| fail("command signing", &e.detail))
        .bytes
}

/// Passed through ingress: the "already verified" input of `perform`.
fn verified(s: &Setup, bytes: &[u8]) -> VerifiedCommand {
    CommandIngress::new(AllowAllAuthorizerForTests)
        .verify(bytes, &s.registry, NOW)
        .unwrap_or_else(|e| fail("ingress", &e))
}

fn create_bytes(s: &Setup, i: u64) -> Vec<u8> {
    signed(&s.owner, &create_text(i))
}

fn create(s: &Setup, i: u64) -> VerifiedCommand {
    verified(s, &create_bytes(s, i))
}

/// A store that keeps a copy of every batch it commits (the raw floor writes the same rows).
#[derive(Debug)]
struct Recording<S> {
    inner: S,
    batches: Mutex<Vec<Vec<Transaction>>>,
    /// Point reads (`aggregate`, `receipt`, `dedup`, `head`) and range reads (`list`) the
    /// engine made.
    point_reads: AtomicU64,
    range_reads: AtomicU64,
}

impl<S> Recording<S> {
    fn new(inner: S) -> Self {
        Self {
            inner,
            batches: Mutex::new(Vec::new()),
            point_reads: AtomicU64::new(0),
            range_reads: AtomicU64::new(0),
        }
    }

    fn point(&self) {
        self.point_reads.fetch_add(1, Ordering::Relaxed);
    }

    fn take(&self) -> Vec<Vec<Transaction>> {
        std::mem::take(&mut *self.batches.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn record(&self, batch: Vec<Transaction>) {
        self.batches
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(batch);
    }
}

impl<S: Store> Store for Recording<S> {
    fn commit(&self, tx: Transaction) -> Result<(), StoreError> {
        self.record(vec![tx.clone()]);
        self.inner.commit(tx)
    }
    fn commit_many(&self, txs: Vec<Transaction>) -> Vec<Result<(), StoreError>> {
        self.record(txs.clone());
        self.inner.commit_many(txs)
    }
    fn aggregate(&self, key: &AggregateKey) -> Result<Option<Aggregate>, StoreError> {
        self.point();
        self.inner.aggregate(key)
    }
    fn list(&self, kind: &str, id_prefix: &str) -> Result<Vec<(String, Aggregate)>, StoreError> {
        self.range_reads.fetch_add(1, Ordering::Relaxed);
        self.inner.list(kind, id_prefix)
    }
    fn receipt(&self, key: &ReceiptKey) -> Result<Option<Receipt>, StoreError> {
        self.point();
        self.inner.receipt(key)
    }
    fn dedup(&self, key: &ReceiptKey, signing_hash: &str) -> Result<Option<Receipt>, StoreError> {
        self.point();
        self.inner.dedup(key, signing_hash)
    }
    fn head(&self, group: &str) -> Result<GroupHead, StoreError> {
        self.point();
        self.inner.head(group)
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

fn issuer(s: &Setup) -> EventIssuer<SigningKey> {
    EventIssuer::new(
        Principal::new(PrincipalType::Service, AUTHORITY),
        s.authority.clone(),
    )
}

/// `--page-size`: of every new file the benchmark opens (default `DEFAULT_PAGE_SIZE`).
static PAGE_SIZE: std::sync::OnceLock<u32> = std::sync::OnceLock::new();

fn options() -> SqliteOptions {
    SqliteOptions {
        page_size: *PAGE_SIZE.get_or_init(|| DEFAULT_PAGE_SIZE),
        ..SqliteOptions::default()
    }
}

fn open(path: &Path) -> SqliteStore {
    SqliteStore::open_with(path, &options()).unwrap_or_else(|e| fail("open", &e))
}

/// Runs `work(thread, item)` over `shares` (one per thread), all threads released together;
/// the wall seconds from release to the last thread's end.
fn run_threads<T: Sync>(shares: &[Vec<T>], work: impl Fn(&T) + Sync) -> f64 {
    let barrier = Barrier::new(shares.len() + 1);
    let mut start = Instant::now();
    std::thread::scope(|scope| {
        for share in shares {
            let (barrier, work) = (&barrier, &work);
            scope.spawn(move || {
                barrier.wait();
                for item in share {
                    work(item);
                }
            });
        }
        barrier.wait();
        start = Instant::now();
    });
    start.elapsed().as_secs_f64()
}

/// `items` dealt round-robin into `threads` shares.
fn deal<T>(items: Vec<T>, threads: usize) -> Vec<Vec<T>> {
    let mut shares: Vec<Vec<T>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, item) in items.into_iter().enumerate() {
        shares[i % threads].push(item);
    }
    shares
}

struct Args {
    commands: u64,
    rounds: u32,
    threads: usize,
    latency: u64,
    flat: u64,
    replay: u64,
    dir: Option<PathBuf>,
}

fn args() -> Args {
    let mut parsed = Args {
        commands: 6_400,
        rounds: 3,
        threads: 64,
        latency: 2_000,
        flat: 20_000,
        replay: 10_000,
        dir: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it
            .next()
            .unwrap_or_else(|| fail("arguments", &format!("{flag} needs a value")));
        let number = || -> u64 { value.parse().unwrap_or_else(|e| fail(&flag, &e)) };
        match flag.as_str() {
            "--commands" => parsed.commands = number(),
            "--rounds" => parsed.rounds = u32::try_from(number().max(1)).unwrap_or(3),
            "--threads" => parsed.threads = usize::try_from(number().max(1)).unwrap_or(64),
            "--latency" => parsed.latency = number(),
            "--flat" => parsed.flat = number(),
            "--replay" => parsed.replay = number(),
            "--dir" => parsed.dir = Some(PathBuf::from(&value)),
            "--page-size" => {
                let size = u32::try_from(number()).unwrap_or_else(|e| fail(&flag, &e));
                PAGE_SIZE.get_or_init(|| size);
            }
            other => fail("arguments", &format!("unknown option {other}")),
        }
    }
    parsed
}

/// This process's CPU seconds (user + system, all threads) where Linux reports them
/// (`/proc/self/stat`, 100 ticks per second), to tell a CPU-bound run from an I/O-bound one.
fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesized command name: state is field 3, utime 14, stime 15.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// CPU µs per item between two readings, or `null`.
fn cpu_per_item(before: Option<f64>, items: u64) -> String {
    match (before, process_cpu_seconds()) {
        (Some(before), Some(after)) => format!("{:.0}", (after - before) * 1e6 / items as f64),
        _ => "null".to_owned(),
    }
}

/// One round: the engine over `GroupCommit<Recording<SqliteStore>>` on a fresh file,
/// Commands/s and the mean batch; returns the recorded batches and the rate.
fn bench_engine(
    s: &Setup,
    path: &Path,
    shares: &[Vec<VerifiedCommand>],
    round: u32,
) -> (Vec<Vec<Transaction>>, f64) {
    let n: u64 = shares.iter().map(|share| share.len() as u64).sum();
    let engine = Engine::new(
        GroupCommit::new(Recording::new(open(path))),
        issuer(s),
        SequentialEventIds::new("urn:missionweaveprotocol:event:bench-"),
    );
    let cpu = process_cpu_seconds();
    let seconds = run_threads(shares, |command| {
        engine
            .perform(command, NOW)
            .unwrap_or_else(|e| fail("perform", &e));
    });
    let cpu = cpu_per_item(cpu, n);
    let stats = engine.store().stats();
    let rate = n as f64 / seconds;
    println!(
        "{{\"name\": \"sqlite_group_commit_engine\", \"round\": {round}, \"command\": \"mission.create\", \"store\": \"file_wal_full\", \"threads\": {}, \"commands\": {n}, \"seconds\": {seconds:.3}, \"commands_per_second\": {rate:.0}, \"batches\": {}, \"mean_batch\": {:.1}, \"largest_batch\": {}, \"cpu_us_per_command\": {cpu}, \"point_reads_per_command\": {:.2}, \"range_reads_per_command\": {:.2}, \"clock\": \"wall\"}}",
        shares.len(),
        stats.batches,
        stats.mean_batch(),
        stats.largest_batch,
        engine.store().inner().point_reads.load(Ordering::Relaxed) as f64 / n as f64,
        engine.store().inner().range_reads.load(Ordering::Relaxed) as f64 / n as f64
    );
    if round == 0 {
        bench_replay_groups(engine.store(), n);
    }
    (engine.store().inner().take(), rate)
}

/// The same Commands on `GroupCommit<InMemoryStore>` (no SQLite, no disk): what the engine
/// itself costs per Command under the same threads, beside the file store's figure.
fn bench_engine_in_memory(s: &Setup, shares: &[Vec<VerifiedCommand>]) {
    let n: u64 = shares.iter().map(|share| share.len() as u64).sum();
    let engine = Engine::new(
        GroupCommit::new(InMemoryStore::new()),
        issuer(s),
        SequentialEventIds::new("urn:missionweaveprotocol:event:bench-"),
    );
    let cpu = process_cpu_seconds();
    let seconds = run_threads(shares, |command| {
        engine
            .perform(command, NOW)
            .unwrap_or_else(|e| fail("perform", &e));
    });
    println!(
        "{{\"name\": \"sqlite_group_commit_engine\", \"reference\": \"no SQLite\", \"command\": \"mission.create\", \"store\": \"authority_in_memory\", \"threads\": {}, \"commands\": {n}, \"seconds\": {seconds:.3}, \"commands_per_second\": {:.0}, \"mean_batch\": {:.1}, \"cpu_us_per_command\": {}, \"clock\": \"wall\"}}",
        shares.len(),
        n as f64 / seconds,
        engine.store().stats().mean_batch(),
        cpu_per_item(cpu, n)
    );
}

/// The same Commands through `Core::perform_bytes` (ingress included).
fn bench_core_bytes(s: &Setup, dir: &Path, n: u64, threads: usize) {
    let bytes: Vec<Vec<u8>> = (0..n).map(|i| create_bytes(s, i)).collect();
    let shares = deal(bytes, threads);
    let core = core_over(s, &dir.join("core.sqlite"));
    let seconds = run_threads(&shares, |b| {
        core.perform_bytes(b, NOW)
            .unwrap_or_else(|e| fail("perform_bytes", &e));
    });
    let stats = core.store().stats();
    println!(
        "{{\"name\": \"sqlite_group_commit_core_bytes\", \"command\": \"mission.create\", \"store\": \"file_wal_full\", \"threads\": {threads}, \"commands\": {n}, \"seconds\": {seconds:.3}, \"commands_per_second\": {:.0}, \"mean_batch\": {:.1}, \"clock\": \"wall\"}}",
        n as f64 / seconds,
        stats.mean_batch()
    );
}

fn core_over(s: &Setup, path: &Path) -> Core<GroupCommit<SqliteStore>, SigningKey> {
    Core::new(
        GroupCommit::new(open(path)),
        s.registry.clone(),
        issuer(s),
        Box::new(AllowAllAuthorizerForTests),
        Box::new(SequentialEventIds::new(
            "urn:missionweaveprotocol:event:core-",
        )),
    )
}

/// The recorded write sets, written as plain rows by one thread in the same batches: the
/// floor the disk allows for this many rows and bytes per transaction.
fn bench_raw_floor(path: &Path, batches: &[Vec<Transaction>], engine_rate: f64, round: u32) -> f64 {
    // The store creates the same schema and switches the file to WAL, then steps aside.
    drop(open(path));
    let mut conn = rusqlite::Connection::open(path).unwrap_or_else(|e| fail("raw open", &e));
    // The store's settings: WAL (set by the store), synchronous=FULL, the writer's cache.
    conn.execute_batch(&format!(
        "PRAGMA synchronous=FULL; PRAGMA cache_size=-{};",
        SqliteOptions::default().writer_cache_kib
    ))
    .unwrap_or_else(|e| fail("raw pragma", &e));
    let (mut txs, mut rows, mut bytes) = (0u64, 0u64, 0u64);
    for batch in batches {
        for tx in batch {
            txs += 1;
            rows += (tx.receipts().len() + 2 * tx.appends().len()) as u64;
            bytes += tx
                .appends()
                .iter()
                .map(|(_, e)| e.body.len())
                .sum::<usize>() as u64;
            for write in tx.writes() {
                if let Some(value) = &write.value {
                    rows += 1;
                    bytes += value.len() as u64;
                }
            }
        }
    }
    let cpu = process_cpu_seconds();
    let start = Instant::now();
    for batch in batches {
        let db = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .unwrap_or_else(|e| fail("raw begin", &e));
        for tx in batch {
            raw_write(&db, tx).unwrap_or_else(|e| fail("raw write", &e));
        }
        db.commit().unwrap_or_else(|e| fail("raw commit", &e));
    }
    let seconds = start.elapsed().as_secs_f64();
    let cpu = cpu_per_item(cpu, txs);
    let rate = txs as f64 / seconds;
    println!(
        "{{\"name\": \"sqlite_raw_floor\", \"round\": {round}, \"store\": \"file_wal_full\", \"writer\": \"one thread, plain rusqlite, the engine's batches\", \"transactions\": {txs}, \"batches\": {}, \"rows_per_transaction\": {:.2}, \"bytes_per_transaction\": {:.0}, \"seconds\": {seconds:.3}, \"transactions_per_second\": {rate:.0}, \"engine_over_raw\": {:.3}, \"cpu_us_per_transaction\": {cpu}, \"clock\": \"wall\"}}",
        batches.len(),
        rows as f64 / txs.max(1) as f64,
        bytes as f64 / txs.max(1) as f64,
        engine_rate / rate
    );
    rate
}

/// The raw floor stores 32 bytes in each integrity column (`chain_hash`, `chain_before`,
/// `checksum`), as the store does, without computing them: same rows, same bytes, no hashing.
const RAW_HASH: [u8; 32] = [0x5a; 32];

fn raw_write(db: &rusqlite::Connection, tx: &Transaction) -> rusqlite::Result<()> {
    for (key, receipt) in tx.receipts() {
        let (group, sequence) = match &receipt.first_event.position {
            Some((group, sequence)) => (Some(group.as_str()), Some(*sequence as i64)),
            None => (None, None),
        };
        db.prepare_cached(
            "INSERT INTO receipts (actor_type, actor_id, action_id, signing_hash, event_id, \
             group_id, sequence) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?
        .execute(params![
            key.actor_type,
            key.actor_id,
            key.action_id,
            receipt.signing_hash,
            receipt.first_event.event_id,
            group,
            sequence
        ])?;
    }
    for (group, event) in tx.appends() {
        db.prepare_cached(
            "INSERT INTO events (group_id, sequence, event_id, body, chain_hash) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )?
        .execute(params![
            group,
            event.sequence as i64,
            &*event.event_id,
            &*event.body,
            &RAW_HASH[..]
        ])?;
        db.prepare_cached(
            "INSERT INTO groups (group_id, next_sequence, first_online, chain_before) \
             VALUES (?1, ?2, 1, ?3) \
             ON CONFLICT (group_id) DO UPDATE SET next_sequence = excluded.next_sequence",
        )?
        .execute(params![group, event.sequence as i64 + 1, &RAW_HASH[..]])?;
    }
    for write in tx.writes() {
        if let Some(value) = &write.value {
            db.prepare_cached(
                "INSERT INTO aggregates (kind, id, revision, value, checksum) \
                 VALUES (?1, ?2, ?3, ?4, ?5) \
                 ON CONFLICT (kind, id) DO UPDATE SET revision = excluded.revision, \
                 value = excluded.value, checksum = excluded.checksum",
            )?
            .execute(params![
                write.key.kind,
                write.key.id,
                write.expected_revision as i64 + 1,
                &**value,
                &RAW_HASH[..]
            ])?;
        }
    }
    Ok(())
}

/// One submitter: the latency of each `perform`, p50 and p99, on the file store (and, for
/// comparison, on the file without read connections and on `:memory:`, where no fsync is paid).
fn bench_latency(s: &Setup, dir: &Path, n: u64) {
    if n == 0 {
        return;
    }
    let commands: Vec<VerifiedCommand> = (0..n).map(|i| create(s, 5_000_000 + i)).collect();
    let stores = [
        ("file_wal_full", open(&dir.join("latency.sqlite"))),
        (
            "file_wal_full_no_read_pool",
            SqliteStore::open_with(
                dir.join("latency-no-pool.sqlite"),
                &SqliteOptions {
                    readers: 0,
                    ..options()
                },
            )
            .unwrap_or_else(|e| fail("open", &e)),
        ),
        (
            "memory",
            SqliteStore::in_memory().unwrap_or_else(|e| fail("open", &e)),
        ),
    ];
    for (name, store) in stores {
        let engine = Engine::new(
            GroupCommit::new(store),
            issuer(s),
            SequentialEventIds::new("urn:missionweaveprotocol:event:latency-"),
        );
        let mut micros: Vec<f64> = commands
            .iter()
            .map(|command| {
                let start = Instant::now();
                engine
                    .perform(command, NOW)
                    .unwrap_or_else(|e| fail("perform", &e));
                start.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        micros.sort_by(f64::total_cmp);
        let at = |p: usize| micros[(micros.len() * p / 100).min(micros.len() - 1)];
        let mean = micros.iter().sum::<f64>() / micros.len() as f64;
        println!(
            "{{\"name\": \"sqlite_single_submitter\", \"command\": \"mission.create\", \"store\": \"{name}\", \"commands\": {n}, \"p50_us\": {:.0}, \"p99_us\": {:.0}, \"mean_us\": {mean:.0}, \"max_us\": {:.0}, \"clock\": \"wall\"}}",
            at(50),
            at(99),
            micros[micros.len() - 1]
        );
    }
}

/// `n` Commands by `threads` threads through `perform_bytes`: the first and last 10 % timed on
/// pre-signed bytes, the middle 80 % signed on the fly (they only grow the store).
fn bench_flat(s: &Setup, dir: &Path, n: u64, threads: usize) {
    let decile = (n / 10).max(1);
    let base = 10_000_000;
    let core = core_over(s, &dir.join("flat.sqlite"));
    // (wall seconds, CPU µs per Command) of one timed decile.
    let phase = |from: u64, to: u64| -> (f64, String) {
        let shares = deal(
            (from..to).map(|i| create_bytes(s, base + i)).collect(),
            threads,
        );
        let cpu = process_cpu_seconds();
        let seconds = run_threads(&shares, |b| {
            core.perform_bytes(b, NOW)
                .unwrap_or_else(|e| fail("perform_bytes", &e));
        });
        (seconds, cpu_per_item(cpu, to - from))
    };
    let (first, first_cpu) = phase(0, decile);
    let middle_start = Instant::now();
    let middle_end = n.saturating_sub(decile).max(decile);
    let shares = deal((decile..middle_end).collect::<Vec<u64>>(), threads);
    run_threads(&shares, |&i| {
        core.perform_bytes(&create_bytes(s, base + i), NOW)
            .unwrap_or_else(|e| fail("perform_bytes", &e));
    });
    let middle = middle_start.elapsed().as_secs_f64();
    let (last, last_cpu) = phase(middle_end, middle_end + decile);
    let total = middle_end + decile;
    let (first_rate, last_rate) = (decile as f64 / first, decile as f64 / last);
    println!(
        "{{\"name\": \"sqlite_flat\", \"command\": \"mission.create\", \"path\": \"perform_bytes\", \"store\": \"file_wal_full\", \"threads\": {threads}, \"commands\": {total}, \"first_10pct_per_second\": {first_rate:.0}, \"last_10pct_per_second\": {last_rate:.0}, \"last_over_first\": {:.3}, \"first_10pct_cpu_us_per_command\": {first_cpu}, \"last_10pct_cpu_us_per_command\": {last_cpu}, \"middle_seconds_incl_signing\": {middle:.1}, \"mean_batch\": {:.1}, \"clock\": \"wall\"}}",
        last_rate / first_rate,
        core.store().stats().mean_batch()
    );
}

/// Replay of the concurrent run's many short logs (one per Mission), pages of 1,000.
fn bench_replay_groups<S: Store>(store: &S, n: u64) {
    let start = Instant::now();
    let mut events = 0usize;
    for i in 0..n {
        events += replay_all(store, &group(i)).0;
    }
    println!(
        "{{\"name\": \"sqlite_replay\", \"log\": \"mission.create, one Group each\", \"groups\": {n}, \"events\": {events}, \"events_per_second\": {:.0}, \"clock\": \"wall\"}}",
        events as f64 / start.elapsed().as_secs_f64()
    );
}

/// (Events, bytes) of `group`'s whole log.
fn replay_all<S: Store>(store: &S, group: &str) -> (usize, usize) {
    let (mut events, mut bytes, mut after) = (0, 0, 0);
    loop {
        let page = store
            .replay(group, after, 1_000)
            .unwrap_or_else(|e| fail("replay", &e));
        events += page.events.len();
        bytes += page.events.iter().map(|e| e.body.len()).sum::<usize>();
        match page.continuation {
            Some(next) => after = next,
            None => return (events, bytes),
        }
    }
}

/// One long Group log of `n` `mission.renew_coordinator` Events, replayed from the file.
fn bench_replay_log(s: &Setup, dir: &Path, n: u64) {
    if n == 0 {
        return;
    }
    let engine = Engine::new(
        open(&dir.join("replay.sqlite")),
        issuer(s),
        SequentialEventIds::new("urn:missionweaveprotocol:event:replay-"),
    );
    let open_session = format!(
        r#"{{"protocolVersion": "0.1", "actionId": "urn:missionweaveprotocol:action:session-open",
        "actor": {{"type": "service", "id": "{AUTHORITY}"}},
        "kind": "ext.missionweaveprotocol.identity.session_open",
        "correlationId": "urn:missionweaveprotocol:correlation:1",
        "issuedAt": "{NOW_TEXT}", "payload": {{"agentId": "{COORDINATOR}"}}}}"#
    );
    for command in [
        verified(s, &signed(&s.authority, &open_session)),
        create(s, 0),
    ] {
        engine
            .perform(&command, NOW)
            .unwrap_or_else(|e| fail("setup", &e));
    }
    let renewals: Vec<VerifiedCommand> = (0..n)
        .map(|i| {
            let text = format!(
                r#"{{"protocolVersion": "0.1", "actionId": "urn:missionweaveprotocol:action:renew-{i}",
                "actor": {{"type": "agent", "id": "{COORDINATOR}"}}, "sessionEpoch": 1,
                "membershipEpoch": 1, "coordinatorEpoch": 1, "groupId": "{}",
                "kind": "mission.renew_coordinator", "correlationId": "urn:missionweaveprotocol:correlation:1",
                "issuedAt": "{NOW_TEXT}", "payload": {{"leaseSeconds": 120}}}}"#,
                group(0)
            );
            verified(s, &signed(&s.coordinator, &text))
        })
        .collect();
    // Setup, not timed: one durable commit per renewal.
    for command in &renewals {
        engine
            .perform(command, NOW)
            .unwrap_or_else(|e| fail("renew", &e));
    }
    drop(engine);
    // A fresh store over the file: nothing cached from the writes.
    let store = open(&dir.join("replay.sqlite"));
    let mut passes = 0u32;
    let (mut events, mut bytes) = (0usize, 0usize);
    // On a shared machine the mean over the passes follows the neighbours' load; the best
    // pass and the process CPU per Event follow it less.
    let mut best = 0f64;
    let cpu = process_cpu_seconds();
    let start = Instant::now();
    while passes == 0 || start.elapsed().as_secs_f64() < 0.5 {
        let pass = Instant::now();
        let (e, b) = replay_all(&store, &group(0));
        best = best.max(e as f64 / pass.elapsed().as_secs_f64());
        events += e;
        bytes += b;
        passes += 1;
    }
    let seconds = start.elapsed().as_secs_f64();
    let per_cpu_second = match (cpu, process_cpu_seconds()) {
        (Some(before), Some(after)) if after > before => {
            format!("{:.0}", events as f64 / (after - before))
        }
        _ => "null".to_owned(),
    };
    println!(
        "{{\"name\": \"sqlite_replay\", \"log\": \"one Group\", \"events\": {}, \"passes\": {passes}, \"page\": 1000, \"events_per_second\": {:.0}, \"best_pass_events_per_second\": {best:.0}, \"events_per_cpu_second\": {per_cpu_second}, \"mean_event_bytes\": {:.0}, \"clock\": \"wall\"}}",
        events / passes as usize,
        events as f64 / seconds,
        bytes as f64 / events.max(1) as f64
    );
}

fn main() {
    let args = args();
    let s = setup();
    let temp = tempfile::tempdir_in(args.dir.clone().unwrap_or_else(std::env::temp_dir))
        .unwrap_or_else(|e| fail("tempdir", &e));
    let dir = temp.path();
    let commands: Vec<VerifiedCommand> = (0..args.commands).map(|i| create(&s, i)).collect();
    let shares = deal(commands, args.threads);
    // Engine and floor alternate, each round on fresh files, so that both see the same
    // neighbours on this shared machine; the summary takes the medians.
    let mut rounds: Vec<(f64, f64)> = Vec::new();
    for round in 0..args.rounds {
        let (batches, engine_rate) = bench_engine(
            &s,
            &dir.join(format!("engine-{round}.sqlite")),
            &shares,
            round,
        );
        let raw_rate = bench_raw_floor(
            &dir.join(format!("raw-{round}.sqlite")),
            &batches,
            engine_rate,
            round,
        );
        rounds.push((engine_rate, raw_rate));
    }
    bench_engine_in_memory(&s, &shares);
    drop(shares);
    let median = |mut values: Vec<f64>| -> f64 {
        values.sort_by(f64::total_cmp);
        values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let ratios = median(rounds.iter().map(|(e, r)| e / r).collect());
    println!(
        "{{\"name\": \"sqlite_engine_over_raw\", \"rounds\": {}, \"median_engine_commands_per_second\": {:.0}, \"median_raw_transactions_per_second\": {:.0}, \"median_ratio\": {ratios:.3}, \"clock\": \"wall\"}}",
        rounds.len(),
        median(rounds.iter().map(|(e, _)| *e).collect()),
        median(rounds.iter().map(|(_, r)| *r).collect())
    );
    bench_core_bytes(&s, dir, args.commands, args.threads);
    bench_latency(&s, dir, args.latency);
    bench_replay_log(&s, dir, args.replay);
    if args.flat > 0 {
        bench_flat(&s, dir, args.flat, args.threads);
    }
}
