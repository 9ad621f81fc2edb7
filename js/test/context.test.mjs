// The context module on both backends (§13.3, §7.4): a Context Package of a real Core's Events
// verifies under the normative codec and installs into its Group only; knowledge keeps the
// package's provenance; the archival service's Group Snapshot is accepted by the Core. The
// rules are the core's (`authority::context::call`); the same refusals as Python's test.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { backends } from './support.mjs';
import { AUTHORITY, COORDINATOR, GROUP, MISSION, NOW, OWNER, SERVICE, createPayload, organization } from './core-support.mjs';

let apis;
before(async () => { apis = await backends(); });

const POLICY_LOG = [{
  entryId: 'urn:missionweaveprotocol:policy-log:js-ctx', decision: 'archive',
  actor: { type: 'service', id: AUTHORITY }, occurredAt: '2026-07-15T09:30:00Z', details: {},
}];

async function history(org, options = {}) {
  const core = await org.ready(options);
  await core.perform(org.command('mission.create', OWNER, createPayload()));
  await core.perform(org.command('mission.cancel', OWNER, { reason: 'done' }));
  return { core, events: (await core.replay(GROUP, { after: 0, limit: 100 })).events };
}

function refusal(fn) {
  try { fn(); } catch (error) { return error; }
  return assert.fail('accepted');
}

