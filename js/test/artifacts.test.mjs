// Content-addressed Artifact bytes (§13.1) through the napi addon: LocalArtifactStore put/get
// round trip and layout, tampered bytes and a planted file refused, the manifest verified with
// the six-stage verifier (Artifact profile) and accepted by Core.perform of artifact.publish;
// the WebAssembly build refuses the filesystem store with an ArgumentError.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { COORDINATOR, CONVERSATION, GROUP, MISSION, NOW_TEXT, SELECTION_BASIS, W1, contract, createPayload, organization, worker, OWNER } from './core-support.mjs';
import { DIST } from './support.mjs';

const api = await import(join(DIST, 'node.mjs'));
const CONTENT = new TextEncoder().encode('{"total": 42}\n');
const HEX = createHash('sha256').update(CONTENT).digest('hex');

function options(org, overrides = {}) {
  return {
    key: org.keys.get(worker(1)).key, producer: worker(1), agentCardVersion: 1,
    capability: 'text.summarise', capabilityVersion: '1.2.0', missionId: MISSION, groupId: GROUP,
    workItemId: W1, mediaType: 'application/json', classification: 'internal',
    schemaUri: 'https://example.org/report.json', toolVersions: { 'ledger-tool': '2.0' }, createdAt: NOW_TEXT,
    ...overrides,
  };
}

function scratch(t) {
  const dir = mkdtempSync(join(tmpdir(), 'mwp-artifacts-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('put/get round trip under <root>/<hex[:2]>/<hex[2:]>', (t) => {
  const org = organization(api);
  const root = scratch(t);
  const store = new api.LocalArtifactStore(root);
  const signed = store.put(CONTENT, options(org));
  assert.equal(signed.kind, 'artifact');
  const manifest = JSON.parse(signed.text);
  assert.equal(manifest.contentHash, `sha256:${HEX}`);
  assert.equal(api.artifactContentHash(CONTENT), `sha256:${HEX}`);
  assert.equal(manifest.sizeBytes, CONTENT.length);
  assert.deepEqual(manifest.toolVersions, [{ name: 'ledger-tool', version: '2.0' }]);
  assert.deepEqual(readFileSync(join(root, HEX.slice(0, 2), HEX.slice(2))), Buffer.from(CONTENT));
  assert.deepEqual(store.get(manifest), CONTENT);
  assert.deepEqual(store.get(signed.bytes), CONTENT);
  assert.equal(api.verifyArtifactManifest(signed.bytes, org.registry).principal.id, worker(1));
});

test('tampered, truncated and missing bytes raise ArtifactError', (t) => {
  const org = organization(api);
  const root = scratch(t);
  const store = new api.LocalArtifactStore(root);
  const manifest = JSON.parse(store.put(CONTENT, options(org)).text);
  const path = join(root, HEX.slice(0, 2), HEX.slice(2));
  writeFileSync(path, Buffer.from('{"total": 43}\n'));
  assert.throws(() => store.get(manifest), (e) => e instanceof api.ArtifactError && e.reason === 'hash_mismatch'
    && e.code === 'PROTOCOL_VIOLATION' && e.contentHash === manifest.contentHash);
  writeFileSync(path, 'short');
  assert.throws(() => store.get(manifest), (e) => e instanceof api.ArtifactError && e.reason === 'size_mismatch' && e.actualSize === 5);
  rmSync(path);
  assert.throws(() => store.get(manifest), (e) => e instanceof api.ArtifactError && e.reason === 'content_missing');
});

test('a planted file is never overwritten; refused metadata stores nothing', (t) => {
  const org = organization(api);
  const root = scratch(t);
  const store = new api.LocalArtifactStore(root);
  mkdirSync(join(root, HEX.slice(0, 2)));
  writeFileSync(join(root, HEX.slice(0, 2), HEX.slice(2)), 'planted');
  assert.throws(() => store.put(CONTENT, options(org)), (e) => e instanceof api.ArtifactError && e.reason === 'stored_bytes_conflict');
  assert.equal(readFileSync(join(root, HEX.slice(0, 2), HEX.slice(2)), 'utf8'), 'planted');
  const other = new api.LocalArtifactStore(join(root, 'other'));
  assert.throws(() => other.put(CONTENT, options(org, { mediaType: 'not a type' })),
    (e) => e instanceof api.ArtifactError && e.reason === 'unsignable_manifest' && e.code === 'SCHEMA_VALIDATION_FAILED');
  assert.throws(() => other.put(CONTENT, options(org, { key: 'not a key' })), api.ArgumentError);
});

test('a manifest signed with another Agent\'s key fails verification', (t) => {
  const org = organization(api);
  const store = new api.LocalArtifactStore(scratch(t));
  const forged = store.put(CONTENT, options(org, { key: org.keys.get(COORDINATOR).key }));
  assert.throws(() => api.verifyArtifactManifest(forged.bytes, org.registry),
    (e) => e instanceof api.ArtifactError && e.reason === 'manifest_rejected' && e.code === 'AUTH_INVALID_SIGNATURE');
});

test('a manifest from put is accepted by Core.perform of artifact.publish', async (t) => {
  const org = organization(api);
  const core = await org.ready();
  t.after(() => core.free?.());
  await core.perform(org.command('mission.create', OWNER, createPayload()));
  await core.perform(org.command('membership.change', OWNER,
    { member: { type: 'agent', id: worker(1) }, role: 'worker', scopes: ['work:execute'] }));
  await core.perform(org.byCoordinator('work.authorize', { workItemId: W1, conversationId: CONVERSATION, contract: contract() }));
  await core.perform(org.byCoordinator('work.offer', {
    workItemId: W1, candidates: [{ offerId: 'urn:missionweaveprotocol:offer:r1-0', agentId: worker(1), agentCardVersion: 1 }],
    selectionBasis: SELECTION_BASIS,
  }));
  const accepted = await core.perform(org.command('work.accept_offer', worker(1),
    { workItemId: W1, capabilityPins: [{ id: 'text.summarise', version: '1.2.0' }] }));
  const { ownershipEpoch, ownershipLeaseId } = accepted.event.payload;
  const started = await core.perform(org.command('work.start', worker(1), { workItemId: W1, ownershipEpoch, leaseId: ownershipLeaseId }));
  const { executionLeaseId } = started.event.payload;
  const store = new api.LocalArtifactStore(scratch(t));
  const manifest = JSON.parse(store.put(CONTENT, options(org)).text);
  const published = await core.perform(org.command('artifact.publish', worker(1),
    { ownershipEpoch, leaseId: executionLeaseId, manifest }));
  assert.equal(published.event.kind, 'artifact.published');
  assert.deepEqual(store.get(published.event.payload.artifact), CONTENT);
  const forged = JSON.parse(store.put(new TextEncoder().encode('other'), options(org, { key: org.keys.get(COORDINATOR).key })).text);
  await assert.rejects(core.perform(org.command('artifact.publish', worker(1),
    { ownershipEpoch, leaseId: executionLeaseId, manifest: forged })),
  (e) => e instanceof api.AuthorizationDenied && e.code === 'AUTH_INVALID_SIGNATURE');
});

test('the WebAssembly build has no filesystem store', async () => {
  const wasm = await import(join(DIST, 'node-wasm.mjs'));
  assert.throws(() => new wasm.LocalArtifactStore('/tmp'), wasm.ArgumentError);
  assert.throws(() => wasm.artifactContentHash(CONTENT), wasm.ArgumentError);
});
