// The protocol's fixed names (reference `_types`): the version, the nine signature-required
// document kinds (§6.4 profile IDs), the six verification stages, the wire message of a rejected
// document; and the core's own spelling list of every vocabulary, which the enum objects of the
// other modules are tested against (test/vocabularies.test.mjs).

import { ArgumentError, open } from './errors.mjs';
import { deepFreeze } from './values.mjs';

export const PROTOCOL_VERSION = '0.1';

/** The nine signature-required document kinds (§6.4 profile IDs). */
export const DOCUMENT_KINDS = Object.freeze([
  'agent-card', 'approval', 'artifact', 'command', 'context-package',
  'event', 'evidence', 'extension-profile', 'group-snapshot',
]);

/** The six semantic verification stages, in order. */
export const STAGES = Object.freeze([
  'parse', 'schema', 'signature-envelope', 'key-resolution', 'canonicalization', 'signature',
]);

/** The fixed wire message of every rejected signed document (§6.4). */
export const WIRE_MESSAGE = 'signed document rejected';

// Checked here as well as in the core: a batch crosses its kinds comma-joined.
export function checkKind(kind) {
  if (typeof kind !== 'string' || !DOCUMENT_KINDS.includes(kind)) {
    throw new ArgumentError(`unknown signed document kind ${JSON.stringify(kind)} (expected one of ${DOCUMENT_KINDS.join(', ')})`);
  }
  return kind;
}

/** `vocabularies()`: the core's spelling list of every wire vocabulary, by name. */
export function typesApi({ raw }) {
  /** The core's spelling list of every wire vocabulary, by name (what this package's enum objects spell). */
  function vocabularies() { return deepFreeze(open(raw.vocabularies())); }

  return { vocabularies };
}
