// Scheduling benchmark: admit + dispatch + complete 10,000 WorkItems over 8 Groups (8 slots,
// priorities (37·i mod 201) − 100) natively (a Rust process: `mwp-native-baselines` of the dev-only testkit), through the napi API and
// through the WebAssembly build in Node. One JSON line per figure (best of ROUNDS runs, ms):
//   {"name": "schedule_10k.napi", "ms": ..., "items": 10000}
//
//   node js/bench/scheduling.mjs [--rounds N] [--items N]
import { execFileSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const JS = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const ROUNDS = option('--rounds', 7);
const N = option('--items', 10_000);
const T0 = 1_767_225_600_000;

const offers = Array.from({ length: N }, (_, i) => ({
  workId: `urn:uuid:00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`,
  groupId: `urn:uuid:6a1f0000-0000-4000-8000-${(i % 8).toString(16).padStart(12, '0')}`,
  priority: ((i * 37) % 201) - 100,
}));

// Everything a Worker does through the public API: one bulk admission, then one schedule()
// per tick and one apply() per dispatch.
function workload(api) {
  const start = process.hrtime.bigint();
  const s = new api.Scheduler({ capacitySlots: 8, maxWorkItems: N, maxWorkItemsPerGroup: N });
  const admitted = s.admitMany(offers, T0);
  if (!admitted.every((d) => d.accepted)) throw new Error('declined');
  let done = 0;
  let t = T0;
  while (done < N) {
    t += 1;
    const actions = s.schedule(t);
    if (actions.length === 0) throw new Error('stalled');
    for (const d of actions) {
      s.apply(d.workId, { kind: 'completed', generation: d.generation }, t);
      done += 1;
    }
  }
  return Number(process.hrtime.bigint() - start) / 1e6;
}

const BASELINES = process.env.MWP_NATIVE_BASELINES ?? join(JS, '..', 'target', 'release', 'mwp-native-baselines');
const napi = await import(join(JS, 'dist', 'node.mjs'));
const wasm = await import(join(JS, 'dist', 'node-wasm.mjs'));
const candidates = {
  [`schedule_${N / 1000}k.native`]: () => Number(execFileSync(BASELINES, ['schedule', String(N)], { encoding: 'utf8' })) * 1e3,
  [`schedule_${N / 1000}k.napi`]: () => workload(napi),
  [`schedule_${N / 1000}k.wasm_node`]: () => workload(wasm),
};
const best = Object.fromEntries(Object.keys(candidates).map((k) => [k, Infinity]));
for (const run of Object.values(candidates)) run();
for (let round = 0; round < ROUNDS; round += 1) {
  // Interleaved, so load from other processes hits every candidate alike.
  for (const [name, run] of Object.entries(candidates)) best[name] = Math.min(best[name], run());
}
for (const [name, ms] of Object.entries(best)) console.log(JSON.stringify({ name, ms: Number(ms.toFixed(2)), items: N, groups: 8 }));
