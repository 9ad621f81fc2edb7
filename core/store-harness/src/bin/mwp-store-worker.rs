//! `mwp-store-worker`: one process of the store harness (`docs/store.md`, "Crash and race
//! tests"). Every subcommand opens the store a spec names (`sqlite:PATH`,
//! `postgresql://…[?schema=NAME&pool_size=N]`) and drives the deterministic workload of
//! `--seed` (default 1). `race`, `shared` and `bench` run many threads on one store: their
//! commits share durable transactions through group commit unless `--group-commit off`.
//!
//! ```text
//! mwp-store-worker setup    --store S
//! mwp-store-worker stream   --store S --from I --to J      # prints "done <i> <group> <sequence>"
//! mwp-store-worker race     --store S --round R --tasks 32 [--rounds N] [--process P --parties K --barrier DIR]
//! mwp-store-worker shared   --store S --threads T --count N [--process P --parties K --barrier DIR]
//! mwp-store-worker bench    --store S --threads T --count N [--process P --parties K --barrier DIR]
//!                  (race, shared, bench: [--group-commit on|off], default on)
//! mwp-store-worker replay   --store S --events N                   # after the setup
//! mwp-store-worker open     --store S --process P [--parties K --barrier DIR]
//!                  # opens (creating, migrating) only after the barrier, then one mission.create
//! mwp-store-worker verify   --store S
//! mwp-store-worker scenario --store S
//! ```
//!
//! Exit status: 0 done, 1 a refusal or a failed check (`error: CODE reason: detail` on
//! stderr), 2 a usage error.

use std::collections::HashMap;
use std::io::Write;
use std::process::ExitCode;

use missionweaveprotocol::DescribeError;
use missionweaveprotocol_store_harness::check::verify_store;
use missionweaveprotocol_store_harness::perform::{apply, apply_all, send};
use missionweaveprotocol_store_harness::race::{FileBarrier, race_round, shared_group};
use missionweaveprotocol_store_harness::scenario::apply_on;
use missionweaveprotocol_store_harness::{
    Batching, HarnessError, OpenedStore, Workload, bench, open_store, open_store_with, scenario,
};

const USAGE: &str = "usage: mwp-store-worker <setup|stream|race|shared|bench|replay|open|verify|scenario> --store SPEC [options]
  setup    --store S                       sessions, stream and shared Missions, Memberships
  stream   --store S --from I --to J       stream Commands I..J in order; prints `done <i> <group> <sequence>`
  race     --store S --round R --tasks T   T threads accept round R's offer at once (also --rounds N: R..R+N)
           [--process P --parties K --barrier DIR]   line rounds up with K-1 other processes
  shared   --store S --threads T --count N [--process P --parties K --barrier DIR]
                                           T threads send N Commands each to the one shared Group
  bench    --store S --threads T --count N Commands/s of N mission.create over T threads
           [--process P --parties K --barrier DIR]   start together with K-1 other processes
  replay   --store S --events N            the setup, N renewals on the shared Group one by one, then
                                           Events/s of replaying its log (pages of 1,000)
  open     --store S --process P [--parties K --barrier DIR]
                                           meet K-1 other processes, then open the store (create, migrate)
                                           and apply one mission.create; prints `opened process P group G
                                           sequence N sends S`
  verify   --store S                       replay and verify every Group and Organization Event
  scenario --store S                       the end-to-end story, then reopen and replay
  race, shared, bench: --group-commit on|off (default on: a process's commits share transactions)
  common:  --seed N (default 1)
  store specs: sqlite:PATH | postgresql://USER@HOST:PORT/DB[?schema=NAME&pool_size=N&batch_reads=false] (pool default 16)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((subcommand, rest)) = args.split_first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    if subcommand == "--help" || subcommand == "-h" {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let options = match Options::parse(rest) {
        Ok(options) => options,
        Err(e) => return usage(&e),
    };
    let result = match subcommand.as_str() {
        "setup" => setup(&options),
        "stream" => stream(&options),
        "race" => race(&options),
        "shared" => shared(&options),
        "bench" => run_bench(&options),
        "replay" => run_replay(&options),
        "open" => open_together(&options),
        "verify" => verify(&options),
        "scenario" => run_scenario(&options),
        other => Err(HarnessError::argument(
            "subcommand",
            format!("unknown subcommand {other:?}"),
        )),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e @ HarnessError::InvalidArgument { .. }) => usage(&e),
        Err(e) => {
            eprintln!("error: {} {}: {e}", e.wire_code(), e.reason());
            ExitCode::from(1)
        }
    }
}

fn usage(e: &HarnessError) -> ExitCode {
    eprintln!("error: {e}\n{USAGE}");
    ExitCode::from(2)
}

