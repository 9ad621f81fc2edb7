// Conversations and Messages through the Core on both backends (§9, §4 invariant 2): the Rust
// engine decides message.* Commands on the generic perform path. A positive and a negative
// Command of the family, with the Event kind and the §19 wire code; nothing is applied on refusal.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { backends } from './support.mjs';
import { COORDINATOR, GROUP, OWNER, createPayload, organization, worker } from './core-support.mjs';

const MAIN = 'urn:missionweaveprotocol:conversation:finance-main';
const M1 = 'urn:missionweaveprotocol:message:js-1';
const M2 = 'urn:missionweaveprotocol:message:js-2';

let apis;
before(async () => { apis = await backends(); });

const post = (org, actor, messageId, extra = {}) => org.command('message.post', actor, {
  messageId, conversationId: MAIN, content: [{ type: 'text', text: 'Deploy immediately.' }], ...extra,
});

async function headOf(core) {
  return (await core.replay(GROUP, { after: 0, limit: 10_000 })).events.length;
}

async function refusedWith(api, core, signed, code) {
  const before = await headOf(core);
  const error = await core.perform(signed).then(() => assert.fail(`applied; expected ${code}`), (e) => e);
  assert.ok(error instanceof api.MissionWeaveProtocolError, `${error?.name}: ${error?.message}`);
  assert.equal(error.code, code, `${error.code}/${error.reason}: ${error.message}`);
  assert.equal(await headOf(core), before, 'a refused Command appends nothing');
  return error;
}

for (const name of ['napi (ESM)', 'wasm (ESM)']) {
  describe(`Core messages: ${name}`, () => {
    test('message.post and message.redact emit their Events; the Message never carries authority', async (t) => {
      const api = apis[name];
      const org = organization(api);
      const core = await org.ready();
      t.after(() => core.free());
      await core.perform(org.command('mission.create', OWNER, createPayload()));
      const posted = await core.perform(post(org, COORDINATOR, M1));
      assert.equal(posted.event.kind, 'message.posted');
      assert.equal(posted.event.document.conversationId, MAIN);
      const message = posted.event.document.payload.message;
      assert.equal(message.authority, false);
      api.validateSchema('message', JSON.stringify(message));
      const redacted = await core.perform(org.command('message.redact', OWNER, {
        messageId: M2, targetMessageId: M1, reason: 'policy: no deploy orders in chat',
      }));
      assert.equal(redacted.event.kind, 'message.redacted');
      assert.equal(redacted.event.document.payload.message.kind, 'redaction');
      assert.equal(redacted.event.document.payload.targetState, 'redacted');
      // Queried by ID within its Group (§9: Message IDs are Group-scoped).
      const found = await core.query({ kind: 'message', entityId: M1, groupId: GROUP });
      assert.equal(found.state, 'redacted');
    });

    test('a non-member, an authority claim and a second redaction are refused', async (t) => {
      const api = apis[name];
      const org = organization(api);
      const core = await org.ready();
      t.after(() => core.free());
      await core.perform(org.command('mission.create', OWNER, createPayload()));
      // worker(1) holds no Membership in the Group (§9: any Group member may post).
      await refusedWith(api, core, post(org, worker(1), M1), 'MEMBERSHIP_REQUIRED');
      // The conformance vector message-authorizes-action: `authority: true` never commits.
      await refusedWith(api, core, post(org, OWNER, M1, { authority: true }), 'SCHEMA_VALIDATION_FAILED');
      await core.perform(post(org, OWNER, M1));
      // Only the author corrects.
      const forbidden = await refusedWith(api, core, org.command('message.correct', COORDINATOR, {
        messageId: M2, targetMessageId: M1, reason: 'r', content: [{ type: 'text', text: 'x' }],
      }, { extra: { coordinatorEpoch: 1 } }), 'AUTH_FORBIDDEN');
      assert.equal(forbidden.reason, 'not_message_author');
    });
  });
}
