// Test support for the authoritative Core: one Organization (two humans, a Coordinator, Worker
// Agents, a control-plane service, the Group Authority), its Registry, and signed wire Commands
// built and signed through the public API (`signDocument`) — the same bytes a peer would send.
// Deterministic: fixed seeds, fixed Action IDs, one fixed `now`, sequential Event IDs; the same
// script gives byte-identical Events on every backend.

export const ORG = 'urn:missionweaveprotocol:organization:acme';
export const OWNER = 'urn:missionweaveprotocol:human:alice';
export const OTHER_HUMAN = 'urn:missionweaveprotocol:human:bob';
export const COORDINATOR = 'urn:missionweaveprotocol:agent:planner';
export const SERVICE = 'urn:missionweaveprotocol:service:control-plane';
export const AUTHORITY = 'urn:missionweaveprotocol:service:group-authority';
export const GROUP = 'urn:missionweaveprotocol:group:finance';
export const MISSION = 'urn:missionweaveprotocol:mission:close-books';
export const COORDINATOR_LEASE = 'urn:missionweaveprotocol:lease:coordinator-1';
export const CONVERSATION = 'urn:missionweaveprotocol:conversation:ledger';
export const W1 = 'urn:missionweaveprotocol:work:ledger';
export const EVENT_ID_PREFIX = 'urn:missionweaveprotocol:event:test-';
/** 2026-07-15T09:30:00Z: every Command is issued then and the Core's clock reads it. */
export const NOW_TEXT = '2026-07-15T09:30:00Z';
export const NOW = Date.parse(NOW_TEXT);
export const HASH_A = `sha256:${'a'.repeat(64)}`;
export const HASH_B = `sha256:${'b'.repeat(64)}`;

/** The Worker Agent IDs `worker-1` … `worker-n`. */
export const worker = (n) => `urn:missionweaveprotocol:agent:worker-${n}`;

const seed = (n) => new Uint8Array(32).fill(n);

/** A valid Work Contract: criterion `c1` needs `deterministic_test` Evidence. */
export function contract(dependencies = []) {
  return {
    contractVersion: 1,
    goal: 'reconcile the ledger',
    requiredDeliverables: [{ deliverableId: 'report', description: 'the report', mediaType: 'application/json', schema: 'https://example.org/report.json' }],
    acceptanceCriteria: [{ criterionId: 'c1', description: 'balances', evidenceRequired: ['deterministic_test'] }],
    inputArtifacts: [],
    dependencyWorkItemIds: dependencies,
    allowedResources: [],
    requiredCapabilities: [{ id: 'text.summarise', version: '1.0.0' }],
    deadline: '2026-12-31T00:00:00Z',
    requestedUrgency: 'normal',
    businessImpact: 'month end',
    retryPolicy: { maxAttempts: 3, backoff: 'fixed', maxDelay: 'PT1M', retryableFailures: [] },
    budget: { toolCallLimit: 10 },
    sideEffectRisk: 'none',
    executionApproval: 'not_required',
  };
}

export const SELECTION_BASIS = Object.freeze({
  requiredCapabilities: [{ id: 'text.summarise', version: '1.0.0' }],
  verifiedMatches: [{ id: 'text.summarise', version: '1.2.0' }],
  authorizationEligible: true,
  availabilityEstimate: '2026-07-15T09:35:00Z',
  expectedCost: 1.5,
  reliabilityEvidence: [],
  policyRulesApplied: ['capability-match'],
});

/** An Evidence document about `item` for `c1`. */
export function evidence(item, id, type) {
  return { evidenceId: `urn:missionweaveprotocol:evidence:${id}`, workItemId: item, type, criterionIds: ['c1'], result: 'passed' };
}

export function createPayload(mission = MISSION) {
  return {
    missionId: mission,
    objective: 'Close the July books',
    definitionOfDone: [{ criterionId: 'ledger-balanced', description: 'The ledger balances', evidenceRequired: ['deterministic_test', 'human_review'] }],
    budget: { modelTokenLimit: 100000, toolCallLimit: 1000, currency: 'EUR', financialLimit: 50 },
    deadline: '2026-08-01T00:00:00Z',
    approvalPolicy: { finalHumanApproval: true, highRiskExecutionApproval: true },
    coordinator: { agentId: COORDINATOR, agentCardVersion: 1, leaseId: COORDINATOR_LEASE },
    mainConversationId: 'urn:missionweaveprotocol:conversation:finance-main',
  };
}

