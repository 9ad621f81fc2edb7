// Shared test support: paths, the three backends, the golden vectors (tests/vectors/, written
// by the Rust core) and the evaluation driver that runs every bundle evaluation through the
// public JavaScript API against the bundle manifests' own expectations.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const JS = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const REPO = resolve(JS, '..');
export const TARGET = resolve(process.env.CARGO_TARGET_DIR ?? join(REPO, 'target'));
export const BUNDLE = resolve(process.env.MWP_PROTOCOL_ROOT ?? join(REPO, '..', 'shared', 'protocol'));
export const DIST = join(JS, 'dist');
/** Debian's Chromium, driven headless by playwright-core (CI runs as root: --no-sandbox). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
export const VECTORS = resolve(process.env.MWP_VECTORS_DIR ?? join(REPO, 'tests', 'vectors'));

const require = createRequire(import.meta.url);

/** The napi addon built in place, named by its napi-rs triple (src/native-loader.cjs). */
export const ADDON = join(DIST, `missionweaveprotocol.${require(join(JS, 'src', 'native-loader.cjs')).hostTriple()}.node`);

/** The backends under test: the napi addon, the wasm ES module and the wasm CommonJS build. */
export async function backends() {
  for (const file of ['node.mjs', 'node-wasm.mjs', 'wasm.cjs']) {
    if (!existsSync(join(DIST, file))) throw new Error(`${join(DIST, file)} is missing: run scripts/test-js.sh (or node js/scripts/build.mjs)`);
  }
  return {
    'napi (ESM)': await import(join(DIST, 'node.mjs')),
    'wasm (ESM)': await import(join(DIST, 'node-wasm.mjs')),
    'wasm (CommonJS)': require(join(DIST, 'wasm.cjs')),
  };
}

export function bundleBytes(path) {
  return readFileSync(join(BUNDLE, path));
}

export function bundleJson(path) {
  return JSON.parse(bundleBytes(path).toString('utf8'));
}

/** The text of one golden vector file (tests/vectors/). */
export function vectorText(name) {
  return readFileSync(join(VECTORS, name), 'utf8');
}

/** The records of one JSON Lines vector file. */
export function vectorLines(name) {
  return vectorText(name).split('\n').filter((line) => line.length > 0).map((line) => JSON.parse(line));
}

/** The scheduling vectors (scheduling.jsonl), by scenario name. */
export function schedulingVectors() {
  return new Map(vectorLines('scheduling.jsonl').map((r) => [r.scenario, r]));
}

const decoder = new TextDecoder();

function rejected(error, extra = {}) {
  return { verdict: 'rejected', stage: error.stage, code: error.code, reason: error.reason, ...extra };
}

/**
 * Runs every evaluation of the three bundles through `api` and returns records, plus
 * `problems`: where a record contradicts the bundle manifest's own expectations. (The exact
 * comparison with the Rust core is vectors.test.mjs, against tests/vectors/evaluations.jsonl.)
 */
