// The MissionOwner's approval page (js/page/approve.html, docs/network.md "The approval page")
// in Debian's Chromium (headless, playwright-core), loaded FROM the Rust server (`--app-dir js/`:
// this package's page/ and dist/, as a deployer points it at the installed package) over TLS
// (`--dev`: its throwaway certificate, which this browser context accepts). The server's SQLite
// file is seeded first with a Mission submitted for approval: a WorkItem done by the Worker, its
// Artifact published (a signed manifest) and its Evidence, the result accepted, the Mission
// submitted by the Coordinator.
//
// The human signs in with the MissionOwner's key (typed into the page, kept there: the HELLO
// challenge is signed in WebAssembly), sees the Mission and the WorkItem's Artifact verified,
// requests changes; the Coordinator — a Node AgentClient on its own connection — sees the change
// request and submits again; the page sees the new submission live and approves; the Coordinator
// receives the `mission.approved` Event signed by the Group Authority, its actor the human.
// Negatives: a wrong key is refused at sign-in (AUTH_INVALID_SIGNATURE shown), a decision taken
// on a stale view is refused by the server (REVISION_CONFLICT shown), and the server serves no
// file outside the directory. Nothing asserts on timing.
//
// Screenshots: target/js-artifacts/approve-*.png; with MWP_UPDATE_SCREENSHOTS=1 also
// docs/approve-page.png (desktop) and docs/approve-page-phone.png (390 px) for the README.
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { chromium } from 'playwright-core';

import { CHROMIUM, CHROMIUM_ARGS, DIST, JS, REPO, TARGET } from './support.mjs';
import { AUTHORITY, COORDINATOR, GROUP, MAINS, OWNER, WAIT_MS, WORKER, organization, rustServer, within } from './network-support.mjs';

const ARTIFACTS = join(TARGET, 'js-artifacts');
const [MISSION, MAIN] = MAINS[GROUP];
const ITEM = 'urn:missionweaveprotocol:work:ledger';
const ARTIFACT_HASH = `sha256:${'c'.repeat(64)}`;
const OWNER_KEY_ID = 'urn:missionweaveprotocol:key:21';
const OWNER_SEED = Buffer.from(new Uint8Array(32).fill(21)).toString('base64url');
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };

let napi;
let org;
let server;
let browser;
let base;

const isoNow = (offset = 0) => new Date(Date.now() + offset).toISOString().replace(/\.\d+Z$/, 'Z');

/** Signed Commands of this Organization issued now (Agents: `sessionEpoch`, Membership Epoch 1). */
function signer(o) {
  let n = 0;
  const sign = (actor, kind, payload, { sessionEpoch = 1, extra = {} } = {}) => {
    const { principal } = o.keys.get(actor);
    const epochs = principal.type === 'agent' ? { sessionEpoch, membershipEpoch: 1 }
      : principal.type === 'human' && kind !== 'mission.create' ? { membershipEpoch: 1 } : {};
    const document = {
      protocolVersion: '0.1', actionId: `urn:missionweaveprotocol:action:page-${process.pid}-${n += 1}`,
      actor: principal, ...epochs, ...extra, groupId: GROUP, kind, correlationId: MISSION, issuedAt: isoNow(), payload,
    };
    return o.api.signDocument('command', JSON.stringify(document), { key: o.key(actor) });
  };
  const byCoordinator = (kind, payload, options = {}) => sign(COORDINATOR, kind, payload, { ...options, extra: { coordinatorEpoch: 1 } });
  const sessionOpen = (agentId) => o.api.signDocument('command', JSON.stringify({
    protocolVersion: '0.1', actionId: `urn:missionweaveprotocol:action:page-open-${process.pid}-${n += 1}`,
    actor: { type: 'service', id: AUTHORITY }, kind: 'ext.missionweaveprotocol.identity.session_open',
    correlationId: 'urn:missionweaveprotocol:correlation:1', issuedAt: isoNow(), payload: { agentId },
  }), { key: o.key(AUTHORITY) });
  return { sign, byCoordinator, sessionOpen };
}