/**
 * The Organization for one backend `api`, with `workers` Worker Agents. `command(...)` signs a
 * wire Command; `core()` makes a Core whose clock reads NOW and whose Event IDs are sequential.
 */
export function organization(api, { workers = 1 } = {}) {
  const principals = [
    ['human', OWNER, 21], ['human', OTHER_HUMAN, 22], ['agent', COORDINATOR, 23], ['service', SERVICE, 25],
    ...Array.from({ length: workers }, (_, i) => ['agent', worker(i + 1), 40 + i]),
  ];
  const keys = new Map();
  const builder = new api.RegistryBuilder(ORG);
  for (const [type, id, n] of principals) {
    const key = api.SigningKey.fromSeed(`urn:missionweaveprotocol:key:${n}`, seed(n));
    builder.addKey(key.keyId, { type, id }, key.publicKey, '2026-01-01T00:00:00Z');
    keys.set(id, { principal: { type, id }, key });
  }
  const authorityKey = api.SigningKey.fromSeed('urn:missionweaveprotocol:key:authority', seed(30));
  const authority = { type: 'service', id: AUTHORITY };
  builder.addKey(authorityKey.keyId, authority, authorityKey.publicKey, '2026-01-01T00:00:00Z');
  const registryBytes = builder.build();
  builder.free();
  const registry = new api.Registry(registryBytes);
  let nextAction = 1;

  /** The unsigned wire Command: the envelope members each actor type needs (§15.1). */
  function unsigned(kind, actorId, payload, { extra = {}, actionId, issuedAt = NOW_TEXT } = {}) {
    const { principal } = keys.get(actorId);
    const creation = kind === 'mission.create' || kind === 'mission.create_follow_up';
    const epochs = principal.type === 'agent' ? { sessionEpoch: 1, membershipEpoch: 1 }
      : principal.type === 'human' && !creation ? { membershipEpoch: 1 } : {};
    return {
      protocolVersion: '0.1',
      actionId: actionId ?? `urn:missionweaveprotocol:action:${nextAction++}`,
      actor: principal,
      ...epochs,
      ...extra,
      groupId: GROUP,
      kind,
      correlationId: 'urn:missionweaveprotocol:correlation:1',
      issuedAt,
      payload,
    };
  }

  /** The signed Command's exact bytes (a SignedDocument). */
  function command(kind, actorId, payload, options) {
    return api.signDocument('command', JSON.stringify(unsigned(kind, actorId, payload, options)), { key: keys.get(actorId).key });
  }

  const byCoordinator = (kind, payload, options = {}) =>
    command(kind, COORDINATOR, payload, { ...options, extra: { coordinatorEpoch: 1, ...options.extra } });

  function core(options = {}) {
    return new api.Core({
      registry,
      authority,
      authorityKey,
      clock: () => NOW,
      eventIdPrefix: EVENT_ID_PREFIX,
      ...options,
    });
  }

  /** `…identity.session_open` for `agentId`, by the Group Authority (the Core's default
   * bootstrap service, §6.3): Organization-scoped, no Group, no epochs. */
  function sessionOpen(agentId) {
    const document = {
      protocolVersion: '0.1',
      actionId: `urn:missionweaveprotocol:action:${nextAction++}`,
      actor: authority,
      kind: 'ext.missionweaveprotocol.identity.session_open',
      correlationId: 'urn:missionweaveprotocol:correlation:1',
      issuedAt: NOW_TEXT,
      payload: { agentId },
    };
    return api.signDocument('command', JSON.stringify(document), { key: authorityKey });
  }

  /** A Core in which every Agent opened Session Epoch 1: Agent Commands need one (§6.3). */
  async function ready(options = {}) {
    const made = core(options);
    for (const [id, { principal }] of keys) {
      if (principal.type === 'agent') await made.perform(sessionOpen(id));
    }
    return made;
  }

  /** `artifact.publish` by `agentId` of content `hash` for `item` (§13.1): the manifest is a
   * normative signed document (Artifact profile) signed with the Agent's key. */
  function publish(agentId, item, ownershipEpoch, leaseId, hash = HASH_A) {
    const manifest = {
      artifactId: `urn:missionweaveprotocol:artifact:${item.split(':').pop()}`,
      contentHash: hash,
      uri: 'https://store.example.org/objects/report',
      sizeBytes: 1234,
      mediaType: 'application/json',
      schemaUri: 'https://example.org/report.json',
      producer: { agentId, agentCardVersion: 1, capabilities: [{ id: 'text.summarise', version: '1.2.0' }] },
      missionId: MISSION,
      groupId: GROUP,
      workItemId: item,
      sourceArtifactHashes: [],
      toolVersions: [],
      modelVersions: [],
      classification: 'internal',
      createdAt: NOW_TEXT,
    };
    const signedManifest = JSON.parse(api.signDocument('artifact', JSON.stringify(manifest), { key: keys.get(agentId).key }).text);
    return command('artifact.publish', agentId, { ownershipEpoch, leaseId, manifest: signedManifest });
  }

  return { api, keys, registry, registryBytes, authority, authorityKey, unsigned, command, byCoordinator, core, ready, sessionOpen, publish };
}

