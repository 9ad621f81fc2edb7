// Mean time of a failing verify per failing stage, through the napi addon (issue 9, item 4):
// §6.4 requires stage 3, 4 and 6 rejections to be indistinguishable on the wire, so their timing
// must not tell them apart either. The same classes as the native command
// (`cargo run --release -p missionweaveprotocol --example bench_rejection_timing`): stage 3
// malformed envelope, stage 3 small-order R, stage 4 unknown key, stage 4 wrong Principal,
// stage 6 bad signature, and the accepted Command for reference (not part of the ratio). Each try
// is one `verifySignedDocument` call (the thrown VerificationError included), measured in
// interleaved rounds (a short batch of each, in a rotating order). One JSON line per class
// (`mean_us`, p10/p50/p90 of the batch means, `tries`), then `reject.max_over_min` with the
// max/min ratio of the means and of the medians (target ≤ 1.05).
//
//   node js/bench/rejection-timing.mjs [--seconds S] [--backend napi|wasm]
//
// A benchmark, not a test: it never fails on a figure, but it exits with an error if a class is
// not rejected where it claims to be or the rejections differ on the wire.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const JS = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BUNDLE = resolve(process.env.MWP_PROTOCOL_ROOT ?? join(JS, '..', '..', 'shared', 'protocol'));
const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const SECONDS = Number(option('--seconds', 2));
const BACKEND = option('--backend', 'napi');
if (!['napi', 'wasm'].includes(BACKEND)) throw new Error(`--backend: napi or wasm, not ${BACKEND}`);
/** Verifies per timed batch: long enough to dwarf the clock, short enough to interleave finely. */
const BATCH = 40;
const VECTORS = 'cryptography/vectors/signed-documents';

const api = await import(join(JS, 'dist', BACKEND === 'napi' ? 'node.mjs' : 'node-wasm.mjs'));
const bytes = (path) => new Uint8Array(readFileSync(join(BUNDLE, path)));
const registry = new api.Registry(bytes('cryptography/keys/registry-valid.json'));
const golden = bytes(`${VECTORS}/valid/command.json`);

// The golden Command signed by `crypto-vector-rfc8032-1` but naming a registered key bound to
// another agent: stage 4, signer mismatch (as in the native command).
function wrongPrincipal(document) {
  const text = new TextDecoder().decode(document);
  const from = 'urn:missionweaveprotocol:key:crypto-vector-rfc8032-1';
  if (!text.includes(from)) throw new Error('the golden Command no longer names crypto-vector-rfc8032-1');
  return new TextEncoder().encode(text.replace(from, 'urn:missionweaveprotocol:key:crypto-vector-developer-one'));
}

const classes = [
  ['reject.stage3.malformed-envelope', bytes(`${VECTORS}/invalid/command-signature-wrong-length.json`), 'signature-envelope'],
  ['reject.stage3.small-order-r', bytes(`${VECTORS}/invalid/command-signature-r-small-order.json`), 'signature-envelope'],
  ['reject.stage4.unknown-key', bytes(`${VECTORS}/invalid/command-unknown-key.json`), 'key-resolution'],
  ['reject.stage4.wrong-principal', wrongPrincipal(golden), 'key-resolution'],
  ['reject.stage6.bad-signature', bytes(`${VECTORS}/invalid/command-payload-tamper.json`), 'signature'],
  ['accept.command', golden, null],
].map(([name, document, stage]) => ({ name, document, stage, batchMeansNs: [], totalNs: 0n, tries: 0 }));

// Every class fails where it claims to, and all rejections look the same on the wire.
let wire;
for (const c of classes) {
  let error;
  try {
    api.verifySignedDocument('command', c.document, registry);
  } catch (caught) {
    error = caught;
  }
  if (c.stage === null) {
    if (error !== undefined) throw new Error(`${c.name}: expected a verified document, got ${error}`);
    continue;
  }
  if (!(error instanceof api.VerificationError) || error.stage !== c.stage) {
    throw new Error(`${c.name}: expected a rejection at ${c.stage}, got ${error ? `${error.stage}/${error.reason}` : 'a verified document'}`);
  }
  const shown = JSON.stringify([error.message, error.toWire()]);
  wire ??= shown;
  if (shown !== wire) throw new Error(`${c.name}: wire view ${shown} differs from ${wire}`);
}

const budget = BigInt(Math.round(SECONDS * classes.length * 1e9));
const start = process.hrtime.bigint();
let rounds = 0;
while (process.hrtime.bigint() - start < budget) {
  for (let offset = 0; offset < classes.length; offset += 1) {
    const c = classes[(rounds + offset) % classes.length];
    let rejected = 0;
    const begin = process.hrtime.bigint();
    for (let i = 0; i < BATCH; i += 1) {
      try {
        api.verifySignedDocument('command', c.document, registry);
      } catch {
        rejected += 1;
      }
    }
    const spent = process.hrtime.bigint() - begin;
    // The verdict is known: a class that changes its verdict mid-run is a broken bench.
    if (rejected !== (c.stage === null ? 0 : BATCH)) throw new Error(`${c.name}: ${rejected}/${BATCH} rejected in a batch`);
    c.totalNs += spent;
    c.tries += BATCH;
    c.batchMeansNs.push(Number(spent) / BATCH);
  }
  rounds += 1;
}

const percentile = (sorted, p) => sorted[Math.round((sorted.length - 1) * p)];
const round2 = (x) => Math.round(x * 100) / 100;
const means = [];
const medians = [];
for (const c of classes) {
  const sorted = [...c.batchMeansNs].sort((a, b) => a - b);
  const meanUs = Number(c.totalNs) / c.tries / 1000;
  const [p10, p50, p90] = [0.1, 0.5, 0.9].map((p) => percentile(sorted, p) / 1000);
  console.log(JSON.stringify({
    name: c.name, stage: c.stage, backend: BACKEND, mean_us: round2(meanUs), p10_us: round2(p10), p50_us: round2(p50), p90_us: round2(p90), tries: c.tries,
  }));
  if (c.stage !== null) {
    means.push(meanUs);
    medians.push(p50);
  }
}
const ratio = (values) => Math.round((Math.max(...values) / Math.min(...values)) * 1000) / 1000;
console.log(JSON.stringify({ name: 'reject.max_over_min', backend: BACKEND, mean_ratio: ratio(means), median_ratio: ratio(medians), target: 1.05, rounds }));
registry.free();
