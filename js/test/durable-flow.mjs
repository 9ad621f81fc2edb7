// One Work flow on a durable store, then a new Core over a new store on the same database: what
// every durable backend must do (SQLite: sql-store.test.mjs, PostgreSQL: postgresql-store.test.mjs).
import assert from 'node:assert/strict';

import { CONVERSATION, GROUP, MISSION, OWNER, SELECTION_BASIS, W1, contract, createPayload, worker } from './core-support.mjs';

export const eventIds = (tag) => `urn:missionweaveprotocol:event:${tag}-`;

/** create, membership, authorize, offer, accept: five Commands of GROUP (signed once, reusable). */
export function firstCommands(org) {
  return [
    org.command('mission.create', OWNER, createPayload()),
    org.command('membership.change', OWNER, { member: { type: 'agent', id: worker(1) }, role: 'worker', scopes: ['work:execute'] }),
    org.byCoordinator('work.authorize', { workItemId: W1, conversationId: CONVERSATION, contract: contract() }),
    org.byCoordinator('work.offer', {
      workItemId: W1,
      candidates: [{ offerId: 'urn:missionweaveprotocol:offer:r1-0', agentId: worker(1), agentCardVersion: 1 }],
      selectionBasis: SELECTION_BASIS,
    }),
    org.command('work.accept_offer', worker(1), { workItemId: W1, capabilityPins: [{ id: 'text.summarise', version: '1.2.0' }] }),
  ];
}

/** On `store` (new, empty): the five Commands, six more Groups at once; then close and free. */
export async function firstFlow(api, org, store, commands) {
  await store.initialize();
  const core = await org.ready({ store, eventIdPrefix: eventIds('first') });
  const results = [];
  for (const command of commands) results.push(await core.perform(command));
  assert.deepEqual(results.map((r) => r.event.sequence), [1, 2, 3, 4, 5]);
  assert.ok(results.every((r) => !r.duplicate && r.groupId === GROUP));
  // Commands of several Groups and of one Group at once: one contiguous log each.
  const others = Array.from({ length: 6 }, (_, i) => {
    const unsigned = org.unsigned('mission.create', OWNER, createPayload(`${MISSION}-${i}`));
    unsigned.groupId = `${GROUP}-${i}`;
    return api.signDocument('command', JSON.stringify(unsigned), { key: org.keys.get(OWNER).key });
  });
  await Promise.all(others.map((c) => core.perform(c)));
  await store.close();
  core.free();
  store.free();
  return results;
}

/** On `again` (a new store on the first one's database): the same Events, the duplicate
 * answered with its first Event, the log continued, the states of an InMemoryStore run. */
export async function secondFlow(api, org, again, commands, results) {
  await again.initialize();
  // The Agents' sessions are stored: no session_open again.
  const next = org.core({ store: again, eventIdPrefix: eventIds('second') });
  const page = await next.replay(GROUP, { after: 0, limit: 100 });
  assert.deepEqual(page.events.map((e) => e.text), results.map((r) => r.event.text));
  for (let i = 0; i < 6; i++) assert.equal((await next.replay(`${GROUP}-${i}`)).lastSequence, 1);
  // The same signed Command answers its first result again (§15.1).
  const duplicate = await next.perform(commands[0]);
  assert.equal(duplicate.duplicate, true);
  assert.equal(duplicate.event.text, results[0].event.text);
  // The log continues where it stopped, and the state is the one the first Core left.
  const { ownershipEpoch, ownershipLeaseId } = results[4].event.payload;
  const start = () => org.command('work.start', worker(1), { workItemId: W1, ownershipEpoch, leaseId: ownershipLeaseId });
  const started = await next.perform(start());
  assert.equal(started.event.kind, 'work.started');
  assert.equal(started.event.sequence, 6);
  // The same Commands on an InMemoryStore lead to the same states.
  const memory = await org.ready({ eventIdPrefix: eventIds('memory') });
  for (const command of commands) await memory.perform(command);
  await memory.perform(start());
  for (const [kind, entityId] of [['work_item', W1], ['mission', MISSION]]) {
    const durable = await next.query({ kind, entityId });
    const reference = await memory.query({ kind, entityId });
    assert.equal(durable.state, reference.state, kind);
    assert.equal(durable.revision, reference.revision, kind);
  }
  assert.deepEqual((await next.replay(GROUP)).events.map((e) => e.sequence), [1, 2, 3, 4, 5, 6]);
  await again.close();
  next.free();
  memory.free();
}
