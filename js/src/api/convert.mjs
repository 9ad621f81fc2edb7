// Conversions of JavaScript values into what crosses to the core: bytes (UTF-8, refusing a lone
// surrogate and a detached buffer), JSON call arguments (refusing what JSON cannot carry, naming
// its path), times (a Date or integer milliseconds) and the few type checks the core cannot make
// on a JavaScript value. Ranges, defaults and every other rule are the core's.

import { ArgumentError, MwpError } from './errors.mjs';
import { encoder } from './values.mjs';

// Whether a string has a UTF-8 form: no unpaired UTF-16 surrogate (`isWellFormed`, Node >= 20;
// the regular expression elsewhere: with the `u` flag a surrogate range matches lone ones only).
function isWellFormed(text) {
  return typeof text.isWellFormed === 'function' ? text.isWellFormed() : !/[\uD800-\uDFFF]/u.test(text);
}

function illFormedArgument(what) {
  return new ArgumentError(`${what} holds an unpaired UTF-16 surrogate`);
}

// The intrinsic getters read internal slots: unlike `instanceof` and `input.buffer` they cannot
// be fooled by a Proxy around a Uint8Array, which the native side would refuse as an
// INTERNAL_ERROR (issue 9, item 7).
const TYPED_ARRAY_PROTOTYPE = Object.getPrototypeOf(Uint8Array.prototype);
const typedArrayBuffer = Object.getOwnPropertyDescriptor(TYPED_ARRAY_PROTOTYPE, 'buffer').get;
const dataViewBuffer = Object.getOwnPropertyDescriptor(DataView.prototype, 'buffer').get;
const typedArrayOffset = Object.getOwnPropertyDescriptor(TYPED_ARRAY_PROTOTYPE, 'byteOffset').get;
const typedArrayLength = Object.getOwnPropertyDescriptor(TYPED_ARRAY_PROTOTYPE, 'byteLength').get;
const dataViewOffset = Object.getOwnPropertyDescriptor(DataView.prototype, 'byteOffset').get;
const dataViewLength = Object.getOwnPropertyDescriptor(DataView.prototype, 'byteLength').get;
const arrayBufferByteLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength').get;

export function isArrayBuffer(value) {
  try {
    arrayBufferByteLength.call(value);
    return true;
  } catch {
    return false;
  }
}

function isTypedArray(value) {
  try {
    typedArrayLength.call(value);
    return true;
  } catch {
    return false;
  }
}

// A detached buffer reads as empty; refusing it keeps a transferred buffer from being verified
// as zero bytes. `ArrayBuffer.prototype.detached` is recent (Node 22); older engines refuse to
// view a detached buffer.
function isDetached(buffer) {
  if (typeof buffer.detached === 'boolean') return buffer.detached;
  try {
    new Uint8Array(buffer, 0, 0);
    return false;
  } catch {
    return true;
  }
}

// A string crosses as UTF-8. One holding an unpaired surrogate has no UTF-8 form: TextEncoder
// would repair it to U+FFFD, silently turning it into another text (issue 9), so it is refused
// here with `refuseIllFormed(what)` (the API passes the core's stage-5 error).
export function toBytes(input, what = 'input', refuseIllFormed = illFormedArgument) {
  if (typeof input === 'string') {
    if (!isWellFormed(input)) throw refuseIllFormed(what);
    return encoder.encode(input);
  }
  if (ArrayBuffer.isView(input)) {
    const isDataView = !isTypedArray(input);
    const buffer = (isDataView ? dataViewBuffer : typedArrayBuffer).call(input);
    if (!isArrayBuffer(buffer) || isDetached(buffer)) {
      throw new ArgumentError(`${what}: its ArrayBuffer is detached`, { fields: { argument: what } });
    }
    if (Object.getPrototypeOf(input) === Uint8Array.prototype) return input;
    const offset = (isDataView ? dataViewOffset : typedArrayOffset).call(input);
    const length = (isDataView ? dataViewLength : typedArrayLength).call(input);
    return new Uint8Array(buffer, offset, length);
  }
  if (isArrayBuffer(input)) {
    if (isDetached(input)) throw new ArgumentError(`${what}: the ArrayBuffer is detached`, { fields: { argument: what } });
    return new Uint8Array(input);
  }
  const kind = input === null ? 'null' : (input instanceof Uint8Array ? 'a Proxy or an object posing as a Uint8Array' : typeof input);
  throw new ArgumentError(`${what} must be a string, Uint8Array or ArrayBuffer, not ${kind}`, { fields: { argument: what } });
}



export function checkString(value, what) {
  if (typeof value !== 'string') throw new ArgumentError(`${what} must be a string`);
  return value;
}


const PRINCIPAL_TYPES = ['agent', 'human', 'service'];

