// The embedded protocol bundle (reference `bundle`): its files and the integrity checks of the
// cryptography and admission bundles, as the core runs them (full builds only).

import { checkString } from './convert.mjs';
import { open } from './errors.mjs';

export function bundleApi({ raw }) {
  function bundleFile(path) {
    const bytes = raw.bundleFile(checkString(path, 'path'));
    return bytes == null ? undefined : Uint8Array.from(bytes);
  }

  function bundlePaths() { return open(raw.bundlePaths()); }

  function verifyCryptographyBundle() { return Object.freeze(open(raw.verifyCryptographyBundle())); }

  function verifyAdmissionBundle() { return Object.freeze(open(raw.verifyAdmissionBundle())); }

  return { bundleFile, bundlePaths, verifyCryptographyBundle, verifyAdmissionBundle };
}
