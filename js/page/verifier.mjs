// The verifier page: every check runs in the package's verify-only WebAssembly build
// (../dist/verify.mjs, loaded below while the page shows its loading state). Samples are fetched
// from the served protocol bundle (default ../bundle/, or ?bundle=URL). Failure explanations
// come from the core's reason table (`failureReasons`, core/ffi/src/reasons.rs): none are
// written here.
let mwp;

const $ = (id) => document.getElementById(id);
const bundleBase = new URL(new URLSearchParams(location.search).get('bundle') ?? '../bundle/', location.href);
const decoder = new TextDecoder();
const STAGE_LABELS = {
  parse: 'Strict UTF-8 JSON parse',
  schema: 'Schema validation',
  'signature-envelope': 'Signature envelope and protected time',
  'key-resolution': 'Key resolution (Registry evidence)',
  canonicalization: 'RFC 8785 canonicalization',
  signature: 'Ed25519 signature',
};

// Exact bytes per input: a dropped file or a fetched sample keeps its bytes (BOM, invalid
// UTF-8 and all) until the text is edited.
const inputs = { document: null, registry: null };
let samples = [];
let requiredMembers = {};

function bytesOf(name) {
  return inputs[name] ?? new TextEncoder().encode($(name).value);
}

function setInput(name, bytes, origin) {
  inputs[name] = bytes;
  $(name).value = decoder.decode(bytes);
  $(`${name}-origin`).textContent = origin;
}

for (const name of ['document', 'registry']) {
  const area = $(name);
  area.addEventListener('input', () => {
    inputs[name] = null;
    $(`${name}-origin`).textContent = 'edited';
  });
  area.addEventListener('dragover', (event) => { event.preventDefault(); area.classList.add('drop'); });
  area.addEventListener('dragleave', () => area.classList.remove('drop'));
  area.addEventListener('drop', async (event) => {
    event.preventDefault();
    area.classList.remove('drop');
    const file = event.dataTransfer.files[0];
    if (file) setInput(name, new Uint8Array(await file.arrayBuffer()), `dropped: ${file.name}`);
  });
}

// Kind: a schema-valid kind if exactly one matches, else the kind whose required top-level
// members the document has most of (a document failing stage 1 or 2 still gets a sensible kind).
function detectKind(bytes) {
  try {
    const valid = mwp.detectKinds(bytes);
    if (valid.length === 1) return { kind: valid[0], how: 'schema match' };
  } catch { /* not strict JSON: fall back to the member heuristic */ }
  let members = [];
  try {
    const value = JSON.parse(decoder.decode(bytes).replace(/^\uFEFF/, ''));
    members = value && typeof value === 'object' ? Object.keys(value) : [];
  } catch { /* unreadable */ }
  let best = { kind: 'command', score: -1 };
  for (const kind of mwp.DOCUMENT_KINDS) {
    const required = requiredMembers[kind] ?? [];
    const score = required.filter((m) => members.includes(m)).length / (required.length || 1);
    if (score > best.score) best = { kind, score };
  }
  return { kind: best.kind, how: best.score > 0 ? 'closest by members' : 'default' };
}

function show(id, text) {
  $(id).textContent = text ?? '—';
  // A copy button copies only something shown.
  const copyButton = document.querySelector(`[data-copy="${id}"]`);
  if (copyButton) copyButton.disabled = text == null || text === '';
}

// The core's one-sentence explanation and spec section of a failure reason.
function showExplanation(row) {
  $('explanation').hidden = !row;
  show('explanation-text', row ? row.explanation : '');
  show('explanation-section', row ? `(${row.section})` : '');
}

function renderReasons() {
  $('reason-list').replaceChildren(...mwp.failureReasons().map((row) => {
    const item = document.createElement('li');
    item.dataset.stage = row.stage;
    item.dataset.reason = row.reason;
    const slug = document.createElement('code');
    slug.textContent = `${row.stage}/${row.reason}`;
    const section = document.createElement('span');
    section.className = 'section-ref';
    section.textContent = `(${row.section})`;
    item.append(slug, ` — ${row.explanation} `, section);
    return item;
  }));
}

