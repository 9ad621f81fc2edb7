// Command → Event through the Node `AgentClient` against the Rust server binary (`--dev`: TLS 1.3
// on loopback, SQLite store seeded by a JavaScript Core), the client beside the server on one
// machine. Prints one JSON line per phase:
//   paced:        Commands sent one at a time (each awaited): p50/p99 of send → its Event (ms)
//   closed loop:  `--window` Commands in flight: Commands/s, and p50/p99 of send → Event
// Each Command is signed before its clock starts (signing is the caller's cost, not the
// client's); the client verifies every Event (six stages, Group Authority signer) in Rust.
// A benchmark, not a test: it asserts nothing about time.
//
//   cargo build --release -p missionweaveprotocol-server --bin missionweaveprotocol-server
//   node js/bench/client-bench.mjs [--commands N] [--window W]
import { performance } from 'node:perf_hooks';

import { backends } from '../test/support.mjs';
import { COORDINATOR, GROUP, OTHER_GROUP, organization, rustServer } from '../test/network-support.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const N = option('--commands', 1000);
const WINDOW = option('--window', 16);

const api = (await backends())['napi (ESM)'];
const org = organization(api);
const server = await rustServer(org);
const client = org.client(server.url, COORDINATOR, { ca: server.ca });

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function summary(name, latencies, seconds, extra = {}) {
  const sorted = [...latencies].sort((a, b) => a - b);
  console.log(JSON.stringify({
    name, commands: latencies.length, commands_per_sec: Math.round(latencies.length / seconds),
    p50_ms: Number(percentile(sorted, 50).toFixed(2)), p99_ms: Number(percentile(sorted, 99).toFixed(2)), ...extra,
  }));
}

try {
  const epoch = await client.connect();
  await client.subscribe([GROUP, OTHER_GROUP]);
  const groups = [GROUP, OTHER_GROUP];
  const signed = (n) => Array.from({ length: n }, (_, i) => org.post(groups[i % 2], COORDINATOR, epoch, `bench ${i}`));

  // Paced: one Command at a time.
  const paced = signed(Math.max(10, Math.floor(N / 4)));
  const pacedLatencies = [];
  let start = performance.now();
  for (const command of paced) {
    const t = performance.now();
    await client.send(command);
    pacedLatencies.push(performance.now() - t);
  }
  summary('node client → rust server, paced (1 in flight)', pacedLatencies, (performance.now() - start) / 1000);

  // Closed loop: WINDOW Commands in flight.
  const commands = signed(N);
  const latencies = [];
  let next = 0;
  start = performance.now();
  async function lane() {
    while (next < commands.length) {
      const command = commands[next++];
      const t = performance.now();
      await client.send(command);
      latencies.push(performance.now() - t);
    }
  }
  await Promise.all(Array.from({ length: WINDOW }, lane));
  summary(`node client → rust server, closed loop (${WINDOW} in flight)`, latencies, (performance.now() - start) / 1000, { window: WINDOW });
} finally {
  await client.close();
  await server.stop();
}
