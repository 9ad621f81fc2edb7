// Declarations shared by every entry point (scripts/build.mjs writes one .d.mts and one .d.cts
// per entry from this file plus that entry's extras).

/** A document as exact bytes, or text (encoded as UTF-8). */
export type Bytes = Uint8Array | ArrayBuffer | ArrayBufferView | string;

export type DocumentKind =
  | 'agent-card' | 'approval' | 'artifact' | 'command' | 'context-package'
  | 'event' | 'evidence' | 'extension-profile' | 'group-snapshot';

export type Stage =
  | 'parse' | 'schema' | 'signature-envelope' | 'key-resolution' | 'canonicalization' | 'signature';

export type WireCode =
  | 'UNSUPPORTED_VERSION' | 'AUTH_REQUIRED' | 'AUTH_INVALID_SIGNATURE' | 'AUTH_STALE_SESSION'
  | 'AUTH_STALE_COORDINATOR' | 'AUTH_FORBIDDEN' | 'GROUP_NOT_FOUND' | 'MEMBERSHIP_REQUIRED'
  | 'MEMBERSHIP_STALE' | 'SCHEMA_VALIDATION_FAILED' | 'INVALID_COMMAND' | 'INVALID_STATE_TRANSITION'
  | 'REVISION_CONFLICT' | 'ACTION_ID_COLLISION' | 'UNKNOWN_CRITICAL_EXTENSION'
  | 'WORK_CONTRACT_INCOMPLETE' | 'WORK_OFFER_EXPIRED' | 'WORK_ALREADY_OWNED' | 'WORK_LEASE_EXPIRED'
  | 'WORK_STALE_OWNERSHIP' | 'APPROVAL_REQUIRED' | 'BUDGET_EXCEEDED' | 'RATE_LIMITED'
  | 'BACKPRESSURE' | 'CURSOR_TOO_OLD' | 'PROTOCOL_VIOLATION' | 'INTERNAL_ERROR';

export interface Principal { readonly type: 'agent' | 'human' | 'service'; readonly id: string; }

export declare const PROTOCOL_VERSION: '0.1';
export declare const DOCUMENT_KINDS: readonly DocumentKind[];
export declare const STAGES: readonly Stage[];
export declare const WIRE_MESSAGE: 'signed document rejected';
/** Which backend this entry point runs on. */
export declare const backend: 'napi' | 'wasm';

declare global {
  interface SymbolConstructor {
    /** `Symbol.dispose` (explicit resource management): defined by Node >= 20 and current browsers. */
    readonly dispose: unique symbol;
  }
}

/**
 * An object that holds native memory (a Registry, a log, a Scheduler, …). The garbage collector
 * frees it too, but only after the event loop turns: a synchronous loop that makes many should
 * free each one — `free()`, or a `using` declaration (`[Symbol.dispose]` calls `free()`). Freeing
 * twice is a no-op; any other use after `free()` throws {@link ArgumentError}
 * (`PROTOCOL_VIOLATION`, reason `invalid-argument`).
 *
 * @example
 * ```ts
 * {
 *   using registry = new Registry(bytes);
 *   verifySignedDocument('command', document, registry);
 * } // freed here
 * ```
 */
export interface NativeResource {
  /** Releases the native memory now; idempotent. */
  free(): void;
  /** Same as {@link NativeResource.free}. */
  [Symbol.dispose](): void;
}
/** The protocol commit of the embedded, pinned bundle. */
export declare const sourceCommit: string;

/** A structured field of an error, as the core describes it. */
export type ErrorFieldValue = string | number | boolean | readonly string[] | AccountRef;

/**
 * Base class of every error this package throws: the Rust core's own description of the error,
 * shown unchanged (the Python package shows the same code, reason and fields).
 */
export declare class MwpError extends Error {
  constructor(message: string, options?: {
    code?: WireCode; stage?: Stage | 'admission' | null; reason?: string | null; detail?: string;
    retryable?: boolean; fields?: Readonly<Record<string, ErrorFieldValue>>; cause?: unknown;
  });
  /** The §19 wire code (API misuse is `PROTOCOL_VIOLATION`, reason `invalid-argument`). */
  readonly code: WireCode;
  /** A stable slug to match on (the message may be reworded). */
  readonly reason: string | null;
  /** The semantic stage (protected diagnostic), or null. */
  readonly stage: Stage | 'admission' | null;
  /** The protected diagnostic detail; never send it to a peer. */
  readonly detail: string;
  /** Whether an unchanged retry can succeed (§19). */
  readonly retryable: boolean;
  /** The structured fields (camelCase), each also a property of the error. */
  readonly fields: Readonly<Record<string, ErrorFieldValue>>;
}
/** API misuse: `PROTOCOL_VIOLATION`, reason `invalid-argument`; `argument` names it when known. */
export declare class ArgumentError extends MwpError {
  constructor(detail: string, options?: { cause?: unknown });
  readonly code: 'PROTOCOL_VIOLATION';
  readonly reason: 'invalid-argument';
  readonly argument?: string;
}
export declare class ParseError extends MwpError { readonly stage: 'parse'; readonly offset: number; }
export declare class CanonicalizationError extends MwpError { readonly stage: 'canonicalization'; }
/** A timestamp outside the protocol's RFC 3339 profile. */
export declare class TimestampError extends MwpError { readonly code: 'SCHEMA_VALIDATION_FAILED'; }
export declare class SchemaValidationError extends MwpError {
  readonly code: 'SCHEMA_VALIDATION_FAILED';
  readonly instancePath: string;
  readonly schemaLocation: string;
  readonly keyword: string;
}
export interface WireError { code: WireCode; message: 'signed document rejected'; retryable: false; }
export declare class VerificationError extends MwpError {
  readonly code: 'PROTOCOL_VIOLATION' | 'SCHEMA_VALIDATION_FAILED' | 'AUTH_INVALID_SIGNATURE';
  readonly stage: Stage;
  readonly stageNumber: 1 | 2 | 3 | 4 | 5 | 6;
  /** Protected, stable kebab-case reason. */
  readonly reason: string;
  readonly wireMessage: 'signed document rejected';
  readonly retryable: false;
  toWire(): WireError;
  protectedDiagnostic(): string;
}
export declare class AdmissionError extends MwpError {
  readonly code: 'AUTH_INVALID_SIGNATURE';
  readonly stage: 'admission';
  readonly reason: string;
  readonly wireMessage: 'signed document rejected';
  readonly retryable: false;
  toWire(): WireError;
  protectedDiagnostic(): string;
}
export declare class SigningError extends MwpError { readonly stage: Stage; }
export declare class RegistryError extends MwpError { readonly stage: 'key-resolution'; readonly reason: string; }
export declare class FrameError extends MwpError {}
export declare class BundleError extends MwpError { readonly problems: readonly string[]; }

export declare class VerifiedDocument {
  private constructor();
  readonly kind: DocumentKind;
  /** RFC 8785 bytes of the document without its top-level `signature` (stage 5). */
  readonly signingBytes: Uint8Array;
  readonly signingText: string;
  readonly signingHash: string;
  readonly signedDocumentHash: string;
  readonly organizationId: string;
  readonly keyId: string;
  readonly publicKey: string;
  readonly principal: Principal;
  readonly protectedTime: string;
  readonly signature: string;
  readonly validFrom: string;
  readonly validUntil: string | null;
  readonly revokedAt: string | null;
}
export declare class SignedDocument {
  private constructor();
  readonly kind: DocumentKind;
  /** The RFC 8785 text and bytes of the signed document: what to send. */
  readonly text: string;
  readonly bytes: Uint8Array;
  readonly documentHash: string;
  readonly signingBytes: Uint8Array;
  readonly signingHash: string;
  readonly protectedTime: string;
  readonly signature: string;
}
export interface FirstAdmissionRecord {
  readonly protocolVersion: '0.1';
  readonly admissionRecordId: string;
  readonly organizationId: string;
  readonly documentKind: DocumentKind;
  readonly signingHash: string;
  readonly keyId: string;
  readonly principal: Principal;
  readonly trustedAcceptedAt: string;
  readonly acceptedBy: Principal;
}
export declare class AdmittedDocument {
  private constructor();
  readonly record: FirstAdmissionRecord;
  readonly recordBytes: Uint8Array;
  readonly existing: boolean;
}
export declare class Frame {
  private constructor();
  readonly frameType: 'HELLO' | 'SUBSCRIBE' | 'COMMAND' | 'EVENT' | 'ACK' | 'PING' | 'ERROR';
  readonly frameId: string;
  readonly phase: string | null;
  readonly json: string;
  readonly value: unknown;
}
export declare class ReceivedCommandFrame {
  private constructor();
  readonly frameType: 'COMMAND';
  readonly frameId: string;
  readonly protocolVersion: '0.1';
  readonly commandBytes: Uint8Array;
}

export declare class Registry implements NativeResource {
  /** Validates a Registry snapshot; throws RegistryError if it is not usable evidence. */
  constructor(snapshot: Bytes);
  readonly organizationId: string;
  readonly digest: string;
  readonly size: number;
  binding(keyId: string): null | {
    readonly keyId: string; readonly principal: Principal; readonly publicKey: string;
    readonly validFrom: string; readonly validUntil: string | null; readonly revokedAt: string | null;
  };
  /** Releases the native memory now (see {@link NativeResource}). */
  free(): void;
  [Symbol.dispose](): void;
}
/** A Registry object, or snapshot bytes (then a bad snapshot fails verification at stage 4). */
export type RegistryInput = Registry | Bytes;

/**
 * An Ed25519 signing key and its key ID: the first thing a new user makes (own keys → Registry
 * → sign → verify). The Rust core holds no randomness; {@link SigningKey.generate} draws the
 * 32-byte seed from `crypto.getRandomValues`. `JSON.stringify(key)` shows only the public view.
 *
 * @example
 * ```js
 * const key = SigningKey.generate('urn:missionweaveprotocol:key:alice-1');
 * const stored = key.toSeedBase64url();            // keep it secret
 * const again = SigningKey.fromSeedBase64url(key.keyId, stored);
 * ```
 */
export declare class SigningKey {
  /**
   * Same as {@link SigningKey.fromSeed}.
   * @throws {@link ArgumentError} if `keyId` is not an absolute URI (§2) or the seed is not 32 bytes.
   */
  constructor(keyId: string, seed: Bytes);
  /**
   * A new key from 32 bytes of `crypto.getRandomValues`.
   * @param keyId - The key ID, an absolute URI (§2 identifiers), e.g. `urn:missionweaveprotocol:key:alice-1`.
   * @throws {@link ArgumentError} if `keyId` is not an absolute URI or the runtime has no `crypto.getRandomValues`.
   */
  static generate(keyId: string): SigningKey;
  /**
   * The key of a 32-byte seed (RFC 8032 private key).
   * @throws {@link ArgumentError} if `keyId` is not an absolute URI or the seed is not exactly 32 bytes.
   */
  static fromSeed(keyId: string, seed: Bytes): SigningKey;
  /**
   * The key of a seed written in canonical unpadded base64url (§2: no `=`, no `+` or `/`, zero pad bits).
   * @throws {@link ArgumentError} for a noncanonical spelling or a length other than 32 bytes.
   */
  static fromSeedBase64url(keyId: string, seed: string): SigningKey;
  /** The key ID this key signs with (`signature.keyId`). */
  readonly keyId: string;
  /** Always `Ed25519` in protocol version 0.1. */
  readonly algorithm: 'Ed25519';
  /** The 32-byte public key in canonical unpadded base64url (the Registry's `publicKey`). */
  readonly publicKeyBase64url: string;
  /** The 32-byte public key (a fresh copy on every read). */
  readonly publicKey: Uint8Array;
  /** The 32-byte seed (a fresh copy). Keep it secret. */
  seedBytes(): Uint8Array;
  /** The seed in canonical unpadded base64url, for storage. Keep it secret. */
  toSeedBase64url(): string;
  /**
   * Signs an unsigned document: `signDocument(kind, unsigned, { key: this, registry })`.
   * @param options.registry - When given, the produced bytes are also verified through all six stages.
   * @throws {@link SigningError} if the document would fail verification (the stage says where).
   */
  sign(kind: DocumentKind, unsigned: Bytes, options?: { registry?: RegistryInput }): SignedDocument;
  /** The public view `{keyId, algorithm, publicKey}` (base64url); never the seed. */
  toJSON(): { keyId: string; algorithm: 'Ed25519'; publicKey: string };
}

/**
 * One validity-history record of a binding (§6.4 stage 4): append-only; each record may only add
 * or move `validUntil` / `revokedAt` earlier. Sequences are numbered by the builder. Times are
 * RFC 3339 text (§2 timestamp profile) or a `Date`.
 */
export interface ValidityRecordInput {
  recordedAt: string | Date;
  validUntil?: string | Date;
  revokedAt?: string | Date;
}

/**
 * Registry evidence for one's own Agents, built by the Rust core's `registry::RegistryBuilder`
 * and validated by the same stage-4 rules a verifier applies (§6.4), so it never hands out
 * evidence a verifier would refuse.
 *
 * @example
 * ```js
 * const key = SigningKey.generate('urn:missionweaveprotocol:key:alice-1');
 * const bytes = new RegistryBuilder('urn:missionweaveprotocol:organization:acme')
 *   .addKey(key.keyId, { type: 'agent', id: 'urn:missionweaveprotocol:agent:alice' }, key.publicKey, '2026-01-01T00:00:00Z')
 *   .build();
 * const registry = new Registry(bytes);
 * ```
 */
export declare class RegistryBuilder implements NativeResource {
  /** @param organizationId - The Organization's ID, an absolute URI (checked at {@link RegistryBuilder.build}). */
  constructor(organizationId: string);
  readonly organizationId: string;
  /**
   * Binds `keyId` to `principal` and an Ed25519 public key, valid from `validFrom`.
   * @param publicKey - 32 bytes, canonical base64url text, or a {@link SigningKey}.
   * @param options.history - Rotation or revocation records, oldest first.
   * @returns this builder, for chaining.
   * @throws {@link RegistryError} for a key that is not a strict Ed25519 point or a malformed
   *   timestamp (`reason` names the stage-4 rule); {@link ArgumentError} for a bad Principal type
   *   or history record.
   */
  addKey(
    keyId: string, principal: Principal, publicKey: Uint8Array | string | SigningKey, validFrom: string | Date,
    options?: { history?: readonly ValidityRecordInput[] },
  ): this;
  /**
   * The RFC 8785 evidence bytes (`{organizationId, bindings}`), ready for `new Registry(bytes)`.
   * @throws {@link RegistryError} when a Registry-wide rule fails (`reason`: `key-id-reused`,
   *   `public-key-reused`, `key-id-alias`, `organization-id-invalid`, `no-bindings`, …).
   */
  build(): Uint8Array;
  /** Releases the native memory now (see {@link NativeResource}). */
  free(): void;
  [Symbol.dispose](): void;
}