// Copy buttons: the text of the element named by data-copy, with a short confirmation.
async function copy(button) {
  const text = $(button.dataset.copy).textContent;
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // No clipboard permission (plain http, old browser): select the text for a manual copy.
    getSelection().selectAllChildren($(button.dataset.copy));
    return;
  }
  button.classList.add('done');
  button.textContent = 'Copied';
  $('copied').hidden = false;
  setTimeout(() => {
    button.classList.remove('done');
    button.textContent = 'Copy';
    $('copied').hidden = true;
  }, 1200);
}

// `failedStage`: null when all passed, a stage name, or undefined before any verification.
function renderStages(failedStage) {
  const failedAt = failedStage === undefined ? -1 : failedStage ? mwp.STAGES.indexOf(failedStage) : mwp.STAGES.length;
  $('stages').replaceChildren(...mwp.STAGES.map((stage, index) => {
    const status = failedAt < 0 ? 'not-run' : index < failedAt ? 'pass' : index === failedAt ? 'fail' : 'not-run';
    const item = document.createElement('li');
    item.dataset.stage = stage;
    item.dataset.status = status;
    item.className = status;
    const mark = document.createElement('span');
    mark.className = 'mark';
    mark.textContent = { pass: '✓', fail: '✗', 'not-run': '·' }[status];
    const label = document.createElement('span');
    label.textContent = `${index + 1}. ${STAGE_LABELS[stage]}`;
    const state = document.createElement('span');
    state.className = 'state';
    state.textContent = { pass: 'passed', fail: 'failed', 'not-run': 'not run' }[status];
    item.append(mark, label, state);
    return item;
  }));
}

function renderKey(keyId, binding) {
  show('key-id', keyId);
  show('public-key', binding?.publicKey ? `Ed25519 ${binding.publicKey}` : '');
  show('principal', binding ? `${binding.principal.type} ${binding.principal.id}` : '—');
}

function verify() {
  const documentBytes = bytesOf('document');
  const registryBytes = bytesOf('registry');
  const chosen = $('kind').value;
  const detected = chosen === 'auto' ? detectKind(documentBytes) : { kind: chosen, how: 'chosen' };
  show('detected', chosen === 'auto' ? `→ ${detected.kind} (${detected.how})` : '');
  const result = { kind: detected.kind, ok: false };
  let registry = null;
  try { registry = new mwp.Registry(registryBytes); } catch { /* reported at stage 4 by verification */ }
  try {
    const verified = mwp.verifySignedDocument(detected.kind, documentBytes, registry ?? registryBytes);
    Object.assign(result, { ok: true, stage: null, code: null, signingHash: verified.signingHash, keyId: verified.keyId });
    renderStages(null);
    $('verdict').className = 'verdict ok';
    $('verdict').textContent = `Verified: all six stages passed (${detected.kind}). Not yet admitted or authorized.`;
    show('signing-hash', verified.signingHash);
    renderKey(verified.keyId, { publicKey: verified.publicKey, principal: verified.principal });
    show('protected-time', verified.protectedTime);
    show('signing-bytes', verified.signingText);
    show('signing-length', `${verified.signingBytes.length} bytes`);
    showExplanation(null);
    show('wire', 'Nothing: the document passed verification. Admission and authorization come next.');
    show('diagnostic', `complete · ${verified.kind} · signed ${verified.signedDocumentHash}`);
  } catch (error) {
    if (!(error instanceof mwp.MwpError)) throw error;
    const stage = error instanceof mwp.VerificationError ? error.stage : null;
    Object.assign(result, { stage, code: error.code, reason: error.reason ?? null });
    renderStages(stage);
    $('verdict').className = 'verdict fail';
    $('verdict').textContent = stage
      ? `Rejected at stage ${error.stageNumber} (${stage}): ${error.code}`
      : `${error.name}: ${error.message}`;
    showExplanation(mwp.explainFailure(error));
    const reached = stage ? mwp.STAGES.indexOf(stage) : -1;
    let envelope = null;
    try { envelope = JSON.parse(decoder.decode(documentBytes)).signature; } catch { /* stage 1 */ }
    // Stage 4 passed: the resolved key. Stage 5 passed: the signing bytes and hash.
    const binding = reached > 3 && registry && typeof envelope?.keyId === 'string' ? registry.binding(envelope.keyId) : null;
    renderKey(binding ? envelope.keyId : null, binding);
    const preview = reached > 4 ? mwp.signingPreview(documentBytes) : null;
    show('signing-hash', preview?.signingHash);
    show('signing-bytes', preview ? decoder.decode(preview.signingBytes) : null);
    show('signing-length', preview ? `${preview.signingBytes.length} bytes` : '');
    show('protected-time', reached > 2 ? envelope?.createdAt : null);
    const frame = mwp.errorFrame({
      frameId: 'urn:uuid:00000000-0000-4000-8000-000000000000',
      code: error.code,
      message: error.wireMessage ?? mwp.WIRE_MESSAGE,
      occurredAt: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    });
    show('wire', JSON.stringify(JSON.parse(frame), null, 2));
    show('diagnostic', error.protectedDiagnostic ? error.protectedDiagnostic() : `${error.name}: ${error.detail}`);
  }
  // One column (phones): bring the verdict into view, the inputs fill the first screen.
  if (window.matchMedia('(max-width: 900px)').matches && $('verdict').getBoundingClientRect().top > window.innerHeight) {
    $('verdict').scrollIntoView({ block: 'start' });
  }
  window.__verifier.last = result;
  document.body.dataset.verified = String((window.__verifier.runs += 1));
  return result;
}

