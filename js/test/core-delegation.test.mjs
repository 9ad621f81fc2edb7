// §9.1 Delegation Grants and §20 Cooperation Override Grants through the Core of both backends
// (the generic perform path onto the Rust engine): each Command applied with its Event kind
// (every Event verified), and refused with its §19 code with nothing appended.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { backends } from './support.mjs';
import {
  AUTHORITY, CONVERSATION, COORDINATOR, GROUP, OTHER_HUMAN, OWNER, W1, contract, createPayload, organization, worker,
} from './core-support.mjs';

const W2 = 'urn:missionweaveprotocol:work:report';
const GRANT = 'urn:missionweaveprotocol:grant:js-1';
const OVERRIDE = 'urn:missionweaveprotocol:grant:js-override';
const EXPIRES = '2026-07-15T10:30:00Z';
const DELEGATE = worker(1);

let apis;
before(async () => { apis = await backends(); });

const grantPayload = () => ({
  grantId: GRANT,
  granteeAgentId: DELEGATE,
  targetWorkItemId: W1,
  allowedCapabilities: [{ id: 'text.summarise', version: '1.0.0' }],
  budget: {
    currency: 'EUR', financialLimit: 0, modelTokenLimit: 0, toolCallLimit: 25,
    computeSecondsLimit: 0, wallClockSecondsLimit: 0, externalSideEffectLimit: 0,
  },
  maxDescendantDepth: 2,
  expiresAt: EXPIRES,
});

const overridePayload = () => ({
  grantId: OVERRIDE,
  policyName: 'queued_work_items',
  beneficiary: { type: 'agent', id: COORDINATOR },
  targetCommandKind: 'work.authorize',
  targetActionId: 'urn:missionweaveprotocol:action:target',
  reason: 'month-end backlog',
  expiresAt: EXPIRES,
});

async function logLength(core) {
  return (await core.replay(GROUP, { after: 0, limit: 10_000 })).events.length;
}

/** Performs; the Event verifies and has `kind`. */
async function applied(api, org, core, signed, kind) {
  const result = await core.perform(signed);
  assert.equal(result.event.kind, kind);
  const verified = api.verifySignedDocument('event', result.event.bytes, org.registry);
  assert.deepEqual({ ...verified.principal }, { type: 'service', id: AUTHORITY });
  return result;
}

/** Expects a refusal with wire `code` and `reason`; nothing is appended. */
async function refused(api, core, signed, code, reason) {
  const before = await logLength(core);
  const error = await core.perform(signed).then(() => assert.fail(`applied; expected ${code}`), (e) => e);
  assert.ok(error instanceof api.MissionWeaveProtocolError, `${error?.name}: ${error?.message}`);
  assert.equal(error.code, code, `${error.code}/${error.reason}: ${error.message}`);
  assert.equal(error.reason, reason);
  assert.equal(await logLength(core), before, 'a refusal appends nothing');
}

async function delegateReady(org) {
  const core = await org.ready();
  await core.perform(org.command('mission.create', OWNER, createPayload()));
  await core.perform(org.command('membership.change', OWNER, {
    member: { type: 'agent', id: DELEGATE }, role: 'work_delegate', scopes: ['work:delegate'],
  }));
  await core.perform(org.byCoordinator('work.authorize', { workItemId: W1, conversationId: CONVERSATION, contract: contract() }));
  return core;
}

const delegatedAuthorize = (org, grantId) => org.command('work.authorize', DELEGATE, {
  workItemId: W2, conversationId: CONVERSATION, contract: contract(), parentWorkItemId: W1, delegationGrantId: grantId,
});

for (const name of ['napi (ESM)', 'wasm (ESM)']) {
  describe(`Core delegation: ${name}`, () => {
    test('membership.grant_delegation: granted by the Coordinator and used by the grantee', async (t) => {
      const api = apis[name];
      const org = organization(api);
      const core = await delegateReady(org);
      t.after(() => core.free());
      await applied(api, org, core, org.byCoordinator('membership.grant_delegation', grantPayload()), 'membership.delegation.granted');
      await applied(api, org, core, delegatedAuthorize(org, GRANT), 'work.authorized');
    });

    test('membership.grant_delegation: another Agent is refused; a forged Grant authorizes nothing', async (t) => {
      const api = apis[name];
      const org = organization(api);
      const core = await delegateReady(org);
      t.after(() => core.free());
      await refused(api, core, org.command('membership.grant_delegation', DELEGATE, grantPayload(), { extra: { coordinatorEpoch: 1 } }),
        'AUTH_FORBIDDEN', 'not_current_coordinator');
      await refused(api, core, delegatedAuthorize(org, 'urn:missionweaveprotocol:grant:forged'), 'AUTH_FORBIDDEN', 'unknown_delegation_grant');
    });

    test('policy.grant_cooperation_override: the MissionOwner grants; another human is refused', async (t) => {
      const api = apis[name];
      const org = organization(api);
      const core = await org.ready();
      t.after(() => core.free());
      await core.perform(org.command('mission.create', OWNER, createPayload()));
      await refused(api, core, org.command('policy.grant_cooperation_override', OTHER_HUMAN, overridePayload()),
        'AUTH_FORBIDDEN', 'not_owner_or_policy');
      await applied(api, org, core, org.command('policy.grant_cooperation_override', OWNER, overridePayload()),
        'policy.cooperation_override.granted');
      // A Command citing an unknown override is refused before anything applies.
      await refused(api, core, org.byCoordinator('work.authorize', { workItemId: W1, conversationId: CONVERSATION, contract: contract() },
        { extra: { cooperationOverrideGrantId: 'urn:missionweaveprotocol:grant:forged' } }), 'AUTH_FORBIDDEN', 'unknown_override_grant');
    });
  });
}
