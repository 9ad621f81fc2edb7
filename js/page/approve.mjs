// The MissionOwner's approval page (docs/network.md "The approval page"), served by
// missionweaveprotocol-server under /app/ (--app-dir). Everything protocol is the package's
// WebAssembly build (../dist/wasm.mjs): the HELLO challenge is signed there with the key typed
// or imported here (it never leaves the page), every Event is verified there (six stages
// against the Registry, signed by the Group Authority) before it is shown, the Mission and the
// human's Membership come from the log through the core's `controlView`, each decision is the
// core's `controlCommand` signed with `signDocument`, and Artifact manifests are verified with
// `verifySignedDocument`. This file only moves values between the DOM and those calls.
let mwp;

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const state = {
  config: null, registryBytes: null, client: null, key: null, humanId: null, groupId: null,
  log: [], busy: false, generation: 0,
};

function setText(id, text) { $(id).textContent = text ?? '—'; }

function showError(id, error) {
  const box = $(id);
  if (error === null) {
    box.hidden = true;
    box.textContent = '';
    return;
  }
  // The typed error: its §19 wire code first (CommandRefused, AuthenticationError,
  // VerificationError), or the core's reason for a refusal decided before anything was sent.
  const code = error?.code ? `${error.code}` : 'ERROR';
  const reason = error?.reason && error.reason !== 'command_refused' ? ` (${error.reason})` : '';
  box.textContent = `${code}${reason}: ${error?.error?.message ?? error?.message ?? String(error)}`;
  box.dataset.code = error?.code ?? '';
  box.hidden = false;
}

