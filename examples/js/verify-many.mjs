// Verify many documents in one call: one result per item, in input order, each a verified
// document or a VerificationError (a batch never throws for a bad item).
//
//   npm install missionweaveprotocol && node verify-many.mjs
import { Registry, RegistryBuilder, SigningKey, VerificationError, explainFailure, verifySignedDocuments } from 'missionweaveprotocol';

const agents = ['alice', 'bob'].map((name) => ({
  principal: { type: 'agent', id: `urn:missionweaveprotocol:agent:${name}` },
  key: SigningKey.generate(`urn:missionweaveprotocol:key:${name}-1`),
}));
const builder = new RegistryBuilder('urn:missionweaveprotocol:organization:acme');
for (const { principal, key } of agents) builder.addKey(key.keyId, principal, key, '2026-01-01T00:00:00Z');
const registry = new Registry(builder.build());

const command = (actor, revision) => JSON.stringify({
  protocolVersion: '0.1',
  actionId: `urn:uuid:11111111-2222-4333-8444-${String(revision).padStart(12, '0')}`,
  actor,
  sessionEpoch: 1,
  membershipEpoch: 1,
  coordinatorEpoch: 1,
  groupId: 'urn:missionweaveprotocol:group:demo',
  kind: 'mission.submit_for_approval',
  expectedRevision: revision,
  correlationId: 'urn:uuid:aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee',
  issuedAt: '2026-07-15T00:00:00Z',
  payload: { artifactHashes: [`sha256:${'a'.repeat(64)}`] },
});

const items = [];
for (let revision = 1; revision <= 6; revision += 1) {
  const { principal, key } = agents[revision % 2];
  items.push({ kind: 'command', document: key.sign('command', command(principal, revision)).bytes });
}
// Two bad ones: a changed document, and one signed by a key the Registry does not hold.
items[2] = { kind: 'command', document: new TextDecoder().decode(items[2].document).replace('"expectedRevision":3', '"expectedRevision":4') };
const stranger = SigningKey.generate('urn:missionweaveprotocol:key:mallory-1');
items.push({ kind: 'command', document: stranger.sign('command', command(agents[0].principal, 7)).bytes });

const results = verifySignedDocuments(items, registry, { threads: 2 });
results.forEach((result, i) => {
  if (result instanceof VerificationError) {
    console.log(`#${i} rejected ${result.code} at ${result.stage}: ${explainFailure(result).explanation}`);
  } else {
    console.log(`#${i} verified ${result.principal.id}`);
  }
});
const accepted = results.filter((r) => !(r instanceof VerificationError)).length;
console.log(`${accepted} of ${results.length} verified`);
