"""Benchmarks for the Python package, printed as JSON lines ``{"name": ..., "ops_per_sec": ...}``.

    python python/benchmarks/bench.py [--iterations N] [--rounds R]

- ``verify.native``: N verifications of the golden Command in a Rust process with no language
  boundary (``target/release/mwp-native-baselines`` of the dev-only testkit; the installed
  package exports no benchmark loop).
- ``verify.python``: the same N verifications, one ``SignedDocumentCodec.verify`` call each
  from Python (``vs_native`` = Python / native; target >= 0.9).
- ``verify_many.threads_1`` / ``verify_many.threads_2``: one ``verify_many`` call with a batch of
  N documents on 1 and 2 threads (``vs_1_thread``; target >= 1.7 on 2 cores).
- ``import``: wall time of ``python -c "import missionweaveprotocol"`` (median; target <= 0.15 s).
Each figure is the best of R rounds.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List

from missionweaveprotocol import bundle
from missionweaveprotocol.registry import AgentRegistryKeyResolver
from missionweaveprotocol.signed_documents import SignedDocumentCodec, SignedDocumentKind


def emit(name: str, ops_per_sec: float, **extra: float) -> None:
    line: Dict[str, object] = {"name": name, "ops_per_sec": round(ops_per_sec, 1)}
    line.update({key: round(value, 3) for key, value in extra.items()})
    print(json.dumps(line), flush=True)


def best(rounds: int, run: Callable[[], float]) -> float:
    return min(run() for _ in range(rounds))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    n, rounds = args.iterations, args.rounds

    document = bundle.embedded_file("cryptography/vectors/signed-documents/valid/command.json")
    registry = bundle.embedded_file("cryptography/keys/registry-valid.json")
    assert document is not None and registry is not None
    kind = SignedDocumentKind.COMMAND
    resolver = AgentRegistryKeyResolver(registry)
    codec = SignedDocumentCodec()
    codec.verify(kind, document, resolver)  # warm up: schemas compiled, evidence cached

    baselines = Path(
        os.environ.get("MWP_NATIVE_BASELINES")
        or Path(__file__).resolve().parents[2] / "target" / "release" / "mwp-native-baselines"
    )
    with tempfile.TemporaryDirectory() as tmp:
        doc_path, reg_path = Path(tmp, "command.json"), Path(tmp, "registry.json")
        doc_path.write_bytes(document)
        reg_path.write_bytes(registry)

        def native_run() -> float:
            argv = [str(baselines), "verify", "command", str(doc_path), str(reg_path), str(n)]
            return float(subprocess.run(argv, check=True, capture_output=True, text=True).stdout)

        native = best(rounds, native_run)

    def python_loop() -> float:
        verify = codec.verify
        start = time.perf_counter()
        for _ in range(n):
            verify(kind, document, resolver)
        return time.perf_counter() - start

    python = best(rounds, python_loop)
    emit("verify.native", n / native)
    emit("verify.python", n / python, vs_native=native / python)

    items = [(kind, document)] * n

    def batch(threads: int) -> float:
        start = time.perf_counter()
        results = codec.verify_many(items, resolver, threads)
        elapsed = time.perf_counter() - start
        assert len(results) == n
        return elapsed

    one = best(rounds, lambda: batch(1))
    two = best(rounds, lambda: batch(2))
    emit("verify_many.threads_1", n / one)
    emit("verify_many.threads_2", n / two, vs_1_thread=one / two)

    walls: List[float] = []
    for _ in range(max(rounds, 7)):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import missionweaveprotocol"], check=True)
        walls.append(time.perf_counter() - start)
    baseline: List[float] = []
    for _ in range(max(rounds, 7)):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        baseline.append(time.perf_counter() - start)
    wall = statistics.median(walls)
    emit("import", 1 / wall, seconds=wall, interpreter_seconds=statistics.median(baseline))
    return 0


if __name__ == "__main__":
    sys.exit(main())