/** One §6.4 failure reason of the core, explained: a verification stage or the admission layer. */
export interface FailureReason {
  readonly stage: Stage | 'admission';
  /** 1–6 for the six stages; null for admission, which is not a seventh stage (§6.4). */
  readonly stageNumber: 1 | 2 | 3 | 4 | 5 | 6 | null;
  /** The core's stable reason slug (`VerificationError.reason`). */
  readonly reason: string;
  /** The wire code of the stage (admission: always `AUTH_INVALID_SIGNATURE`). */
  readonly code: 'PROTOCOL_VIOLATION' | 'SCHEMA_VALIDATION_FAILED' | 'AUTH_INVALID_SIGNATURE';
  /** One sentence for a person. */
  readonly explanation: string;
  /** Where the rule is written, e.g. `§6.4 stage 4 (key-resolution)`. */
  readonly section: string;
}
/**
 * Every failure reason the six stages and the admission layer can report, each explained in one
 * sentence with its spec section. The table lives in the Rust core (`core/ffi/src/reasons.rs`); this is its only source.
 */
export declare function failureReasons(): readonly FailureReason[];
/**
 * The explanation of a rejected document: pass the {@link VerificationError} or
 * {@link AdmissionError} (or `stage` and `reason`). Protected diagnostic: show it to the document's owner, not to the peer.
 * @returns the row, or null for an error without a known stage and reason.
 */
export declare function explainFailure(error: MwpError): FailureReason | null;
export declare function explainFailure(stage: Stage | 'admission', reason: string): FailureReason | null;

export declare class InMemoryAdmissionLog implements NativeResource {
  constructor(service: Principal);
  readonly service: Principal;
  readonly size: number;
  /** Releases the native memory now (see {@link NativeResource}). */
  free(): void;
  [Symbol.dispose](): void;
}

export type LookupReply =
  | { status: 'found'; record: Bytes; authenticatedService: Principal }
  | { status: 'authoritative-absence' | 'unauthenticated' | 'integrity-failed' | 'unavailable' | 'indeterminate' };
export type AppendReply =
  | { status: 'committed' | 'existing'; record: Bytes; authenticatedService: Principal }
  | { status: 'conflict' | 'unauthenticated' | 'integrity-failed' | 'unavailable' | 'indeterminate' | 'commit-failed' };
/** A JavaScript Admission Log. Methods are synchronous; a throw fails closed (indeterminate). */
export interface AdmissionLog {
  lookup(organizationId: string, signingHash: string): LookupReply;
  append(candidate: FirstAdmissionRecord, candidateBytes: Uint8Array): AppendReply;
}
export interface TrustedAcceptanceContext {
  admissionRecordId: string;
  trustedAcceptedAt: string;
  acceptedBy: Principal;
}

export interface BundleSummary {
  readonly sourceCommit: string;
  readonly profileId: string;
  readonly manifestVersion: number;
  readonly artifactDigest: string;
  readonly cryptographyArtifactDigest?: string;
  readonly artifactCount: number;
  readonly caseCount: number;
  readonly evaluationCount: number;
}
export interface BundleReport {
  readonly bundle: 'structural' | 'cryptography' | 'admission';
  readonly ok: boolean;
  readonly passed: number;
  readonly total: number;
  readonly summary: string;
  readonly failures: readonly { id: string; message: string }[];
  readonly facts: Readonly<Record<string, string>>;
  readonly outcomes: readonly { id: string; actual: string; passed: boolean }[];
}
export interface ConformanceReport { readonly ok: boolean; readonly source: string; readonly bundles: readonly BundleReport[]; }

/**
 * Limits on one parsed JSON document (docs/limits.md); exceeding one is a stage-1
 * {@link ParseError} (or a {@link VerificationError} at stage `parse`) with reason
 * `limit-exceeded` and fields `limit`, `maximum`, raised before the work.
 */
export interface ParseLimits {
  readonly maxDocumentBytes: number;
  /** Members of one object or items of one array. */
  readonly maxContainerEntries: number;
  /** Bytes between the quotes of one string (member names included). */
  readonly maxStringBytes: number;
  readonly maxNumberChars: number;
}
/** Options of the calls that parse untrusted JSON. */
export interface ParseOptions { readonly limits?: ParseLimits }
/**
 * The core's profiles: `DOCUMENT` (the default of verification: received documents and frames)
 * and `STATE` (the default of canonicalize/canonicalHash: stored state).
 */
export declare function parseLimits(): { readonly DOCUMENT: ParseLimits; readonly STATE: ParseLimits };
/** RFC 8785 text of strictly parsed JSON. */
export declare function canonicalize(json: Bytes, options?: ParseOptions): string;
export declare function canonicalBytes(json: Bytes, options?: ParseOptions): Uint8Array;
/** `sha256:` + hex of the RFC 8785 bytes. */
export declare function canonicalHash(json: Bytes, options?: ParseOptions): string;
/** Strict parse check (§6.4 stage 1); returns the top-level JSON type or throws ParseError. */
export declare function checkStrictJson(json: Bytes): 'null' | 'boolean' | 'number' | 'string' | 'array' | 'object';
/** Validates against a schema by name (`command`, `command.schema.json` or its `$id`). */
export declare function validateSchema(name: string, json: Bytes): void;
export declare function schemaNames(): string[];
/** The kinds whose schema the document satisfies (for auto-detection). */
export declare function detectKinds(document: Bytes): DocumentKind[];
/** The options of {@link LocalArtifactStore.put}: the Artifact manifest's members (camelCase). */
export interface ArtifactPutOptions {
  /** The producer's Registry key. */
  key: SigningKey;
  /** The producer's Agent ID (`producer.agentId`). */
  producer: string;
  agentCardVersion: number;
  capability: string;
  capabilityVersion: string;
  missionId: string;
  groupId: string;
  workItemId: string;
  mediaType: string;
  classification: 'public' | 'internal' | 'confidential' | 'restricted';
  schemaUri: string;
  sourceArtifactHashes?: readonly string[];
  /** `{name: version}` or `{name, version}` items. */
  toolVersions?: Readonly<Record<string, string>> | readonly { name: string; version: string }[];
  modelVersions?: readonly { provider: string; model: string; version: string }[];
  /** Default: now (UTC, whole seconds). */
  createdAt?: string | Date;
  /** Default: the RFC 6920 name `ni:///sha-256;…` of the bytes. */
  uri?: string;
  /** Default: derived from `workItemId` and the content hash. */
  artifactId?: string;
  extensions?: Readonly<Record<string, unknown>>;
}
/**
 * Artifact bytes on the local filesystem (§13.1), keyed by SHA-256: `<root>/<hex[:2]>/<hex[2:]>`,
 * written to a temporary file, fsynced and linked into place; other bytes already at the path are
 * never overwritten. Node (napi) only: the WebAssembly build throws {@link ArgumentError}.
 */
export declare class LocalArtifactStore {
  constructor(root: string);
  readonly root: string;
  /**
   * Signs the protocol's Artifact manifest (`artifact.schema.json`, Artifact profile) of `content`
   * and stores the bytes. `JSON.parse(result.text)` is the `manifest` of an `artifact.publish` payload.
   * @throws {@link ArtifactError} (`unsignable_manifest`, `stored_bytes_conflict`, `io`).
   */
  put(content: Bytes, options: ArtifactPutOptions): SignedDocument;
  /**
   * The bytes a manifest names, re-hashed and size-checked.
   * @throws {@link ArtifactError} (`hash_mismatch`, `size_mismatch`, `content_missing`, `unsupported_hash`).
   */
  get(manifest: Bytes | Readonly<Record<string, unknown>>): Uint8Array;
}
/** Six-stage verification of an Artifact manifest, Artifact profile. @throws {@link ArtifactError} (`manifest_rejected`). Node (napi) only. */
export declare function verifyArtifactManifest(manifest: Bytes, registry: RegistryInput): VerifiedDocument;
/** `sha256:<hex>` of Artifact bytes. Node (napi) only. */
export declare function artifactContentHash(content: Bytes): string;
/**
 * Signs an unsigned document of `kind`: adds the `signature` envelope (Ed25519 over the RFC 8785
 * bytes without `signature`, `createdAt` = the kind's protected time) and returns the exact bytes
 * to send. Signing refuses what would not verify.
 * @param options - `{key}` (a {@link SigningKey}) or `{keyId, seed}`; with `registry`, the result is
 *   also verified through all six stages against it.
 * @throws {@link SigningError} (the stage it would fail at), {@link ArgumentError} for misuse.
 */
export declare function signDocument(
  kind: DocumentKind, unsigned: Bytes,
  options: { key: SigningKey; registry?: RegistryInput } | { keyId: string; seed: Bytes; registry?: RegistryInput },
): SignedDocument;
export declare function verifySignedDocument(
  kind: DocumentKind, document: Bytes, registry: RegistryInput, options?: ParseOptions,
): VerifiedDocument;
export declare function verifySignedDocuments(
  items: readonly { kind: DocumentKind; document: Bytes }[], registry: RegistryInput,
  options?: { threads?: number; limits?: ParseLimits },
): (VerifiedDocument | VerificationError)[];
/** Stage-5 signing bytes of a document, for display when verification stopped later. */
export declare function signingPreview(document: Bytes): { readonly signingBytes: Uint8Array; readonly signingHash: string };
export declare function admitFirst(
  kind: DocumentKind, document: Bytes, registry: RegistryInput,
  log: InMemoryAdmissionLog | AdmissionLog,
  trustedContext: TrustedAcceptanceContext | (() => TrustedAcceptanceContext),
): AdmittedDocument;
export declare function replayHistorical(
  kind: DocumentKind, document: Bytes, registry: RegistryInput, log: InMemoryAdmissionLog | AdmissionLog,
): AdmittedDocument;
/** An Admission Log whose calls may return Promises (a database, a network service). */
export interface AsyncAdmissionLog {
  lookup(organizationId: string, signingHash: string): LookupReply | Promise<LookupReply>;
  append?(candidate: FirstAdmissionRecord, candidateBytes: Uint8Array): AppendReply | Promise<AppendReply>;
}
/**
 * Bounds on the Admission Log calls of an asynchronous admission. Either one, when it fires,
 * fails the admission closed exactly as an unavailable log does: the pending `lookup` or `append`
 * is no longer awaited (and none is started once it has fired), the core's step-wise flow reads
 * the `unavailable` outcome, and the promise rejects with {@link AdmissionError} reason
 * `log-unavailable` (the same code as any admission rejection), whose `cause` is the abort reason or a
 * `DOMException` named `TimeoutError`. A call that settles later is ignored; nothing is
 * appended after the bound fired. The trusted acceptance context is not bounded.
 */
export interface AsyncAdmissionOptions {
  /** Aborts the admission; an already-aborted signal rejects before any log call. */
  signal?: AbortSignal;
  /** Milliseconds for the whole admission's log calls (finite, ≥ 0), from the call. */
  timeoutMs?: number;
}
/**
 * `admitFirst` through the core's step-wise flow, awaiting each log and context call.
 * @throws (rejects with) {@link AdmissionError} reason `log-unavailable` when `options.signal`
 *   aborts or `options.timeoutMs` passes first; {@link ArgumentError} for malformed options.
 */
export declare function admitFirstAsync(
  kind: DocumentKind, document: Bytes, registry: RegistryInput, log: AsyncAdmissionLog,
  trustedContext: TrustedAcceptanceContext | (() => TrustedAcceptanceContext | Promise<TrustedAcceptanceContext>),
  options?: AsyncAdmissionOptions,
): Promise<AdmittedDocument>;
/**
 * `replayHistorical` through the core's step-wise flow, awaiting the lookup; `options` bound it
 * as for {@link admitFirstAsync}.
 */
export declare function replayHistoricalAsync(
  kind: DocumentKind, document: Bytes, registry: RegistryInput, log: AsyncAdmissionLog,
  options?: AsyncAdmissionOptions,
): Promise<AdmittedDocument>;
export declare function bundleFile(path: string): Uint8Array | undefined;
export declare function bundlePaths(): string[];
export declare function verifyCryptographyBundle(): BundleSummary;
export declare function verifyAdmissionBundle(): BundleSummary;
export declare function runConformance(bundles?: ('structural' | 'cryptography' | 'admission')[]): ConformanceReport;
export declare function parseFrame(bytes: Bytes): Frame;
export declare function parseReceivedFrame(bytes: Bytes): Frame | ReceivedCommandFrame;
export declare function encodeFrame(frame: object | Bytes): string;
export declare function errorFrame(frame: {
  frameId: string; code: WireCode; message: string; occurredAt: string; relatedFrameId?: string;
}): string;

// ---- bounded authority and scheduling ------------------------------------------------------
// Times: a Date or integer milliseconds since the Unix epoch (UTC) in; numbers (ms) out.
// Money: integer micro-units of the currency; every amount is a safe non-negative integer.

export type Millis = number;
export type TimeInput = Date | Millis;

// <ffi-types> The call and answer shapes of these objects are generated from the Rust types
// that read and write them (core/ffi/src/shapes, `ffi-types.d.ts`); the build inlines them here.
import type {
  AdmissionDecisionAnswer, AttemptAnswer, AttemptOutcomeInput, BlockedLeaseFields, Capability,
  CheckpointAnswer, CheckpointInput, CoordinatorLeaseFields, DelegatedWorkInput,
  DelegationBudgetInput, DelegationContextInput, DelegationGrantFields, DelegationViolationAnswer,
  GroupPolicyInput, LeaseClaim, LeaseStateAnswer, OwnershipLeaseFields, ResourceInput,
  RetryOptions, RetryScheduleAnswer, SchedulerPolicyInput, ScheduleDisclosureAnswer,
  TransitionInput, TransitionKindName, WorkItemNodeInput, WorkLeaseFields, WorkOfferInput,
} from './ffi-types.js';
export type * from './ffi-types.js';
// </ffi-types>

