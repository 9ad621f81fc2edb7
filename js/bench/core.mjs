// `await core.perform(...)` throughput of the authoritative Core through the napi addon (each
// call an AsyncTask on the libuv pool) and, for comparison, the WebAssembly build (synchronous
// in a Promise). Commands are signed before the clock starts; each perform verifies the wire
// bytes (six stages, freshness) and applies them in memory. One JSON line per figure:
//   {"name": ..., "ops_per_sec": ..., "cpu_ops_per_sec": ..., "commands": ..., "in_flight": ..., "threadpool": ...}
// `ops_per_sec` is wall time; `cpu_ops_per_sec` divides by the process's CPU time (all threads,
// `process.cpuUsage`), which other load on a shared machine does not inflate. The verify-only
// rate of the same Command bytes (synchronous `verifySignedDocument`) is printed alongside.
//
//   node js/bench/core.mjs [--commands N]
//
// Workloads: `mission.create` of N distinct Missions (N Groups: never contended) awaited one at
// a time and with 64 in flight; `mission.renew_coordinator` in one Group (its log grows to N,
// every Command serialized by the Group's sequence check).
import { join } from 'node:path';

import { DIST } from '../test/support.mjs';
import { COORDINATOR, OWNER, createPayload, organization } from '../test/core-support.mjs';

const args = process.argv.slice(2);
const N = Number(args.includes('--commands') ? args[args.indexOf('--commands') + 1] : 10_000);
const emit = (line) => console.log(JSON.stringify(line));

function creates(org, tag) {
  return Array.from({ length: N }, (_, i) => {
    const unsigned = org.unsigned('mission.create', OWNER, createPayload(`urn:missionweaveprotocol:mission:${tag}-${i}`));
    unsigned.groupId = `urn:missionweaveprotocol:group:${tag}-${i}`;
    return org.api.signDocument('command', JSON.stringify(unsigned), { key: org.keys.get(OWNER).key }).bytes;
  });
}

function renewals(org) {
  return Array.from({ length: N }, () => org.byCoordinator('mission.renew_coordinator', {}).bytes);
}

async function run(core, commands, inFlight) {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  if (inFlight === 1) {
    for (const bytes of commands) await core.perform(bytes);
  } else {
    let next = 0;
    const lane = async () => {
      while (next < commands.length) await core.perform(commands[next++]);
    };
    await Promise.all(Array.from({ length: inFlight }, lane));
  }
  return rates(commands.length, start, cpu);
}

function rates(count, start, cpu) {
  const wall = Number(process.hrtime.bigint() - start) / 1e9;
  const used = process.cpuUsage(cpu);
  const cpuSeconds = (used.user + used.system) / 1e6;
  return { ops_per_sec: Math.round(count / wall), cpu_ops_per_sec: Math.round(count / cpuSeconds) };
}

const threadpool = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
for (const [backend, entry] of [['napi', 'node.mjs'], ['wasm', 'node-wasm.mjs']]) {
  const api = await import(join(DIST, entry));
  const org = organization(api);
  {
    const commands = creates(org, `${backend}-verify`);
    const cpu = process.cpuUsage();
    const start = process.hrtime.bigint();
    for (const bytes of commands) api.verifySignedDocument('command', bytes, org.registry);
    emit({ name: `${backend}_verify_command_only`, ...rates(commands.length, start, cpu), commands: N });
  }
  for (const [workload, inFlight] of [['create_distinct_groups', 1], ['create_distinct_groups', 64]]) {
    const core = org.core({ eventIdPrefix: `urn:missionweaveprotocol:event:bench-${inFlight}-` });
    const commands = creates(org, `${backend}-${inFlight}`);
    emit({ name: `${backend}_core_perform_${workload}`, ...(await run(core, commands, inFlight)), commands: N, in_flight: inFlight, threadpool });
    core.free();
  }
  const core = await org.ready();
  await core.perform(org.command('mission.create', OWNER, createPayload()));
  emit({ name: `${backend}_core_perform_renew_one_group`, ...(await run(core, renewals(org), 1)), commands: N, in_flight: 1, threadpool, actor: COORDINATOR });
  core.free();
}