export function runEvaluations(api) {
  const records = [];
  const problems = [];
  const expect = (id, ok, message) => { if (!ok) problems.push(`${id}: ${message}`); };

  // Structural: 58 vectors, schema validation with formats asserted.
  for (const entry of bundleJson('conformance/manifest.json')) {
    let record;
    try {
      api.validateSchema(entry.schema.slice('schemas/'.length), bundleBytes(entry.instance));
      record = { verdict: 'valid', stage: null, code: null };
    } catch (error) {
      if (!(error instanceof api.ParseError || error instanceof api.SchemaValidationError)) throw error;
      record = { verdict: 'invalid', stage: error.stage, code: error.code };
    }
    expect(entry.name, (record.verdict === 'valid') === entry.valid, `expected valid=${entry.valid}`);
    records.push({ bundle: 'structural', id: entry.name, ...record });
  }

  // Cryptography: 62 evaluations (one canonicalization case, the rest signed documents).
  for (const testCase of bundleJson('cryptography/manifest.json').cases) {
    testCase.evaluations.forEach((evaluation, index) => {
      const id = `${testCase.id}#${index}`;
      if (testCase.kind === 'canonicalization') {
        const input = bundleBytes(evaluation.input);
        const record = { verdict: 'complete', canonical: api.canonicalize(input), hash: api.canonicalHash(input) };
        expect(id, record.canonical === bundleBytes(evaluation.expectedJcs).toString('utf8'), 'canonical bytes differ from expectedJcs');
        expect(id, record.hash === evaluation.sha256, 'hash differs');
        records.push({ bundle: 'cryptography', id, ...record });
        return;
      }
      const document = bundleBytes(evaluation.document);
      const registry = bundleBytes(evaluation.registry);
      let record;
      try {
        const verified = api.verifySignedDocument(evaluation.profileId, document, registry);
        record = {
          verdict: 'complete', stage: 'complete', code: null,
          signingBytes: decoder.decode(verified.signingBytes),
          signingHash: verified.signingHash,
          signedDocumentHash: verified.signedDocumentHash,
          keyId: verified.keyId,
          principal: { ...verified.principal },
          protectedTime: verified.protectedTime,
          signature: verified.signature,
        };
        if (evaluation.signingKey) {
          const key = bundleJson(evaluation.signingKey);
          const signed = api.signDocument(evaluation.profileId, verified.signingBytes, {
            keyId: key.keyId, seed: Buffer.from(key.seed, 'base64url'), registry,
          });
          record.resignedSignature = signed.signature;
          record.resignedDocumentHash = signed.documentHash;
          expect(id, signed.signature === verified.signature, 're-signing does not reproduce signature.value');
          expect(id, signed.documentHash === verified.signedDocumentHash, 're-signed document hash differs');
        }
        const want = evaluation.expect.verified;
        expect(id, want && record.signingBytes === bundleBytes(want.signingBytes).toString('utf8'), 'signing bytes differ');
        for (const field of ['keyId', 'protectedTime', 'signingHash', 'signature', 'signedDocumentHash']) {
          expect(id, want && record[field] === want[field], `${field} differs`);
        }
        expect(id, want && JSON.stringify(record.principal) === JSON.stringify(want.principal), 'principal differs');
      } catch (error) {
        if (!(error instanceof api.VerificationError)) throw error;
        record = rejected(error);
        expect(id, error instanceof Error && error.message === `${error.code}: signed document rejected`, 'wire message');
      }
      expect(id, record.stage === evaluation.expect.stage, `expected stage ${evaluation.expect.stage}, got ${record.stage}`);
      expect(id, record.code === evaluation.expect.wireCode, `expected ${evaluation.expect.wireCode}, got ${record.code}`);
      records.push({ bundle: 'cryptography', id, ...record });
    });
  }

  // Admission: 30 evaluations through a JavaScript Admission Log replaying the declared outcomes.
  for (const testCase of bundleJson('admission/manifest.json').cases) {
    for (const evaluation of testCase.evaluations) {
      const calls = [0, 0, 0];
      const reply = (outcome) => (outcome.record === undefined ? { status: outcome.status } : {
        status: outcome.status, record: bundleBytes(outcome.record), authenticatedService: outcome.authenticatedService,
      });
      const log = {
        lookup() { calls[0] += 1; return reply(evaluation.lookup); },
        append() { calls[2] += 1; return reply(evaluation.append); },
      };
      const context = () => { calls[1] += 1; return evaluation.trustedContext; };
      const args = [evaluation.profileId, bundleBytes(evaluation.document), bundleBytes(evaluation.registry), log];
      let record;
      try {
        const admitted = evaluation.mode === 'historical-replay'
          ? api.replayHistorical(...args)
          : api.admitFirst(...args, context);
        record = {
          verdict: 'complete', stage: 'complete', code: null,
          record: api.canonicalize(JSON.stringify(admitted.record)),
          recordBytes: decoder.decode(admitted.recordBytes),
          existing: admitted.existing,
        };
        expect(evaluation.id, record.record === api.canonicalize(bundleBytes(evaluation.expect.record)), 'record differs from expect.record');
      } catch (error) {
        if (!(error instanceof api.AdmissionError || error instanceof api.VerificationError)) throw error;
        record = rejected(error);
        expect(evaluation.id, error.reason === evaluation.expect.reason, `expected reason ${evaluation.expect.reason}, got ${error.reason}`);
      }
      const absent = evaluation.mode === 'first-admission' && evaluation.lookup.status === 'authoritative-absence';
      const wantCalls = absent ? [1, 1, evaluation.append ? 1 : 0] : [1, 0, 0];
      expect(evaluation.id, JSON.stringify(calls) === JSON.stringify(wantCalls), `adapter calls ${calls}, expected ${wantCalls}`);
      expect(evaluation.id, record.stage === evaluation.expect.stage, `expected stage ${evaluation.expect.stage}, got ${record.stage}`);
      expect(evaluation.id, record.code === evaluation.expect.wireCode, `expected ${evaluation.expect.wireCode}, got ${record.code}`);
      records.push({ bundle: 'admission', id: evaluation.id, ...record, calls });
    }
  }
  return { records, problems };
}