export type Dimension =
  | 'financial_microunits' | 'model_tokens' | 'tool_calls' | 'compute_seconds' | 'wall_clock_seconds' | 'external_actions';
export type ResourceMember =
  | 'financialMicrounits' | 'modelTokens' | 'toolCalls' | 'computeSeconds' | 'wallClockSeconds' | 'externalActions';
export declare const RESOURCE_DIMENSIONS: readonly ResourceMember[];

export type LeaseStateName = 'active' | 'expired' | 'revoked' | 'released';
export declare const LeaseState: Readonly<{ ACTIVE: 'active'; EXPIRED: 'expired'; REVOKED: 'revoked'; RELEASED: 'released' }>;
export type DelegationViolationKindName =
  | 'identity' | 'membership' | 'membership_epoch' | 'scope' | 'capability' | 'budget' | 'depth'
  | 'coordinator_epoch' | 'issuer' | 'expired' | 'not_yet_valid' | 'target_missing' | 'target_closed' | 'malformed';
export declare const DelegationViolationKind: Readonly<Record<string, DelegationViolationKindName>>;
export type WorkStateName = 'ready' | 'running' | 'preempting' | 'blocked';
export declare const WorkState: Readonly<{ READY: 'ready'; RUNNING: 'running'; PREEMPTING: 'preempting'; BLOCKED: 'blocked' }>;
export type AdmissionReasonName =
  | 'accepted' | 'duplicate' | 'identifier_collision' | 'already_terminal' | 'worker_full' | 'group_full'
  | 'group_not_allowed' | 'group_quota_disabled' | 'unsupported_capability' | 'exceeds_capacity'
  | 'deadline_expired' | 'not_authorized' | 'dependency_unsatisfied' | 'budget_unavailable';
export declare const AdmissionReason: Readonly<Record<string, AdmissionReasonName>>;
export type DeclineReasonName = 'capacity' | 'deadline' | 'capability' | 'authorization' | 'dependency' | 'budget' | 'other';
export type RetryReasonName =
  | 'completed' | 'permanent_failure' | 'attempts_exhausted' | 'deadline_exhausted' | 'budget_exhausted' | 'retryable_failure';
export declare const TransitionKind: Readonly<Record<string, TransitionKindName>>;

export declare class LeaseError extends MwpError {
  readonly reason: 'invalid_field' | 'invalid_window' | 'expired' | 'closed' | 'closure_conflict'
    | 'non_monotonic_renewal' | 'not_extending' | 'stale_lease' | 'stale_ownership' | 'stale_session'
    | 'stale_coordinator' | 'wrong_holder' | 'unrenderable_timestamp';
  /** For `invalid_field`: which field. */
  readonly field?: string;
  /** For `closed`: the state the lease closed with. */
  readonly state?: LeaseStateName;
}
export interface AccountRef { readonly kind: 'mission' | 'work_item'; readonly id: string; }
export declare class BudgetLedgerError extends MwpError {
  readonly reason: string;
  readonly account?: AccountRef;
  readonly dimension?: Dimension;
}
export declare class BudgetExceededError extends BudgetLedgerError {
  readonly code: 'BUDGET_EXCEEDED';
  readonly dimension: Dimension;
}
export declare class DelegationViolation extends MwpError {
  readonly kind: DelegationViolationKindName;
  readonly dimension?: Dimension;
  /** True when the condition ends the Grant for good. */
  readonly invalidates: boolean;
}
export declare const DelegationViolationError: typeof DelegationViolation;
export declare class RetryError extends MwpError {
  /** `invalid_argument`, `attempt_in_flight`, `no_attempt_in_flight`, `backoff_pending`,
   * `deadline_exhausted`, `budget_exceeded`, or the reason a finished loop ended. */
  readonly reason: string;
  readonly field?: string;
  readonly retryAt?: Millis;
  readonly finishedReason?: string;
  /** `RATE_LIMITED` from the policy guard: when the window admits again. */
  readonly retryAfterMs?: number;
  readonly dimension?: Dimension;
}
/** The core's `policy` error class (§8, §12, §20 refusals, retry-controller misuse): the reference's `PolicyError`, the same class as {@link RetryError}. */
export declare const PolicyError: typeof RetryError;
export declare class RetryExhausted extends RetryError {}
export declare class SchedulerError extends MwpError {
  readonly reason: 'unsafe_checkpoint' | 'invalid_argument' | 'unsupported_policy' | 'offer_declined' | 'corrupt_snapshot';
  readonly field?: string;
  /** `offer_declined`: the offer a rebuild could not admit, and why (an {@link AdmissionReasonName}). */
  readonly workId?: string;
  readonly admissionReason?: AdmissionReasonName;
}
export declare class SchedulerStateError extends MwpError {
  readonly reason: 'unknown_work' | 'stale_run' | 'invalid_transition';
  readonly workId?: string;
  readonly state?: WorkStateName;
  readonly currentGeneration?: number;
  readonly reportedGeneration?: number;
}
export declare class SnapshotError extends MwpError {
  readonly code: 'INTERNAL_ERROR';
  readonly reason: 'malformed_snapshot';
  readonly path: string;
}
/** Content-addressed Artifact bytes or their manifest were refused (§13.1). */
export declare class ArtifactError extends MwpError {
  readonly reason:
    | 'unsupported_hash' | 'invalid_metadata' | 'unsignable_manifest' | 'manifest_rejected'
    | 'hash_mismatch' | 'size_mismatch' | 'content_missing' | 'stored_bytes_conflict' | 'io';
  readonly contentHash?: string;
}
/** An Agent authentication step was refused (§6.3). */
export declare class AuthenticationError extends MwpError {
  readonly code: 'AUTH_INVALID_SIGNATURE' | 'AUTH_STALE_SESSION' | 'AUTH_REQUIRED' | 'UNSUPPORTED_VERSION' | 'RATE_LIMITED' | 'PROTOCOL_VIOLATION' | 'INTERNAL_ERROR';
  readonly reason:
    | 'invalid_argument' | 'invalid_public_key' | 'key_id_reused' | 'unknown_key' | 'key_not_yet_valid'
    | 'key_expired' | 'key_revoked' | 'unsupported_version' | 'unknown_challenge' | 'challenge_expired'
    | 'challenge_mismatch' | 'invalid_signature' | 'too_many_challenges' | 'invalid_token' | 'session_expired'
    | 'agent_mismatch' | 'stale_session' | 'epoch_exhausted' | 'not_authenticated' | 'unexpected_phase';
}

/** A Context Package was refused (§13.3): its scope, Event provenance or version chain. */
export declare class ContextPackageError extends MwpError {
  readonly reason:
    | 'invalid_argument' | 'source_events_empty' | 'event_outside_group' | 'source_range_gap'
    | 'duplicate_source_event' | 'decision_outside_range' | 'version_chain' | 'source_range_mismatch'
    | 'generator_mismatch' | 'scope_mismatch';
}

// ---- Agent-local store and replay errors (§16, §19) ----
/** The Agent-local store refused or failed. */
export declare class LocalStoreError extends MwpError {
  readonly reason:
    | 'invalid_argument' | 'event_position_collision' | 'action_collision' | 'stale_revision'
    | 'checkpoint_collision' | 'cursor_conflict' | 'corrupt' | 'backend';
}
/** A replay stopped; the Events before the failing one are committed. */
export declare class ReplayError extends MwpError {}
/** An empty Agent or Group ID (`invalid_argument`), or an Event of another Group (`wrong_group`). */
export declare class ReplayGroupError extends ReplayError {}
/** `sequence_gap`, `missing_sequence`, `event_moved` (an Event ID seen at another position): `PROTOCOL_VIOLATION`. */
export declare class ReplaySequenceError extends ReplayError {}
/** `projection_collision`: a projected offer collides with an admitted one (`INVALID_STATE_TRANSITION`). */
export declare class ReplayProjectionError extends ReplayError {}

// ---- Agent runtime and offline errors (§6.3, §11.3, §11.5) ----
/** An Agent runtime argument, or a dispatch the Scheduler does not have running. */
export declare class AgentError extends MwpError {
  readonly reason: 'invalid_argument' | 'not_dispatched';
}
/** A second Agent Session while one is active (`INVALID_STATE_TRANSITION`). */
export declare class ActiveSessionError extends MwpError {}
/** A Session Epoch not above every earlier one (`AUTH_STALE_SESSION`). */
export declare class StaleSessionEpochError extends MwpError {}
/** A closed or replaced session (`AUTH_REQUIRED`). */
export declare class ClosedSessionError extends MwpError {}
/** A Group context or credential revision not above the installed one (`REVISION_CONFLICT`). */
export declare class StaleContextError extends MwpError {}
/** Offline buffering, rebasing or a binding was refused (§11.5). */
export declare class OfflinePolicyError extends MwpError {}

export declare class ResourceUsage {
  constructor(values?: ResourceInput);
  readonly financialMicrounits: number;
  readonly modelTokens: number;
  readonly toolCalls: number;
  readonly computeSeconds: number;
  readonly wallClockSeconds: number;
  readonly externalActions: number;
}
export declare class DelegationBudget extends ResourceUsage {
  constructor(values: DelegationBudgetInput);
  readonly currency: string;
}
export type CapabilityInput = Capability;
export declare class DelegationGrant {
  constructor(fields: DelegationGrantFields);
  readonly grantId: string; readonly granteeAgentId: string; readonly missionId: string; readonly groupId: string;
  readonly targetWorkItemId: string; readonly allowedCapabilities: readonly CapabilityInput[];
  readonly budget: DelegationBudget; readonly maxDescendantDepth: number; readonly granteeMembershipEpoch: number;
  readonly coordinatorEpoch: number; readonly grantedBy: string; readonly grantedAt: TimeInput; readonly expiresAt: TimeInput;
}
export declare class AdmissionDecision implements Readonly<AdmissionDecisionAnswer> {
  readonly workId: string;
  readonly accepted: boolean;
  readonly reason: AdmissionReasonName;
  readonly declineReason: DeclineReasonName | null;
}
export type CheckpointRef = CheckpointInput;
export declare class Dispatch {
  readonly workId: string; readonly groupId: string; readonly runId: string; readonly generation: number;
  readonly slots: number; readonly resumeFrom: Readonly<CheckpointAnswer> | null;
}
export declare class Preempt {
  readonly workId: string; readonly groupId: string; readonly runId: string; readonly generation: number;
}
export type ScheduleAction = Dispatch | Preempt;
export declare class ScheduleDisclosure implements Readonly<ScheduleDisclosureAnswer> {
  readonly state: WorkStateName;
  readonly earliestStart: Millis | null;
  readonly latestStart: Millis | null;
  readonly estimatedCompletion: Millis | null;
  readonly confidence: 'high' | 'medium' | 'low';
  readonly capacityStatus: 'available' | 'constrained' | 'saturated';
  readonly calculatedAt: Millis;
}
export declare class Attempt implements Readonly<AttemptAnswer> {
  readonly attemptNumber: number; readonly idempotencyKey: string; readonly attemptKey: string; readonly startedAt: Millis;
}
export declare class RetrySchedule implements Readonly<RetryScheduleAnswer> {
  readonly retry: boolean; readonly retryAt: Millis | null;
  readonly reason: RetryReasonName;
}
export declare class SchedulerSnapshot {
  constructor(document: object | string);
  readonly version: number;
  readonly groups: readonly { readonly groupId: string; readonly pass: string }[];
  readonly records: readonly object[];
  readonly terminal: readonly string[];
  readonly virtualTime: string;
  readonly nextTicket: number;
}
export declare class BudgetLedgerSnapshot {
  constructor(document: object | string);
  readonly version: number;
  readonly missions: readonly object[];
  readonly workItems: readonly object[];
}

export declare class ExecutionLease implements Readonly<LeaseStateAnswer>, NativeResource {
  constructor(fields: WorkLeaseFields);
  static ownership(fields: OwnershipLeaseFields): ExecutionLease;
  static blocked(fields: BlockedLeaseFields): ExecutionLease;
  static coordinator(fields: CoordinatorLeaseFields): ExecutionLease;
  /** Reads a lease back from its `lease.schema.json` document (as `toJSON()` gives). */
  static fromJSON(document: string | object): ExecutionLease;
  readonly leaseId: string; readonly leaseType: 'coordinator' | 'ownership' | 'execution' | 'blocked';
  readonly missionId: string; readonly groupId: string; readonly holderAgentId: string; readonly sessionEpoch: number;
  readonly workItemId: string | null; readonly ownershipEpoch: number | null; readonly coordinatorEpoch: number | null;
  readonly issuedAt: Millis; readonly startsAt: Millis; readonly expiresAt: Millis; readonly startBy: Millis | null;
  readonly graceExpiresAt: Millis | null; readonly state: LeaseStateName; readonly renewalCount: number;
  readonly lastRenewedAt: Millis | null; readonly closedAt: Millis | null; readonly closureReason: string | null;
  stateAt(now: TimeInput): LeaseStateName;
  isLive(now: TimeInput): boolean;
  renew(at: TimeInput, expiresAt: TimeInput): this;
  close(state: 'released' | 'revoked' | 'expired', at: TimeInput, reason: string): boolean;
  release(at: TimeInput, reason: string): boolean;
  revoke(at: TimeInput, reason: string): boolean;
  expire(at: TimeInput, reason: string): boolean;
  checkClaim(claim: LeaseClaim, now: TimeInput): void;
  checkStartBy(now: TimeInput): void;
  /** The `lease.schema.json` document (RFC 3339 timestamps). */
  toJSON(): Record<string, string | number>;
  toCanonicalJSON(): string;
  /** Releases the native memory now (see {@link NativeResource}). */
  free(): void;
  [Symbol.dispose](): void;
}