async function fetchBytes(path) {
  const response = await fetch(new URL(path, bundleBase));
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

async function loadSample(id) {
  const sample = samples.find((s) => s.id === id);
  if (!sample) throw new Error(`no sample ${id}`);
  const [doc, registry] = await Promise.all([fetchBytes(sample.document), fetchBytes(sample.registry)]);
  setInput('document', doc, sample.document);
  setInput('registry', registry, sample.registry);
  $('kind').value = 'auto';
  return verify();
}

async function start() {
  try {
    mwp = await import('../dist/verify.mjs');
  } catch (error) {
    document.body.dataset.state = 'error';
    show('loading-text', `The WebAssembly verifier could not be loaded: ${error.message}`);
    throw error;
  }
  document.body.dataset.state = 'ready';
  $('verify').disabled = false;
  document.querySelectorAll('[data-copy]').forEach((button) => button.addEventListener('click', () => copy(button)));
  renderReasons();
  for (const kind of mwp.DOCUMENT_KINDS) $('kind').append(new Option(kind, kind));
  show('engine', `Engine: WebAssembly (verify-only build) · protocol ${mwp.sourceCommit.slice(0, 7)}`);
  renderStages(undefined);
  $('verify').addEventListener('click', verify);
  try {
    const manifest = JSON.parse(decoder.decode(await fetchBytes('cryptography/manifest.json')));
    samples = manifest.cases.flatMap((c) => c.evaluations.map((e, i) => ({ ...e, id: `${c.id}#${i}` })))
      .filter((e) => e.document);
    for (const sample of samples) {
      const expected = sample.expect.stage === 'complete' ? 'accept' : `stage: ${sample.expect.stage}`;
      $('sample-all').append(new Option(`${sample.id.replace(/#0$/, '')} — ${sample.profileId} (${expected})`, sample.id));
    }
    const schemas = await Promise.all(mwp.DOCUMENT_KINDS.map((k) => fetchBytes(`schemas/${k}.schema.json`)));
    requiredMembers = Object.fromEntries(mwp.DOCUMENT_KINDS.map((k, i) => [k, JSON.parse(decoder.decode(schemas[i])).required ?? []]));
    // Samples only when the bundle is served (not from an installed package).
    document.querySelectorAll('[data-sample], #sample-all').forEach((control) => { control.disabled = false; });
  } catch (error) {
    show('verdict', `Samples unavailable (${error.message}); paste a document instead.`);
  }
  document.querySelectorAll('[data-sample]').forEach((button) => {
    button.addEventListener('click', () => loadSample(button.dataset.sample));
  });
  $('sample-all').addEventListener('change', (event) => { if (event.target.value) loadSample(event.target.value); });
  document.body.dataset.ready = 'true';
}

window.__verifier = { runs: 0, last: null, verify, loadSample };
start().catch((error) => {
  document.body.dataset.ready = 'error';
  show('verdict', `The verifier failed to start: ${error.message}`);
});
