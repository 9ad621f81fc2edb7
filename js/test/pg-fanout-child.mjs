// The other process of pg-fanout.test.mjs: a second Node gateway over the same PostgreSQL
// database (argv[2]). Its Coordinator sends one Message (text argv[3]) through it; the head move
// goes out as `NOTIFY mwp_group_head` (the native HeadFanout). Prints `{eventId, sequence,
// notifying}` as one JSON line, then stays open until its stdin ends.
import { join } from 'node:path';

import { DIST } from './support.mjs';
import { COORDINATOR, GROUP, nodeGateway, organization, within } from './network-support.mjs';

const api = await import(join(DIST, 'node.mjs'));
const [url, text] = process.argv.slice(2);
const org = organization(api);
const store = new api.PostgreSQLStore(url);
await store.initialize();
const host = await nodeGateway(org, { store, seed: false });
const notifying = host.gateway.fanout?.active() ?? false;
const client = org.client(host.url, COORDINATOR);
try {
  const epoch = await within(client.connect(), 'HELLO');
  const event = await within(client.send(org.post(GROUP, COORDINATOR, epoch, text)), 'send');
  console.log(JSON.stringify({ eventId: event.eventId, sequence: event.sequence, notifying }));
} finally {
  await client.close();
  // Open until the parent saw the Event arrive (it ends stdin): the NOTIFY thread is not
  // stopped before it sent.
  process.stdin.resume();
  await new Promise((resolve) => { process.stdin.on('end', resolve); });
  await host.close();
  await store.close();
}
