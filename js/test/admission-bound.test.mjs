// Bounded asynchronous admission (issue 9, item 12): `admitFirstAsync` and
// `replayHistoricalAsync` take {signal, timeoutMs}; when either fires before the Admission Log
// answers, the core's step-wise flow reads the `unavailable` outcome and the admission fails
// closed with reason `log-unavailable`, `cause` the abort reason or a TimeoutError. A log that
// answers in time still admits. On every backend.
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { before, describe, test } from 'node:test';

import { backends, bundleBytes } from './support.mjs';

const SERVICE = { type: 'service', id: 'urn:missionweaveprotocol:service:admission' };
const CONTEXT = { admissionRecordId: 'urn:missionweaveprotocol:admission-record:bound', trustedAcceptedAt: '2026-07-15T00:05:00Z', acceptedBy: SERVICE };
const never = () => new Promise(() => {});

let apis;
let document;
let registry;
before(async () => {
  apis = await backends();
  document = bundleBytes('cryptography/vectors/signed-documents/valid/command.json');
  registry = bundleBytes('cryptography/keys/registry-valid.json');
});

/** A log that answers after a turn of the event loop; counts its calls. */
function database() {
  const stored = new Map();
  const calls = { lookup: 0, append: 0 };
  return {
    calls,
    async lookup(org, hash) {
      calls.lookup += 1;
      await tick();
      const record = stored.get(`${org} ${hash}`);
      return record ? { status: 'found', record, authenticatedService: SERVICE } : { status: 'authoritative-absence' };
    },
    async append(candidate, bytes) {
      calls.append += 1;
      await tick();
      stored.set(`${candidate.organizationId} ${candidate.signingHash}`, bytes);
      return { status: 'committed', record: bytes, authenticatedService: SERVICE };
    },
  };
}

function unavailable(api, cause) {
  return (e) => {
    assert.ok(e instanceof api.AdmissionError, `${e}`);
    assert.equal(e.reason, 'log-unavailable');
    cause(e.cause);
    return true;
  };
}

const isTimeout = (cause) => { assert.equal(cause?.name, 'TimeoutError'); assert.match(cause.message, /50 ms/); };

for (const name of ['napi (ESM)', 'wasm (ESM)', 'wasm (CommonJS)']) {
  describe(name, () => {
    test('a lookup that never settles rejects with log-unavailable after timeoutMs', async () => {
      const api = apis[name];
      const calls = { append: 0 };
      const log = { lookup: never, append() { calls.append += 1; return never(); } };
      const started = performance.now();
      await assert.rejects(api.admitFirstAsync('command', document, registry, log, CONTEXT, { timeoutMs: 50 }), unavailable(api, isTimeout));
      assert.ok(performance.now() - started >= 45, 'not before the timeout');
      assert.equal(calls.append, 0, 'nothing is appended once the lookup timed out');
      await assert.rejects(api.replayHistoricalAsync('command', document, registry, { lookup: never }, { timeoutMs: 50 }), unavailable(api, isTimeout));
    });

    test('an already-aborted signal rejects at once, without calling the log', async () => {
      const api = apis[name];
      const controller = new AbortController();
      const reason = new Error('shutting down');
      controller.abort(reason);
      const log = database();
      await assert.rejects(api.admitFirstAsync('command', document, registry, log, CONTEXT, { signal: controller.signal }),
        unavailable(api, (cause) => assert.equal(cause, reason)));
      await assert.rejects(api.replayHistoricalAsync('command', document, registry, log, { signal: controller.signal }),
        unavailable(api, (cause) => assert.equal(cause, reason)));
      assert.deepEqual(log.calls, { lookup: 0, append: 0 });
      // Without an explicit reason the signal's own AbortError is the cause.
      await assert.rejects(api.admitFirstAsync('command', document, registry, log, CONTEXT, { signal: AbortSignal.abort(), timeoutMs: 10_000 }),
        unavailable(api, (cause) => assert.equal(cause?.name, 'AbortError')));
    });

    test('an abort during append fails closed with log-unavailable', async () => {
      const api = apis[name];
      const controller = new AbortController();
      const reason = new Error('client went away');
      const appended = [];
      const log = {
        lookup: async () => ({ status: 'authoritative-absence' }),
        append(candidate) {
          appended.push(candidate.signingHash);
          setTimeout(() => controller.abort(reason), 5);
          return never();
        },
      };
      await assert.rejects(api.admitFirstAsync('command', document, registry, log, CONTEXT, { signal: controller.signal, timeoutMs: 60_000 }),
        unavailable(api, (cause) => assert.equal(cause, reason)));
      assert.equal(appended.length, 1);
    });

    test('a late answer after the bound fired is ignored', async () => {
      const api = apis[name];
      const log = database();
      const slow = { ...log, lookup: (...args) => new Promise((resolve) => { setTimeout(() => resolve(log.lookup(...args)), 150); }) };
      await assert.rejects(api.admitFirstAsync('command', document, registry, slow, CONTEXT, { timeoutMs: 50 }), unavailable(api, isTimeout));
      assert.equal(log.calls.append, 0);
    });

    test('a log that answers in time still admits, and the timer does not outlive the call', async () => {
      const api = apis[name];
      const log = database();
      const controller = new AbortController();
      const first = await api.admitFirstAsync('command', document, registry, log, async () => CONTEXT, { signal: controller.signal, timeoutMs: 60_000 });
      assert.ok(first instanceof api.AdmittedDocument);
      assert.equal(first.existing, false);
      assert.deepEqual(log.calls, { lookup: 1, append: 1 });
      const again = await api.admitFirstAsync('command', document, registry, log, CONTEXT, { timeoutMs: 60_000 });
      assert.equal(again.existing, true);
      assert.equal((await api.replayHistoricalAsync('command', document, registry, log, { signal: controller.signal })).existing, true);
      assert.equal((await api.admitFirstAsync('command', document, registry, log, CONTEXT, {})).existing, true);
      // Aborting after the admission finished changes nothing.
      controller.abort();
    });

    test('malformed options are argument errors', async () => {
      const api = apis[name];
      const log = database();
      for (const options of [null, 5, { timeoutMs: NaN }, { timeoutMs: -1 }, { timeoutMs: Infinity }, { timeoutMs: '50' }, { signal: {} }, { signal: null }]) {
        await assert.rejects(api.admitFirstAsync('command', document, registry, log, CONTEXT, options),
          (e) => e instanceof api.ArgumentError && e.code === 'PROTOCOL_VIOLATION' && e.reason === 'invalid-argument', JSON.stringify(options));
      }
      assert.deepEqual(log.calls, { lookup: 0, append: 0 });
    });
  });
}
