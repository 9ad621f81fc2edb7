// The native objects behind this package's classes and the one way to call them: a table from
// JavaScript object to native object (freed at once on `free()`, refused afterwards), the guarded
// backend (anything thrown is INTERNAL_ERROR) and the calls of a native object's operations. A
// backend has one function or method per operation (core/ffi): the wrapper names the operation
// in code, never as a string the backend dispatches on.

import { ArgumentError, internal, open, toError } from './errors.mjs';
import { jsonArgs } from './convert.mjs';

// `using` and `[Symbol.dispose]` (issue 9, item 10): Node 20 and current browsers define
// `Symbol.dispose` (Node's is `Symbol.for('nodejs.dispose')`, the fallback on older engines).
export const DISPOSE = Symbol.dispose ?? Symbol.for('nodejs.dispose');

/**
 * The native objects behind this package's classes (a Registry, a log, a Scheduler, …), by
 * JavaScript object. `free(self)` drops the native state at once — the garbage collector would
 * only get to it after the event loop turns, so a synchronous loop would keep every one alive —
 * and any later use is an ArgumentError (`invalid-argument`), never a crash.
 */
export class NativeTable {
  #live = new WeakMap();
  #freed = new WeakSet();
  #freedError;

  /** `raw`: the backend, whose core supplies the freed-object error (one text, in Rust). */
  constructor(raw) { this.#freedError = (what) => toError(JSON.parse(raw.freedError(what)).error); }

  set(self, handle) { this.#live.set(self, handle); }

  get(self, what = self?.constructor?.name ?? 'object') {
    const handle = this.#live.get(self);
    if (handle !== undefined) return handle;
    if (this.#freed.has(self)) {
      throw this.#freedError(what);
    }
    throw new ArgumentError(`not a ${what} of this backend`, { fields: { argument: what } });
  }

  free(self) {
    const handle = this.#live.get(self);
    if (handle === undefined) return;
    this.#live.delete(self);
    this.#freed.add(self);
    handle.free?.();
  }
}

// Adds `free()` and `[Symbol.dispose]()` (= free) to the prototypes of `classes`, as
// non-enumerable methods like the ones a class body defines.
export function disposable(table, classes) {
  for (const Class of classes) {
    Object.defineProperty(Class.prototype, 'free', {
      value: function free() { table.free(this); }, enumerable: false, writable: true, configurable: true,
    });
    Object.defineProperty(Class.prototype, DISPOSE, {
      value: function dispose() { table.free(this); }, enumerable: false, writable: true, configurable: true,
    });
  }
}

// The backend's functions and classes, with anything thrown turned into INTERNAL_ERROR. Answers,
// including every protocol failure, come back as envelopes and never throw.
export function guarded(backendModule) {
  const out = {};
  for (const [name, value] of Object.entries(backendModule)) {
    if (typeof value !== 'function') continue;
    if (/^[A-Z]/.test(name)) {
      out[name] = function Guarded(...args) {
        try { return new value(...args); } catch (error) { throw internal(error); }
      };
    } else {
      out[name] = (...args) => {
        try { return value(...args); } catch (error) { throw internal(error); }
      };
    }
  }
  return out;
}

// A class's accessor of its native object, for the other objects of the same backend (not enumerable, not exported).
export const NATIVE_OF = Symbol('native');

/** The envelope of an operation that answers nothing. */
export const OK_NULL = '{"ok":null}';

/**
 * Keeps `handle` (a native object just made) for `self` once its `status()` is `ok`; a refused
 * construction is thrown (and the native object freed). Returns `self`.
 */
export function adopt(table, self, handle) {
  try {
    open(handle.status());
  } catch (error) {
    handle.free?.();
    throw error;
  }
  table.set(self, handle);
  return self;
}

/**
 * One operation of `self`'s native object: `op(handle, argumentsJson)` calls it by name in code.
 * `args` (a list, or an object whose member names name the arguments in errors) crosses as one
 * JSON array; anything the backend throws is INTERNAL_ERROR.
 */
export function invoke(table, self, op, args = []) {
  const text = jsonArgs(args);
  const handle = table.get(self);
  let envelope;
  try {
    envelope = op(handle, text);
  } catch (error) {
    throw internal(error);
  }
  return open(envelope);
}

/** A backend answer: an envelope string, or (napi) a Promise of one; read by `read`. */
export async function settle(call, read = open) {
  let envelope;
  try {
    envelope = await call();
  } catch (error) {
    throw internal(error);
  }
  return read(envelope);
}