const evidence = (id, type) => ({ evidenceId: `urn:missionweaveprotocol:evidence:${id}`, workItemId: ITEM, type, criterionIds: ['c1'], result: 'passed' });

/** The seed: the Mission through its WorkItem to `mission.submitted_for_approval` (docs/work.md). */
async function submittedMission(core) {
  const { sign, byCoordinator, sessionOpen } = signer(org);
  const perform = async (command, kind) => {
    const result = await core.perform(command);
    assert.equal(result.event.kind, kind);
    return result.event;
  };
  for (const agent of [COORDINATOR, WORKER]) await core.perform(sessionOpen(agent));
  await perform(sign(OWNER, 'mission.create', {
    missionId: MISSION, objective: 'Close the July books',
    definitionOfDone: [{ criterionId: 'ledger-balanced', description: 'The ledger balances', evidenceRequired: ['deterministic_test', 'human_review'] }],
    budget: { modelTokenLimit: 100000, toolCallLimit: 1000, currency: 'EUR', financialLimit: 50 },
    deadline: '2099-08-01T00:00:00Z', approvalPolicy: { finalHumanApproval: true, highRiskExecutionApproval: true },
    coordinator: { agentId: COORDINATOR, agentCardVersion: 1, leaseId: `urn:missionweaveprotocol:lease:${MISSION}` },
    mainConversationId: MAIN, coordinatorLeaseSeconds: 3600,
  }), 'mission.created');
  await perform(sign(OWNER, 'membership.change', {
    member: { type: 'agent', id: WORKER }, role: 'worker', scopes: ['work:execute'], visibilityStartSequence: 0,
  }), 'membership.changed');
  const capabilities = [{ id: 'text.summarise', version: '1.0.0' }];
  await perform(byCoordinator('work.authorize', {
    workItemId: ITEM, conversationId: MAIN,
    contract: {
      contractVersion: 1, goal: 'Reconcile the ledger',
      requiredDeliverables: [{ deliverableId: 'report', description: 'the report', mediaType: 'application/json', schema: 'https://example.org/report.json' }],
      acceptanceCriteria: [{ criterionId: 'c1', description: 'balances', evidenceRequired: ['deterministic_test'] }],
      inputArtifacts: [], dependencyWorkItemIds: [], allowedResources: [], requiredCapabilities: capabilities,
      deadline: '2099-12-31T00:00:00Z', requestedUrgency: 'normal', businessImpact: 'month end',
      retryPolicy: { maxAttempts: 3, backoff: 'fixed', maxDelay: 'PT1M', retryableFailures: [] },
      budget: { toolCallLimit: 10 }, sideEffectRisk: 'none', executionApproval: 'not_required',
    },
  }), 'work.authorized');
  await perform(byCoordinator('work.offer', {
    workItemId: ITEM,
    candidates: [{ offerId: 'urn:missionweaveprotocol:offer:ledger-1', agentId: WORKER, agentCardVersion: 1 }],
    selectionBasis: {
      requiredCapabilities: capabilities, verifiedMatches: [{ id: 'text.summarise', version: '1.2.0' }],
      authorizationEligible: true, availabilityEstimate: isoNow(5 * 60_000), expectedCost: 1.5,
      reliabilityEvidence: [], policyRulesApplied: ['capability-match'],
    },
  }), 'work.offer.created');
  const accepted = await perform(sign(WORKER, 'work.accept_offer', {
    workItemId: ITEM, capabilityPins: [{ id: 'text.summarise', version: '1.2.0' }],
  }), 'work.offer.accepted');
  const { ownershipEpoch, ownershipLeaseId } = accepted.payload;
  const started = await perform(sign(WORKER, 'work.start', { workItemId: ITEM, ownershipEpoch, leaseId: ownershipLeaseId }), 'work.started');
  const { executionLeaseId } = started.payload;
  const manifest = JSON.parse(org.api.signDocument('artifact', JSON.stringify({
    artifactId: 'urn:missionweaveprotocol:artifact:ledger-report', contentHash: ARTIFACT_HASH,
    uri: 'https://store.example.org/objects/ledger-report', sizeBytes: 1234, mediaType: 'application/json',
    schemaUri: 'https://example.org/report.json',
    producer: { agentId: WORKER, agentCardVersion: 1, capabilities: [{ id: 'text.summarise', version: '1.2.0' }] },
    missionId: MISSION, groupId: GROUP, workItemId: ITEM, sourceArtifactHashes: [], toolVersions: [], modelVersions: [],
    classification: 'internal', createdAt: isoNow(),
  }), { key: org.key(WORKER) }).text);
  await perform(sign(WORKER, 'artifact.publish', { ownershipEpoch, leaseId: executionLeaseId, manifest }), 'artifact.published');
  await perform(sign(WORKER, 'work.submit', {
    workItemId: ITEM, ownershipEpoch, leaseId: executionLeaseId,
    artifactHashes: [ARTIFACT_HASH], evidence: [evidence('ledger-tests', 'deterministic_test')],
  }), 'work.submitted');
  await perform(byCoordinator('work.accept_result', { workItemId: ITEM, evidence: [evidence('ledger-review', 'reviewer_assessment')] }),
    'work.result.accepted');
  await perform(byCoordinator('mission.submit_for_approval', { artifactHashes: [ARTIFACT_HASH] }), 'mission.submitted_for_approval');
}

