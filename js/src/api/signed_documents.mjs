// Signed documents (reference `signed_documents`, §6.4): signing, the six-stage verification of
// the exact received bytes (one or a batch), the signing-bytes preview, kind detection, and the
// explanation of every failure reason. The results are `VerifiedDocument` and `SignedDocument`;
// every rule and refusal is the core's `SignedDocumentCodec`.

import { ArgumentError, MwpError, VerificationError, open, toError } from './errors.mjs';
import { checkString } from './convert.mjs';
import { checkKind } from './types.mjs';
import { deepFreeze, encoder } from './values.mjs';

/** A document that passed all six stages: cryptographically verified, not admitted, not authorized. */
export class VerifiedDocument {
  #text;
  #bytes;
  #hash;
  #hashDocument;

  // `hashDocument` computes the whole-document hash on first use (one RFC 8785 pass).
  constructor(raw, hashDocument) {
    this.#text = raw.signingBytes;
    this.#hashDocument = hashDocument;
    this.kind = raw.kind;
    this.signingHash = raw.signingHash;
    this.organizationId = raw.organizationId;
    this.keyId = raw.keyId;
    this.publicKey = raw.publicKey;
    this.principal = Object.freeze({ type: raw.principal.type, id: raw.principal.id });
    this.protectedTime = raw.protectedTime;
    this.signature = raw.signature;
    this.validFrom = raw.validFrom;
    this.validUntil = raw.validUntil;
    this.revokedAt = raw.revokedAt;
    Object.freeze(this);
  }

  /** RFC 8785 bytes of the document without its top-level `signature` (stage 5); a fresh copy. */
  get signingBytes() {
    this.#bytes ??= encoder.encode(this.#text);
    return this.#bytes.slice();
  }

  /** The canonical signing bytes as text (RFC 8785 output is UTF-8). */
  get signingText() { return this.#text; }

  /** `sha256:` of the RFC 8785 form of the whole document, `signature` included. */
  get signedDocumentHash() {
    this.#hash ??= this.#hashDocument();
    return this.#hash;
  }
}

/** A freshly signed document; `bytes` are the RFC 8785 bytes to send. */
export class SignedDocument {
  constructor(raw) {
    this.kind = raw.kind;
    this.text = raw.document;
    this.bytes = encoder.encode(raw.document);
    this.documentHash = raw.documentHash;
    this.signingBytes = encoder.encode(raw.signingBytes);
    this.signingHash = raw.signingHash;
    this.protectedTime = raw.protectedTime;
    this.signature = raw.signature;
    Object.freeze(this);
  }
}


export function signedDocumentsApi(ctx) {
  const { raw, inputBytes, documentBytes, withRegistry, limitsArg, SigningKey, seedOf } = ctx;

  /** Every §6.4 failure reason, explained in one sentence with its spec section. */
  function failureReasons() {
    return deepFreeze(open(raw.failureReasons()));
  }

  /** The explanation of a VerificationError (or of `stage` and `reason`), or null. */
  function explainFailure(stageOrError, reason) {
    const [stage, slug] = stageOrError instanceof MwpError
      ? [stageOrError.stage, stageOrError.reason]
      : [stageOrError, reason];
    if (typeof stage !== 'string' || typeof slug !== 'string') return null;
    return deepFreeze(open(raw.explainFailure(stage, slug)));
  }

  function detectKinds(document) {
    return open(raw.detectKinds(inputBytes(document)));
  }

  function signDocument(kind, unsigned, { key, keyId, seed, registry } = {}) {
    checkKind(kind);
    if (key !== undefined) {
      if (!(key instanceof SigningKey)) throw new ArgumentError('key must be a SigningKey');
      if (keyId !== undefined || seed !== undefined) throw new ArgumentError('give either key or keyId and seed');
      ({ keyId } = key);
      seed = seedOf(key);
    }
    checkString(keyId, 'keyId');
    const bytes = inputBytes(unsigned, 'unsigned document');
    const seedBytes = inputBytes(seed, 'seed');
    const envelope = registry === undefined
      ? raw.sign(kind, bytes, keyId, seedBytes)
      : withRegistry(registry, (handle) => raw.signAndVerify(kind, bytes, keyId, seedBytes, handle));
    return new SignedDocument(open(envelope));
  }

  // The document's bytes are copied so that later changes by the caller cannot alter the hash.
  function documentHasher(bytes) {
    const copy = new Uint8Array(bytes);
    return () => open(raw.canonicalHash(copy, ''));
  }

  // A verification envelope: `{"ok":{…}}` + line feed + signing bytes, or `{"error":{…}}`
  // (thrown, or returned for batch items).
  function verifiedFrom(envelope, bytes, throwError) {
    const split = envelope.indexOf('\n');
    if (split < 0) {
      const error = toError(JSON.parse(envelope).error);
      if (throwError) throw error;
      return error;
    }
    const fields = JSON.parse(envelope.slice(0, split)).ok;
    fields.signingBytes = envelope.slice(split + 1);
    return new VerifiedDocument(fields, documentHasher(bytes));
  }

  function verifySignedDocument(kind, document, registry, { limits } = {}) {
    checkKind(kind);
    const bytes = documentBytes(document, 'document');
    const limitsText = limitsArg(limits);
    return verifiedFrom(withRegistry(registry, (handle) => raw.verify(kind, bytes, handle, limitsText)), bytes, true);
  }

  function verifySignedDocuments(items, registry, { threads = 1, limits } = {}) {
    const limitsText = limitsArg(limits);
    if (!Array.isArray(items)) throw new ArgumentError('items must be an array of {kind, document}');
    // A document that cannot be encoded is that item's error, as any other rejection in a batch.
    const parts = items.map((item) => {
      const kind = checkKind(item?.kind);
      try {
        return { kind, bytes: documentBytes(item?.document, 'document') };
      } catch (error) {
        if (!(error instanceof VerificationError)) throw error;
        return { kind, bytes: new Uint8Array(0), error };
      }
    });
    const lengths = Uint32Array.from(parts, (p) => p.bytes.length);
    const data = new Uint8Array(lengths.reduce((a, b) => a + b, 0));
    let offset = 0;
    for (const part of parts) { data.set(part.bytes, offset); offset += part.bytes.length; }
    const kinds = parts.map((p) => p.kind).join(',');
    const [head, ...records] = withRegistry(registry, (handle) => raw.verifyMany(kinds, lengths, data, handle, threads >>> 0, limitsText))
      .split('\u001e');
    if (open(head) !== records.length) throw new MwpError('batch result count mismatch', { code: 'INTERNAL_ERROR' });
    return records.map((record, i) => parts[i].error ?? verifiedFrom(record, parts[i].bytes, false));
  }

  function signingPreview(document) {
    const preview = open(raw.signingPreview(documentBytes(document, 'document')));
    return Object.freeze({ signingBytes: encoder.encode(preview.signingBytes), signingHash: preview.signingHash });
  }

  ctx.signDocument = signDocument;
  ctx.verifiedFrom = verifiedFrom;

  return {
    failureReasons, explainFailure, detectKinds, signDocument, verifySignedDocument, verifySignedDocuments, signingPreview,
  };
}
