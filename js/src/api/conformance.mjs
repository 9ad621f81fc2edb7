// The conformance runner (reference `conformance`): the embedded structural, cryptography and
// admission bundles evaluated by the core (full builds only).

import { ArgumentError, open } from './errors.mjs';

export function conformanceApi({ raw }) {
  function runConformance(bundles = []) {
    if (!Array.isArray(bundles) || bundles.some((b) => typeof b !== 'string' || b.includes(','))) {
      throw new ArgumentError('bundles must be an array of bundle names');
    }
    return open(raw.runConformance(bundles.join(',')));
  }

  return { runConformance };
}