/** GET `path` from the server over TLS (its `--dev` certificate trusted): `{status, type, body}`. */
function get(path) {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ hostname, port, path, ca: server.ca, method: 'GET' }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, type: res.headers['content-type'], headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

before(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  mkdirSync(ARTIFACTS, { recursive: true });
  napi = await import(join(DIST, 'node.mjs'));
  org = organization(napi);
  server = await rustServer(org, { seed: submittedMission, extra: ['--app-dir', JS] });
  base = server.url.replace(/^wss:/, 'https:').replace(/\/ws$/, '');
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_ARGS, '--ignore-certificate-errors'] });
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

test('the server serves the page, its WebAssembly and its configuration with their types, nothing outside', async () => {
  const page = await get('/app/page/approve.html');
  assert.equal(page.status, 200);
  assert.equal(page.type, 'text/html; charset=utf-8');
  assert.match(page.headers['content-security-policy'], /script-src 'self' 'wasm-unsafe-eval'/);
  assert.equal(page.headers['x-content-type-options'], 'nosniff');
  const wasm = await get('/app/dist/wasm-web/missionweaveprotocol_wasm_bg.wasm');
  assert.equal(wasm.status, 200);
  assert.equal(wasm.type, 'application/wasm');
  assert.deepEqual([...wasm.body.subarray(0, 4)], [0, 0x61, 0x73, 0x6d]);
  assert.equal((await get('/app/dist/wasm.mjs')).type, 'text/javascript; charset=utf-8');
  const config = JSON.parse((await get('/app/config.json')).body);
  assert.deepEqual(config.groupAuthority, { type: 'service', id: AUTHORITY });
  assert.equal(config.websocketPath, '/ws');
  assert.deepEqual(config.registry, JSON.parse(Buffer.from(org.registryBytes).toString('utf8')));
  const home = await get('/app/');
  assert.equal(home.status, 302);
  assert.equal(home.headers.location, '/app/page/approve.html');
  // Outside the directory, hidden, or a type not served: 404 (the Rust unit tests cover every form).
  for (const path of ['/app/%2e%2e/Cargo.toml', '/app/..%2fCargo.toml', '/app/page/%2e%2e/%2e%2e/README.md', '/app/node_modules/.package-lock.json', '/app/README.md', '/app/page']) {
    assert.equal((await get(path)).status, 404, path);
  }
});

