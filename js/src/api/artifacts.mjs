// Content-addressed Artifact bytes (reference `artifacts`, §13.1; napi only: a filesystem store).
// Every rule (hash, layout, size check, manifest building, signing, verification) is the core's
// `artifact::LocalArtifactStore`; this converts arguments (docs/engine.md "Artifact bytes").

import { ArgumentError, open } from './errors.mjs';
import { checkDate, checkString } from './convert.mjs';
import { SignedDocument } from './signed_documents.mjs';
import { encoder } from './values.mjs';

export function artifactsApi({ raw, inputBytes, documentBytes, withRegistry, verifiedFrom, SigningKey, seedOf }) {
  function needsFilesystem(what) {
    if (typeof raw.ArtifactStore !== 'function') {
      throw new ArgumentError(`${what} needs a filesystem: use the Node (napi) entry, not the WebAssembly build`);
    }
  }

  function timestampText(value, what) {
    if (value === undefined) return new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
    if (value instanceof Date) {
      checkDate(value, what);
      return value.toISOString().replace('.000Z', 'Z');
    }
    return checkString(value, what);
  }

  /** Artifact bytes under `root`, keyed by SHA-256: `<root>/<hex[:2]>/<hex[2:]>`. */
  class LocalArtifactStore {
    #native;

    constructor(root) {
      needsFilesystem('LocalArtifactStore');
      this.root = checkString(root, 'root');
      this.#native = new raw.ArtifactStore(this.root);
      Object.freeze(this);
    }

    /** Signs the protocol's Artifact manifest of `content` with the producer's key and stores the bytes. */
    put(content, options = {}) {
      const {
        key, producer, agentCardVersion, capability, capabilityVersion, missionId, groupId, workItemId,
        mediaType, classification, schemaUri, sourceArtifactHashes = [], toolVersions = [], modelVersions = [],
        createdAt, uri, artifactId, extensions,
      } = options;
      if (!(key instanceof SigningKey)) throw new ArgumentError('key must be a SigningKey');
      const tools = Array.isArray(toolVersions)
        ? toolVersions
        : Object.entries(toolVersions ?? {}).map(([name, version]) => ({ name, version }));
      const metadata = {
        mediaType, schemaUri,
        producer: { agentId: producer, agentCardVersion, capabilities: [{ id: capability, version: capabilityVersion }] },
        missionId, groupId, workItemId, sourceArtifactHashes, toolVersions: tools, modelVersions, classification,
        createdAt: timestampText(createdAt, 'createdAt'), uri, artifactId, extensions,
      };
      const bytes = encoder.encode(JSON.stringify(metadata));
      const envelope = this.#native.put(inputBytes(content, 'content'), bytes, key.keyId, seedOf(key));
      return new SignedDocument(open(envelope));
    }

    /** The bytes a manifest names, re-hashed and size-checked (`ArtifactError` otherwise). */
    get(manifest) {
      const bytes = documentBytes(typeof manifest === 'object' && !(manifest instanceof Uint8Array)
        && !(manifest instanceof ArrayBuffer) ? JSON.stringify(manifest) : manifest, 'manifest');
      const result = this.#native.get(bytes);
      if (typeof result === 'string') open(result);
      return new Uint8Array(result);
    }
  }

  /** Six-stage verification of an Artifact manifest (Artifact profile); a rejection is an `ArtifactError`. */
  function verifyArtifactManifest(manifest, registry) {
    needsFilesystem('verifyArtifactManifest');
    const bytes = documentBytes(manifest, 'manifest');
    return verifiedFrom(withRegistry(registry, (handle) => raw.verifyArtifactManifest(bytes, handle)), bytes, true);
  }

  /** `sha256:<hex>` of Artifact bytes. */
  function artifactContentHash(content) {
    needsFilesystem('artifactContentHash');
    return open(raw.artifactContentHash(inputBytes(content, 'content')));
  }

  return { LocalArtifactStore, verifyArtifactManifest, artifactContentHash };
}