export type AccountInput = readonly ['mission' | 'work_item', string] | AccountRef;
export declare class BudgetLedger implements NativeResource {
  constructor();
  static rebuild(snapshot: BudgetLedgerSnapshot | object | string): BudgetLedger;
  registerMission(missionId: string, limit: ResourceInput, options?: { currency?: string | null; parentWorkItemId?: string | null }): void;
  registerWorkItem(workItemId: string, missionId: string, limit: ResourceInput, options?: { parentWorkItemId?: string | null }): void;
  consume(workItemId: string, delta: ResourceInput): ResourceUsage;
  remaining(account: AccountInput): ResourceUsage;
  usage(account: AccountInput): ResourceUsage;
  limit(account: AccountInput): ResourceUsage;
  reserved(account: AccountInput): ResourceUsage;
  currency(account: AccountInput): string | null;
  depth(account: AccountInput): number;
  readonly size: number;
  snapshot(): BudgetLedgerSnapshot;
  /** Releases the native memory now (see {@link NativeResource}). */
  free(): void;
  [Symbol.dispose](): void;
}

/** The caller's WorkItem graph keyed by WorkItem id (a Map crosses as an object). */
export type WorkItemsInput = Record<string, WorkItemNodeInput> | Map<string, WorkItemNodeInput>;
export declare class DelegationAuthority implements NativeResource {
  constructor(grant: DelegationGrant | DelegationGrantFields);
  readonly grant: DelegationGrant;
  readonly charged: ResourceUsage;
  readonly remaining: ResourceUsage;
  readonly invalidated: Readonly<DelegationViolationAnswer> | null;
  checkUse(context: DelegationContextInput, workItems: WorkItemsInput): void;
  authorizeExisting(context: DelegationContextInput, workItems: WorkItemsInput, workItemId: string, work: DelegatedWorkInput): number;
  authorizeDescendant(context: DelegationContextInput, workItems: WorkItemsInput, newWorkItemId: string, parentWorkItemId: string, work: DelegatedWorkInput): number;
  restoreAttribution(workItemId: string, budget: ResourceInput): void;
  /** Releases the native memory now (see {@link NativeResource}). */
  free(): void;
  [Symbol.dispose](): void;
}

export declare class RetryController implements NativeResource {
  constructor(options: RetryOptions);
  readonly attempts: number;
  readonly usage: ResourceUsage;
  readonly finished: RetrySchedule['reason'] | null;
  idempotencyKey(logicalOperationId: string): string;
  begin(logicalOperationId: string, now: TimeInput): Attempt;
  finish(outcome: AttemptOutcomeInput, now: TimeInput): RetrySchedule;
  consume(delta: ResourceInput): ResourceUsage;
  /**
   * The whole state as a versioned JSON object (policy, deadline, cost budget, attempts, usage,
   * backoff, final reason, the attempt in flight, `integrity`): persist it to keep the retry bounds
   * across a Worker restart (§11.4). An extension: the reference has no snapshot.
   */
  snapshot(): Readonly<Record<string, unknown>>;
  /**
   * A controller in exactly the state of {@link RetryController.snapshot}'s object (or its JSON
   * text). @throws {@link SnapshotError} (`INTERNAL_ERROR`) for a malformed, other-version,
   * tampered (`integrity`) or unreachable state.
   */
  static restore(snapshot: object | string): RetryController;
  /** The attempt in flight, else null. */
  readonly currentAttempt: Readonly<{ logicalOperationId: string; startedAt: Millis }> | null;
  /** Releases the native memory now (see {@link NativeResource}). */
  free(): void;
  [Symbol.dispose](): void;
}

export declare class Scheduler implements NativeResource {
  constructor(policy?: SchedulerPolicyInput);
  static restore(snapshot: SchedulerSnapshot | object | string, policy?: SchedulerPolicyInput): Scheduler;
  /**
   * After a restart at `now`: from a snapshot (object or JSON text), running work resumes from a
   * durable safe checkpoint or blocks; from a non-empty array of offers, each is admitted in order.
   * @throws {@link SchedulerError} (`offer_declined`) when an offer is declined (nothing is
   * rebuilt), {@link ArgumentError} (argument `source`) for no offers (`[]`) or anything else.
   */
  static rebuild(source: SchedulerSnapshot | object | string | WorkOfferInput[], policy: SchedulerPolicyInput | undefined, now: TimeInput): Scheduler;
  admit(offer: WorkOfferInput, now: TimeInput): AdmissionDecision;
  admitMany(offers: WorkOfferInput[], now: TimeInput): AdmissionDecision[];
  schedule(now: TimeInput): ScheduleAction[];
  apply(workId: string, transition: TransitionInput, now: TimeInput): void;
  unblock(workId: string, now: TimeInput): void;
  cancel(workId: string): void;
  reprioritize(workId: string, priority: number): void;
  setCapacity(capacitySlots: number): void;
  setGroupPolicy(groupId: string, policy: GroupPolicyInput): void;
  state(workId: string): WorkStateName | null;
  generation(workId: string): number | null;
  isTerminal(workId: string): boolean;
  forget(workId: string): boolean;
  disclose(workId: string, now: TimeInput): ScheduleDisclosure | null;
  readonly size: number;
  readonly usedSlots: number;
  readonly capacitySlots: number;
  readonly horizonMs: number;
  snapshot(): SchedulerSnapshot;
  /** Releases the native memory now (see {@link NativeResource}). */
  free(): void;
  [Symbol.dispose](): void;
}

export declare function idempotencyKey(missionId: string, workItemId: string, ownershipEpoch: number, logicalOperationId: string): string;
export declare function derivedAttemptKey(idempotencyKey: string, attempt: number): string;
export declare function parseDurationMs(duration: string): number;
/**
 * The core's spelling list of every wire vocabulary, by name (`wire_code`, `error_class`, `stage`,
 * `signed_document_kind`, `admission_reason`, `dimension`, `lease_state`, `lease_type`,
 * `account_kind`, `delegation_violation_kind`, `retry_reason`, `work_state`,
 * `scheduler_admission_reason`, `query_kind`, `error_family`, `error_family_class`), `js_error_class` (the
 * `Error` subclass of each error class) and `wire_code_family` (the Core's ErrorCode family of each wire code):
 * the one source this package's enum objects are tested against.
 */
export declare function vocabularies(): Readonly<Record<string, readonly string[]>> & {
  readonly js_error_class: Readonly<Record<string, string>>;
  readonly wire_code_family: Readonly<Record<WireCode, ErrorCodeName>>;
};

// ---- the authoritative Core (issue 10) ------------------------------------------------------

/** The reference runtime's error families (`ErrorCode`), and this runtime's `store_failure`. */
export type ErrorCodeName =
  | 'invalid_command' | 'not_found' | 'already_exists' | 'authorization_denied' | 'action_id_collision'
  | 'stale_session_epoch' | 'stale_membership_epoch' | 'stale_coordinator_epoch' | 'stale_ownership_epoch'
  | 'lease_expired' | 'invalid_transition' | 'revision_conflict' | 'dependency_error' | 'policy_violation'
  | 'budget_exceeded' | 'store_failure';
export declare const ErrorCode: Readonly<{
  INVALID_COMMAND: 'invalid_command'; NOT_FOUND: 'not_found'; ALREADY_EXISTS: 'already_exists';
  AUTHORIZATION_DENIED: 'authorization_denied'; ACTION_ID_COLLISION: 'action_id_collision';
  STALE_SESSION_EPOCH: 'stale_session_epoch'; STALE_MEMBERSHIP_EPOCH: 'stale_membership_epoch';
  STALE_COORDINATOR_EPOCH: 'stale_coordinator_epoch'; STALE_OWNERSHIP_EPOCH: 'stale_ownership_epoch';
  LEASE_EXPIRED: 'lease_expired'; INVALID_TRANSITION: 'invalid_transition'; REVISION_CONFLICT: 'revision_conflict';
  DEPENDENCY_ERROR: 'dependency_error'; POLICY_VIOLATION: 'policy_violation'; BUDGET_EXCEEDED: 'budget_exceeded';
  STORE_FAILURE: 'store_failure';
}>;

/** What `Core.query` can read (the reference's `QueryKind`). */
export type QueryKindName =
  | 'command' | 'agent_card' | 'session_epoch' | 'mission' | 'group' | 'membership' | 'conversation' | 'message'
  | 'message_amendment' | 'work_proposal' | 'work_item' | 'mission_work_items' | 'artifact' | 'approval'
  | 'execution_approval' | 'cooperation_override_grant' | 'policy_log' | 'group_snapshot' | 'delegation_grant'
  | 'execution_lease' | 'budget_remaining';
export declare const QueryKind: Readonly<Record<
  | 'COMMAND' | 'AGENT_CARD' | 'SESSION_EPOCH' | 'MISSION' | 'GROUP' | 'MEMBERSHIP' | 'CONVERSATION' | 'MESSAGE'
  | 'MESSAGE_AMENDMENT' | 'WORK_PROPOSAL' | 'WORK_ITEM' | 'MISSION_WORK_ITEMS' | 'ARTIFACT' | 'APPROVAL'
  | 'EXECUTION_APPROVAL' | 'COOPERATION_OVERRIDE_GRANT' | 'POLICY_LOG' | 'GROUP_SNAPSHOT' | 'DELEGATION_GRANT'
  | 'EXECUTION_LEASE' | 'BUDGET_REMAINING', QueryKindName>>;

/**
 * A Command was refused, or a query or replay could not be answered, by the authoritative Core;
 * nothing was applied (§15.1). The class is the `family`'s (`RevisionConflict`, …).
 */
export declare class MissionWeaveProtocolError extends MwpError {
  /** The §19 wire code a peer gets (e.g. `REVISION_CONFLICT`, `WORK_ALREADY_OWNED`). */
  readonly code: WireCode;
  /** The reference runtime's ErrorCode family, from the core's one table. */
  readonly family: ErrorCodeName;
  /** The reference's `as_dict()`, as in the Python package: `code` is the ErrorCode family there. */
  asDict(): { code: ErrorCodeName; message: string; details: Record<string, ErrorFieldValue> };
}
export declare class InvalidCommand extends MissionWeaveProtocolError { readonly family: 'invalid_command'; }
export declare class NotFound extends MissionWeaveProtocolError { readonly family: 'not_found'; }
export declare class AlreadyExists extends MissionWeaveProtocolError { readonly family: 'already_exists'; }
export declare class AuthorizationDenied extends MissionWeaveProtocolError { readonly family: 'authorization_denied'; }
export declare class ActionIdCollision extends MissionWeaveProtocolError { readonly family: 'action_id_collision'; }
export declare class StaleSessionEpoch extends MissionWeaveProtocolError { readonly family: 'stale_session_epoch'; }
export declare class StaleMembershipEpoch extends MissionWeaveProtocolError { readonly family: 'stale_membership_epoch'; }
export declare class StaleCoordinatorEpoch extends MissionWeaveProtocolError { readonly family: 'stale_coordinator_epoch'; }
export declare class StaleOwnershipEpoch extends MissionWeaveProtocolError { readonly family: 'stale_ownership_epoch'; }
export declare class LeaseExpired extends MissionWeaveProtocolError { readonly family: 'lease_expired'; }
export declare class InvalidTransition extends MissionWeaveProtocolError { readonly family: 'invalid_transition'; }
export declare class RevisionConflict extends MissionWeaveProtocolError {
  readonly family: 'revision_conflict';
  readonly expectedRevision?: number;
  readonly currentRevision?: number;
}
export declare class DependencyError extends MissionWeaveProtocolError { readonly family: 'dependency_error'; }
export declare class PolicyViolation extends MissionWeaveProtocolError { readonly family: 'policy_violation'; }
export declare class BudgetExceeded extends MissionWeaveProtocolError { readonly family: 'budget_exceeded'; }
/** The store's reasons for a {@link StoreError}. */
export type StoreFailureReason =
  | 'store_corrupt' | 'corrupt_aggregate' | 'backend_failure' | 'store_closed' | 'store_not_initialized';
/**
 * The authoritative store failed (`store_failure`, `INTERNAL_ERROR`): nothing was applied, and it
 * is no conflict (not a {@link RevisionConflict}). `retryable` is true only where an unchanged
 * retry can succeed (a failing backend), never for damaged data or a closed store.
 */
export declare class StoreError extends MissionWeaveProtocolError {
  readonly family: 'store_failure';
  readonly code: 'INTERNAL_ERROR';
  readonly reason: StoreFailureReason;
  /** What was being read when damage was found (`event`, `aggregate`, `receipt`, `database`, …). */
  readonly stored?: string;
  /** Which stored row failed (`"g #3"`, `"work_item w"`), when the store names one. */
  readonly locator?: string;
  /** A damaged Event's ID and sequence, when a replay found it. */
  readonly eventId?: string;
  readonly sequence?: number;
  /** A damaged aggregate's kind and ID. */
  readonly aggregateKind?: string;
  readonly aggregateId?: string;
}

/** One signed Group Event as the Core stored it. */
export declare class Event {
  private constructor();
  readonly eventId: string;
  readonly groupId: string;
  /** The Group sequence, contiguous from 1 (§16). */
  readonly sequence: number;
  /** The exact RFC 8785 text of the signed Event. */
  readonly text: string;
  /** The same as UTF-8 bytes (a fresh copy). */
  readonly bytes: Uint8Array;
  /** The parsed, frozen `event.schema.json` document. */
  readonly document: Readonly<Record<string, unknown>>;
  readonly kind: string;
  readonly payload: Readonly<Record<string, unknown>>;
  readonly actionId: string;
  readonly aggregateRevision: number | undefined;
  toJSON(): Readonly<Record<string, unknown>>;
}

/** What `Core.perform` resolves to. */
export declare class PerformResult {
  private constructor();
  readonly groupId: string;
  /** True when the same signed Command was applied before: `events` is its original first Event (§15.1). */
  readonly duplicate: boolean;
  /** The Command's Events, in Group order (a Mission's cancellation also closes its WorkItems). */
  readonly events: readonly Event[];
  /** The first Event. */
  readonly event: Event;
}

/** One page of `Core.replay`. */
export declare class ReplayPage {
  private constructor();
  readonly groupId: string;
  readonly events: readonly Event[];
  /** The `after` of the next page, or null when this page reaches the head. */
  readonly continuation: number | null;
  /** The Group's last sequence when the page was read. */
  readonly lastSequence: number;
}

