// Small value helpers every module of the package uses: the one UTF-8 encoder and decoder,
// non-enumerable members, deep freezing.

export const encoder = new TextEncoder();
export const decoder = new TextDecoder();

/** Defines non-enumerable, read-only members (what `JSON.stringify` and spreads never show). */
export function hidden(target, values) {
  for (const [name, value] of Object.entries(values)) {
    Object.defineProperty(target, name, { value, enumerable: false, writable: false, configurable: true });
  }
}

export function deepFreeze(value) {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
