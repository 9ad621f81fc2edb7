"""The Python ``AgentClient`` against the Rust server (issue 24, "Must show": Commands/s and p99
Command → Event through the Python client, beside the Node client's ``js/bench/client-bench.mjs``
and the Rust load generator ``core/server/examples/load.rs``).

    python python/benchmarks/bench_client.py [N]

Starts ``missionweaveprotocol-server --dev`` (the console script: the Rust server in this
Python's process) over a SQLite file seeded with two Groups, connects the Coordinator over
``wss`` (TLS 1.3, the dev certificate as CA), then prints one JSON line per phase:

- ``sequential``: N ``message.post`` Commands one at a time: Commands/s and p50/p99 from
  ``send`` to the Command's verified Event at the sender;
- ``window16``: N Commands with 16 in flight.

Loopback only, bounded (N Commands per phase, 60 s per Command at most), stops by itself.
Needs the installed release wheel with its console script (``scripts/test-python.sh``).
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import List

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from rust_server_support import COORDINATOR, GROUP, client, post, rust_server  # noqa: E402


def _quantile(values: List[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _line(phase: str, latencies: List[float], seconds: float) -> None:
    print(json.dumps({
        "phase": phase,
        "commands": len(latencies),
        "commands_per_s": round(len(latencies) / seconds, 1),
        "p50_ms": round(_quantile(latencies, 0.50) * 1e3, 2),
        "p99_ms": round(_quantile(latencies, 0.99) * 1e3, 2),
    }), flush=True)


async def _phases(url: str, directory: Path, n: int) -> None:
    async with client(url, COORDINATOR, directory) as coordinator:
        epoch = coordinator.session_epoch
        assert epoch is not None

        async def one() -> float:
            command = post(COORDINATOR, epoch, GROUP, "bench")
            started = time.perf_counter()
            await asyncio.wait_for(coordinator.send(command), 60)
            return time.perf_counter() - started

        await one()  # warm-up
        started = time.perf_counter()
        latencies = [await one() for _ in range(n)]
        _line("sequential", latencies, time.perf_counter() - started)

        window = asyncio.Semaphore(16)

        async def windowed() -> float:
            async with window:
                return await one()

        started = time.perf_counter()
        latencies = list(await asyncio.gather(*(windowed() for _ in range(n))))
        _line("window16", latencies, time.perf_counter() - started)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    with tempfile.TemporaryDirectory() as directory, rust_server(Path(directory)) as server:
        asyncio.run(_phases(server.url, Path(directory), n))


if __name__ == "__main__":
    main()
