// The JavaScript face of MissionWeaveProtocol, shared by both backends (the napi addon and the
// WebAssembly build). A backend ("raw") returns envelope strings — {"ok":…} or {"error":…} —
// and this module turns them into typed objects and Error subclasses.
//
// This file is the ESM source; scripts/build.mjs derives dist/api.cjs from it. Keep every
// export a top-level `export class|function|const` and import nothing.

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

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function hidden(target, values) {
  for (const [name, value] of Object.entries(values)) {
    Object.defineProperty(target, name, { value, enumerable: false, writable: false, configurable: true });
  }
}

/**
 * Base class of every error this package throws. `code` is a §19 wire code (or
 * `INVALID_ARGUMENT` for API misuse); `stage` names the semantic stage, `detail` the protected
 * diagnostic. Only `code` (and, for rejected documents, `wireMessage`/`retryable`) are
 * enumerable, so serializing an error by accident yields its wire view.
 */
export class MwpError extends Error {
  constructor(message, { code, stage = null, detail = message, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    hidden(this, { name: new.target.name, stage, detail });
    this.code = code;
  }
}

/** API misuse: wrong argument type, unknown kind or schema, bad seed. Not a wire event. */
export class ArgumentError extends MwpError {
  constructor(detail, options = {}) {
    super(detail, { code: 'INVALID_ARGUMENT', ...options });
  }
}

/** Strict JSON parsing failed (§6.4 stage 1): PROTOCOL_VIOLATION. */
export class ParseError extends MwpError {
  constructor(raw) {
    super(raw.detail, { code: raw.code, stage: 'parse' });
    hidden(this, { offset: raw.offset });
  }
}

/** The value is outside the I-JSON data model (RFC 8785 fails): PROTOCOL_VIOLATION. */
export class CanonicalizationError extends MwpError {
  constructor(raw) {
    super(raw.detail, { code: raw.code, stage: 'canonicalization' });
  }
}

/** Schema validation failed: SCHEMA_VALIDATION_FAILED. */
export class SchemaValidationError extends MwpError {
  constructor(raw) {
    super(raw.detail, { code: raw.code, stage: 'schema' });
    hidden(this, { instancePath: raw.instancePath, schemaLocation: raw.schemaLocation, keyword: raw.keyword });
  }
}

function wireView(error) {
  return { code: error.code, message: error.wireMessage, retryable: false };
}

/**
 * A signed document was rejected. The message and the enumerable members are the wire view
 * (`code`, `wireMessage`, `retryable`); `stage`, `stageNumber`, `reason` and `detail` are the
 * protected diagnostic and must not be sent to the peer.
 */
export class VerificationError extends MwpError {
  constructor(raw) {
    super(`${raw.code}: ${raw.wireMessage}`, { code: raw.code, stage: raw.stage, detail: raw.detail });
    hidden(this, { stageNumber: raw.stageNumber, reason: raw.reason });
    this.wireMessage = raw.wireMessage;
    this.retryable = false;
  }

  /** What a server sends: `{code, message, retryable}`. */
  toWire() { return wireView(this); }

  /** The protected diagnostic: `stage/reason: detail`. */
  protectedDiagnostic() { return `${this.stage}/${this.reason}: ${this.detail}`; }
}

/** First Admission or historical replay failed (stage `admission`): AUTH_INVALID_SIGNATURE. */
export class AdmissionError extends MwpError {
  constructor(raw, cause) {
    super(`${raw.code}: ${raw.wireMessage}`, { code: raw.code, stage: 'admission', detail: raw.detail, cause });
    hidden(this, { reason: raw.reason });
    this.wireMessage = raw.wireMessage;
    this.retryable = false;
  }

  toWire() { return wireView(this); }