/// `--name value` pairs.
struct Options(HashMap<String, String>);

impl Options {
    fn parse(args: &[String]) -> Result<Self, HarnessError> {
        let mut map = HashMap::new();
        let mut args = args.iter();
        while let Some(name) = args.next() {
            let Some(key) = name.strip_prefix("--") else {
                return Err(HarnessError::argument(name, "expected --option value"));
            };
            let value = args
                .next()
                .ok_or_else(|| HarnessError::argument(name, "needs a value"))?;
            if map.insert(key.to_owned(), value.clone()).is_some() {
                return Err(HarnessError::argument(name, "given twice"));
            }
        }
        Ok(Self(map))
    }

    fn text(&self, name: &str) -> Result<&str, HarnessError> {
        self.0
            .get(name)
            .map(String::as_str)
            .ok_or_else(|| HarnessError::argument(format!("--{name}"), "is required"))
    }

    fn number(&self, name: &str) -> Result<u64, HarnessError> {
        self.text(name)?.parse().map_err(|_| {
            HarnessError::argument(format!("--{name}"), "must be a non-negative integer")
        })
    }

    fn number_or(&self, name: &str, default: u64) -> Result<u64, HarnessError> {
        if self.0.contains_key(name) {
            self.number(name)
        } else {
            Ok(default)
        }
    }

    fn store(&self) -> Result<&str, HarnessError> {
        self.text("store")
    }

    /// The store of a subcommand whose threads share it: group commit unless
    /// `--group-commit off`.
    fn shared_store(&self) -> Result<OpenedStore, HarnessError> {
        let batching = match self.0.get("group-commit") {
            None => Batching::GroupCommit,
            Some(flag) => Batching::parse(flag)?,
        };
        open_store_with(self.store()?, batching)
    }

    fn workload(&self) -> Result<Workload, HarnessError> {
        Workload::new(self.number_or("seed", 1)?)
    }

    /// `--process P --parties K --barrier DIR`, all or none.
    fn barrier(&self) -> Result<(u64, Option<FileBarrier>), HarnessError> {
        match self.0.get("barrier") {
            None => Ok((self.number_or("process", 0)?, None)),
            Some(dir) => {
                let process = self.number("process")?;
                let barrier = FileBarrier::new(dir, self.number("parties")?, process)?;
                Ok((process, Some(barrier)))
            }
        }
    }
}

fn setup(options: &Options) -> Result<(), HarnessError> {
    let workload = options.workload()?;
    let commands = workload.setup()?;
    let applied = apply_on(options.store()?, &workload, &commands)?;
    println!("setup {} Commands, {applied} newly applied", commands.len());
    Ok(())
}

/// Performs stream Commands `from..to` in order; after each `perform` returned, prints and
/// flushes `done <i> <group> <sequence>` (the crash test's record of what must survive).
fn stream(options: &Options) -> Result<(), HarnessError> {
    let workload = options.workload()?;
    let (from, to) = (options.number("from")?, options.number("to")?);
    let core = workload.core(open_store(options.store()?)?)?;
    let stdout = std::io::stdout();
    for i in from..to {
        let command = workload.stream(i)?;
        let performed = apply(&core, &command.command)?;
        let sequence = performed.events.first().map_or(0, |e| e.sequence);
        let mut out = stdout.lock();
        writeln!(out, "done {i} {} {sequence}", performed.group_id)
            .and_then(|()| out.flush())
            .map_err(|e| HarnessError::io("stdout", &e))?;
    }
    Ok(())
}

fn race(options: &Options) -> Result<(), HarnessError> {
    let workload = options.workload()?;
    let first = options.number("round")?;
    let rounds = options.number_or("rounds", 1)?;
    let tasks = options.number("tasks")?;
    let (process, barrier) = options.barrier()?;
    let opened = options.shared_store().map(|opened| opened.store);
    let core = abort_on_error(
        opened.and_then(|store| workload.core(store)),
        barrier.as_ref(),
    )?;
    let result = (first..first + rounds).try_for_each(|round| {
        // Process 0 offers the round's WorkItem before it reaches the barrier, so the offer
        // exists when the submitters of every process are released. (Only one process sends
        // the setup: a concurrent re-send of the same Command may be refused by its decision
        // instead of being answered from the receipt, docs/store.md.)
        if process == 0 || barrier.is_none() {
            for command in workload.race_round(round)?.setup {
                apply(&core, &command)?;
            }
        }
        let submitters = process * tasks..(process + 1) * tasks;
        let tally = race_round(&core, &workload, round, submitters, barrier.as_ref())?;
        println!("{tally}");
        Ok(())
    });
    abort_on_error(result, barrier.as_ref())
}

