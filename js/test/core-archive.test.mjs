// Group archival through the Core on both backends (§7.4, §15.2, §16): `…core.group_archive` with
// a Group Snapshot signed by the snapshot authority (the Group Authority) emits
// `group.snapshot.created` and `group.archived`; a Mission that is not terminal is refused with
// nothing applied; after archival an old replay cursor is CURSOR_TOO_OLD with the snapshot's
// hash and the Group accepts no further Command. The rules are the Rust core's
// (core/engine/src/archive/); this checks they reach JavaScript through the generic perform.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { backends } from './support.mjs';
import { AUTHORITY, GROUP, HASH_A, NOW_TEXT, OWNER, SERVICE, createPayload, organization } from './core-support.mjs';

const ARCHIVE = 'ext.missionweaveprotocol.core.group_archive';
const SNAPSHOT_ID = 'urn:missionweaveprotocol:snapshot:js-final';

let apis;
before(async () => { apis = await backends(); });

/** A Group Snapshot of GROUP covering `eventIds`, signed by the Group Authority. */
function snapshot(api, org, eventIds) {
  const document = {
    snapshotId: SNAPSHOT_ID,
    groupId: GROUP,
    throughSequence: eventIds.length,
    eventIds,
    stateHash: HASH_A,
    policyLog: [{
      entryId: 'urn:missionweaveprotocol:policy-log:js-1',
      decision: 'verified the exact signed human decision before archiving',
      actor: { type: 'service', id: AUTHORITY },
      occurredAt: NOW_TEXT,
      details: {},
    }],
    createdBy: { type: 'service', id: AUTHORITY },
    createdAt: NOW_TEXT,
  };
  return JSON.parse(api.signDocument('group-snapshot', JSON.stringify(document), { key: org.authorityKey }).text);
}

async function eventIds(core) {
  return (await core.replay(GROUP, { after: 0, limit: 10_000 })).events.map((e) => e.eventId);
}

async function rejection(promise) {
  return promise.then(() => assert.fail('applied'), (e) => e);
}

for (const name of ['napi (ESM)', 'wasm (ESM)']) {
  describe(`Core archival: ${name}`, () => {
    test('a cancelled Mission\'s Group is archived; old cursors are CURSOR_TOO_OLD; writes are refused', async (t) => {
      const api = apis[name];
      const org = organization(api);
      const core = await org.ready({ policyServices: [SERVICE] });
      t.after(() => core.free());
      await core.perform(org.command('mission.create', OWNER, createPayload()));
      await core.perform(org.command('mission.cancel', OWNER, { reason: 'no longer needed' }));
      const history = await eventIds(core);
      const result = await core.perform(org.command(ARCHIVE, SERVICE, { snapshot: snapshot(api, org, history) }));
      assert.deepEqual(result.events.map((e) => e.kind), ['group.snapshot.created', 'group.archived']);
      assert.equal(result.events[1].document.payload.archiveSnapshotId, SNAPSHOT_ID);
      const group = await core.query({ kind: 'group', entityId: GROUP });
      assert.equal(group.state, 'archived');
      api.validateSchema('group', JSON.stringify(group));
      const old = await rejection(core.replay(GROUP, { after: 0 }));
      assert.equal(old.code, 'CURSOR_TOO_OLD');
      assert.equal(old.fields.snapshotArtifactHash, result.events[0].document.payload.snapshotArtifactHash);
      const after = await core.replay(GROUP, { after: history.length });
      assert.deepEqual(after.events.map((e) => e.eventId), result.events.map((e) => e.eventId));
      const late = await rejection(core.perform(org.command('mission.cancel', OWNER, { reason: 'again' })));
      assert.equal(late.code, 'INVALID_STATE_TRANSITION');
    });

    test('an active Mission\'s Group is not archived and nothing is applied', async (t) => {
      const api = apis[name];
      const org = organization(api);
      const core = await org.ready({ policyServices: [SERVICE] });
      t.after(() => core.free());
      await core.perform(org.command('mission.create', OWNER, createPayload()));
      const history = await eventIds(core);
      const error = await rejection(core.perform(org.command(ARCHIVE, SERVICE, { snapshot: snapshot(api, org, history) })));
      assert.ok(error instanceof api.InvalidTransition, `${error.name}: ${error.message}`);
      assert.equal(error.code, 'INVALID_STATE_TRANSITION');
      assert.deepEqual(await eventIds(core), history);
      assert.equal((await core.query({ kind: 'group', entityId: GROUP })).state, 'active');
    });
  });
}