/** The in-memory authoritative store; one may be shared by several `Core`s. */
export declare class InMemoryStore implements NativeResource {
  constructor();
  free(): void;
  [Symbol.dispose](): void;
}

/** The options of the SQL stores (the reference's keyword arguments). */
export interface SQLStoreOptions {
  /** Kept for the reference's signature (where it logs SQL); no SQL is issued from JavaScript. */
  echo?: boolean;
}

/**
 * A durable authoritative store named by a URL (Node only: the WebAssembly build throws
 * {@link ArgumentError}): `sqlite:///relative.db`, `sqlite:////absolute/path.db`,
 * `sqlite:///:memory:`, `postgresql://user:password@host:port/database` (also `postgres://`, and the
 * reference's `+aiosqlite` / `+asyncpg` driver spellings). A `Core` takes it once initialized.
 *
 * The reference's `transact` / `inspect` (a whole-state document per operation) are not offered:
 * the store is per aggregate; read through `Core.query` and `Core.replay`.
 *
 * @example
 * ```js
 * const store = new SQLiteStore('authority.db');
 * await store.initialize();
 * const core = new Core({ registry, authority, authorityKey, store });
 * // … later, a new process: a new store on the same file replays and continues.
 * await store.close();
 * ```
 */
export declare class SQLStore implements NativeResource {
  /** @throws {@link ArgumentError} for a URL that is not sqlite or postgres (`reason` says why; the message never repeats the URL). */
  constructor(url: string, options?: SQLStoreOptions);
  /** `'sqlite'` or `'postgresql'`. */
  readonly dialectName: 'sqlite' | 'postgresql';
  /** The URL with its password replaced by `***`. */
  readonly url: string;
  readonly echo: boolean;
  /**
   * Opens (creating if needed) the database and migrates its schema, on the libuv thread pool;
   * idempotent while open. Rejects with {@link ArgumentError} (`store-closed`) after `close()`, or
   * with the store's error (`INTERNAL_ERROR`, `backend_failure`) when the database cannot be opened (a
   * PostgreSQL server that cannot be reached, a refused login, a missing database); the store then stays unopened.
   */
  initialize(): Promise<void>;
  /** Releases the connection (idempotent). A `Core` over the store then refuses every call (`INTERNAL_ERROR`, `backend_failure`). */
  close(): Promise<void>;
  free(): void;
  [Symbol.dispose](): void;
}

/** The embedded durable store: one SQLite file, or `':memory:'` (the default: a private in-memory database). */
export declare class SQLiteStore extends SQLStore {
  constructor(path?: string, options?: SQLStoreOptions);
}

/**
 * A PostgreSQL server: `postgresql://user:password@host:port/database?options` (also `postgres://`, and the
 * driver spellings `postgresql+asyncpg`, `+psycopg`, `+psycopg2`, which change nothing), read by libpq's URL rules.
 * @throws {@link ArgumentError} for a URL that is not `postgresql://` or `postgres://`.
 */
export declare class PostgreSQLStore extends SQLStore {
  constructor(url: string, options?: SQLStoreOptions);
}

/** A signed wire Command: its exact bytes or text, a SignedDocument, or the parsed object. */
export type CommandInput = Bytes | SignedDocument | Readonly<Record<string, unknown>>;

/**
 * A query's answer: the aggregate's normative document (`mission.schema.json`,
 * `work-item.schema.json`, `membership.schema.json`, `lease.schema.json`, …), frozen; an array of
 * documents for `mission_work_items`. An absent entity rejects with {@link NotFound}.
 */
export type QueryResult = Readonly<Record<string, unknown>> | readonly Readonly<Record<string, unknown>>[];

export interface CoreQuery {
  kind: QueryKindName;
  entityId: string;
  groupId?: string;
  actorType?: Principal['type'];
}

/** The options of `new Core(…)`: the Python package's keyword arguments, in camelCase. */
export interface CoreOptions {
  /** The Organization's Registry: every Command is verified against it (§6.4). */
  registry: RegistryInput;
  /** The Group Authority: the Principal that accepts and signs every Event. */
  authority: Principal;
  /** Its signing key, bound to `authority` in `registry` (checked: receivers verify the Events). */
  authorityKey: SigningKey;
  /** The store (default: a new InMemoryStore); an SQLStore must be initialized ({@link ArgumentError} `store-not-initialized` / `store-closed` otherwise). */
  store?: InMemoryStore | SQLStore;
  /** The authority's clock, read once per call (default `Date.now`). */
  clock?: () => TimeInput;
  /** Event IDs are `<prefix>1`, `<prefix>2`, … (default: random `urn:uuid:` v4 IDs from `crypto.getRandomValues` / the OS). */
  eventIdPrefix?: string;
  /** How far `issuedAt` may lie ahead of the clock (§6.4, §22; default 30,000 ms). */
  maxFutureSkewMs?: number;
  /** How old `issuedAt` may be (default 300,000 ms). */
  maxAgeMs?: number;
  /** How often a decision is retried when concurrent Commands of its Group commit first (default 16). */
  maxAttempts?: number;
  /** Services that may send `…identity.session_open` and `…registry.agent_card_register` (default: `authority.id`, §6.3). */
  bootstrapServices?: string[];
  /** Services that may sign the Group kinds of Organization policy (`mission.cancel`, `work.cancel`, …; default none). */
  policyServices?: string[];
  /** §20 limits (the reference's `CooperationLimits`): absent keeps the default (100, 4, 30), `null` means no limit. */
  cooperationLimits?: CooperationLimits;
  /**
   * §11.5 bounds on the buffered progress the Core reconciles per historical Execution Lease
   * (default: a one-hour window, 64 Commands, no usage cap beyond the budget ledger). Bad
   * bounds throw {@link OfflinePolicyError}; unknown members {@link ArgumentError}.
   */
  offlineLimits?: CoreOfflineLimits;
  /** The key ID Group Snapshots must be signed with (§7.4): given with `snapshotAuthorityPublicKey`, and the Group Authority's (`authorityKey`), or {@link ArgumentError}. */
  snapshotAuthorityKeyId?: string;
  /** Its public key (32 bytes or base64url text). */
  snapshotAuthorityPublicKey?: Uint8Array | string;
}

/** The Core-side offline bounds (`maxDisconnectGraceMs` > 0, `maxActions` ≥ 1; an absent `maxUsage` means no cap, an absent dimension of it 0). */
export interface CoreOfflineLimits {
  maxDisconnectGraceMs: number;
  maxActions: number;
  maxUsage?: ResourceInput;
}

/**
 * The §20 cooperation limits (`RATE_LIMITED`): the reference's `CooperationLimits`. An absent
 * member keeps the reference's default, `null` means no limit. The Core enforces the queued,
 * active, proposal-rate and delegation-depth limits; a PolicyGuard all of them.
 */
export interface CooperationLimits {
  /** Deepest delegation chain (default 3). */
  maximumDelegationDepth?: number | null;
  /** WorkItems of a Group not yet started (`open`, `offered`, `queued`; default 100). */
  maximumQueuedWorkItems?: number | null;
  /** `active` WorkItems of one Worker in one Group (default 4). */
  maximumActiveWorkItems?: number | null;
  /** Open clarification rounds (default 5). */
  maximumUnresolvedClarifications?: number | null;
  /** Messages per principal and Group per minute (default 120). */
  maximumMessageRatePerMinute?: number | null;
  /** `work.propose` of one sender in one Group per minute (default 30). */
  maximumProposalRatePerMinute?: number | null;
  /** Clarification requests per principal and Group per minute (default 30). */
  maximumClarificationRatePerMinute?: number | null;
  /** Rate keys a guard tracks at once (default 4,096; at least 1). */
  maximumTrackedKeys?: number;
}

/**
 * The authoritative Core (reference `core.Core`): `perform` a signed Command, `query` a
 * projection, `replay` a Group's Events. Every method returns a Promise; under Node (napi) the
 * work runs on the libuv thread pool.
 *
 * @example
 * ```js
 * const core = new Core({ registry, authority: { type: 'service', id: authorityId }, authorityKey });
 * const { event } = await core.perform(signedCommandBytes);
 * const mission = await core.query({ kind: QueryKind.MISSION, entityId: missionId });
 * const page = await core.replay(groupId, { after: 0, limit: 100 });
 * ```
 */
export declare class Core implements NativeResource {
  /** @throws {@link ArgumentError} for bad options, {@link RegistryError} for unusable Registry evidence. */
  constructor(options: CoreOptions);
  /** Rejects with a {@link MissionWeaveProtocolError} subclass; nothing is applied then. */
  perform(command: CommandInput): Promise<PerformResult>;
  /** Rejects with {@link NotFound} for an absent entity, {@link InvalidCommand} for a kind not served yet. */
  query(query: CoreQuery): Promise<QueryResult>;
  replay(groupId: string, options?: { after?: number; limit?: number }): Promise<ReplayPage>;
  /** Releases the native memory now; Promises already running finish. */
  free(): void;
  [Symbol.dispose](): void;
}

// ---- Agent authentication (§6.3): the core's `auth` module --------------------------------
// Node (napi) and WebAssembly (the same core/ffi module; randomness from the OS or from
// `crypto.getRandomValues`); not in the verify-only entry. A refusal is an {@link AuthenticationError} with the core's §19 `code` and `reason`. Times are a
// Date or integer Unix milliseconds in, integer milliseconds out; an omitted `now`/`at` is the
// system clock.

/** Validity of a registered key. */
export interface AuthKeyRegistration {
  readonly keyId?: string | null;
  readonly validFrom?: TimeInput | null;
  readonly validUntil?: TimeInput | null;
  readonly revokedAt?: TimeInput | null;
}

/** A one-use HELLO challenge; `signingBytes` is the canonical (RFC 8785) transcript the Agent signs. */
export interface AuthChallenge {
  readonly protocolVersion: string;
  readonly challengeId: string;
  readonly agentId: string;
  readonly keyId: string;
  readonly clientNonce: string;
  readonly serverNonce: string;
  readonly expiresAt: Millis;
  readonly signingBytes: Uint8Array;
}

/** An opened session; `token` is a bearer credential (never log it). */
export interface AuthSessionGrant {
  readonly agentId: string;
  readonly keyId: string;
  readonly protocolVersion: string;
  readonly sessionEpoch: number;
  readonly issuedAt: Millis;
  readonly expiresAt: Millis;
  readonly token: string;
}

/** `new SessionAuthority(registry, options)`: a secret of at least 32 bytes (random when absent), lifetimes in milliseconds (30 s, 15 min). */
export interface AuthSessionAuthorityOptions {
  readonly secret?: Bytes;
  readonly challengeTtlMs?: number;
  readonly sessionTtlMs?: number;
}

/** `urn:missionweaveprotocol:key:<last path or colon segment of agentId>`. @throws {@link AuthenticationError} (`invalid_argument`). */
export declare function defaultAgentKeyId(agentId: string): string;

/** The Organization's Agent keys (reference `auth.AgentKeyRegistry`); a {@link SessionAuthority} built on them sees later changes. */
export declare class AgentKeyRegistry implements NativeResource {
  constructor();
  /**
   * Registers a public key (32 bytes, base64url text or a {@link SigningKey}); the key ID defaults
   * to `defaultAgentKeyId(agentId)`. @throws {@link AuthenticationError} (`invalid_public_key`, `key_id_reused`, `invalid_argument`).
   */
  register(agentId: string, publicKey: Bytes | SigningKey, options?: AuthKeyRegistration): void;
  /** The 32 public-key bytes of the key valid at `at`. @throws {@link AuthenticationError} (`unknown_key`, `key_not_yet_valid`, `key_expired`, `key_revoked`). */
  resolve(agentId: string, keyId?: string | null, at?: TimeInput): Uint8Array;
  /** Whether the bytes are the key's registered material (constant-time comparison). */
  matchesRegisteredPublicKey(agentId: string, keyId: string, publicKeyBytes: Bytes): boolean;
  /** Keeps the earliest revocation. */
  revoke(agentId: string, keyId: string, revokedAt?: TimeInput): void;
  free(): void;
  [Symbol.dispose](): void;
}

/** One-use challenges, HMAC-SHA256 session tokens and per-Agent Session Epochs (reference `auth.SessionAuthority`). */
export declare class SessionAuthority implements NativeResource {
  /** @throws {@link AuthenticationError} (`invalid_argument`: a short secret, a zero lifetime). */
  constructor(registry: AgentKeyRegistry, options?: AuthSessionAuthorityOptions);
  /** @throws {@link AuthenticationError} (`unknown_key`, `key_revoked`, `unsupported_version`, `too_many_challenges`, …). */
  issueChallenge(agentId: string, options?: { keyId?: string | null; clientNonce?: string | null; protocolVersion?: string; now?: TimeInput }): AuthChallenge;
  /** Spends the challenge (also on failure); `signature` is base64url. @throws {@link AuthenticationError} (`unknown_challenge`, `challenge_expired`, `invalid_signature`, …). */
  openSession(challengeId: string, signature: string, now?: TimeInput): AuthSessionGrant;
  /** @throws {@link AuthenticationError} (`invalid_token`, `session_expired`, `stale_session`, `key_revoked`, …). */
  verifySession(token: string, now?: TimeInput): AuthSessionGrant;
  /** Never lowers the epoch. */
  synchronizeEpoch(agentId: string, authoritativeEpoch: number, keyId?: string | null): void;
  currentEpoch(agentId: string): number;
  free(): void;
  [Symbol.dispose](): void;
}

// ---- policy: tokens, execution authorization, local guardrails (§8, §12, §20) ----------------
// Node (napi) and WebAssembly (the same core/ffi module); not in the verify-only entry. Each call's
// members are exactly the ones declared: an unknown member is an ArgumentError naming it.

/** A budget as the policy layer reads it: any subset of the six members (absent: 0). */
export type PolicyBudget = Partial<Readonly<Record<ResourceMember, number>>>;

/** `new MembershipTokenService(options)` / `new AuthorizationService(options)`: a secret of at least 32 bytes (random when absent), the longest lifetime (absent: the core's maximum, 15 min). */
export interface PolicyServiceOptions {
  readonly secret?: Bytes;
  readonly maximumTtlMs?: number;
}

