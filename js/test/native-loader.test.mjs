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

// /proc/self/maps lines (address, perms, offset, device, inode, path) of a Node on each libc.
const map = (path) => `7f3a2c000000-7f3a2c028000 r--p 00000000 fe:01 1234 ${path}`;
const GLIBC_MAPS = [map('/usr/bin/node'), map('/usr/lib/x86_64-linux-gnu/libc.so.6'), map('/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2'), '7ffd1000-7ffd2000 rw-p 00000000 00:00 0 [stack]'].join('\n');
const MUSL_MAPS = [map('/usr/bin/node'), map('/usr/lib/libstdc++.so.6.0.33'), map('/lib/ld-musl-x86_64.so.1')].join('\n');
const never = () => { throw new Error('the process report must not be asked when the maps answer'); };

test('musl or glibc: the C library this process has mapped answers first', () => {
  assert.equal(isMusl(MUSL_MAPS, never), true);
  assert.equal(isMusl(GLIBC_MAPS, never), false);
  assert.equal(isMusl(map('/usr/lib/libc.musl-aarch64.so.1'), never), true);
  assert.equal(isMusl(map('/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1'), never), false);
});

test('musl or glibc: when the maps name neither (or are unreadable), the process report answers', () => {
  // Node writes glibcVersionRuntime into the report header only when built against glibc.
  assert.equal(isMusl(null, () => ({ header: { glibcVersionRuntime: '2.36' } })), false);
  assert.equal(isMusl(null, () => ({ header: { osName: 'Linux' } })), true);
  // musl's loader run by another name (e.g. …/x86_64-linux-musl/libc.so): no glibc in the report.
  assert.equal(isMusl(map('/opt/musl/usr/lib/x86_64-linux-musl/libc.so'), () => ({ header: {} })), true);
  // A file merely named like musl is not the loader.
  assert.equal(isMusl(map('/home/u/ld-musl-notes/readme.txt'), () => ({ header: { glibcVersionRuntime: '2.17' } })), false);
  // No report either: glibc, the only other libc a prebuild exists for.
  assert.equal(isMusl(null, () => undefined), false);
});

test('the triple: linux gets gnu or musl, other systems platform-arch', () => {
  assert.equal(platformTriple('linux', 'x64', false), 'linux-x64-gnu');
  assert.equal(platformTriple('linux', 'arm64', true), 'linux-arm64-musl');
  assert.equal(platformTriple('darwin', 'arm64', false), 'darwin-arm64');
  // Every Linux triple the loader can compute for x64/arm64 has a prebuild.
  for (const arch of ['x64', 'arm64']) for (const musl of [false, true]) assert.ok(PREBUILDS[platformTriple('linux', arch, musl)]);
  assert.equal(PREBUILDS[platformTriple('linux', 'ppc64', false)], undefined);
});

test('this machine: Debian, glibc, on x64 or arm64', () => {
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
