// Own keys → Registry → sign → verify → handle the error.
//
//   npm install missionweaveprotocol && node own-keys.mjs
import { RegistryBuilder, Registry, SigningKey, VerificationError, explainFailure, verifySignedDocument } from 'missionweaveprotocol';

// 1. A key for your Agent. The seed comes from crypto.getRandomValues; store it like a password.
const alice = { type: 'agent', id: 'urn:missionweaveprotocol:agent:alice' };
const key = SigningKey.generate('urn:missionweaveprotocol:key:alice-1');
const storedSeed = key.toSeedBase64url(); // e.g. in your secret store
const sameKey = SigningKey.fromSeedBase64url(key.keyId, storedSeed);
console.log(`key ${key.keyId}: public key ${key.publicKey.length} bytes, same after reload: ${sameKey.publicKeyBase64url === key.publicKeyBase64url}`);

// 2. Registry evidence binding the key to the Agent (what verifiers resolve keys from, §6.4 stage 4).
const registryBytes = new RegistryBuilder('urn:missionweaveprotocol:organization:acme')
  .addKey(key.keyId, alice, key.publicKey, '2026-01-01T00:00:00Z')
  .build();
const registry = new Registry(registryBytes);
console.log(`registry ${registry.organizationId}: ${registry.size} key`);

// 3. Sign a Command (signing against the Registry also runs all six verification stages).
const command = {
  protocolVersion: '0.1',
  actionId: 'urn:uuid:11111111-2222-4333-8444-555555555555',
  actor: alice,
  sessionEpoch: 7,
  membershipEpoch: 3,
  coordinatorEpoch: 4,
  groupId: 'urn:missionweaveprotocol:group:demo',
  kind: 'mission.submit_for_approval',
  expectedRevision: 42,
  correlationId: 'urn:uuid:aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee',
  issuedAt: '2026-07-15T00:00:00Z',
  payload: { artifactHashes: [`sha256:${'a'.repeat(64)}`] },
};
const signed = key.sign('command', JSON.stringify(command), { registry });
console.log(`signed ${signed.kind}: ${signed.bytes.length} bytes`);

// 4. Verify the exact bytes you received.
const verified = verifySignedDocument('command', signed.bytes, registry);
console.log(`verified: signed by ${verified.principal.type} ${verified.principal.id} with ${verified.keyId}`);

// 5. Handle the error: a changed document fails stage 6. Send only the wire view to the peer;
//    keep the protected diagnostic (and its explanation) for your audit log.
const tampered = signed.text.replace('"expectedRevision":42', '"expectedRevision":43');
try {
  verifySignedDocument('command', tampered, registry);
  process.exitCode = 1;
} catch (error) {
  if (!(error instanceof VerificationError)) throw error;
  console.log(`rejected: ${JSON.stringify(error.toWire())}`);
  console.log(`audit: ${error.protectedDiagnostic()}`);
  const why = explainFailure(error);
  console.log(`why: ${why.explanation} (${why.section})`);
}
