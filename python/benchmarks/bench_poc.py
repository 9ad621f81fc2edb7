"""Wall time of the proof of concept end to end (``missionweaveprotocol-demo``: the server
process started, every Agent connected over wss, the whole scenario, the server stopped), as
a shipped benchmark, not a timed test.

    python python/benchmarks/bench_poc.py [--runs 5] [--database-url URL]

Runs the installed console script ``--runs`` times in fresh work directories and prints each
wall time and the median (the reference's POC takes about 20 s on this machine,
``reference-python.md`` §3). Every run must exit 0 and print the same report.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--database-url", default=None,
                        help="an EMPTY PostgreSQL database per run is needed; default SQLite")
    options = parser.parse_args()
    demo = Path(sys.executable).parent / "missionweaveprotocol-demo"
    walls = []
    reports = set()
    for run in range(options.runs):
        with tempfile.TemporaryDirectory(prefix="mwp-bench-poc-") as directory:
            command = [str(demo), "--workdir", directory]
            if options.database_url:
                command += ["--database-url", options.database_url]
            started = time.perf_counter()
            done = subprocess.run(command, capture_output=True, check=False)
            wall = time.perf_counter() - started
        if done.returncode != 0:
            print(done.stderr.decode(), file=sys.stderr)
            return 1
        reports.add(done.stdout)
        walls.append(wall)
        print(f"run {run + 1}: {wall:.2f} s")
    print(f"median of {len(walls)}: {statistics.median(walls):.2f} s wall "
          f"(min {min(walls):.2f}, max {max(walls):.2f}); reports identical: {len(reports) == 1}")
    return 0 if len(reports) == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
