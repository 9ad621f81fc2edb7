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
/** The protocol commit of the embedded, pinned bundle. */
export declare const sourceCommit: string;

export declare class MwpError extends Error {
  /** A §19 wire code, or `INVALID_ARGUMENT` for API misuse. */
  readonly code: WireCode | 'INVALID_ARGUMENT';
  /** The semantic stage (protected diagnostic), or null. */
  readonly stage: Stage | 'admission' | null;
  /** The protected diagnostic detail; never send it to a peer. */
  readonly detail: string;
}
export declare class ArgumentError extends MwpError { readonly code: 'INVALID_ARGUMENT'; }
export declare class ParseError extends MwpError { readonly stage: 'parse'; readonly offset: number; }
export declare class CanonicalizationError extends MwpError { readonly stage: 'canonicalization'; }
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

export declare class Registry {
  /** Validates a Registry snapshot; throws RegistryError if it is not usable evidence. */
  constructor(snapshot: Bytes);
  readonly organizationId: string;
  readonly digest: string;
  readonly size: number;
  binding(keyId: string): null | {
    readonly keyId: string; readonly principal: Principal; readonly publicKey: string;
    readonly validFrom: string; readonly validUntil: string | null; readonly revokedAt: string | null;
  };
}
/** A Registry object, or snapshot bytes (then a bad snapshot fails verification at stage 4). */
export type RegistryInput = Registry | Bytes;

export declare class InMemoryAdmissionLog {
  constructor(service: Principal);
  readonly service: Principal;
  readonly size: number;
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

/** RFC 8785 text of strictly parsed JSON. */
export declare function canonicalize(json: Bytes): string;
export declare function canonicalBytes(json: Bytes): Uint8Array;
/** `sha256:` + hex of the RFC 8785 bytes. */
export declare function canonicalHash(json: Bytes): string;
/** Strict parse check (§6.4 stage 1); returns the top-level JSON type or throws ParseError. */
export declare function checkStrictJson(json: Bytes): 'null' | 'boolean' | 'number' | 'string' | 'array' | 'object';
/** Validates against a schema by name (`command`, `command.schema.json` or its `$id`). */
export declare function validateSchema(name: string, json: Bytes): void;
export declare function schemaNames(): string[];
/** The kinds whose schema the document satisfies (for auto-detection). */
export declare function detectKinds(document: Bytes): DocumentKind[];
export declare function signDocument(
  kind: DocumentKind, unsigned: Bytes,
  key: { keyId: string; seed: Bytes; registry?: RegistryInput },
): SignedDocument;
export declare function verifySignedDocument(kind: DocumentKind, document: Bytes, registry: RegistryInput): VerifiedDocument;
export declare function verifySignedDocuments(
  items: readonly { kind: DocumentKind; document: Bytes }[], registry: RegistryInput, options?: { threads?: number },
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
