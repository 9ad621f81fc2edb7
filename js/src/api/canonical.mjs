// Strict JSON and RFC 8785 (reference `canonical`), the parse limits (docs/limits.md) and the
// embedded schemas: what stages 1, 2 and 5 of §6.4 apply, as calls on their own. Limits cross as
// JSON text ('' for the call's default profile); the core reads and checks them.

import { ArgumentError, open } from './errors.mjs';
import { argumentJson, checkString } from './convert.mjs';
import { deepFreeze, encoder } from './values.mjs';

export function canonicalApi(ctx) {
  const { raw, inputBytes } = ctx;

  // Parse limits (docs/limits.md) cross as JSON text, '' for the call's default profile; the
  // core reads and checks them (positive safe integers, no unknown member).
  function limitsArg(limits) {
    if (limits === undefined) return '';
    if (limits === null || typeof limits !== 'object' || Array.isArray(limits)) {
      throw new ArgumentError('limits must be a ParseLimits object ({maxDocumentBytes, maxContainerEntries, maxStringBytes, maxNumberChars})');
    }
    return argumentJson(limits, 'limits');
  }

  let limitProfiles;
  /** The core's two parse-limit profiles: `DOCUMENT` (received documents and frames) and `STATE`. */
  function parseLimits() {
    if (limitProfiles === undefined) {
      const { document, state } = open(raw.parseLimitProfiles());
      limitProfiles = deepFreeze({ DOCUMENT: document, STATE: state });
    }
    return limitProfiles;
  }

  function canonicalize(json, { limits } = {}) { return open(raw.canonicalize(inputBytes(json), limitsArg(limits))); }

  function canonicalBytes(json, options) { return encoder.encode(canonicalize(json, options)); }

  function canonicalHash(json, { limits } = {}) { return open(raw.canonicalHash(inputBytes(json), limitsArg(limits))); }

  function checkStrictJson(json) { return open(raw.checkJson(inputBytes(json))); }

  function validateSchema(name, json) {
    open(raw.validateSchema(checkString(name, 'schema name'), inputBytes(json)));
  }

  function schemaNames() { return open(raw.schemaNames()); }

  ctx.limitsArg = limitsArg;

  return { parseLimits, canonicalize, canonicalBytes, canonicalHash, checkStrictJson, validateSchema, schemaNames };
}
