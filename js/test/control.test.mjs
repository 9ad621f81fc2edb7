// The signed human control interface (HumanIdentity, HumanControl; reference control.py §1.6)
// against a real Core on both backends: each operation's Command is built by the core, signed
// with the human's key, verified by the Core against its Registry and applied; the interface's
// own refusals are ArgumentErrors with nothing performed. Mirrors python/tests/test_control.py.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { backends } from './support.mjs';
import {
  AUTHORITY, CONVERSATION, COORDINATOR, GROUP, HASH_A, HASH_B, MISSION, NOW, OWNER, SELECTION_BASIS, W1,
  contract, organization, worker,
} from './core-support.mjs';

const RESOURCE = 'urn:missionweaveprotocol:resource:prod-app';
const BUDGET = { toolCallLimit: 100, modelTokenLimit: 10000 };
const EXTENSION = 'urn:missionweaveprotocol:extension:human-control-create';

let apis;
before(async () => { apis = await backends(); });

function ownerIdentity(api, org) {
  const { key } = org.keys.get(OWNER);
  return new api.HumanIdentity(OWNER, key.toSeedBase64url(), key.publicKeyBase64url, key.keyId);
}

const createArgs = (extra = {}) => ({
  missionId: MISSION, groupId: GROUP, coordinatorId: COORDINATOR, title: 'Close the books',
  objective: 'Close the July books', definitionOfDone: ['The ledger balances'],
  deadline: '2026-08-01T00:00:00Z', budget: BUDGET, permissions: ['ledger.read'], ...extra,
});

async function created(api, t) {
  const org = organization(api);
  const core = await org.ready();
  t.after(() => core.free());
  const control = new api.HumanControl(core, ownerIdentity(api, org), { clock: () => NOW });
  const receipt = await control.create(createArgs());
  return { org, core, control, receipt };
}

const submit = (org, core, epoch = 1) => core.perform(org.byCoordinator('mission.submit_for_approval',
  { artifactHashes: [HASH_A, HASH_B] }, { extra: { coordinatorEpoch: epoch } }));
const logLength = async (core) => (await core.replay(GROUP, { after: 0, limit: 10_000 })).events.length;

async function rejected(promise) {
  return promise.then(() => assert.fail('expected a refusal'), (e) => e);
}