export function principalOf(value, what) {
  if (!value || typeof value !== 'object' || !PRINCIPAL_TYPES.includes(value.type) || typeof value.id !== 'string') {
    throw new ArgumentError(`${what} must be a Principal {type: 'agent'|'human'|'service', id: string}`);
  }
  return value;
}



// The instants a Date argument may denote: RFC 3339's years 0001–9999 (the core writes every
// timestamp it keeps in that form, §3). Wider than any real deadline, narrower than JavaScript's
// ±8.64e15 ms, and an invalid Date (NaN) is outside it.
const MIN_DATE_MS = -62_135_596_800_000;
const MAX_DATE_MS = 253_402_300_799_999;

export function checkDate(date, path) {
  const ms = date.getTime();
  if (!(ms >= MIN_DATE_MS && ms <= MAX_DATE_MS)) {
    throw new ArgumentError(`${path}: expected a valid Date between 0001-01-01 and 9999-12-31 (UTC), not ${Number.isNaN(ms) ? 'an invalid Date' : date.toISOString()}`, { fields: { argument: path } });
  }
  return ms;
}

export function checkFinite(value, path) {
  if (!Number.isFinite(value)) throw new ArgumentError(`${path}: expected a finite number, not ${value}`, { fields: { argument: path } });
  return value;
}

function pathSegment(key, parent) {
  if (Array.isArray(parent)) return `[${key}]`;
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

/**
 * The one serializer of call arguments. JSON has no NaN, ±Infinity or invalid Date: `JSON.stringify`
 * writes `null`, which the core reads as an absent member (a default), so every such value is
 * refused here with an ArgumentError naming its path. Dates become integer milliseconds, a Map an
 * object; anything JSON cannot carry (a cycle, a BigInt) is an ArgumentError too (the core checks
 * types and ranges). `names`: the argument names when `value` is the argument list, or the name of
 * `value` itself.
 */
export function argumentJson(value, names) {
  const parents = new WeakMap();
  let top;
  const pathOf = (holder, key) => {
    const segments = [];
    for (let parent = holder, member = key; parent !== top; [parent, member] = parents.get(parent)) {
      segments.unshift([parent, member]);
    }
    if (typeof names === 'string' || segments.length === 0) {
      return `${names ?? 'arguments'}${segments.map(([parent, member]) => pathSegment(member, parent)).join('')}`;
    }
    const [[, first], ...rest] = segments;
    return `${names?.[first] ?? `arguments[${first}]`}${rest.map(([parent, member]) => pathSegment(member, parent)).join('')}`;
  };
  function replacer(key, raw) {
    const original = this[key];
    let out = raw;
    if (top === undefined) top = this;
    if (original instanceof Date) return checkDate(original, pathOf(this, key));
    if (original instanceof Map) out = Object.fromEntries(original);
    if (typeof out === 'number' || out instanceof Number) checkFinite(Number(out), pathOf(this, key));
    else if (out !== null && typeof out === 'object') parents.set(out, [this, key]);
    return out;
  }
  try {
    return JSON.stringify(value, replacer);
  } catch (error) {
    if (error instanceof MwpError) throw error;
    // A cycle, a BigInt or a throwing `toJSON`: no JSON form (issue 9, item 7).
    const what = typeof names === 'string' ? names : 'arguments';
    throw new ArgumentError(`${what} cannot be serialized as JSON: ${error?.message ?? String(error)}`, { cause: error, fields: { argument: what } });
  }
}

// Call arguments as a named object ({limit, delta}) or a list: the names make error paths.
export function jsonArgs(args) {
  return Array.isArray(args) ? argumentJson(args) : argumentJson(Object.values(args), Object.keys(args));
}

export function toMillis(value, what) {
  if (value instanceof Date) return checkDate(value, what);
  if (typeof value === 'number') return checkFinite(value, what);
  throw new ArgumentError(`${what} must be a Date or integer milliseconds since the epoch`);
}

// A cyclic object, a BigInt or a throwing `toJSON` make `JSON.stringify` throw a TypeError (or
// the caller's own error): the argument has no JSON form, an ArgumentError (issue 9, item 7).
export function snapshotText(snapshot, what) {
  if (typeof snapshot === 'string') return snapshot;
  // An array is no snapshot or options object: API misuse, as in the Python package (where the
  // core's conversion refuses anything but a mapping), not a damaged snapshot.
  if (snapshot && typeof snapshot === 'object' && !Array.isArray(snapshot)) {
    try {
      return argumentJson(snapshot, what);
    } catch (error) {
      if (error instanceof MwpError) throw error;
      throw new ArgumentError(`${what} has no JSON form: ${error?.message ?? String(error)}`, { cause: error, fields: { argument: what } });
    }
  }
  const kind = Array.isArray(snapshot) ? 'an array' : snapshot === null ? 'null' : typeof snapshot;
  throw new ArgumentError(`${what} must be a snapshot object or its JSON text, not ${kind}`, { fields: { argument: what } });
}