/**
 * The full Mission flow from signed wire Commands, checking each step's Event kind; returns the
 * PerformResults by step name. create → membership → work authorize/offer/accept/start/submit/
 * accept_result → submit_for_approval → approve.
 */
export async function missionFlow(org, core, check = () => {}) {
  const results = {};
  const step = async (name, signed, kind) => {
    const result = await core.perform(signed);
    check(name, result, kind);
    results[name] = result;
    return result;
  };
  await step('create', org.command('mission.create', OWNER, createPayload()), 'mission.created');
  await step('membership', org.command('membership.change', OWNER,
    { member: { type: 'agent', id: worker(1) }, role: 'worker', scopes: ['work:execute'] }), 'membership.changed');
  await step('authorize', org.byCoordinator('work.authorize', { workItemId: W1, conversationId: CONVERSATION, contract: contract() }), 'work.authorized');
  await step('offer', org.byCoordinator('work.offer', {
    workItemId: W1,
    candidates: [{ offerId: 'urn:missionweaveprotocol:offer:r1-0', agentId: worker(1), agentCardVersion: 1 }],
    selectionBasis: SELECTION_BASIS,
  }), 'work.offer.created');
  const accepted = await step('accept', org.command('work.accept_offer', worker(1),
    { workItemId: W1, capabilityPins: [{ id: 'text.summarise', version: '1.2.0' }] }), 'work.offer.accepted');
  const { ownershipEpoch, ownershipLeaseId } = accepted.event.payload;
  const started = await step('start', org.command('work.start', worker(1),
    { workItemId: W1, ownershipEpoch, leaseId: ownershipLeaseId }), 'work.started');
  const { executionLeaseId } = started.event.payload;
  await step('publish', org.publish(worker(1), W1, ownershipEpoch, executionLeaseId), 'artifact.published');
  await step('submit', org.command('work.submit', worker(1), {
    workItemId: W1, ownershipEpoch, leaseId: executionLeaseId,
    artifactHashes: [HASH_A], evidence: [evidence(W1, 'test-1', 'deterministic_test')],
  }), 'work.submitted');
  await step('acceptResult', org.byCoordinator('work.accept_result',
    { workItemId: W1, evidence: [evidence(W1, 'review-1', 'reviewer_assessment')] }), 'work.result.accepted');
  const submitted = await step('submitForApproval', org.byCoordinator('mission.submit_for_approval',
    { artifactHashes: [HASH_A, HASH_B] }), 'mission.submitted_for_approval');
  await step('approve', org.command('mission.approve', OWNER, {
    approvalId: 'urn:missionweaveprotocol:approval:1', missionRevision: submitted.event.aggregateRevision,
    artifactHashes: [HASH_B, HASH_A], acceptancePolicyVersion: '1.0.0',
  }), 'mission.approved');
  return results;
}