test('the MissionOwner signs in with a key kept in the page, requests changes, then approves; the Coordinator sees both', { timeout: 10 * WAIT_MS }, async () => {
  const context = await browser.newContext({ viewport: PHONE, colorScheme: 'light', ignoreHTTPSErrors: true });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (message) => { if (message.type() === 'error') problems.push(message.text()); });
  const sent = [];
  page.on('websocket', (ws) => ws.on('framesent', (frame) => sent.push(String(frame.payload))));
  const coordinator = org.client(server.url, COORDINATOR, { ca: server.ca });
  try {
    await page.goto(`${base}/app/page/approve.html?group=${encodeURIComponent(GROUP)}`);
    await page.waitForFunction(() => document.body.dataset.ready !== undefined, null, { timeout: WAIT_MS });
    assert.equal(await page.evaluate(() => document.body.dataset.ready), 'true', problems.join('\n'));

    // Keyboard: every control is labelled; Tab walks the form in order, with a visible focus ring.
    const unlabelled = await page.evaluate(() => [...document.querySelectorAll('input, textarea')]
      .filter((el) => el.labels.length === 0).map((el) => el.id));
    assert.deepEqual(unlabelled, []);
    await page.focus('#human-id');
    const order = ['human-id'];
    for (let i = 0; i < 5; i += 1) {
      await page.keyboard.press('Tab');
      order.push(await page.evaluate(() => document.activeElement.id));
    }
    assert.deepEqual(order, ['human-id', 'key-id', 'private-key', 'key-file', 'group-id', 'signin-button']);
    const ring = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
    assert.notEqual(ring, 'none', 'a visible focus ring');

    // A wrong key: the server refuses the HELLO, the page shows the wire code.
    await page.fill('#human-id', OWNER);
    await page.fill('#key-id', OWNER_KEY_ID);
    await page.fill('#private-key', Buffer.from(new Uint8Array(32).fill(99)).toString('base64url'));
    await page.keyboard.press('Enter');
    await page.waitForSelector('#signin-error:not([hidden])', { timeout: WAIT_MS });
    assert.equal(await page.getAttribute('#signin-error', 'data-code'), 'AUTH_INVALID_SIGNATURE');
    assert.equal(await page.evaluate(() => document.body.dataset.signedIn), undefined);

    // The right key: signed in, the log replayed and verified, the Mission awaits approval.
    await page.fill('#private-key', OWNER_SEED);
    await page.click('#signin-button');
    await page.waitForFunction(() => document.body.dataset.missionState === 'awaiting_approval', null, { timeout: WAIT_MS });
    assert.equal(await page.inputValue('#private-key'), '', 'the key field is cleared');
    assert.match(await page.textContent('#who'), /Signed in as urn:missionweaveprotocol:human:alice/);
    // The WorkItem's Artifact, its manifest signature checked in WebAssembly; its Evidence.
    await page.click('button.item');
    assert.equal(await page.getAttribute('button.item', 'aria-expanded'), 'true');
    assert.equal(await page.locator('.artifacts li.verified').count(), 1);
    assert.match(await page.textContent('.artifacts li.verified .status'), /signature verified · agent reviewer/);
    assert.deepEqual(await page.locator('.evidence li').evaluateAll((els) => els.map((el) => el.dataset.evidence)),
      ['urn:missionweaveprotocol:evidence:ledger-tests', 'urn:missionweaveprotocol:evidence:ledger-review']);

    // The Coordinator, on its own connection, watches the Group too.
    await within(coordinator.connect(), 'coordinator HELLO');
    await coordinator.subscribe([GROUP]);
    const waitFor = async (kind) => {
      for (;;) {
        const event = await within(coordinator.nextEvent(GROUP), `the Coordinator's ${kind}`);
        if (event.document.kind === kind) return event;
      }
    };

    // Request changes: a Command signed in the page.
    await page.fill('#feedback', 'Add the reconciliation notes');
    await page.click('#request-changes');
    await page.waitForSelector('#events li[data-kind="mission.changes_requested"]', { timeout: WAIT_MS });
    await page.waitForFunction(() => document.body.dataset.missionState === 'active', null, { timeout: WAIT_MS });
    const changes = await waitFor('mission.changes_requested');
    assert.deepEqual(changes.document.actor, { type: 'human', id: OWNER });
    assert.equal(changes.document.payload.feedback, 'Add the reconciliation notes');

    // The Coordinator submits again; the page sees it live.
    const resubmitted = await within(coordinator.send(signer(org).byCoordinator('mission.submit_for_approval',
      { artifactHashes: [ARTIFACT_HASH] }, { sessionEpoch: coordinator.sessionEpoch })), 'resubmission');
    assert.equal(resubmitted.document.kind, 'mission.submitted_for_approval');
    await page.waitForFunction(() => document.body.dataset.missionState === 'awaiting_approval', null, { timeout: WAIT_MS });

    // A decision taken on a stale view (the log before the change request): refused by the
    // server with its wire code, shown; nothing applied.
    const firstSubmission = await page.evaluate(() => Number(document.querySelector('#events li[data-kind="mission.submitted_for_approval"]').dataset.sequence));
    await page.evaluate((through) => window.__approvePage.decide('approve', { throughSequence: through }), firstSubmission);
    await page.waitForSelector('#decision-error:not([hidden])', { timeout: WAIT_MS });
    assert.equal(await page.getAttribute('#decision-error', 'data-code'), 'REVISION_CONFLICT');
    assert.equal(await page.evaluate(() => document.body.dataset.missionState), 'awaiting_approval');

    // Approve: the Event appears in the page's stream and reaches the Coordinator.
    await page.fill('#feedback', 'Reconciled, thank you');
    await page.click('#approve');
    await page.waitForSelector('#events li[data-kind="mission.approved"]', { timeout: WAIT_MS });
    await page.waitForFunction(() => document.body.dataset.missionState === 'approved', null, { timeout: WAIT_MS });
    assert.equal(await page.isDisabled('#approve'), true);
    const approved = await waitFor('mission.approved');
    assert.deepEqual(approved.document.actor, { type: 'human', id: OWNER });
    assert.equal(approved.document.payload.missionRevision, resubmitted.document.aggregateRevision);
    assert.deepEqual(approved.document.payload.artifactHashes, [ARTIFACT_HASH]);
    const verified = napi.verifySignedDocument('event', approved.text, org.registry);
    assert.deepEqual(verified.principal, { type: 'service', id: AUTHORITY });

    // The key never left the page: no frame carried the seed.
    assert.ok(sent.length > 0);
    assert.ok(!sent.some((frame) => frame.includes(OWNER_SEED)), 'the private key is never sent');

    // At 390 px and at desktop width, light and dark: nothing overflows sideways.
    for (const [size, viewport] of [['phone', PHONE], ['desktop', DESKTOP]]) {
      await page.setViewportSize(viewport);
      for (const colorScheme of ['light', 'dark']) {
        await page.emulateMedia({ colorScheme });
        const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }));
        assert.ok(scrollWidth <= innerWidth, `${size} ${colorScheme}: scrollWidth ${scrollWidth} > ${innerWidth}`);
        await page.evaluate(() => window.scrollTo(0, 0));
        await page.screenshot({ path: join(ARTIFACTS, `approve-${size}-${colorScheme}.png`), fullPage: true });
      }
    }
    if (process.env.MWP_UPDATE_SCREENSHOTS === '1') {
      copyFileSync(join(ARTIFACTS, 'approve-desktop-light.png'), join(REPO, 'docs', 'approve-page.png'));
      copyFileSync(join(ARTIFACTS, 'approve-phone-light.png'), join(REPO, 'docs', 'approve-page-phone.png'));
    }
    assert.deepEqual(problems, []);
  } catch (error) {
    await page.screenshot({ path: join(ARTIFACTS, 'approve-failure.png'), fullPage: true }).catch(() => {});
    throw new Error(`${error.stack}\n--- page:\n${problems.join('\n')}\n--- server stderr:\n${server.stderr}`);
  } finally {
    await coordinator.close();
    await context.close();
  }
});