for (const name of ['napi (ESM)', 'wasm (ESM)']) {
  describe(`context: ${name}`, () => {
    test('a package of real Events verifies under the codec and installs into its Group only', async (t) => {
      const api = apis[name];
      const org = organization(api);
      const { core, events } = await history(org);
      t.after(() => core.free());
      const service = new api.ContextPackageService({ agentId: COORDINATOR, signingKey: org.keys.get(COORDINATOR).key });
      const pkg = service.publish({
        missionId: MISSION, groupId: GROUP, version: 1, events, summary: 'Opened, then cancelled.',
        decisions: [{ description: 'cancel', sourceEventIds: [events.at(-1).eventId] }], generatedAt: NOW,
      });
      assert.equal(pkg.sourceEventRange.fromSequence, 1);
      assert.equal(pkg.sourceEventRange.toSequence, events.length);
      assert.equal('workItemId' in pkg, false);
      // The normative codec accepts it against the Organization's Registry as it is.
      api.verifySignedDocument('context-package', JSON.stringify(pkg), org.registry);
      service.verify(pkg);
      service.verify(pkg, { registry: org.registryBytes });
      const tampered = { ...pkg, summary: 'Something else.' };
      assert.ok(refusal(() => service.verify(tampered)) instanceof api.VerificationError);
      // The Agent runtime is the Node entry's (napi); on WebAssembly a recording session stands in.
      let session;
      let installedValues = () => undefined;
      if (name.startsWith('napi')) {
        const scheduler = new api.Scheduler({ capacitySlots: 1 });
        assert.ok(scheduler.admit({ workId: 'urn:w:1', groupId: GROUP }, NOW).accepted);
        const [dispatch] = scheduler.schedule(NOW);
        session = new api.AgentRuntime(COORDINATOR, scheduler).startSession(1);
        installedValues = () => session.prepare(dispatch).values;
      } else {
        const installed = new Map();
        session = { installGroupContext: (groupId, values, { revision }) => installed.set(groupId, { values, revision }) };
        installedValues = () => installed.get(GROUP)?.values;
      }
      service.install(pkg, session, { expectedMissionId: MISSION });
      assert.equal(installedValues().contextPackageId, pkg.contextPackageId);
      assert.match(installedValues().contextPackageHash, /^sha256:[0-9a-f]{64}$/);
      const scope = refusal(() => service.install(pkg, session, { expectedMissionId: 'urn:missionweaveprotocol:mission:x' }));
      assert.ok(scope instanceof api.ContextPackageError);
      assert.equal(scope.code, 'AUTH_FORBIDDEN');
      assert.equal(scope.reason, 'scope_mismatch');
    });

    test('gaps, citations outside the range and broken version chains are refused', async (t) => {
      const api = apis[name];
      const org = organization(api);
      const { core, events } = await history(org);
      t.after(() => core.free());
      const service = new api.ContextPackageService({ agentId: COORDINATOR, signingKey: org.keys.get(COORDINATOR).key });
      const base = { missionId: MISSION, groupId: GROUP, version: 1, summary: 's', generatedAt: NOW };
      const gap = refusal(() => service.publish({ ...base, events: [events[1], events[0]] }));
      assert.ok(gap instanceof api.ContextPackageError);
      assert.deepEqual([gap.code, gap.reason], ['PROTOCOL_VIOLATION', 'source_range_gap']);
      const outside = refusal(() => service.publish({ ...base, events: events.slice(0, 1), decisions: [{ description: 'd', sourceEventIds: [events.at(-1).eventId] }] }));
      assert.equal(outside.reason, 'decision_outside_range');
      const chain = refusal(() => service.publish({ ...base, events, previousContextPackageId: 'urn:missionweaveprotocol:context:x' }));
      assert.equal(chain.reason, 'version_chain');
      assert.ok(refusal(() => service.publish({ ...base, events, summary: '' })) instanceof api.SigningError);
    });

    test('knowledge keeps the package provenance; an altered publication is refused', async (t) => {
      const api = apis[name];
      const org = organization(api);
      const { core, events } = await history(org);
      t.after(() => core.free());
      const key = org.keys.get(COORDINATOR).key;
      const pkg = new api.ContextPackageService({ agentId: COORDINATOR, signingKey: key })
        .publish({ missionId: MISSION, groupId: GROUP, version: 1, events, summary: 's', generatedAt: NOW });
      const publisher = new api.KnowledgePublisher({ publisher: { type: 'agent', id: COORDINATOR }, signingKey: key });
      const publication = publisher.publish({ context: pkg, artifactHash: `sha256:${'e'.repeat(64)}`,
        targetScope: 'urn:missionweaveprotocol:organization:acme', classification: 'internal', summary: 'lessons', publishedAt: NOW });
      assert.deepEqual(publication.provenanceEventIds, pkg.sourceEventRange.eventIds);
      publisher.verify(publication, { context: pkg });
      const altered = refusal(() => publisher.verify({ ...publication, classification: 'public' }));
      assert.deepEqual([altered.code, altered.reason], ['AUTH_INVALID_SIGNATURE', 'bad_signature']);
      assert.ok(refusal(() => publisher.publish({ context: pkg, artifactHash: 'md5:0', targetScope: 'x',
        classification: 'internal', summary: 's', publishedAt: NOW })) instanceof api.ContextPackageError);
    });

    test('the archival service snapshot is accepted by the Core; a gap is refused', async (t) => {
      const api = apis[name];
      const org = organization(api);
      const { core, events } = await history(org, { policyServices: [SERVICE] });
      t.after(() => core.free());
      const archive = new api.SnapshotArchive({ authority: { type: 'service', id: AUTHORITY }, signingKey: org.authorityKey });
      const snapshot = archive.archive({ groupId: GROUP, events, state: { mission: 'cancelled' }, policyLog: POLICY_LOG, createdAt: NOW + 1000 });
      assert.equal(archive.get(snapshot.snapshotId), snapshot);
      archive.verify(snapshot);
      const result = await core.perform(org.command('ext.missionweaveprotocol.core.group_archive', SERVICE, { snapshot }));
      assert.deepEqual(result.events.map((e) => e.kind), ['group.snapshot.created', 'group.archived']);
      const gap = refusal(() => archive.archive({ groupId: GROUP, events: events.slice(1), policyLog: POLICY_LOG, createdAt: NOW }));
      assert.equal(gap.reason, 'snapshot_coverage');
      assert.ok(refusal(() => archive.get('urn:missionweaveprotocol:snapshot:none')) instanceof api.ArgumentError);
    });
  });
}