function wsUrl(path) {
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${path}`;
}

const issuedAt = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

// ---- sign in ------------------------------------------------------------------------------

async function importKeyFile(file) {
  const text = (await file.text()).trim();
  let value = null;
  try { value = JSON.parse(text); } catch { /* a bare seed */ }
  if (value && typeof value === 'object') {
    if (typeof value.humanId === 'string') $('human-id').value = value.humanId;
    if (typeof value.keyId === 'string') $('key-id').value = value.keyId;
    $('private-key').value = value.privateKey ?? value.seed ?? '';
  } else {
    $('private-key').value = text;
  }
  // Not kept in the file input either.
  $('key-file').value = '';
}

async function signIn(event) {
  event.preventDefault();
  if (state.busy) return;
  showError('signin-error', null);
  const humanId = $('human-id').value.trim();
  const keyId = $('key-id').value.trim();
  const seed = $('private-key').value.trim();
  const groupId = $('group-id').value.trim();
  const missing = [['human-id', humanId], ['key-id', keyId], ['private-key', seed], ['group-id', groupId]]
    .find(([, v]) => v === '');
  if (missing) {
    showError('signin-error', new Error(`${$(missing[0]).closest('label').querySelector('.label').firstChild.textContent.trim()} is required`));
    $(missing[0]).focus();
    return;
  }
  state.busy = true;
  $('signin-button').disabled = true;
  setText('signin-status', 'Signing the challenge…');
  let client = null;
  try {
    const key = mwp.SigningKey.fromSeedBase64url(keyId, seed);
    client = new mwp.AgentClient(wsUrl(state.config.websocketPath), {
      agentId: humanId, signingKey: key, registry: state.registryBytes,
      authorityId: state.config.groupAuthority.id, reconnect: true,
    });
    await client.connect();
    await client.subscribe([groupId]);
    Object.assign(state, { client, key, humanId, groupId, log: [] });
    $('private-key').value = '';
    setText('signin-status', '');
    $('who').replaceChildren();
    const who = document.createElement('code');
    who.textContent = humanId;
    const where = document.createElement('code');
    where.textContent = groupId;
    $('who').append('Signed in as ', who, ` (session ${client.sessionEpoch}), watching `, where);
    $('who').hidden = false;
    $('signin-fields').hidden = true;
    setText('signin-title', 'Signed in');
    $('signin-button').hidden = true;
    $('signout-button').hidden = false;
    for (const id of ['mission', 'work', 'stream']) $(id).hidden = false;
    document.body.dataset.signedIn = 'true';
    render();
    follow(client, groupId, ++state.generation);
    // The sign-in button is gone: focus goes to the Mission, where the decision is.
    $('mission-title').focus();
  } catch (error) {
    await client?.close().catch(() => {});
    setText('signin-status', '');
    showError('signin-error', error);
    $('signin-button').disabled = false;
  } finally {
    state.busy = false;
  }
}

async function signOut() {
  state.generation += 1;
  const client = state.client;
  Object.assign(state, { client: null, key: null, log: [] });
  await client?.close().catch(() => {});
  $('signin-fields').hidden = false;
  $('who').hidden = true;
  setText('signin-title', 'Sign in');
  $('signin-button').hidden = false;
  $('signin-button').disabled = false;
  $('signout-button').hidden = true;
  for (const id of ['mission', 'work', 'stream']) $(id).hidden = true;
  $('events').replaceChildren();
  delete document.body.dataset.signedIn;
  $('human-id').focus();
}

// ---- the live stream ----------------------------------------------------------------------

async function follow(client, groupId, generation) {
  try {
    for await (const event of client.events(groupId)) {
      if (generation !== state.generation) return;
      state.log.push(event.document);
      appendEvent(event);
      render();
      await client.acknowledge(event).catch(() => {});
    }
  } catch (error) {
    if (generation === state.generation) showError('decision-error', error);
  }
}

function actorText(actor) {
  return actor ? `${actor.type} ${actor.id.split(':').pop()}` : '';
}

function appendEvent(event) {
  const doc = event.document;
  const li = document.createElement('li');
  li.dataset.kind = doc.kind;
  li.dataset.sequence = String(event.sequence);
  const seq = document.createElement('span');
  seq.className = 'seq';
  seq.textContent = `#${event.sequence}`;
  const kind = document.createElement('code');
  kind.className = 'kind';
  kind.textContent = doc.kind;
  const meta = document.createElement('span');
  meta.className = 'muted meta';
  meta.textContent = `${actorText(doc.actor)} · ${doc.occurredAt}`;
  li.append(seq, kind, meta);
  const list = $('events');
  // Follow the stream while the reader is at its end.
  const atEnd = list.scrollHeight - list.scrollTop - list.clientHeight < 24;
  list.append(li);
  if (atEnd) list.scrollTop = list.scrollHeight;
  setText('stream-count', `${state.log.length} verified`);
}

// ---- the Mission and its decisions ------------------------------------------------------

function view() {
  return mwp.controlView(state.humanId, state.log);
}

function latestSubmission(missionId) {
  for (let i = state.log.length - 1; i >= 0; i -= 1) {
    const e = state.log[i];
    if (e.kind === 'mission.submitted_for_approval' && e.payload?.missionId === missionId) return e.payload;
  }
  return null;
}

function render() {
  let current;
  try {
    current = view();
  } catch (error) {
    showError('decision-error', error);
    return;
  }
  const mission = current.mission;
  const awaiting = mission?.state === 'awaiting_approval';
  setText('mission-state', mission?.state ?? 'no Mission yet');
  $('mission-state').dataset.state = mission?.state ?? '';
  setText('mission-id', mission?.missionId);
  setText('mission-revision', mission ? String(mission.revision) : null);
  const created = state.log.find((e) => e.kind === 'mission.created');
  setText('mission-objective', created?.payload?.mission?.objective ?? '');
  const submission = mission ? latestSubmission(mission.missionId) : null;
  $('mission-submission').textContent = submission
    ? `revision ${submission.missionRevision} · ${submission.artifactHashes.length} Artifact${submission.artifactHashes.length === 1 ? '' : 's'}`
    : '—';
  const canDecide = awaiting && current.membership?.state === 'active' && !state.busy;
  $('approve').disabled = !canDecide;
  $('request-changes').disabled = !canDecide;
  document.body.dataset.missionState = mission?.state ?? '';
  renderWork();
}

