// The shared wrapper alone, over a fake backend: a backend that throws (a panic turned into an
// exception by napi's catch_unwind, or a wasm trap) surfaces as MwpError INTERNAL_ERROR, and
// unknown error classes still become MwpError.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';

import { DIST } from './support.mjs';

const { createApi, MwpError, ParseError } = await import(join(DIST, 'api.mjs'));

test('a throwing backend gives INTERNAL_ERROR with the cause', () => {
  const trap = new Error('unreachable executed');
  const api = createApi({ sourceCommit: () => 'f7e70a7', canonicalize() { throw trap; } }, 'fake');
  assert.throws(() => api.canonicalize('{}'), (e) => e instanceof MwpError && e.code === 'INTERNAL_ERROR' && e.cause === trap);
});

test('envelopes map to the error classes; unknown classes stay MwpError', () => {
  const api = createApi({
    sourceCommit: () => 'f7e70a7',
    canonicalize: () => '{"error":{"class":"ParseError","code":"PROTOCOL_VIOLATION","stage":"parse","reason":"trailing-data","message":"m","detail":"d","retryable":false,"fields":{"offset":3}}}',
    canonicalHash: () => '{"error":{"class":"FutureError","code":"INTERNAL_ERROR","stage":null,"detail":"new"}}',
  }, 'fake');
  assert.throws(() => api.canonicalize('{}'), (e) => e instanceof ParseError && e.offset === 3 && e.message === 'm'
    && e.detail === 'd' && e.reason === 'trailing-data' && e.fields.offset === 3 && e.retryable === false);
  assert.throws(() => api.canonicalHash('{}'), (e) => e.constructor === MwpError && e.code === 'INTERNAL_ERROR');
});