  protectedDiagnostic() { return `admission/${this.reason}: ${this.detail}`; }
}

/** The document cannot be signed: it would fail at `stage`. */
export class SigningError extends MwpError {
  constructor(raw) {
    super(`cannot sign: would fail at ${raw.stage}: ${raw.detail}`, { code: raw.code, stage: raw.stage, detail: raw.detail });
  }
}

/** The Registry snapshot is not usable evidence (fails stage 4 when verifying). */
export class RegistryError extends MwpError {
  constructor(raw) {
    super(`Registry evidence rejected: ${raw.reason}`, { code: raw.code, stage: 'key-resolution', detail: raw.detail });
    hidden(this, { reason: raw.reason });
  }
}

/** A frame failed strict parsing (PROTOCOL_VIOLATION) or the frame schema (SCHEMA_VALIDATION_FAILED). */
export class FrameError extends MwpError {
  constructor(raw) {
    super(`${raw.code}: ${raw.detail}`, { code: raw.code, detail: raw.detail });
  }
}

/** The embedded protocol bundle failed its integrity checks. */
export class BundleError extends MwpError {
  constructor(raw) {
    super(`bundle verification failed: ${raw.detail}`, { code: raw.code, detail: raw.detail });
    hidden(this, { problems: Object.freeze([...raw.problems]) });
  }
}

const ERROR_CLASSES = {
  ArgumentError: (raw) => new ArgumentError(raw.detail),
  ParseError: (raw) => new ParseError(raw),
  CanonicalizationError: (raw) => new CanonicalizationError(raw),
  SchemaValidationError: (raw) => new SchemaValidationError(raw),
  VerificationError: (raw) => new VerificationError(raw),
  AdmissionError: (raw) => new AdmissionError(raw),
  SigningError: (raw) => new SigningError(raw),
  RegistryError: (raw) => new RegistryError(raw),
  FrameError: (raw) => new FrameError(raw),
  BundleError: (raw) => new BundleError(raw),
};

function toError(raw) {
  const make = ERROR_CLASSES[raw.class];
  return make ? make(raw) : new MwpError(raw.detail ?? 'internal error', { code: raw.code ?? 'INTERNAL_ERROR', stage: raw.stage ?? null });
}

function open(envelope) {
  const parsed = JSON.parse(envelope);
  if ('error' in parsed) throw toError(parsed.error);
  return parsed.ok;
}

function toBytes(input, what = 'input') {
  if (typeof input === 'string') return encoder.encode(input);
  if (input instanceof Uint8Array) return input;
  if (input instanceof ArrayBuffer) return new Uint8Array(input);
  if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  throw new ArgumentError(`${what} must be a string, Uint8Array or ArrayBuffer, not ${input === null ? 'null' : typeof input}`);
}

function checkKind(kind) {
  if (typeof kind !== 'string' || !DOCUMENT_KINDS.includes(kind)) {
    throw new ArgumentError(`unknown signed document kind ${JSON.stringify(kind)} (expected one of ${DOCUMENT_KINDS.join(', ')})`);
  }
  return kind;
}

function checkString(value, what) {
  if (typeof value !== 'string') throw new ArgumentError(`${what} must be a string`);
  return value;
}

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

/** A verified document anchored by a validated First-Admission Record. */
export class AdmittedDocument {
  constructor(raw) {
    this.record = Object.freeze(raw.record);
    this.recordBytes = encoder.encode(raw.recordBytes);
    this.existing = raw.existing;
    Object.freeze(this);
  }
}

/** A schema-valid frame; `json` is its RFC 8785 text. */
export class Frame {
  constructor(raw) {
    this.frameType = raw.frameType;
    this.frameId = raw.frameId;
    this.phase = raw.phase;
    this.json = raw.json;
    Object.freeze(this);
  }