/**
 * Builds (core `controlCommand`), signs (WebAssembly, the page's key) and sends one decision;
 * resolves to its Event or rejects with the typed refusal. `throughSequence`: decide on the
 * log as it stood then (what a stale view sends; the test shows its refusal through it).
 */
async function perform(operation, args, { throughSequence } = {}) {
  const events = throughSequence === undefined ? state.log : state.log.slice(0, throughSequence);
  const current = mwp.controlView(state.humanId, events);
  const request = {
    operation, humanId: state.humanId, actionId: `human-action:${crypto.randomUUID()}`, issuedAt: issuedAt(),
    mission: current.mission, membership: current.membership, events, args,
  };
  const unsigned = mwp.controlCommand(request);
  const signed = mwp.signDocument('command', JSON.stringify(unsigned), { key: state.key });
  return state.client.send(signed);
}

async function decide(operation, options = {}) {
  if (state.busy) return;
  showError('decision-error', null);
  const feedback = $('feedback').value.trim();
  if (operation === 'request_changes' && feedback === '') {
    showError('decision-error', new Error('say what should change'));
    $('feedback').focus();
    return;
  }
  state.busy = true;
  render();
  setText('decision-status', operation === 'approve' ? 'Signing the approval…' : 'Signing the change request…');
  try {
    const args = operation === 'approve' ? (feedback ? { comments: feedback } : {}) : { feedback };
    const event = await perform(operation, args, options);
    setText('decision-status', `${event.document.kind} at #${event.sequence}`);
    $('feedback').value = '';
  } catch (error) {
    setText('decision-status', '');
    showError('decision-error', error);
  } finally {
    state.busy = false;
    render();
  }
}

// ---- WorkItems: Evidence and Artifacts ----------------------------------------------------

function verifyManifest(manifest) {
  try {
    const verified = mwp.verifySignedDocument('artifact', JSON.stringify(manifest), state.registryBytes);
    return { ok: true, text: `signature verified · ${verified.principal.type} ${verified.principal.id.split(':').pop()} (${verified.keyId})` };
  } catch (error) {
    return { ok: false, text: `rejected · ${error.code ?? 'ERROR'}` };
  }
}

function workItems() {
  const items = new Map();
  const item = (id) => {
    if (!items.has(id)) items.set(id, { id, state: '', artifacts: [], evidence: [] });
    return items.get(id);
  };
  for (const e of state.log) {
    const id = e.workItemId ?? e.payload?.workItemId;
    if (!id || !e.kind.startsWith('work.') && e.kind !== 'artifact.published') continue;
    const it = item(id);
    if (e.kind === 'work.authorized') it.goal = e.payload?.contract?.goal ?? e.payload?.workItem?.contract?.goal;
    if (e.kind.startsWith('work.')) it.state = e.kind.slice('work.'.length);
    if (e.kind === 'artifact.published' && e.payload?.artifact) it.artifacts.push(e.payload.artifact);
    if (e.kind === 'work.submitted') for (const ev of e.payload?.evidenceIds ?? []) it.evidence.push([ev, 'submission']);
    if (e.kind === 'work.result.accepted') for (const ev of e.payload?.evidenceIds ?? []) it.evidence.push([ev, 'review']);
  }
  return [...items.values()];
}

const open = new Set();

