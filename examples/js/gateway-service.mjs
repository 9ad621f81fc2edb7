// A Node service on the network: a Group Authority `Core`, its `GroupGateway` attached to a plain
// `http` server (WebSocket route `/ws`, the `ws` package), and an Agent that connects with
// `AgentClient`, authenticates, subscribes, sends a Command and reads the verified Events in Group
// order. Every frame decision (HELLO, SUBSCRIBE, COMMAND, errors, delivery) is the Rust sans-IO
// gateway's; Node moves the bytes. Use `https.createServer` (TLS 1.3) in production: the gateway
// attaches to either.
//
//   npm install missionweaveprotocol && node gateway-service.mjs
import { createServer } from 'node:http';
import {
  AgentClient, AgentKeyRegistry, CommandRefused, Core, GroupGateway, Registry, RegistryBuilder, SessionAuthority, SigningKey,
  SqliteAgentStore, signDocument,
} from 'missionweaveprotocol';

const ORG = 'urn:missionweaveprotocol:organization:acme';
const OWNER = 'urn:missionweaveprotocol:human:alice';
const AGENT = 'urn:missionweaveprotocol:agent:planner';
const AUTHORITY = 'urn:missionweaveprotocol:service:group-authority';
const GROUP = 'urn:missionweaveprotocol:group:finance';
const MAIN = 'urn:missionweaveprotocol:conversation:finance-main';

// 1. The Organization: keys (fixed seeds for the example) and its Registry.
const key = (n) => SigningKey.fromSeed(`urn:missionweaveprotocol:key:${n}`, new Uint8Array(32).fill(n));
const keys = { [OWNER]: key(21), [AGENT]: key(23), [AUTHORITY]: key(30) };
const builder = new RegistryBuilder(ORG);
builder.addKey(keys[OWNER].keyId, { type: 'human', id: OWNER }, keys[OWNER].publicKey, '2020-01-01T00:00:00Z');
builder.addKey(keys[AGENT].keyId, { type: 'agent', id: AGENT }, keys[AGENT].publicKey, '2020-01-01T00:00:00Z');
builder.addKey(keys[AUTHORITY].keyId, { type: 'service', id: AUTHORITY }, keys[AUTHORITY].publicKey, '2020-01-01T00:00:00Z');
const registry = new Registry(builder.build());

let actions = 0;
function command(actor, type, kind, payload, epochs = {}) {
  const document = {
    protocolVersion: '0.1', actionId: `urn:missionweaveprotocol:action:example-${Date.now()}-${++actions}`,
    actor: { type, id: actor }, ...epochs, groupId: GROUP, kind, correlationId: 'urn:missionweaveprotocol:correlation:1',
    issuedAt: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), payload,
  };
  return signDocument('command', JSON.stringify(document), { key: keys[actor] });
}

// 2. The authoritative Core, with one Group (the MissionOwner creates the Mission).
const core = new Core({ registry, authority: { type: 'service', id: AUTHORITY }, authorityKey: keys[AUTHORITY] });
await core.perform(command(OWNER, 'human', 'mission.create', {
  missionId: 'urn:missionweaveprotocol:mission:close-books', objective: 'Close the books',
  definitionOfDone: [{ criterionId: 'balanced', description: 'The ledger balances', evidenceRequired: ['human_review'] }],
  budget: { modelTokenLimit: 1000, toolCallLimit: 10, currency: 'EUR', financialLimit: 5 },
  deadline: '2099-01-01T00:00:00Z', approvalPolicy: { finalHumanApproval: true, highRiskExecutionApproval: true },
  coordinator: { agentId: AGENT, agentCardVersion: 1, leaseId: 'urn:missionweaveprotocol:lease:coordinator' },
  mainConversationId: MAIN,
}));

// 3. The gateway on an existing http server (port 0: any free port on loopback).
const server = createServer((request, response) => response.writeHead(404).end());
const gateway = new GroupGateway(core, new SessionAuthority(new AgentKeyRegistry())).attach(server);
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
console.log(`gateway: ws://127.0.0.1:<port>${gateway.path}`);

// 4. An Agent: authenticate (HELLO), subscribe from its durable Cursor, send, read in order.
const store = new SqliteAgentStore(':memory:');
const client = new AgentClient(`ws://127.0.0.1:${server.address().port}/ws`, {
  agentId: AGENT, signingKey: keys[AGENT], registry, authorityId: AUTHORITY, store,
});
const epoch = await client.connect();
console.log(`authenticated: session epoch ${epoch}`);
await client.subscribe([GROUP]);
const posted = await client.send(command(AGENT, 'agent', 'message.post', {
  messageId: 'urn:missionweaveprotocol:message:hello', conversationId: MAIN, content: [{ type: 'text', text: 'hello' }],
}, { sessionEpoch: epoch, membershipEpoch: 1 }));
console.log(`sent: ${posted.kind} at sequence ${posted.sequence}`);
for await (const event of client.events(GROUP)) {
  await client.acknowledge(event);
  console.log(`event ${event.sequence}: ${event.kind}`);
  if (event.eventId === posted.eventId) break;
}
console.log(`cursor: ${store.cursor(AGENT, GROUP)}`);

// 5. A refusal is typed, with the wire code (§19): a stale Session Epoch.
try {
  await client.send(command(AGENT, 'agent', 'message.post', {
    messageId: 'urn:missionweaveprotocol:message:late', conversationId: MAIN, content: [{ type: 'text', text: 'late' }],
  }, { sessionEpoch: epoch + 1, membershipEpoch: 1 }));
} catch (error) {
  if (!(error instanceof CommandRefused)) throw error;
  console.log(`refused: ${error.code}`);
}

await client.close();
await gateway.close();
server.close();