/** A token and its claims; `token` is a bearer credential (never log it). */
export interface PolicyIssued<Claims> {
  readonly claims: Claims;
  readonly token: string;
}

/** The claims of a Group membership token (§8). */
export interface MembershipTokenClaims {
  readonly tokenId: string;
  readonly principal: { readonly type: 'agent'; readonly id: string };
  readonly groupId: string;
  readonly roles: readonly string[];
  readonly membershipEpoch: number;
  readonly sessionEpoch: number;
  readonly issuedAt: Millis;
  readonly expiresAt: Millis;
  readonly [member: string]: unknown;
}

/** What a membership token is bound to. */
export interface MembershipBindingInput {
  readonly principal?: string | { readonly id: string };
  readonly principalId?: string;
  readonly groupId: string;
  readonly roles: readonly string[];
  readonly membershipEpoch: number;
  readonly sessionEpoch: number;
  readonly now?: TimeInput;
}

/** Group membership tokens (reference `policy.MembershipTokenService`). */
export declare class MembershipTokenService implements NativeResource {
  /** @throws {@link PolicyError} (a short secret). */
  constructor(options?: PolicyServiceOptions);
  /** @throws {@link PolicyError} (`INVALID_COMMAND`/`invalid_argument`: a lifetime past the maximum, …). */
  issue(request: MembershipBindingInput & { readonly ttlMs: number; readonly tokenId?: string }): PolicyIssued<MembershipTokenClaims>;
  /** For an active Agent Membership document. */
  issueForMembership(membership: object, options: { readonly sessionEpoch: number; readonly ttlMs: number; readonly tokenId?: string; readonly now?: TimeInput }): PolicyIssued<MembershipTokenClaims>;
  /**
   * @throws {@link PolicyError}: `AUTH_INVALID_SIGNATURE` (`token_forged`, `token_expired`, `token_malformed`),
   * `MEMBERSHIP_REQUIRED` (`token_group_mismatch`, another principal), `AUTH_STALE_SESSION` (`token_session_stale`),
   * `MEMBERSHIP_STALE` (`token_membership_stale`, `token_roles_stale`).
   */
  verify(token: string, binding: MembershipBindingInput): MembershipTokenClaims;
  verifyMembership(token: string, membership: object, options: { readonly sessionEpoch: number; readonly now?: TimeInput }): MembershipTokenClaims;
  free(): void;
  [Symbol.dispose](): void;
}

/** The claims of a capability grant (§12). */
export interface CapabilityGrantClaims {
  readonly grantId: string;
  readonly workerId: string;
  readonly sessionEpoch: number;
  readonly workItemId: string;
  readonly ownershipEpoch: number;
  readonly executionLeaseId: string;
  readonly executionLeaseExpiresAt: Millis;
  readonly allowedTools: readonly string[];
  readonly allowedResources: readonly string[];
  readonly allowedOperations: readonly string[];
  /** snake_case dimensions (`tool_calls`, …), as signed. */
  readonly budget: Readonly<Record<Dimension, number>>;
  readonly issuedAt: Millis;
  readonly expiresAt: Millis;
  readonly [member: string]: unknown;
}

/** What a capability grant is bound to. */
export interface CapabilityBindingInput {
  readonly workerId: string;
  readonly sessionEpoch: number;
  readonly workItemId: string;
  readonly ownershipEpoch: number;
  readonly now?: TimeInput;
}

/** The scope a grant allows. */
export interface CapabilityScopeInput {
  readonly ttlMs: number;
  readonly allowedTools?: readonly string[];
  readonly allowedResources?: readonly string[];
  readonly allowedOperations?: readonly string[];
  readonly budget?: PolicyBudget;
  readonly approvalId?: string | null;
  readonly grantId?: string;
}

/** Capability grants bound to a worker session, ownership epoch and Execution Lease (reference `policy.AuthorizationService` and `ExecutionAuthorization`). */
export declare class AuthorizationService implements NativeResource {
  constructor(options?: PolicyServiceOptions);
  /** A grant never outlives the lease. @throws {@link PolicyError} (`APPROVAL_REQUIRED`: `direct_high_risk_refused`, `high_risk_operation`; `WORK_LEASE_EXPIRED`, …). */
  issue(request: CapabilityBindingInput & CapabilityScopeInput & { readonly executionLease: object; readonly highRisk?: boolean }): PolicyIssued<CapabilityGrantClaims>;
  /** @throws {@link PolicyError} (`AUTH_INVALID_SIGNATURE`, `AUTH_FORBIDDEN` `operation_not_granted`, `AUTH_STALE_SESSION`, `WORK_STALE_OWNERSHIP`, `WORK_LEASE_EXPIRED`, …). */
  verify(token: string, binding: CapabilityBindingInput & { readonly executionLease: object; readonly operation?: string | null }): CapabilityGrantClaims;
  /** Live checks over queried documents (session epoch, WorkItem, lease, Mission, remaining budgets). */
  authorizeExecution(request: CapabilityBindingInput & CapabilityScopeInput & {
    readonly currentSessionEpoch?: number | null;
    readonly workItem?: object | null;
    readonly executionLease?: object | null;
    readonly mission?: object | null;
    readonly remaining: readonly PolicyBudget[];
    readonly missionPermissions?: readonly string[] | null;
    /** The queried `execution_approval` document the request's `approvalId` names (§12). */
    readonly executionApproval?: object | null;
  }): PolicyIssued<CapabilityGrantClaims>;
  free(): void;
  [Symbol.dispose](): void;
}

/** A hard local budget (reference `policy.BudgetMeter`): a 0 (or absent) limit allows nothing in that dimension. */
export declare class BudgetMeter implements NativeResource {
  constructor(limit: PolicyBudget);
  /** The cumulative usage. @throws {@link PolicyError} (`BUDGET_EXCEEDED` with `dimension`; nothing is charged). */
  consume(delta: PolicyBudget): Readonly<Record<ResourceMember, number>>;
  readonly usage: Readonly<Record<ResourceMember, number>>;
  readonly limit: Readonly<Record<ResourceMember, number>>;
  free(): void;
  [Symbol.dispose](): void;
}

/** The §20 limits (reference `policy.CooperationLimits`), camelCase. */
export interface PolicyCooperationLimits {
  readonly maximumDelegationDepth: number;
  readonly maximumQueuedWorkItems: number;
  readonly maximumActiveWorkItems: number;
  readonly maximumUnresolvedClarifications: number;
  readonly maximumMessageRatePerMinute: number;
  readonly maximumProposalRatePerMinute: number;
  readonly maximumClarificationRatePerMinute: number;
  readonly maximumTrackedKeys: number;
}

/** The core's defaults with `overrides` applied. */
export declare function cooperationLimits(overrides?: Partial<PolicyCooperationLimits>): PolicyCooperationLimits;

export type ActionClass = 'automatic' | 'human_approval_required';

/** The core's high-risk table. */
export declare function classifyAction(operation: string): ActionClass;

/** Local delegation-depth, queue, clarification and rate limits (reference `policy.PolicyGuard`). */
export declare class PolicyGuard implements NativeResource {
  constructor(limits?: Partial<PolicyCooperationLimits>);
  readonly limits: PolicyCooperationLimits;
  /** @throws {@link PolicyError} (`RATE_LIMITED`, `threshold_reached`; likewise `checkQueue` and `checkUnresolvedClarifications`). */
  checkDelegationDepth(depth: number): void;
  checkQueue(queued: number, active: number): void;
  checkUnresolvedClarifications(unresolved: number): void;
  /** @throws {@link PolicyError} (`RATE_LIMITED`, retryable: `rate_limited` with `retryAfterMs`, `rate_tracker_full`). */
  checkMessageRate(principalId: string, groupId: string, now?: TimeInput): void;
  checkProposalRate(principalId: string, groupId: string, now?: TimeInput): void;
  checkClarificationRate(principalId: string, groupId: string, now?: TimeInput): void;
  trackedKeys(): number;
  static classifyAction(operation: string): ActionClass;
  free(): void;
  [Symbol.dispose](): void;
}

// ---- Agent-local SQLite store and durable replay (Node (napi) only) ----
/** Where an Event was processed. */
export interface EventPosition { readonly groupId: string; readonly sequence: number }
/**
 * The Agent-local store (reference `SQLiteAgentStore`): per-Group cursors, the inbox of processed
 * Event IDs with their positions, the outbox of unsent Actions, Group context, checkpoints and the
 * Scheduler snapshot, in one SQLite file (WAL, `synchronous=FULL`; every write one transaction).
 * `':memory:'` opens a private in-memory database. Node (napi) only: the WebAssembly build throws
 * {@link ArgumentError}. Refusals are {@link LocalStoreError}s.
 */
export declare class SqliteAgentStore {
  constructor(path: string);
  readonly path: string;
  /** Moves the cursor forward to `sequence` (an older one leaves it unchanged). */
  acknowledge(agentId: string, groupId: string, sequence: number): void;
  /** The durable cursor (0 before any Event). */
  cursor(agentId: string, groupId: string): number;
  /** True when newly remembered; an Event ID at another position is `event_position_collision`. */
  rememberEvent(agentId: string, eventId: string, groupId?: string, sequence?: number): boolean;
  hasEvent(agentId: string, eventId: string): boolean;
  eventPosition(agentId: string, eventId: string): EventPosition | null;
  /** True when newly buffered; the same ID with other content is `action_collision`. */
  enqueueAction(agentId: string, actionId: string, payload: unknown): boolean;
  /** The unsent payloads, in enqueue order. */
  pendingActions(agentId: string): unknown[];
  markActionSent(agentId: string, actionId: string): boolean;
  /** An older revision (or the same one with other values) is `stale_revision`. */
  saveGroupContext(agentId: string, groupId: string, revision: number, values: unknown): void;
  groupContext(agentId: string, groupId: string): { revision: number; values: unknown } | null;
  /** Checkpoints are immutable: the same ID with other content is `checkpoint_collision`. */
  saveCheckpoint(agentId: string, groupId: string, workId: string, checkpointId: string, content: unknown): void;
  loadCheckpoint(agentId: string, groupId: string, workId: string, checkpointId: string): unknown;
  deleteCheckpoint(agentId: string, groupId: string, workId: string, checkpointId: string): boolean;
  saveScheduler(agentId: string, snapshot: SchedulerSnapshot | object | string): void;
  loadScheduler(agentId: string): SchedulerSnapshot | null;
  /** Closes the database (idempotent; an {@link AgentReplay} not yet freed keeps it open until it is); later calls throw. */
  close(): void;
}
/** The Event members a replay reads (an {@link Event} of `Core.replay`, or a plain object). */
export interface ReplayEventInput { readonly eventId: string; readonly groupId?: string | null; readonly sequence?: number | null }
/** What one Event means for this Worker: the WorkOffers to admit. */
export interface EventProjection { readonly workOffers?: readonly WorkOfferInput[] }
/**
 * A verified Group snapshot a source answers when `after` is older than its online log (§16
 * `CURSOR_TOO_OLD`): its Artifact hash, the last sequence it covers and its projection for this
 * Worker (the offers live at `throughSequence`). The replay restores it in one commit and asks
 * again after `throughSequence`; one not after the cursor is a {@link ReplaySequenceError}.
 */
export interface ReplaySnapshot { readonly artifactHash: string; readonly throughSequence: number; readonly projection?: EventProjection }
/** Resolves to the Events of `groupId` after `after` (duplicates allowed, in sequence order), or to a {@link ReplaySnapshot}. */
export type ReplaySource<E extends ReplayEventInput = ReplayEventInput> = (groupId: string, options: { after: number }) => Promise<Iterable<E> | ReplaySnapshot> | Iterable<E> | ReplaySnapshot;
/** Resolves to the Event's projection, or null. */
export type EventProjector<E extends ReplayEventInput = ReplayEventInput> = (event: E) => Promise<EventProjection | null> | EventProjection | null;
export interface AgentReplayOptions {
  /** The Worker's Scheduler, shared: replay admits into it (not with `schedulerPolicy`). */
  scheduler?: Scheduler;
  /** Without `scheduler`: the policy of the Scheduler rebuilt from the store's snapshot or created (the default policy when absent). */
  schedulerPolicy?: SchedulerPolicyInput;
  /** Milliseconds since the epoch (default `Date.now`). */
  clock?: () => number;
}
/** What reconciling one Group committed. */
export declare class GroupReplayResult {
  readonly groupId: string;
  readonly startCursor: number;
  readonly endCursor: number;
  readonly appliedEvents: number;
  readonly duplicateEvents: number;
  readonly admissions: readonly AdmissionDecision[];
}
/**
 * Durable Agent-side replay (§16, reference `AgentReplay`): each Group's Events after the durable
 * cursor are checked (right Group, `sequence == cursor + 1`, an Event ID never moves; duplicates
 * skipped), projected, admitted to the Worker's Scheduler, and committed in batches — inbox rows,
 * cursor and Scheduler snapshot in one transaction. When an Event fails, the Events before it stay
 * committed. The Scheduler is the one given in the options (shared, never copied), else rebuilt
 * from the store's snapshot (or created) at construction.
 * Node (napi) only.
 * @throws {@link ReplayGroupError}, {@link ReplaySequenceError}, {@link ReplayProjectionError}, {@link LocalStoreError}.
 */
export declare class AgentReplay<E extends ReplayEventInput = ReplayEventInput> {
  constructor(agentId: string, store: SqliteAgentStore, replaySource: ReplaySource<E>, projector: EventProjector<E>, options?: AgentReplayOptions);
  readonly agentId: string;
  /** The Worker's Scheduler (the options' own, or the one built at construction). */
  readonly scheduler: Scheduler;
  /** Reconciles each Group (a repeated ID once, in order). */
  reconcile(groups: string | Iterable<string>): Promise<Record<string, GroupReplayResult>>;
  /** Drops the native state now: this replay's hold on the store's database (idempotent); the Scheduler stays the caller's. */
  free(): void;
}