for (const name of ['napi (ESM)', 'wasm (ESM)']) {
  describe(`HumanControl: ${name}`, () => {
    test('create → direct → request changes → approve, inspect and the accepted Command', async (t) => {
      const api = apis[name];
      const { org, core, control, receipt } = await created(api, t);
      assert.equal(receipt.event.kind, 'mission.created');
      assert.match(JSON.parse(receipt.command.text).actionId, /^human-action:/);
      assert.deepEqual(receipt.event.document.extensions[EXTENSION].data, { title: 'Close the books', permissions: ['ledger.read'] });
      assert.ok(control.identity.verify(receipt.command));

      const content = `  keep the notes exactly  ${'x'.repeat(600)}`;
      const posted = await control.direct(MISSION, content);
      assert.equal(posted.event.kind, 'message.posted');
      assert.deepEqual(posted.event.payload.message.content, [{ type: 'text', text: content }]);

      await submit(org, core);
      const changes = await control.requestChanges(MISSION, 'add the notes');
      assert.equal(changes.event.kind, 'mission.changes_requested');
      assert.equal(JSON.parse(changes.command.text).payload.missionRevision, 2);

      await submit(org, core);
      const [approved, approval] = await control.approve(MISSION, { comments: 'good' });
      assert.equal(approved.event.kind, 'mission.approved');
      const verified = api.verifySignedDocument('approval', JSON.stringify(approval), org.registry);
      assert.equal(verified.principal.id, OWNER);
      assert.equal(approval.kind, 'mission_final');

      const seen = await control.inspect(MISSION);
      assert.equal(seen.mission.state, 'approved');
      assert.equal(seen.group.missionId, MISSION);
      assert.deepEqual([...seen.workItems], []);
      assert.equal(seen.events.at(-1).kind, 'mission.approved');
      assert.equal(await control.acceptedCommand(approved.event.eventId), approved.command);
    });

    test('controlView from the log alone: the Core\'s projections, the same Command, a broken log refused', async (t) => {
      const api = apis[name];
      const { org, core } = await created(api, t);
      await submit(org, core);
      const events = (await core.replay(GROUP, { after: 0, limit: 10_000 })).events.map((e) => e.document);
      const view = api.controlView(OWNER, events);
      const mission = await core.query({ kind: 'mission', entityId: MISSION });
      assert.equal(view.mission.state, 'awaiting_approval');
      assert.equal(view.mission.revision, mission.revision);
      assert.deepEqual(view.membership, { membershipEpoch: 1, state: 'active' });
      const request = {
        operation: 'approve', humanId: OWNER, actionId: 'human-action:view-1', issuedAt: '2026-07-15T09:30:00Z',
        mission: view.mission, membership: view.membership, events, args: {},
      };
      const command = api.controlCommand(request);
      assert.equal(command.kind, 'mission.approve');
      assert.equal(command.expectedRevision, mission.revision);
      assert.deepEqual(command.payload.artifactHashes, [HASH_A, HASH_B]);
      const signed = ownerIdentity(api, org).sign(command);
      assert.equal((await core.perform(signed)).event.kind, 'mission.approved');
      // Nobody else's Membership; a log with its first Event missing is refused.
      assert.equal(api.controlView('urn:missionweaveprotocol:human:mallory', events).membership, null);
      const error = (() => { try { api.controlView(OWNER, events.slice(1)); } catch (e) { return e; } return null; })();
      assert.ok(error instanceof api.ArgumentError, String(error));
      assert.throws(() => api.controlView(OWNER, 'not a list'), api.ArgumentError);
    });

    test('nothing submitted is an ArgumentError and nothing is performed', async (t) => {
      const api = apis[name];
      const { core, control } = await created(api, t);
      const before = await logLength(core);
      for (const attempt of [() => control.requestChanges(MISSION, 'more'), () => control.approve(MISSION)]) {
        const error = await rejected(attempt());
        assert.ok(error instanceof api.ArgumentError, `${error.name}: ${error.message}`);
        assert.equal(error.reason, 'nothing_submitted');
      }
      assert.equal(await logLength(core), before);
    });

    test('create needs a budget and a Definition of Done', async (t) => {
      const api = apis[name];
      const org = organization(api);
      const core = await org.ready();
      t.after(() => core.free());
      const control = new api.HumanControl(core, ownerIdentity(api, org), { clock: () => NOW });
      assert.equal((await rejected(control.create(createArgs({ budget: undefined })))).reason, 'budget_required');
      assert.equal((await rejected(control.create(createArgs({ definitionOfDone: [] })))).reason, 'empty_definition_of_done');
      await assert.rejects(core.query({ kind: 'mission', entityId: MISSION }), api.NotFound);
    });

    test('approveExecution opens the work.start gate', async (t) => {
      const api = apis[name];
      const { org, core, control } = await created(api, t);
      const gated = { ...contract(), sideEffectRisk: 'high_risk', executionApproval: 'human_required',
        allowedResources: [{ resource: RESOURCE, operations: ['production.deploy'] }] };
      await core.perform(org.byCoordinator('work.authorize', { workItemId: W1, conversationId: CONVERSATION, contract: gated }));
      await core.perform(org.byCoordinator('work.offer', { workItemId: W1, selectionBasis: SELECTION_BASIS,
        candidates: [{ offerId: 'urn:missionweaveprotocol:offer:r1-0', agentId: worker(1), agentCardVersion: 1 }] }));
      const accepted = await core.perform(org.command('work.accept_offer', worker(1),
        { workItemId: W1, capabilityPins: [{ id: 'text.summarise', version: '1.2.0' }] }));
      const { ownershipEpoch, ownershipLeaseId } = accepted.event.payload;
      const start = () => org.command('work.start', worker(1), { workItemId: W1, ownershipEpoch, leaseId: ownershipLeaseId });
      await assert.rejects(core.perform(start()), api.PolicyViolation);
      const [receipt, stored] = await control.approveExecution(MISSION, {
        workItemId: W1, ownershipEpoch, operations: ['production.deploy'], resources: [RESOURCE] });
      assert.equal(receipt.event.kind, 'approval.execution.granted');
      assert.equal(stored.workItemId, W1);
      assert.equal((await core.perform(start())).event.kind, 'work.started');
    });

    test('replaceCoordinator fences the old Coordinator and cancel closes the Mission', async (t) => {
      const api = apis[name];
      const { org, core, control } = await created(api, t);
      const replaced = await control.replaceCoordinator(MISSION, worker(1));
      assert.equal(replaced.event.kind, 'mission.coordinator.assigned');
      assert.equal(JSON.parse(replaced.command.text).payload.leaseId, `${MISSION}:coordinator-lease:2`);
      await assert.rejects(submit(org, core, 1), api.StaleCoordinatorEpoch);
      const cancelled = await control.cancel(MISSION, 'budget cut');
      assert.equal(cancelled.event.kind, 'mission.cancelled');
      assert.equal((await core.query({ kind: 'mission', entityId: MISSION })).state, 'cancelled');
    });

    test('acceptedCommand of an unknown Event is NotFound', async (t) => {
      const api = apis[name];
      const { control, receipt } = await created(api, t);
      assert.equal(await control.acceptedCommand(receipt.event.eventId), receipt.command);
      await assert.rejects(control.acceptedCommand('urn:missionweaveprotocol:event:unknown'), api.NotFound);
    });

    test('a key the Registry does not bind is refused by the Core', async (t) => {
      const api = apis[name];
      const { org, core } = await created(api, t);
      const stranger = api.HumanIdentity.generate(OWNER);
      assert.equal(stranger.keyId, `${OWNER}:signing-key`);
      assert.ok(!Object.keys(stranger).includes('privateKey'));
      const before = await logLength(core);
      const error = await rejected(new api.HumanControl(core, stranger, { clock: () => NOW }).cancel(MISSION, 'no'));
      assert.ok(error instanceof api.AuthorizationDenied, `${error.name}: ${error.message}`);
      assert.equal(error.code, 'AUTH_INVALID_SIGNATURE');
      assert.equal(await logLength(core), before);
      const owner = ownerIdentity(api, org);
      const byOwner = owner.sign(orgCommand(org));
      assert.ok(owner.verify(byOwner));
      assert.ok(!stranger.verify(byOwner));
      assert.ok(!owner.verify(stranger.sign(orgCommand(org))));
    });

    test('a generated identity bound in the Registry creates a Mission', async (t) => {
      const api = apis[name];
      const org = organization(api);
      const human = 'urn:missionweaveprotocol:human:carol';
      const identity = api.HumanIdentity.generate(human);
      const builder = new api.RegistryBuilder('urn:missionweaveprotocol:organization:acme');
      builder.addKey(org.authorityKey.keyId, org.authority, org.authorityKey.publicKey, '2026-01-01T00:00:00Z');
      builder.addKey(identity.keyId, identity.principal, identity.signingKey.publicKey, '2026-01-01T00:00:00Z');
      const registry = new api.Registry(builder.build());
      builder.free();
      const core = new api.Core({ registry, authority: { type: 'service', id: AUTHORITY }, authorityKey: org.authorityKey, clock: () => NOW });
      t.after(() => core.free());
      const receipt = await new api.HumanControl(core, identity, { clock: () => NOW }).create(createArgs());
      assert.equal(receipt.event.kind, 'mission.created');
      assert.deepEqual(receipt.event.document.actor, identity.principal);
    });
  });
}

/** An unsigned owner Command of the fixture (for the signature checks). */
function orgCommand(org) {
  return org.unsigned('mission.cancel', OWNER, { reason: 'r' });
}
