"""Mean time of a failing ``verify`` per failing stage, through the Python binding.

    python python/benchmarks/bench_rejection_timing.py [--seconds S]

§6.4 requires stage 3, 4 and 6 rejections to be indistinguishable on the wire, so their timing
must not tell them apart either (issue 9, item 4). The same classes as the native command
(``cargo run --release -p missionweaveprotocol --example bench_rejection_timing``): stage 3
malformed envelope, stage 3 small-order R, stage 4 unknown key, stage 4 wrong Principal, stage 6
bad signature, and the accepted Command for reference (not part of the ratio). Each is one
``SignedDocumentCodec.verify`` call from Python (the exception included), measured in
interleaved rounds (a short batch of each, in a rotating order) so that machine load hits all
classes alike. Prints one JSON line per class (``mean_us``, ``p10_us``/``p50_us``/``p90_us`` of
the batch means, ``tries``), then ``reject.max_over_min`` with the max/min ratio of the means and
of the medians (target <= 1.05). A benchmark, not a test: it never fails on a figure, but it
stops with an error if a class is not rejected where it claims to be or the rejections differ
on the wire.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import List, Optional

from missionweaveprotocol import bundle
from missionweaveprotocol.errors import SignedDocumentVerificationError
from missionweaveprotocol.registry import AgentRegistryKeyResolver
from missionweaveprotocol.signed_documents import SignedDocumentCodec, SignedDocumentKind

VECTORS = "cryptography/vectors/signed-documents"
#: Verifies per timed batch: long enough to dwarf the clock, short enough to interleave finely.
BATCH = 40


def embedded(path: str) -> bytes:
    data = bundle.embedded_file(path)
    if data is None:
        raise SystemExit(f"{path} is not in the embedded bundle")
    return data


def wrong_principal(golden: bytes) -> bytes:
    """The golden Command signed by ``crypto-vector-rfc8032-1`` but naming a registered key bound
    to another agent: stage 4, signer mismatch (as in the native command)."""
    source = b"urn:missionweaveprotocol:key:crypto-vector-rfc8032-1"
    if source not in golden:
        raise SystemExit("the golden Command no longer names crypto-vector-rfc8032-1")
    return golden.replace(source, b"urn:missionweaveprotocol:key:crypto-vector-developer-one")


class Class:
    def __init__(self, name: str, document: bytes, stage: Optional[str]) -> None:
        self.name = name
        self.document = document
        self.stage = stage  # None: the accepted reference
        self.batch_means_ns: List[float] = []
        self.total_ns = 0
        self.tries = 0


def percentile(ordered: List[float], p: float) -> float:
    return ordered[round((len(ordered) - 1) * p)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per class (default 2)")
    args = parser.parse_args()

    codec = SignedDocumentCodec()
    resolver = AgentRegistryKeyResolver(embedded("cryptography/keys/registry-valid.json"))
    kind = SignedDocumentKind.COMMAND
    golden = embedded(f"{VECTORS}/valid/command.json")
    classes = [
        Class("reject.stage3.malformed-envelope", embedded(f"{VECTORS}/invalid/command-signature-wrong-length.json"), "signature-envelope"),
        Class("reject.stage3.small-order-r", embedded(f"{VECTORS}/invalid/command-signature-r-small-order.json"), "signature-envelope"),
        Class("reject.stage4.unknown-key", embedded(f"{VECTORS}/invalid/command-unknown-key.json"), "key-resolution"),
        Class("reject.stage4.wrong-principal", wrong_principal(golden), "key-resolution"),
        Class("reject.stage6.bad-signature", embedded(f"{VECTORS}/invalid/command-payload-tamper.json"), "signature"),
        Class("accept.command", golden, None),
    ]

    # Every class fails where it claims to, and all rejections look the same on the wire.
    wire = None
    for c in classes:
        try:
            codec.verify(kind, c.document, resolver)
        except SignedDocumentVerificationError as error:
            if c.stage is None or error.stage != c.stage:
                raise SystemExit(f"{c.name}: expected stage {c.stage}, got {error.stage}/{error.reason}")
            shown = (str(error), error.wire_error)
            if wire is None:
                wire = shown
            elif shown != wire:
                raise SystemExit(f"{c.name}: wire view {shown} differs from {wire}")
        else:
            if c.stage is not None:
                raise SystemExit(f"{c.name}: expected a rejection at {c.stage}, got a verified document")

    verify = codec.verify
    budget_ns = int(args.seconds * len(classes) * 1e9)
    start = time.perf_counter_ns()
    rounds = 0
    while time.perf_counter_ns() - start < budget_ns:
        for offset in range(len(classes)):
            c = classes[(rounds + offset) % len(classes)]
            document = c.document
            rejected = 0
            begin = time.perf_counter_ns()
            for _ in range(BATCH):
                try:
                    verify(kind, document, resolver)
                except SignedDocumentVerificationError:
                    rejected += 1
            spent = time.perf_counter_ns() - begin
            # The verdict is known: a class that changes its verdict mid-run is a broken bench.
            if rejected != (0 if c.stage is None else BATCH):
                raise SystemExit(f"{c.name}: {rejected}/{BATCH} rejected in a batch")
            c.total_ns += spent
            c.tries += BATCH
            c.batch_means_ns.append(spent / BATCH)
        rounds += 1

    means: List[float] = []
    medians: List[float] = []
    for c in classes:
        ordered = sorted(c.batch_means_ns)
        mean_us = c.total_ns / c.tries / 1000
        p10, p50, p90 = (percentile(ordered, p) / 1000 for p in (0.1, 0.5, 0.9))
        line = {
            "name": c.name,
            "stage": c.stage,
            "mean_us": round(mean_us, 2),
            "p10_us": round(p10, 2),
            "p50_us": round(p50, 2),
            "p90_us": round(p90, 2),
            "tries": c.tries,
        }
        print(json.dumps(line), flush=True)
        if c.stage is not None:
            means.append(mean_us)
            medians.append(p50)
    summary = {
        "name": "reject.max_over_min",
        "mean_ratio": round(max(means) / min(means), 3),
        "median_ratio": round(max(medians) / min(medians), 3),
        "target": 1.05,
        "rounds": rounds,
    }
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