// ---- The Agent runtime (§6.3, §11.3, §12; Node (napi) only) ----
/** One Agent Session (reference `SessionDescriptor`). */
export declare class SessionDescriptor {
  readonly agentId: string;
  readonly sessionId: string;
  readonly sessionEpoch: number;
}
/** What one dispatched run may read: its own Group's context and credentials (deep-frozen), nothing of any other Group. */
export declare class ExecutionContext {
  readonly agentId: string;
  readonly sessionId: string;
  readonly sessionEpoch: number;
  readonly workId: string;
  readonly groupId: string;
  readonly contextRevision: number | null;
  readonly values: Readonly<Record<string, unknown>>;
  readonly credentialRevision: number | null;
  readonly credentials: Readonly<Record<string, unknown>>;
}
/** A dispatched run: a {@link Dispatch}, or its `workId`, `groupId` and `generation` (or `runId` = `workId:generation`). */
export type DispatchInput = Dispatch | { readonly workId: string; readonly groupId: string; readonly generation?: number; readonly runId?: string };
/**
 * The active session of an {@link AgentRuntime}; `close()` (or `using`) ends it. Every method of a
 * closed or replaced session throws {@link ClosedSessionError}.
 */
export declare class AgentRuntimeSession {
  readonly descriptor: SessionDescriptor;
  readonly scheduler: Scheduler;
  /** @throws {@link StaleContextError} for a revision not above the installed one. */
  installGroupContext(groupId: string, values: Record<string, unknown>, options: { revision: number }): void;
  /** §12: never offered to another Group's work. @throws {@link StaleContextError}. */
  installGroupCredentials(groupId: string, credentials: Record<string, unknown>, options: { revision: number }): void;
  /**
   * The context of `dispatch`: only the Group the Scheduler admitted that WorkItem under. A
   * dispatch the Scheduler does not have running (relabelled Group, other generation, finished)
   * is {@link AgentError} (`not_dispatched`).
   */
  prepare(dispatch: DispatchInput): ExecutionContext;
  /** Closes the session (idempotent); its contexts and credentials are dropped. */
  close(): void;
  [Symbol.dispose](): void;
}
/**
 * One Agent's runtime (reference `AgentRuntime`): the caller's Scheduler (shared) and at most one
 * active session; Session Epochs strictly increase. Node (napi) only: the WebAssembly build throws
 * {@link ArgumentError}.
 */
export declare class AgentRuntime implements NativeResource {
  constructor(agentId: string, scheduler: Scheduler);
  readonly agentId: string;
  readonly scheduler: Scheduler;
  readonly activeSession: SessionDescriptor | null;
  /**
   * Starts session `sessionEpoch`; `sessionId` defaults to `<agentId>#session-<epoch>`.
   * @throws {@link ActiveSessionError}, {@link StaleSessionEpochError}, {@link AgentError} (`invalid_argument`).
   */
  startSession(sessionEpoch: number, options?: { sessionId?: string }): AgentRuntimeSession;
  /** Releases the native memory now (see {@link NativeResource}). */
  free(): void;
  [Symbol.dispose](): void;
}

// ---- Bounded offline execution (§11.5; Node (napi) only) ----
/** The critical extension every buffered Command carries. */
export declare const OFFLINE_EXECUTION_EXTENSION: string;
export declare const OFFLINE_EXECUTION_EXTENSION_VERSION: string;
/** The only Command kinds buffered while disconnected (`message.post`, `work.checkpoint`). */
export declare const OFFLINE_REVERSIBLE_KINDS: readonly string[];
/** A wire Command: its object, its JSON text, or a {@link SignedDocument}. */
export type OfflineCommandInput = Record<string, unknown> | string | SignedDocument;
/** The Agent and its signing key. */
export interface OfflineIdentity { readonly agentId: string; readonly signingKey: SigningKey }
/** The outbox the policy enqueues into (a {@link SqliteAgentStore} or an {@link InMemoryOutbox}). */
export interface OfflineOutboxLike {
  enqueueAction(agentId: string, actionId: string, payload: unknown): unknown;
  pendingActions(agentId: string): unknown[];
  markActionSent(agentId: string, actionId: string): unknown;
}
/** A `{type, id}` Principal of the wire. */
export interface ContextPrincipal { readonly type: 'agent' | 'human' | 'service'; readonly id: string }
/** An Event as `Core.replay` gives it, or its wire document. */
export type ContextSourceEvent = Event | { readonly eventId: string; readonly groupId: string; readonly sequence: number };
/** A decision of a Context Package and the Events it was decided in. */
export interface ContextDecision { readonly description: string; readonly sourceEventIds: readonly string[] }
/** A signed Context Package (`context-package.schema.json`), deep-frozen. */
export type ContextPackage = Readonly<Record<string, unknown>> & { readonly contextPackageId: string; readonly version: number; readonly groupId: string; readonly missionId: string };
/** A signed knowledge publication, deep-frozen. */
export type KnowledgePublication = Readonly<Record<string, unknown>> & { readonly publicationId: string; readonly provenanceEventIds: readonly string[]; readonly classification: Classification };
/** A signed Group Snapshot (`group-snapshot.schema.json`), deep-frozen. */
export type GroupSnapshot = Readonly<Record<string, unknown>> & { readonly snapshotId: string; readonly groupId: string; readonly throughSequence: number };
/** The reference's classifications, least to most restricted. */
export type Classification = 'public' | 'internal' | 'confidential' | 'restricted';

/**
 * Context Packages of one generating Agent (§13.3; the reference's `ContextPackageService`).
 * Every rule is the core's: one contiguous ascending range of one Group's Events, decisions
 * citing that range, the version chain; refusals are {@link ContextPackageError} or the codec's
 * {@link SigningError}/{@link VerificationError}.
 */
export declare class ContextPackageService {
  constructor(options: { agentId: string; signingKey: SigningKey });
  readonly agentId: string;
  publish(options: {
    missionId: string; groupId: string; version: number; events: Iterable<ContextSourceEvent>; summary: string;
    artifactHashes?: readonly string[]; decisions?: readonly ContextDecision[]; constraints?: readonly string[];
    unresolvedQuestions?: readonly string[]; workItemId?: string | null; previousContextPackageId?: string | null;
    generatedAt?: Date | number; contextPackageId?: string;
  }): ContextPackage;
  /** Against this service's key, or the Organization's Registry evidence (`registry`). */
  verify(contextPackage: ContextPackage, options?: { registry?: Uint8Array | string }): void;
  /** Verifies, then installs into the package's Group of `session` only (revision = version). */
  install(contextPackage: ContextPackage, session: AgentRuntimeSession, options: { expectedMissionId: string }): void;
}

/** Classified knowledge publications from Context Packages (the reference's `KnowledgePublisher`). */
export declare class KnowledgePublisher {
  constructor(options: { publisher: ContextPrincipal; signingKey: SigningKey });
  publish(options: {
    context: ContextPackage; artifactHash: string; targetScope: string; classification: Classification;
    summary: string; publishedAt?: Date | number; publicationId?: string;
  }): KnowledgePublication;
  /** The signature under the publisher's key and, given `context`, its provenance. */
  verify(publication: KnowledgePublication, options?: { context?: ContextPackage | null }): void;
}

/** The archival service's Group Snapshots, Events `1..n` in order (the reference's `SnapshotArchive`). */
export declare class SnapshotArchive {
  constructor(options: { authority: ContextPrincipal; signingKey: SigningKey });
  archive(options: {
    groupId: string; events: Iterable<ContextSourceEvent>; state?: unknown;
    policyLog: readonly Record<string, unknown>[]; createdAt?: Date | number; snapshotId?: string;
  }): GroupSnapshot;
  /** @throws {@link ArgumentError} for an unknown ID. */
  get(snapshotId: string): GroupSnapshot;
  verify(snapshot: GroupSnapshot): void;
}

/** The offline bounds. @throws {@link OfflinePolicyError} unless `maxDisconnectGraceMs` > 0 and `maxActions` ≥ 1. */
export declare class OfflineLimits {
  constructor(limits: { maxDisconnectGraceMs: number; maxActions: number; maxUsage?: ResourceInput | ResourceUsage });
  readonly maxDisconnectGraceMs: number;
  readonly maxActions: number;
  readonly maxUsage: ResourceUsage;
}
/** The offline extension's data; the core checks the members, the ordered window and that no external actions are recorded. */
export declare class OfflineProgressBinding {
  constructor(fields: {
    agentId: string; groupId: string; workItemId: string; sessionEpoch: number; ownershipEpoch: number;
    executionLeaseId: string; disconnectedAt: string | Date; bufferedAt: string | Date; graceDeadline: string | Date;
    executionLeaseExpiresAt: string | Date; resourceUsageDelta?: ResourceInput | ResourceUsage;
  });
  readonly agentId: string;
  readonly groupId: string;
  readonly workItemId: string;
  readonly sessionEpoch: number;
  readonly ownershipEpoch: number;
  readonly executionLeaseId: string;
  readonly disconnectedAt: string;
  readonly bufferedAt: string;
  readonly graceDeadline: string;
  readonly executionLeaseExpiresAt: string;
  readonly resourceUsageDelta: ResourceUsage;
  /** The extension's `data` (camelCase, §2 timestamps). */
  toWire(): Record<string, unknown>;
  toJSON(): Record<string, unknown>;
  /** The binding a Command carries, or null. @throws {@link OfflinePolicyError} (`invalid_binding`). */
  static fromCommand(command: OfflineCommandInput): OfflineProgressBinding | null;
}
/** The core's in-memory outbox. */
export declare class InMemoryOutbox implements NativeResource, OfflineOutboxLike {
  constructor();
  /** The same content again changes nothing; other content is {@link OfflinePolicyError} (`action_id_collision`). */
  enqueueAction(agentId: string, actionId: string, payload: unknown): void;
  pendingActions(agentId: string): unknown[];
  markActionSent(agentId: string, actionId: string): void;
  free(): void;
  [Symbol.dispose](): void;
}
/** The WorkItem the Worker was executing (read by key, as the reference reads its WorkItem). */
export interface OfflineWorkItem {
  readonly id?: string; readonly workItemId?: string; readonly groupId: string; readonly conversationId?: string | null;
  readonly status?: string; readonly assigneeId?: string; readonly ownershipEpoch: number; readonly executionLeaseId?: string | null;
  readonly executionLeaseExpiresAt?: TimeInput | null; readonly sessionEpoch?: number | null;
}
/**
 * Bounded, reversible, signed buffering for one active, owned, leased WorkItem (reference
 * `OfflineExecutionPolicy`): until `graceDeadline`, within {@link OfflineLimits}, only reversible
 * kinds, each Command bound by the critical extension, re-signed and enqueued. Refusals are
 * {@link OfflinePolicyError}s with the core's code and reason; an exception of the store is rethrown unchanged.
 */
export declare class OfflineExecutionPolicy implements NativeResource {
  constructor(store: OfflineOutboxLike, identity: OfflineIdentity, workItem: OfflineWorkItem,
    options: { disconnectedAt: TimeInput; limits: OfflineLimits; clock?: () => number | Date; sessionEpoch?: number });
  readonly limits: OfflineLimits;
  readonly graceDeadline: Date;
  readonly bufferedActions: readonly Readonly<Record<string, unknown>>[];
  readonly cumulativeUsage: ResourceUsage;
  /** The signed, bound wire Command (deep-frozen); the same Command again returns the same one. */
  buffer(command: OfflineCommandInput, options?: { usage?: ResourceInput | ResourceUsage | null; now?: TimeInput }): Readonly<Record<string, unknown>>;
  free(): void;
  [Symbol.dispose](): void;
}
export interface OfflineRebaseOptions { sessionEpoch: number; membershipEpoch: number; issuedAt?: TimeInput; executionLeaseId?: string | null }
/** The buffered Command rebased onto the current session and re-signed, as a wire Command (the binding kept unchanged). */
export declare function offlineCommandToWire(command: OfflineCommandInput, identity: OfflineIdentity, options: OfflineRebaseOptions & { keyId?: string }): Record<string, unknown>;
/** {@link offlineCommandToWire}, deep-frozen (this package has no Command model). */
export declare function rebaseOfflineCommand(command: OfflineCommandInput, identity: OfflineIdentity, options: OfflineRebaseOptions): Readonly<Record<string, unknown>>;

// ---- The signed human control interface (reference `control.py`, §1.6) -------------------
// The Commands are built by the core (`missionweaveprotocol_engine::control`) on both
// backends; its refusals (nothing submitted, a missing budget, a bad argument) are
// {@link ArgumentError}s with the core's `reason` (`nothing_submitted`, `budget_required`, …).

type JsonDocument = Readonly<Record<string, unknown>>;

/** A human's signing identity (reference `HumanIdentity`): base64url seed and public key; the private key is not enumerable. */
export declare class HumanIdentity {
  constructor(humanId: string, privateKey: string, publicKey: string, keyId: string);
  /** A fresh key; `keyId` defaults to the core's (`<humanId>:signing-key`, as the reference). */
  static generate(humanId: string, options?: { keyId?: string }): HumanIdentity;
  readonly humanId: string;
  readonly privateKey: string;
  readonly publicKey: string;
  readonly keyId: string;
  readonly principal: Principal;
  /** The SigningKey: bind its public key to the human in the Registry. */
  readonly signingKey: SigningKey;
  /** The Command (object or JSON text) signed with this key (§6.4, Command profile). */
  sign(command: Record<string, unknown> | string): SignedDocument;
  /** Whether the Command carries a valid signature by this key (no Registry: the Core checks that). */
  verify(command: SignedDocument | Record<string, unknown> | string): boolean;
  toJSON(): { humanId: string; publicKey: string; keyId: string };
}

/** A performed control operation: the signed Command and its first Event. */
export declare class ControlReceipt {
  readonly command: SignedDocument;
  readonly event: Event;
}

/** What the MissionOwner sees of a Mission. */
export interface MissionInspection {
  readonly mission: JsonDocument;
  readonly group: JsonDocument;
  readonly workItems: readonly JsonDocument[];
  readonly events: readonly Event[];
}

export interface HumanControlCreate {
  missionId: string; groupId: string; coordinatorId: string; title: string; objective: string;
  /** Plain texts become acceptance criteria needing `human_review`; objects are acceptance criteria. */
  definitionOfDone: readonly (string | Record<string, unknown>)[];
  deadline: string | Date;
  /** A `common.schema.json#/$defs/budget` object: required (§12). */
  budget?: Record<string, unknown> | null;
  permissions?: readonly string[];
  coordinatorLeaseSeconds?: number;
  mainConversationId?: string | null;
  approvalPolicy?: Record<string, unknown> | null;
  coordinatorLeaseId?: string | null;
}