  /** The frame as a JavaScript value (numbers become IEEE doubles). */
  get value() { return JSON.parse(this.json); }
}

/** A received COMMAND frame: envelope checked, the Command's exact bytes kept for verification. */
export class ReceivedCommandFrame {
  constructor(raw) {
    this.frameType = 'COMMAND';
    this.frameId = raw.frameId;
    this.protocolVersion = raw.protocolVersion;
    this.commandBytes = encoder.encode(raw.commandBytes);
    Object.freeze(this);
  }
}

const PRINCIPAL_TYPES = ['agent', 'human', 'service'];

function principalOf(value, what) {
  if (!value || typeof value !== 'object' || !PRINCIPAL_TYPES.includes(value.type) || typeof value.id !== 'string') {
    throw new ArgumentError(`${what} must be a Principal {type: 'agent'|'human'|'service', id: string}`);
  }
  return value;
}

// Turns a JavaScript Admission Log reply into the host reply shape; anything else fails closed.
function hostReply(reply, state, method) {
  if (reply && typeof reply.then === 'function') {
    state.failure ??= new ArgumentError(`AdmissionLog.${method} must return synchronously, not a Promise`);
    return { status: 'indeterminate' };
  }
  if (!reply || typeof reply.status !== 'string') {
    state.failure ??= new ArgumentError(`AdmissionLog.${method} must return an object with a string status`);
    return { status: 'indeterminate' };
  }
  const out = { status: reply.status };
  if (reply.record !== undefined && reply.record !== null) {
    try {
      out.record = Uint8Array.from(toBytes(reply.record, `AdmissionLog.${method}().record`));
    } catch (error) {
      state.failure ??= error;
      return { status: 'indeterminate' };
    }
  }
  const service = reply.authenticatedService;
  if (service && typeof service.type === 'string' && typeof service.id === 'string') {
    out.serviceType = service.type;
    out.serviceId = service.id;
  }
  return out;
}

function makeHost(log, context, state) {
  return {
    lookup(organizationId, signingHash) {
      state.calls.lookup += 1;
      try {
        return hostReply(log.lookup(organizationId, signingHash), state, 'lookup');
      } catch (error) {
        state.failure ??= error;
        return { status: 'indeterminate' };
      }
    },
    append(candidateJson, candidateBytes) {
      state.calls.append += 1;
      try {
        return hostReply(log.append(JSON.parse(candidateJson), Uint8Array.from(candidateBytes)), state, 'append');
      } catch (error) {
        state.failure ??= error;
        return { status: 'indeterminate' };
      }
    },
    context() {
      state.calls.context += 1;
      try {
        const value = typeof context === 'function' ? context() : context;
        if (!value || typeof value !== 'object') throw new ArgumentError('the trusted acceptance context is missing');
        const acceptedBy = principalOf(value.acceptedBy, 'trustedContext.acceptedBy');
        return {
          admissionRecordId: checkString(value.admissionRecordId, 'trustedContext.admissionRecordId'),
          trustedAcceptedAt: checkString(value.trustedAcceptedAt, 'trustedContext.trustedAcceptedAt'),
          acceptedByType: acceptedBy.type,
          acceptedById: acceptedBy.id,
        };
      } catch (error) {
        state.failure ??= error;
        // Never an empty reply: the core rejects this context before anything is appended.
        return { admissionRecordId: '', trustedAcceptedAt: '', acceptedByType: '', acceptedById: '' };
      }
    },
  };
}

/** A backend failure that is not an answer (a panic in the core, a trap): INTERNAL_ERROR. */
function internal(cause) {
  return new MwpError(`internal error in the ${cause?.name ?? 'backend'}: ${cause?.message ?? cause}`, { code: 'INTERNAL_ERROR', cause });
}

// The backend's functions and classes, with anything thrown turned into INTERNAL_ERROR. Answers,
// including every protocol failure, come back as envelopes and never throw.
function guarded(backendModule) {
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

/**
 * Binds the API to one backend. `raw` is the napi addon or the wasm-bindgen module; both expose
 * the same functions and the classes `Registry` and `InMemoryAdmissionLog`.
 */
export function createApi(backendModule, backend) {
  const raw = guarded(backendModule);
  const rawRegistries = new WeakMap();
  const rawLogs = new WeakMap();

  /** A Registry snapshot (`registry-fixture` form), validated once and reused for many verifications. */
  class Registry {
    /** Throws RegistryError if the snapshot is not usable evidence. */
    constructor(snapshot) {
      const handle = new raw.Registry(toBytes(snapshot, 'Registry snapshot'));
      const info = open(handle.info());
      rawRegistries.set(this, handle);
      this.organizationId = info.organizationId;
      this.digest = info.digest;
      this.size = info.size;
      Object.freeze(this);
    }

    /** The binding of a key ID, or null (display only; verification applies the stage 4 rules). */
    binding(keyId) {
      const binding = open(rawRegistries.get(this).binding(checkString(keyId, 'keyId')));
      return binding && Object.freeze({ ...binding, principal: Object.freeze(binding.principal) });
    }
  }

  /** The core's in-memory Admission Log; writes are attributed to `service`. */
  class InMemoryAdmissionLog {
    constructor(service) {
      const principal = principalOf(service, 'service');
      rawLogs.set(this, new raw.InMemoryAdmissionLog(principal.type, principal.id));
      hidden(this, { service: Object.freeze({ type: principal.type, id: principal.id }) });
    }

    get size() { return rawLogs.get(this).size(); }
  }

  // A Registry object, or snapshot bytes (validated per call; problems fail stage 4).
  function withRegistry(registry, use) {
    if (registry instanceof Registry) return use(rawRegistries.get(registry));
    const handle = new raw.Registry(toBytes(registry, 'registry'));
    try {
      return use(handle);
    } finally {
      handle.free?.();
    }
  }

  function canonicalize(json) { return open(raw.canonicalize(toBytes(json))); }

  function canonicalBytes(json) { return encoder.encode(canonicalize(json)); }

  function canonicalHash(json) { return open(raw.canonicalHash(toBytes(json))); }

  function checkStrictJson(json) { return open(raw.checkJson(toBytes(json))); }

  function validateSchema(name, json) {
    open(raw.validateSchema(checkString(name, 'schema name'), toBytes(json)));
  }

  function schemaNames() { return open(raw.schemaNames()); }

  function detectKinds(document) {
    const bytes = toBytes(document);
    checkStrictJson(bytes);
    return DOCUMENT_KINDS.filter((kind) => JSON.parse(raw.validateSchema(kind, bytes)).error === undefined);
  }

  function signDocument(kind, unsigned, { keyId, seed, registry } = {}) {
    checkKind(kind);
    checkString(keyId, 'keyId');
    const bytes = toBytes(unsigned, 'unsigned document');
    const seedBytes = toBytes(seed, 'seed');
    const envelope = registry === undefined
      ? raw.sign(kind, bytes, keyId, seedBytes)
      : withRegistry(registry, (handle) => raw.signAndVerify(kind, bytes, keyId, seedBytes, handle));
    return new SignedDocument(open(envelope));
  }

  // The document's bytes are copied so that later changes by the caller cannot alter the hash.
  function documentHasher(bytes) {
    const copy = new Uint8Array(bytes);
    return () => open(raw.canonicalHash(copy));
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

  function verifySignedDocument(kind, document, registry) {
    checkKind(kind);
    const bytes = toBytes(document, 'document');
    return verifiedFrom(withRegistry(registry, (handle) => raw.verify(kind, bytes, handle)), bytes, true);
  }

  function verifySignedDocuments(items, registry, { threads = 1 } = {}) {
    if (!Array.isArray(items)) throw new ArgumentError('items must be an array of {kind, document}');
    const parts = items.map((item) => ({ kind: checkKind(item?.kind), bytes: toBytes(item?.document, 'document') }));
    const lengths = Uint32Array.from(parts, (p) => p.bytes.length);
    const data = new Uint8Array(lengths.reduce((a, b) => a + b, 0));
    let offset = 0;
    for (const part of parts) { data.set(part.bytes, offset); offset += part.bytes.length; }
    const kinds = parts.map((p) => p.kind).join(',');
    const [head, ...records] = withRegistry(registry, (handle) => raw.verifyMany(kinds, lengths, data, handle, threads >>> 0))
      .split('\u001e');
    if (open(head) !== records.length) throw new MwpError('batch result count mismatch', { code: 'INTERNAL_ERROR' });
    return records.map((record, i) => verifiedFrom(record, parts[i].bytes, false));
  }

  function signingPreview(document) {
    const preview = open(raw.signingPreview(toBytes(document, 'document')));
    return Object.freeze({ signingBytes: encoder.encode(preview.signingBytes), signingHash: preview.signingHash });
  }

  function admit(replay, kind, document, registry, log, trustedContext) {
    checkKind(kind);
    const bytes = toBytes(document, 'document');
    const state = { failure: undefined, calls: { lookup: 0, context: 0, append: 0 } };
    let envelope;
    if (log instanceof InMemoryAdmissionLog) {
      const host = trustedContext === undefined ? undefined : makeHost({}, trustedContext, state);
      envelope = withRegistry(registry, (handle) => raw.admitWithMemoryLog(replay, kind, bytes, handle, rawLogs.get(log), host));
    } else if (log && typeof log.lookup === 'function' && (replay || typeof log.append === 'function')) {
      const host = makeHost(log, trustedContext, state);
      envelope = withRegistry(registry, (handle) => raw.admitWithHost(replay, kind, bytes, handle, host));
    } else {
      throw new ArgumentError('log must be an InMemoryAdmissionLog or an object with lookup() and append()');
    }
    const parsed = JSON.parse(envelope);
    if ('error' in parsed) {
      const error = parsed.error.class === 'AdmissionError'
        ? new AdmissionError(parsed.error, state.failure)
        : toError(parsed.error);
      if (error instanceof ArgumentError && state.failure !== undefined) {
        throw state.failure instanceof MwpError ? state.failure : new ArgumentError(error.message, { cause: state.failure });
      }
      throw error;
    }
    return new AdmittedDocument(parsed.ok);
  }

  /** First Admission of a newly presented document (six stages, then the Admission Log). */
  function admitFirst(kind, document, registry, log, trustedContext) {
    return admit(false, kind, document, registry, log, trustedContext);
  }

  /** Historical replay: a First-Admission Record must already exist; nothing is appended. */
  function replayHistorical(kind, document, registry, log) {
    return admit(true, kind, document, registry, log, undefined);
  }

  function bundleFile(path) {
    const bytes = raw.bundleFile(checkString(path, 'path'));
    return bytes == null ? undefined : Uint8Array.from(bytes);
  }

  function bundlePaths() { return open(raw.bundlePaths()); }

  function verifyCryptographyBundle() { return Object.freeze(open(raw.verifyCryptographyBundle())); }

  function verifyAdmissionBundle() { return Object.freeze(open(raw.verifyAdmissionBundle())); }

  function runConformance(bundles = []) {
    if (!Array.isArray(bundles) || bundles.some((b) => typeof b !== 'string' || b.includes(','))) {
      throw new ArgumentError('bundles must be an array of bundle names');
    }
    return open(raw.runConformance(bundles.join(',')));
  }

  function parseFrame(bytes) { return new Frame(open(raw.parseFrame(toBytes(bytes, 'frame')))); }

  function parseReceivedFrame(bytes) {
    const frame = open(raw.parseReceivedFrame(toBytes(bytes, 'frame')));
    return 'commandBytes' in frame ? new ReceivedCommandFrame(frame) : new Frame(frame);
  }

  function encodeFrame(frame) {
    const input = typeof frame === 'object' && frame !== null && !ArrayBuffer.isView(frame) && !(frame instanceof ArrayBuffer)
      ? JSON.stringify(frame)
      : frame;
    return open(raw.encodeFrame(toBytes(input, 'frame')));
  }

  function errorFrame({ frameId, code, message, occurredAt, relatedFrameId } = {}) {
    return open(raw.errorFrame(
      checkString(frameId, 'frameId'), checkString(code, 'code'), checkString(message, 'message'),
      checkString(occurredAt, 'occurredAt'),
      relatedFrameId === undefined ? undefined : checkString(relatedFrameId, 'relatedFrameId'),
    ));
  }

  // napi only: the benchmark's native baseline, measured inside the addon in this process.
  const native = typeof raw.nativeVerifyLoop !== 'function' ? {} : {
    nativeVerifyLoop(kind, document, registry, iterations) {
      checkKind(kind);
      if (!(registry instanceof Registry)) throw new ArgumentError('registry must be a Registry');
      const seconds = raw.nativeVerifyLoop(kind, toBytes(document, 'document'), rawRegistries.get(registry), iterations >>> 0);
      if (seconds < 0) throw new ArgumentError('the document does not verify natively');
      return seconds;
    },
  };

  return {
    ...native,
    backend,
    sourceCommit: raw.sourceCommit(),
    Registry,
    InMemoryAdmissionLog,
    canonicalize,
    canonicalBytes,
    canonicalHash,
    checkStrictJson,
    validateSchema,
    schemaNames,
    detectKinds,
    signDocument,
    verifySignedDocument,
    verifySignedDocuments,
    signingPreview,
    admitFirst,
    replayHistorical,
    bundleFile,
    bundlePaths,
    verifyCryptographyBundle,
    verifyAdmissionBundle,
    runConformance,
    parseFrame,
    parseReceivedFrame,
    encodeFrame,
    errorFrame,
  };
}