/// On failure, tells the other processes at the barrier to stop waiting.
fn abort_on_error<T>(
    result: Result<T, HarnessError>,
    barrier: Option<&FileBarrier>,
) -> Result<T, HarnessError> {
    if let (Err(_), Some(barrier)) = (&result, barrier) {
        barrier.abort();
    }
    result
}

fn shared(options: &Options) -> Result<(), HarnessError> {
    let workload = options.workload()?;
    let (process, barrier) = options.barrier()?;
    let opened = options.shared_store().map(|opened| opened.store);
    let core = abort_on_error(
        opened.and_then(|store| workload.core(store)),
        barrier.as_ref(),
    )?;
    let tally = shared_group(
        &core,
        &workload,
        process,
        options.number("threads")?,
        options.number("count")?,
        barrier.as_ref(),
    );
    let tally = match tally {
        Ok(tally) => tally,
        Err(e) => return abort_on_error(Err(e), barrier.as_ref()),
    };
    print!(
        "shared applied {} resends {} refused",
        tally.applied, tally.resends
    );
    for (code, n) in &tally.refused {
        print!(" {code}={n}");
    }
    println!();
    Ok(())
}

fn run_bench(options: &Options) -> Result<(), HarnessError> {
    let workload = options.workload()?;
    let count = usize::try_from(options.number("count")?)
        .map_err(|_| HarnessError::argument("--count", "too large"))?;
    let threads = usize::try_from(options.number("threads")?)
        .map_err(|_| HarnessError::argument("--threads", "too large"))?;
    let (process, barrier) = options.barrier()?;
    // A process that cannot open the store tells the others at once instead of leaving them
    // at the barrier until it times out.
    let opened = abort_on_error(options.shared_store(), barrier.as_ref())?;
    let core = abort_on_error(workload.core(opened.store.clone()), barrier.as_ref())?;
    let commands = abort_on_error(
        bench::create_commands(&workload, process, count),
        barrier.as_ref(),
    )?;
    // Signed before the clock starts; the processes start together.
    let result = barrier
        .as_ref()
        .map_or(Ok(()), |b| b.wait(0))
        .and_then(|()| bench::run(&core, &commands, threads));
    match result {
        Ok(report) => {
            // The batches of this run: `group_commit off`, or its write sets per transaction.
            match opened.group_commit_stats() {
                None => println!("{report} group_commit off"),
                Some(stats) => println!(
                    "{report} group_commit on batches {} mean_batch {:.1} largest_batch {}",
                    stats.batches,
                    stats.mean_batch(),
                    stats.largest_batch
                ),
            }
            Ok(())
        }
        Err(e) => abort_on_error(Err(e), barrier.as_ref()),
    }
}

/// Opens the store only once every party reached the barrier, so K processes create and
/// migrate one new file at the same moment (`tests/open_together.rs`), then applies one
/// `mission.create` of this process's own (nothing contends) and reports the sends it took.
fn open_together(options: &Options) -> Result<(), HarnessError> {
    let workload = options.workload()?;
    let (process, barrier) = options.barrier()?;
    let command = abort_on_error(
        bench::create_commands(&workload, process, 1),
        barrier.as_ref(),
    )?;
    if let Some(barrier) = &barrier {
        barrier.wait(0)?;
    }
    let core = workload.core(open_store(options.store()?)?)?;
    let command = command
        .first()
        .ok_or_else(|| HarnessError::check("no mission.create was made"))?;
    let sent = send(&core, command);
    let performed = sent.result.map_err(|error| HarnessError::Refused {
        command: format!("{} {}", command.kind, command.action_id),
        error: Box::new(error),
    })?;
    let sequence = performed.events.first().map_or(0, |e| e.sequence);
    println!(
        "opened process {process} group {} sequence {sequence} sends {}",
        performed.group_id, sent.sends
    );
    Ok(())
}

fn run_replay(options: &Options) -> Result<(), HarnessError> {
    let workload = options.workload()?;
    let core = workload.core(open_store(options.store()?)?)?;
    apply_all(&core, &workload.setup()?)?;
    println!(
        "{}",
        bench::replay(&core, &workload, options.number("events")?)?
    );
    Ok(())
}

fn verify(options: &Options) -> Result<(), HarnessError> {
    let workload = options.workload()?;
    let store = open_store(options.store()?)?;
    let report = verify_store(&*store, workload.keys().registry())?;
    println!(
        "verified groups {} events {} organization_events {}",
        report.groups, report.events, report.organization_events
    );
    Ok(())
}

fn run_scenario(options: &Options) -> Result<(), HarnessError> {
    let report = scenario::run(options.store()?, options.number_or("seed", 1)?)?;
    print!("{report}");
    Ok(())
}