/**
 * The MissionOwner's operations on a {@link Core} (reference `HumanControl`): each a Command
 * built by the core, signed by `identity` and performed. Action IDs default to
 * `human-action:<uuid4>`.
 */
export declare class HumanControl {
  constructor(core: Core, identity: HumanIdentity, options?: { clock?: () => number | Date; actionIdFactory?: () => string });
  readonly core: Core;
  readonly identity: HumanIdentity;
  create(options: HumanControlCreate): Promise<ControlReceipt>;
  inspect(missionId: string): Promise<MissionInspection>;
  /** `message.post` (the Group's main Conversation unless `conversationId`); content is kept exactly. */
  direct(missionId: string, content: string | readonly Record<string, unknown>[],
    options?: { conversationId?: string; messageId?: string; mentions?: readonly Principal[] }): Promise<ControlReceipt>;
  /** @throws {@link ArgumentError} `nothing_submitted` when the Mission awaits no approval. */
  requestChanges(missionId: string, feedback: string, options?: { missionRevision?: number }): Promise<ControlReceipt>;
  /** Resolves to the receipt and the signed Approval Decision. @throws {@link ArgumentError} `nothing_submitted`. */
  approve(missionId: string, options?: { approvalId?: string; missionRevision?: number; artifactHashes?: readonly string[];
    acceptancePolicyVersion?: string; comments?: string }): Promise<[ControlReceipt, JsonDocument]>;
  /** Resolves to the receipt and the Execution Approval the Core stored (§12). */
  approveExecution(missionId: string, options: { workItemId: string; ownershipEpoch: number; operations: readonly string[];
    resources?: readonly string[]; budget?: Record<string, unknown>; expiresInSeconds?: number; approvalId?: string;
    comments?: string }): Promise<[ControlReceipt, JsonDocument]>;
  cancel(missionId: string, reason: string): Promise<ControlReceipt>;
  replaceCoordinator(missionId: string, coordinatorId: string,
    options?: { leaseSeconds?: number; agentCardVersion?: number; leaseId?: string }): Promise<ControlReceipt>;
  /** The Command this object performed for `eventId`; rejects with {@link NotFound} otherwise. */
  acceptedCommand(eventId: string): Promise<SignedDocument>;
}

/**
 * `{mission, membership}` of `humanId` from a Group's Event documents alone, in sequence order
 * (core `control::view`): the projections {@link controlCommand} reads, for a human who holds
 * only the signed log (the approval page, subscribed over the WebSocket). `mission` is `null`
 * before the Mission's creation, `membership` (`{membershipEpoch, state}`) when the human has none.
 * @throws {@link ArgumentError} `invalid_argument` for a log out of order or with a gap.
 */
export declare function controlView(humanId: string, events: readonly JsonDocument[]): {
  readonly mission: JsonDocument | null;
  readonly membership: { readonly membershipEpoch: number; readonly state: string } | null;
};
/**
 * The unsigned wire Command of a control request (core `control::build`): `{operation, humanId,
 * actionId, issuedAt, mission?, group?, membership?, events?, coordinatorCard?, args}`; sign it
 * with {@link HumanIdentity.sign} or {@link signDocument}.
 * @throws {@link ArgumentError} the core's refusal (`nothing_submitted`, `budget_required`, …).
 */
export declare function controlCommand(request: JsonDocument): Record<string, unknown>;

// ---- the network: gateway host and Agent client (§6.3, §15, §16, §17, §19) -------------------
// Node (napi) only: both move bytes between a `ws` WebSocket and the Rust sans-IO machines
// (`missionweaveprotocol-gateway`), which make every frame decision. On the WebAssembly entries
// the constructors throw an {@link ArgumentError}.

/** The gateway limits a host may set (the rest keep the gateway's defaults; the gateway checks them). */
export interface GatewayLimits {
  readonly maxFrameBytes?: number;
  readonly handshakeTimeoutMs?: number;
  readonly maxHelloAttempts?: number;
  readonly maxConnectionsPerAgent?: number;
  readonly maxGroupsPerSubscribe?: number;
  readonly maxSubscriptions?: number;
  readonly maxQueueFrames?: number;
  readonly groupShareFrames?: number;
  readonly pollIntervalMs?: number;
}

export interface GroupGatewayOptions {
  readonly limits?: GatewayLimits;
  /** The gateway's clock (default `Date.now`). */
  readonly clock?: () => number | Date;
  /** The WebSocket route (default `/ws`). */
  readonly path?: string;
  /** Each connection's timer (default 1000 ms): handshake timeout, head polls, resumes. */
  readonly tickMs?: number;
  /** The liveness `PING` interval (default 20 000 ms). */
  readonly pingMs?: number;
  /**
   * The gateway's durable delivery Cursors, as the reference's `GroupGateway(cursors=…)`: every
   * `ACK` that moves an Agent's Cursor forward is written (`acknowledge`; duplicates and older
   * ones never), and `SUBSCRIBE` replays after `max(afterSequence, cursor(agentId, groupId))`. A
   * store that throws is answered with a retryable `INTERNAL_ERROR`. Absent: replay after
   * `afterSequence` (the Rust server's rule).
   */
  readonly cursors?: CursorStore;
}

/** The minimal server `attach` needs: an `http.Server` or `https.Server`. */
export interface UpgradeServer {
  on(event: 'upgrade', listener: (request: any, socket: any, head: any) => void): unknown;
  off(event: 'upgrade', listener: (request: any, socket: any, head: any) => void): unknown;
  listenerCount(event: 'upgrade'): number;
}

/**
 * The WebSocket gateway (reference `gateway.GroupGateway`) over one {@link Core}: `attach` it to
 * an `http`/`https` server; it serves `/ws`. Errors answer the frame they refuse and keep the
 * connection open except where §17.1 makes them fatal; the Session Epoch is opened through the
 * Core; fan-out wakes every subscriber of a Group whose head a Command moved.
 */
export declare class GroupGateway {
  /** @throws {@link ArgumentError} for bad options or limits, or outside Node. */
  constructor(core: Core, sessions: SessionAuthority, options?: GroupGatewayOptions);
  readonly core: Core;
  readonly sessions: SessionAuthority;
  readonly path: string;
  /** The `cursors` option (absent: none). */
  readonly cursors: CursorStore | undefined;
  /** Over a PostgreSQL store: `LISTEN`/`NOTIFY` with the other processes on the database (Rust threads); otherwise null. */
  readonly fanout: { active(): boolean; listening(): boolean } | null;
  /** Open WebSocket connections (authenticated or not). */
  readonly connectionCount: number;
  /** Authenticated connections of `agentId`. */
  agentConnections(agentId: string): number;
  /** Serves WebSocket upgrades of `path` on `server`; returns this gateway. */
  attach(server: UpgradeServer): this;
  /** Serves one `upgrade` of `path` (true) or leaves it alone (false), for hosts that route upgrades themselves. */
  handleUpgrade(request: any, socket: any, head: any): boolean;
  /** `error` events: a machine call failed (a bug); the connection was dropped. */
  addEventListener(type: 'error', listener: (event: Event & { error: unknown }) => void): void;
  removeEventListener(type: 'error', listener: (event: Event & { error: unknown }) => void): void;
  /** Detaches from the servers and closes every connection with 1001. */
  close(): Promise<void>;
}

/** A gateway `ERROR` frame's `error` object (§19): `code`, `message`, `retryable`, and the protocol-safe members (`relatedFrameId`, `groupId`, `retryAfterMs`, …). */
export interface GatewayErrorObject {
  readonly code: WireCode;
  readonly message: string;
  readonly retryable: boolean;
  readonly fatal?: boolean;
  readonly relatedFrameId?: string;
  readonly relatedActionId?: string;
  readonly groupId?: string;
  readonly retryAfterMs?: number;
  readonly [member: string]: unknown;
}

/** A live attention filter (§17.2): it changes live delivery only, never replay. */
export interface AttentionFilter {
  readonly eventKinds?: readonly string[];
  readonly conversationIds?: readonly string[];
  readonly workItemIds?: readonly string[];
  readonly mentionsOnly?: boolean;
  readonly announcements?: boolean;
}

/**
 * Where an {@link AgentClient} keeps its durable Cursors: a {@link SqliteAgentStore}, an
 * {@link IndexedDbCursorStore} (browsers), or the same two calls (the client awaits them).
 */
export interface CursorStore {
  cursor(agentId: string, groupId: string): number | Promise<number>;
  acknowledge(agentId: string, groupId: string, sequence: number): void | Promise<void>;
}

/**
 * A browser's durable Cursors in IndexedDB (this origin's database `name`), keyed by Agent and
 * Group: monotonic like a {@link SqliteAgentStore}'s (an older sequence leaves a Cursor unchanged).
 */
export declare class IndexedDbCursorStore implements CursorStore {
  /** @throws {@link ArgumentError} without IndexedDB (outside a browser or worker). */
  static open(name?: string): Promise<IndexedDbCursorStore>;
  readonly name: string;
  /** The acknowledged sequence (0 when none). */
  cursor(agentId: string, groupId: string): Promise<number>;
  /** Moves the Cursor forward to `sequence` once the transaction commits. @throws {@link LocalStoreError} */
  acknowledge(agentId: string, groupId: string, sequence: number): Promise<void>;
  close(): void;
}

export interface AgentClientOptions {
  readonly agentId: string;
  /** Signs the HELLO challenge (its key ID is the `keyId` of `client_init`). */
  readonly signingKey: SigningKey;
  /** The Organization Registry every Event is verified against. */
  readonly registry: RegistryInput;
  /** The Group Authority service whose key must sign every Event. */
  readonly authorityId: string;
  readonly store?: CursorStore | null;
  /** PEM text or bytes trusted for `wss://` instead of Node's roots (e.g. a `--dev` server's certificate); Node only. */
  readonly ca?: string | Bytes;
  readonly clock?: () => number | Date;
  /** Reconnect after a dropped connection (default true), with exponential backoff. */
  readonly reconnect?: boolean;
  readonly initialBackoffMs?: number;
  readonly maxBackoffMs?: number;
  readonly commandTimeoutMs?: number;
}

/** A verified Event as delivered: `inOrder` Events (the next of their Group) move Cursors (§16). */
export declare class DeliveredEvent {
  readonly groupId: string | null;
  readonly sequence: number;
  readonly eventId: string;
  /** The signed Event's exact RFC 8785 text. */
  readonly text: string;
  readonly inOrder: boolean;
  /** The exact bytes (a fresh copy). */
  readonly bytes: Uint8Array;
  readonly document: JsonDocument;
  readonly kind: string;
}

/** A call the Rust client session refuses (`kind`: `not_authenticated`, `ack_beyond_cursor`, `unknown_group`, `not_a_command`, `too_many_pending_commands`, `protocol`, `frame`, `not_in_order`). */
export declare class ClientSessionError extends MwpError {
  constructor(message: string, kind: string);
  readonly kind: string;
}

/** The gateway refused a Command (nothing applied): `code` the §19 wire code, `error` the wire `error` object. */
export declare class CommandRefused extends MwpError {
  constructor(error: GatewayErrorObject);
  readonly error: Readonly<Record<string, unknown>>;
}

/** No outcome within the command timeout (resending the same bytes is safe, §15.1). */
export declare class CommandTimedOut extends MwpError {
  constructor(actionId: string);
  readonly actionId: string;
}

/** The connection dropped while a Command awaited its outcome: re-sign it with the new Session Epoch and resend. */
export declare class ConnectionLost extends MwpError {
  constructor(message: string, cause?: unknown);
}

/**
 * An Agent's connection to a gateway (camelCase twin of the Python `client.AgentClient`):
 * authenticates, subscribes from durable Cursors, sends Commands, hands verified Events per
 * Group in Group order, acknowledges, reconnects with backoff from the Cursors.
 */
export declare class AgentClient {
  /**
   * In Node the socket is the `ws` package's; in a browser (the WebAssembly entry) the page's
   * `WebSocket`, with the same Rust session compiled to wasm verifying every Event.
   * @throws {@link ArgumentError} for a bad URL or option, or without a WebSocket.
   */
  constructor(url: string, options: AgentClientOptions);
  readonly url: string;
  readonly agentId: string;
  /** Connections opened so far. */
  readonly connections: number;
  /** `ERROR` frames not tied to a Command (a Group refused at subscription, `BACKPRESSURE`, …). */
  readonly errors: readonly (GatewayErrorObject)[];
  /** Events the Rust session refused (verification failed, not signed by the Group Authority, …), the latest 1024. */
  readonly rejected: readonly { readonly eventId: string | null; readonly reason: string }[];
  /** The current Session Epoch, or null while not authenticated. */
  readonly sessionEpoch: number | null;
  /** Connects and authenticates: the Session Epoch. Rejects with {@link AuthenticationError} (wire code) for a refused HELLO. */
  connect(): Promise<number>;
  /** The current (or next) connection's Session Epoch. */
  authenticated(): Promise<number>;
  /** Subscribes Groups (IDs, or `{groupId: filter | null}`) from their durable Cursors; kept across reconnects. */
  subscribe(groups: readonly string[] | Readonly<Record<string, AttentionFilter | null>>): Promise<void>;
  /** The Command's first Event; rejects with {@link CommandRefused}, {@link CommandTimedOut} or {@link ConnectionLost}. */
  send(command: Bytes | SignedDocument): Promise<DeliveredEvent>;
  /** Stores the Cursor, then `ACK`s. @throws {@link ClientSessionError} for an Event not in Group order. */
  acknowledge(event: DeliveredEvent): Promise<void>;
  /** A subscribed Group's verified Events in Group order, across reconnects. */
  events(groupId: string): AsyncIterableIterator<DeliveredEvent>;
  nextEvent(groupId: string): Promise<DeliveredEvent>;
  /** The Group's position as handed on by this client. */
  cursor(groupId: string): number;
  /** Closes the socket only; the client reconnects from its Cursors. */
  drop(): Promise<void>;
  /** Closes and stops reconnecting. */
  close(): Promise<void>;
}
