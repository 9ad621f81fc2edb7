// The Node entry's choice of addon (src/native-loader.cjs, issue 28): musl vs glibc, the
// napi-rs triple, the platform package before an addon built in place, and nothing (then
// node.cjs falls back to WebAssembly) when neither loads. Pure functions, driven with fakes,
// so every platform's choice is tested on this one.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';

import { JS } from './support.mjs';

const loader = createRequire(import.meta.url)(join(JS, 'src', 'native-loader.cjs'));
const { isMusl, platformTriple, candidates, loadNative, PREBUILDS } = loader;

const GLIBC_LDD = '#! /bin/bash\n# Copyright (C) 1996-2022 Free Software Foundation, Inc.\n# This file is part of the GNU C Library.\nTEXTDOMAIN=libc\n';
const MUSL_LDD = '#!/bin/sh\nexec /lib/ld-musl-x86_64.so.1 --list "$@"\n';
const never = () => { throw new Error('the process report must not be asked when ldd answers'); };

test('musl or glibc: ldd answers first', () => {
  assert.equal(isMusl(MUSL_LDD, never), true);
  assert.equal(isMusl(GLIBC_LDD, never), false);
});

test('musl or glibc: without a readable ldd, the process report answers', () => {
  assert.equal(isMusl(null, () => ({ header: { glibcVersionRuntime: '2.36' }, sharedObjects: ['/lib/x86_64-linux-gnu/libc.so.6'] })), false);
  assert.equal(isMusl(null, () => ({ header: {}, sharedObjects: ['/lib/ld-musl-aarch64.so.1', '/usr/lib/libstdc++.so.6'] })), true);
  assert.equal(isMusl('an ldd that names neither', () => ({ header: {}, sharedObjects: ['/usr/lib/libc.musl-x86_64.so.1'] })), true);
  // Nothing says musl: glibc (the only other libc a prebuild exists for).
  assert.equal(isMusl(null, () => null), false);
  assert.equal(isMusl(null, () => ({ header: {}, sharedObjects: ['/opt/musl-notes/libfoo.so'] })), false);
});

test('the triple: linux gets gnu or musl, other systems platform-arch', () => {
  assert.equal(platformTriple('linux', 'x64', false), 'linux-x64-gnu');
  assert.equal(platformTriple('linux', 'arm64', true), 'linux-arm64-musl');
  assert.equal(platformTriple('darwin', 'arm64', false), 'darwin-arm64');
  // Every Linux triple the loader can compute for x64/arm64 has a prebuild.
  for (const arch of ['x64', 'arm64']) for (const musl of [false, true]) assert.ok(PREBUILDS[platformTriple('linux', arch, musl)]);
  assert.equal(PREBUILDS[platformTriple('linux', 'ppc64', false)], undefined);
});

test('this machine: Debian with glibc on x64 or arm64', () => {
  assert.match(loader.hostTriple(), /^linux-(x64|arm64)-gnu$/);
});

test('the platform package is tried first, then the addon built in place', () => {
  assert.deepEqual(candidates('linux-arm64-musl'), ['missionweaveprotocol-linux-arm64-musl', './missionweaveprotocol.linux-arm64-musl.node']);
  const tried = [];
  const raw = { backend: 'fake' };
  const found = loadNative('linux-x64-gnu', (id) => { tried.push(id); return raw; });
  assert.deepEqual(found, { raw, from: 'missionweaveprotocol-linux-x64-gnu' });
  assert.deepEqual(tried, ['missionweaveprotocol-linux-x64-gnu']);
});

test('a missing or broken platform package falls through to the local addon', () => {
  const raw = { backend: 'local' };
  const found = loadNative('linux-x64-musl', (id) => {
    if (id.startsWith('./')) return raw;
    throw Object.assign(new Error(`Cannot find module '${id}'`), { code: 'MODULE_NOT_FOUND' });
  });
  assert.deepEqual(found, { raw, from: './missionweaveprotocol.linux-x64-musl.node' });
  // A package that exists but cannot load (a glibc addon on musl, say): its error is kept.
  const broken = loadNative('linux-x64-gnu', () => { throw new Error('libc.so.6: cannot open shared object file'); });
  assert.deepEqual(broken, { raw: null, tried: [
    'missionweaveprotocol-linux-x64-gnu: libc.so.6: cannot open shared object file',
    './missionweaveprotocol.linux-x64-gnu.node: libc.so.6: cannot open shared object file',
  ] });
});
