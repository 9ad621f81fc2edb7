// Asynchronous Admission Logs: the core's step-wise flow (admitFirstAsync,
// replayHistoricalAsync) and the synchronous path both give the manifest's outcome — the exact
// record, or the AdmissionError with its code and reason — and the manifest's adapter calls on all
// 30 admission evaluations, on every backend; rejections and malformed replies fail closed.
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { before, describe, test } from 'node:test';

import { backends, bundleBytes, bundleJson } from './support.mjs';

const SERVICE = { type: 'service', id: 'urn:missionweaveprotocol:service:admission' };
const evaluations = bundleJson('admission/manifest.json').cases.flatMap((c) => c.evaluations);

let apis;
before(async () => { apis = await backends(); });

function fixture(evaluation, asynchronous) {
  const calls = [0, 0, 0];
  const reply = (outcome) => (outcome.record === undefined ? { status: outcome.status } : {
    status: outcome.status, record: bundleBytes(outcome.record), authenticatedService: outcome.authenticatedService,
  });
  const later = async (value) => { await tick(); return value; };
  const wrap = (value) => (asynchronous ? later(value) : value);
  const log = {
    lookup() { calls[0] += 1; return wrap(reply(evaluation.lookup)); },
    append() { calls[2] += 1; return wrap(reply(evaluation.append)); },
  };
  const context = () => { calls[1] += 1; return wrap(evaluation.trustedContext); };
  return { log, context, calls };
}

// What an admission gave: the admitted record (its exact bytes, its canonical form, whether it
// already existed), or the error's class, code, stage and reason. A throw that is not an
// AdmissionError keeps its class name, so a crash never reads as an expected outcome.
function admittedOutcome(api, admitted) {
  return {
    record: new TextDecoder().decode(admitted.recordBytes),
    canonical: api.canonicalize(JSON.stringify(admitted.record)),
    existing: admitted.existing,
  };
}

function failedOutcome(error) {
  return { class: error?.name, code: error?.code, stage: error?.stage, reason: error?.reason };
}

function outcome(api, run) {
  try {
    return admittedOutcome(api, run());
  } catch (error) {
    return failedOutcome(error);
  }
}

async function outcomeAsync(api, run) {
  try {
    return admittedOutcome(api, await run());
  } catch (error) {
    return failedOutcome(error);
  }
}

// The outcome the manifest requires: the record the log holds (returned by lookup: it existed;
// committed by append: it is new), or an AdmissionError with the manifest's code and reason.
function expectedOutcome(api, evaluation) {
  const { expect } = evaluation;
  if (expect.stage === 'complete') {
    const record = bundleBytes(expect.record);
    return {
      record: record.toString('utf8'),
      canonical: api.canonicalize(record),
      existing: evaluation.lookup.status === 'found' || evaluation.append?.status === 'existing',
    };
  }
  return { class: 'AdmissionError', code: expect.wireCode, stage: expect.stage, reason: expect.reason };
}

for (const name of ['napi (ESM)', 'wasm (ESM)', 'wasm (CommonJS)']) {
  describe(name, () => {
    test('all 30 admission evaluations give the manifest outcome on the synchronous and asynchronous paths', async () => {
      const api = apis[name];
      assert.equal(evaluations.length, 30);
      // Both kinds of outcome are exercised: 12 admissions and 18 rejections.
      assert.equal(evaluations.filter((e) => e.expect.stage === 'complete').length, 12);
      for (const evaluation of evaluations) {
        const expected = expectedOutcome(api, evaluation);
        const args = (log) => [evaluation.profileId, bundleBytes(evaluation.document), bundleBytes(evaluation.registry), log];
        const sync = fixture(evaluation, false);
        const synchronous = outcome(api, () => (evaluation.mode === 'historical-replay'
          ? api.replayHistorical(...args(sync.log))
          : api.admitFirst(...args(sync.log), sync.context)));
        const lazy = fixture(evaluation, true);
        const asynchronous = await outcomeAsync(api, () => (evaluation.mode === 'historical-replay'
          ? api.replayHistoricalAsync(...args(lazy.log))
          : api.admitFirstAsync(...args(lazy.log), lazy.context)));
        assert.deepEqual(synchronous, expected, `${evaluation.id} (synchronous)`);
        assert.deepEqual(asynchronous, expected, `${evaluation.id} (asynchronous)`);
        const absent = evaluation.mode === 'first-admission' && evaluation.lookup.status === 'authoritative-absence';
        const calls = absent ? [1, 1, evaluation.append ? 1 : 0] : [1, 0, 0];
        assert.deepEqual(sync.calls, calls, `${evaluation.id} (synchronous calls)`);
        assert.deepEqual(lazy.calls, calls, `${evaluation.id} (asynchronous calls)`);
      }
    });

    test('an asynchronous log that rejects or answers badly fails closed', async () => {
      const api = apis[name];
      const document = bundleBytes('cryptography/vectors/signed-documents/valid/command.json');
      const registry = bundleBytes('cryptography/keys/registry-valid.json');
      const context = { admissionRecordId: 'urn:missionweaveprotocol:admission-record:async', trustedAcceptedAt: '2026-07-15T00:05:00Z', acceptedBy: SERVICE };
      const stored = new Map();
      const database = {
        async lookup(org, hash) {
          await tick();
          const record = stored.get(`${org} ${hash}`);
          return record ? { status: 'found', record, authenticatedService: SERVICE } : { status: 'authoritative-absence' };
        },
        async append(candidate, bytes) {
          await tick();
          stored.set(`${candidate.organizationId} ${candidate.signingHash}`, bytes);
          return { status: 'committed', record: bytes, authenticatedService: SERVICE };
        },
      };
      const first = await api.admitFirstAsync('command', document, registry, database, async () => context);
      assert.ok(first instanceof api.AdmittedDocument);
      assert.equal(first.existing, false);
      assert.equal((await api.admitFirstAsync('command', document, registry, database, context)).existing, true);
      assert.equal((await api.replayHistoricalAsync('command', document, registry, database)).existing, true);

      const boom = new Error('database down');
      await assert.rejects(api.admitFirstAsync('command', document, registry, { lookup: async () => { throw boom; }, append() {} }, context),
        (e) => e instanceof api.AdmissionError && e.reason === 'log-indeterminate' && e.cause === boom);
      await assert.rejects(api.admitFirstAsync('command', document, registry, { lookup: async () => 42, append() {} }, context),
        (e) => e instanceof api.AdmissionError && e.reason === 'log-indeterminate');
      const appended = [];
      await assert.rejects(api.admitFirstAsync('command', document, registry,
        { lookup: async () => ({ status: 'authoritative-absence' }), append: async (c) => { appended.push(c); } },
        async () => ({ ...context, acceptedBy: { type: 'robot', id: 'x' } })),
      (e) => e instanceof api.ArgumentError && /acceptedBy/.test(e.message));
      assert.deepEqual(appended, [], 'a malformed context never reaches append');
      await assert.rejects(api.admitFirstAsync('command', document, registry, {}, context), api.ArgumentError);
      await assert.rejects(api.admitFirstAsync('command', bundleBytes('cryptography/vectors/signed-documents/invalid/command-payload-tamper.json'), registry, database, context),
        (e) => e instanceof api.VerificationError && e.stage === 'signature');
    });
  });
}
