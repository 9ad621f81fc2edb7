"""Every throughput figure of issue 27 beside its floor, measured in one run ("Must show").

    python python/benchmarks/bench_floor.py [--quick] [--skip-node] [--skip-python]

Run through ``scripts/bench-floor.sh``, which builds the release examples, the Python
package and the Node addon first. This driver only runs the project's existing benchmarks
(each prints JSON lines), parses their lines and sets each figure beside its floor:

- the machine: load average and the idle CPU of a 1 s sample (two free cores are needed for
  the 2-thread figure; a warning says when they are not free);
- ``bench_verification``: raw Ed25519 verify and sign (µs), the floor of a Command stream
  (one verification per Command, one signature per Event, and for the issue's 11-Command mix
  one Artifact manifest verification per 11 Commands);
- ``bench_core.py`` (Python): the Rust ``perform_many`` (one native call), ``await
  core.perform`` one by one and 64 concurrent, each in µs per Command against the
  ``mission.create`` floor (1 verification + 1 signature);
- ``js/bench/core.mjs`` (Node, napi): the same one by one and 64 in flight;
- ``bench_replay.py``: ``await core.replay`` from Python beside Python's ``sqlite3`` reading
  the same rows' bytes from the same file;
- ``bench_sqlite_concurrent``: 64 concurrent submitters on a SQLite file beside the raw SQLite
  floor (the same rows written by plain rusqlite);
- ``bench_sqlite_command_cpu``: 1 and 2 threads performing on disjoint Groups in memory, the
  speed-up against the floor of 2.

Every ``ratio`` is "fraction of the floor": floor cost / measured cost (or measured rate /
floor rate), 1.0 = at the floor. The Ed25519 floors are thread CPU time and the perform
figures process CPU time (all threads; wall time beside), so that a shared machine's other
work does not enter the ratio; the replay, SQLite and 2-thread pairs are wall clock, each pair
measured back to back. Each figure is one JSON line as it is measured; an aligned
table closes the run. Bounded: about 2-4 minutes (``--quick``: tiny N, a smoke run of the
plumbing, figures meaningless). Not run by CI.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
EXAMPLES = TARGET / "release" / "examples"
# The mix: create, membership, authorize, offer, accept, start, artifact.publish,
# submit, accept_result, submit_for_approval, approve; one of them carries a manifest.
MIX_COMMANDS = 11

FIGURES: List[Dict[str, Any]] = []


def emit(figure: str, value: float, unit: str, floor: Optional[float], floor_name: str,
         ratio: Optional[float], **extra: Any) -> None:
    line: Dict[str, Any] = {"figure": figure, "value": round(value, 3), "unit": unit,
                            "floor": None if floor is None else round(floor, 3),
                            "floor_is": floor_name,
                            "ratio": None if ratio is None else round(ratio, 3)}
    line.update(extra)
    FIGURES.append(line)
    print(json.dumps(line, ensure_ascii=False), flush=True)


def run_lines(command: List[str], *, timeout: float, env: Optional[Dict[str, str]] = None
              ) -> Iterator[Dict[str, Any]]:
    """The JSON lines `command` prints (other lines are passed through to stderr)."""
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    print(json.dumps({"ran": " ".join(Path(c).name if i == 0 else c
                                       for i, c in enumerate(command)),
                      "seconds": round(time.perf_counter() - started, 1)}),
          file=sys.stderr, flush=True)
    for text in done.stdout.splitlines():
        text = text.strip()
        if text.startswith("{"):
            yield json.loads(text)
        elif text:
            print(text, file=sys.stderr)


def cpu_times() -> List[int]:
    with open("/proc/stat") as f:
        fields = f.readline().split()[1:]
    return [int(x) for x in fields]


def machine() -> float:
    """Prints the load and the idle cores of a 1 s sample; answers the idle cores."""
    load = os.getloadavg()
    before = cpu_times()
    time.sleep(1.0)
    after = cpu_times()
    delta = [b - a for a, b in zip(before, after)]
    total = sum(delta) or 1
    idle_share = (delta[3] + delta[4]) / total  # idle + iowait
    cores = os.cpu_count() or 1
    idle_cores = idle_share * cores
    print(json.dumps({"figure": "machine", "cores": cores,
                      "load_average": [round(x, 2) for x in load],
                      "idle_cores_1s": round(idle_cores, 2),
                      "two_cores_free": idle_cores >= 1.8}), flush=True)
    if idle_cores < 1.8:
        print(json.dumps({"warning": f"only {idle_cores:.2f} of {cores} cores were idle in the "
                          "1 s sample: every figure, the 2-thread speed-up first, is depressed "
                          "by other work"}), flush=True)
    return idle_cores


def by_name(lines: Iterator[Dict[str, Any]], key: str = "name") -> Dict[str, Dict[str, Any]]:
    found: Dict[str, Dict[str, Any]] = {}
    for line in lines:
        if key in line:
            found.setdefault(str(line[key]), line)
    return found


def per_command_us(rate: float) -> float:
    return 1e6 / rate


def ed25519(seconds: float) -> Dict[str, float]:
    lines = by_name(run_lines([str(EXAMPLES / "bench_verification"), str(seconds)],
                              timeout=300, env={"MWP_BENCH_CLOCK": "cpu"}))
    verify_us = per_command_us(lines["ed25519.raw_verify"]["ops_per_sec"])
    sign_us = per_command_us(lines["ed25519.raw_sign"]["ops_per_sec"])
    floors = {
        "verify_us": verify_us,
        "sign_us": sign_us,
        # mission.create: one verification of the Command, one signature of its one Event.
        "create_us": verify_us + sign_us,
        "mix_us": verify_us + sign_us + verify_us / MIX_COMMANDS,
    }
    emit("ed25519.raw_verify", verify_us, "µs", None, "", None, clock="thread CPU")
    emit("ed25519.raw_sign", sign_us, "µs", None, "", None, clock="thread CPU")
    emit("floor.mix_11_commands", floors["mix_us"], "µs/Command", None,
         "verify + sign + verify/11", None,
         commands_per_core_second=round(1e6 / floors["mix_us"]))
    emit("floor.mission_create", floors["create_us"], "µs/Command", None, "verify + sign",
         None, commands_per_core_second=round(1e6 / floors["create_us"]))
    command_us = per_command_us(lines["verify.command"]["ops_per_sec"])
    emit("verify.command", command_us, "µs", verify_us, "ed25519.raw_verify",
         verify_us / command_us, clock="thread CPU")
    two = lines.get("verify_many.command.threads2", {})
    if "ratio_to_1_thread" in two:
        emit("verify_many.threads2", float(two["ratio_to_1_thread"]), "× 1 thread", 2.0,
             "2 cores", float(two["ratio_to_1_thread"]) / 2.0, clock="wall")
    return floors


def python_core(floors: Dict[str, float], n: int) -> None:
    for line in run_lines([sys.executable, str(HERE / "bench_core.py"), str(n)], timeout=600):
        bench, kind = line.get("bench"), line.get("kind")
        if kind != "mission.create":
            continue
        if bench == "native_perform_many":
            figure = "rust.perform_many"
        elif bench == "await_sequential_executor":
            figure = "python.await_perform.one_by_one"
        elif bench == "await_concurrent_executor" and "window" not in line:
            figure = "python.await_perform.gather_64"
        else:
            continue
        # CPU time (all the process's threads), like the floor's thread CPU time: on a shared
        # machine wall time counts the neighbours' work too (it is printed beside).
        us = per_command_us(line["per_cpu_second"])
        emit(figure, us, "CPU µs/Command", floors["create_us"], "floor.mission_create",
             floors["create_us"] / us, wall_us_per_command=round(1e6 / line["per_second"], 1),
             workload="mission.create, distinct Groups, in memory", clock="process CPU")


def node_core(floors: Dict[str, float], n: int) -> None:
    lines = run_lines(["node", "js/bench/core.mjs", "--commands", str(n)], timeout=600)
    for line in lines:
        name = line.get("name")
        if name != "napi_core_perform_create_distinct_groups":
            continue
        us = per_command_us(line["cpu_ops_per_sec"])
        flight = line.get("in_flight")
        figure = ("node.await_perform.one_by_one" if flight == 1
                  else f"node.await_perform.in_flight_{flight}")
        emit(figure, us, "CPU µs/Command", floors["create_us"], "floor.mission_create",
             floors["create_us"] / us, wall_us_per_command=round(1e6 / line["ops_per_sec"], 1),
             workload="mission.create, distinct Groups, in memory", clock="process CPU")


def python_replay(n: int) -> None:
    lines = by_name(run_lines([sys.executable, str(HERE / "bench_replay.py"), str(n)],
                              timeout=600), key="bench")
    for suffix in ("", "_keyed"):
        floor_name = f"sqlite3_rows{suffix}"
        if floor_name not in lines:
            continue
        floor = float(lines[floor_name]["per_second"])
        emit(f"python.{floor_name}", floor, "Events/s", None, "", None)
        for name in ("replay_first", "replay_again", "native_replay_again", "event_parse"):
            if name + suffix in lines:
                rate = float(lines[name + suffix]["per_second"])
                emit(f"python.{name}{suffix}", rate, "Events/s", floor, f"python.{floor_name}",
                     rate / floor)


def sqlite_concurrent(commands: int, rounds: int) -> None:
    lines = by_name(run_lines([str(EXAMPLES / "bench_sqlite_concurrent"), "--commands",
                               str(commands), "--rounds", str(rounds), "--threads", "64",
                               "--latency", "0", "--replay", "0", "--flat", "0"], timeout=900))
    summary = lines["sqlite_engine_over_raw"]
    engine = float(summary["median_engine_commands_per_second"])
    raw = float(summary["median_raw_transactions_per_second"])
    emit("sqlite.engine_64_submitters", engine, "Commands/s", raw,
         "sqlite.raw_transactions_per_second", engine / raw, rounds=summary["rounds"],
         clock="wall")


def two_threads(commands: int) -> None:
    walls: Dict[int, float] = {}
    for threads in (1, 2):
        line = by_name(run_lines([str(EXAMPLES / "bench_sqlite_command_cpu"), "--commands",
                                  str(commands), "--threads", str(threads), "--store",
                                  "authority_in_memory"], timeout=600))["sqlite_command_cpu"]
        walls[threads] = float(line["wall_us_per_command"])
    speedup = walls[1] / walls[2]
    emit("engine.two_threads_disjoint_groups", speedup, "× 1 thread", 2.0, "2 cores",
         speedup / 2.0, one_thread_us=round(walls[1], 1), two_threads_us=round(walls[2], 1),
         workload="perform (pre-verified) mission.create, distinct Groups, in memory",
         clock="wall")


def table() -> None:
    rows = [("figure", "value", "unit", "floor", "floor is", "ratio")]
    for f in FIGURES:
        rows.append((f["figure"], f"{f['value']:,.1f}", f["unit"],
                     "" if f["floor"] is None else f"{f['floor']:,.1f}", f["floor_is"],
                     "" if f["ratio"] is None else f"{f['ratio']:.3f}"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    print()
    for r in rows:
        print("  ".join(c.rjust(w) if i in (1, 3, 5) else c.ljust(w)
                        for i, (c, w) in enumerate(zip(r, widths))).rstrip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny N: a smoke run")
    parser.add_argument("--skip-node", action="store_true")
    parser.add_argument("--skip-python", action="store_true")
    args = parser.parse_args()
    q = args.quick
    started = time.perf_counter()
    machine()
    floors = ed25519(0.05 if q else 0.5)
    if not args.skip_python:
        python_core(floors, 200 if q else 3000)
    if not args.skip_node:
        node_core(floors, 200 if q else 3000)
    if not args.skip_python:
        python_replay(500 if q else 10_000)
    sqlite_concurrent(640 if q else 6400, 1 if q else 3)
    two_threads(400 if q else 4000)
    machine()
    table()
    print(f"\n{time.perf_counter() - started:.0f} s", flush=True)


if __name__ == "__main__":
    main()