function renderWork() {
  const list = $('work-items');
  const focused = document.activeElement?.dataset?.item;
  list.replaceChildren();
  const items = workItems();
  if (items.length === 0) {
    const li = document.createElement('li');
    li.className = 'muted';
    li.textContent = 'No WorkItem yet.';
    list.append(li);
  }
  for (const it of items) {
    const li = document.createElement('li');
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'item';
    button.dataset.item = it.id;
    const detailsId = `item-${btoa(it.id).replace(/[^A-Za-z0-9]/g, '')}`;
    button.setAttribute('aria-controls', detailsId);
    button.setAttribute('aria-expanded', String(open.has(it.id)));
    button.innerHTML = '<span class="name"></span><span class="state"></span>';
    button.querySelector('.name').textContent = it.goal ? `${it.goal} — ${it.id.split(':').pop()}` : it.id;
    button.querySelector('.state').textContent = it.state;
    button.addEventListener('click', () => {
      if (open.has(it.id)) open.delete(it.id); else open.add(it.id);
      renderWork();
    });
    const details = document.createElement('div');
    details.id = detailsId;
    details.className = 'item-details';
    details.hidden = !open.has(it.id);
    const artifacts = document.createElement('ul');
    artifacts.className = 'artifacts';
    for (const manifest of it.artifacts) {
      const check = verifyManifest(manifest);
      const a = document.createElement('li');
      a.className = check.ok ? 'verified' : 'rejected';
      a.dataset.artifact = manifest.artifactId;
      a.innerHTML = '<span class="mark" aria-hidden="true"></span><span class="what"><code class="id"></code><code class="hash muted block"></code><span class="status"></span></span>';
      a.querySelector('.mark').textContent = check.ok ? '✓' : '✕';
      a.querySelector('.id').textContent = manifest.artifactId;
      a.querySelector('.hash').textContent = `${manifest.mediaType ?? ''} · ${manifest.contentHash}`;
      a.querySelector('.status').textContent = check.text;
      artifacts.append(a);
    }
    if (it.artifacts.length === 0) artifacts.innerHTML = '<li class="muted">No Artifact published.</li>';
    const evidence = document.createElement('ul');
    evidence.className = 'evidence';
    for (const [id, from] of it.evidence) {
      const ev = document.createElement('li');
      ev.dataset.evidence = id;
      ev.innerHTML = '<code></code> <span class="muted"></span>';
      ev.querySelector('code').textContent = id;
      // The log carries Evidence IDs; the signed Evidence documents travel in the Commands.
      ev.querySelector('span').textContent = `${from} · referenced by the verified Event (the document is not in the log)`;
      evidence.append(ev);
    }
    if (it.evidence.length === 0) evidence.innerHTML = '<li class="muted">No Evidence yet.</li>';
    const h1 = document.createElement('h3');
    h1.textContent = 'Artifacts';
    const h2 = document.createElement('h3');
    h2.textContent = 'Evidence';
    details.append(h1, artifacts, h2, evidence);
    li.append(button, details);
    list.append(li);
  }
  if (focused) list.querySelector(`[data-item="${CSS.escape(focused)}"]`)?.focus();
}

// ---- start --------------------------------------------------------------------------------

async function start() {
  $('group-id').value = params.get('group') ?? '';
  $('human-id').value = params.get('human') ?? '';
  $('key-id').value = params.get('key') ?? '';
  $('key-file').addEventListener('change', (e) => { if (e.target.files[0]) importKeyFile(e.target.files[0]); });
  $('signin-form').addEventListener('submit', signIn);
  $('signout-button').addEventListener('click', signOut);
  $('approve').addEventListener('click', () => decide('approve'));
  $('request-changes').addEventListener('click', () => decide('request_changes'));
  try {
    mwp = await import('../dist/wasm.mjs');
    const response = await fetch('../config.json', { cache: 'no-store' });
    if (!response.ok) throw new Error('no /app/config.json: serve this page with missionweaveprotocol-server --app-dir');
    state.config = await response.json();
    state.registryBytes = new TextEncoder().encode(JSON.stringify(state.config.registry));
    document.body.dataset.state = 'ready';
    $('signin-button').disabled = false;
  } catch (error) {
    document.body.dataset.state = 'error';
    setText('loading-text', `The page could not start: ${error.message}`);
  }
  // For the tests (and the curious): the page's own calls.
  window.__approvePage = { decide, state };
  document.body.dataset.ready = String(document.body.dataset.state === 'ready');
}

start();
