"""Projection ↔ normative document (the reference's ``documents.py``, fixed per its gaps §7.2
and §7.22).

Our :class:`~missionweaveprotocol.core.Core` already answers queries with normative schema
documents, so this adapter does not translate compact projections. It takes a projection in
the schema's shape — a query answer (:class:`~missionweaveprotocol.models.QueryResult`), a
plain mapping, or one of our pydantic models — and returns the normative document:

- validated against the pinned schema (identifiers, timestamps and URIs are checked by the
  schema's own ``id``/``timestamp``/``uri`` definitions with the protocol format checkers);
- for the signature-required kinds (the Rust core's ``signed_document_kind`` vocabulary: Agent
  Card, Artifact, Evidence, Approval among this adapter's kinds) SIGNED with the one normative
  scheme, :class:`SignedDocumentCodec` (§6.4), by the signer the profile expects: the Agent
  Card by ``registry_signer``, an Artifact by its producer Agent, Evidence by ``generatedBy``,
  an Approval by ``approver``.

Nothing is invented: a required member the projection lacks is a :class:`DocumentMappingError`
naming it (no ``currency: "USD"``, no ``policyVersion "1.0.0"``, no risk derived from tools; a
Work Contract keeps its own ``sideEffectRisk`` and ``executionApproval``). The only values the
adapter supplies are the explicit deployment metadata of :class:`ProtocolDocumentConfig`
(``organizationId``, ``endpoints``, ``maxConcurrency`` of an Agent Card) and of the context
arguments (an :class:`ArtifactLocation`, an Evidence's ``generated_by``/``created_at``); a
projection that already carries such a member must agree with them.

The inverse, :meth:`ProtocolDocumentAdapter.projection`, verifies a signed document (six
stages, with a Registry) or schema-validates an unsigned one, and returns the plain projection
(without the top-level ``signature``).

Schema validation, signing and verification all run in the Rust core; this module composes
them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Dict, Iterable, Mapping, Optional, Sequence, Tuple, Union

from pydantic import BaseModel

from . import _native
from ._native import (
    SchemaCatalog,
    SignedDocumentCodec,
    SigningKey,
    expected_signer,
    is_protocol_uri,
)
from ._types import SignedDocumentKind
from .crypto import ALGORITHM, PrivateKeyLike, load_private_key
from .errors import (
    InvalidInputError,
    MissionWeaveError,
    SchemaValidationError,
    SignedDocumentSigningError,
    SignedDocumentVerificationError,
)
from .models import QueryResult
from .registry import KeyResolver

#: A normative document: a plain JSON object (``dict`` of JSON values).
ProtocolDocument = Dict[str, Any]

#: What the adapter's methods accept as a projection.
ProjectionLike = Union[QueryResult, BaseModel, Mapping[str, Any]]


class DocumentMappingError(MissionWeaveError, ValueError):
    """A projection that cannot become its normative document.

    ``code`` is the §19 wire code (``SCHEMA_VALIDATION_FAILED`` for a missing or wrong member,
    ``AUTH_INVALID_SIGNATURE`` when no configured signer may sign it); ``reason`` a stable slug
    (``schema-invalid`` — the schema, or the signing profile, refuses the document; ``keyword``
    is the failing schema keyword when known —, ``mismatch``, ``no-signer``,
    ``signed-by-another-key``, ``not-an-object``, ``not-json``, ``no-registry``,
    ``unknown-kind``); ``member`` names the member where it applies. The message names the
    member too (for a schema failure, the core's description).
    """

    member: Optional[str] = None
    keyword: Optional[str] = None
    instance_path: str = ""

    def __init__(
        self,
        message: str,
        *,
        code: str = "SCHEMA_VALIDATION_FAILED",
        reason: str,
        **fields: Any,
    ) -> None:
        super().__init__(message, code=code, reason=reason, **fields)


def _identifier(value: object, what: str) -> str:
    if not isinstance(value, str) or not is_protocol_uri(value):
        raise ValueError(f"{what} must be a protocol identifier (an absolute URI), got {value!r}")
    return value


@dataclass(frozen=True)
class DocumentSigner:
    """A Principal's signing key: ``principal_id`` (the Principal's ID), ``key_id`` (its
    Registry key ID) and ``private_key`` (a :class:`SigningKey`, a 32-byte seed or its
    base64url text). Signing runs in the core."""

    principal_id: str
    key_id: str
    private_key: PrivateKeyLike = field(repr=False)
    _key: SigningKey = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _identifier(self.principal_id, "principal_id")
        _identifier(self.key_id, "key_id")
        seed = load_private_key(self.private_key).seed_bytes()
        object.__setattr__(self, "_key", SigningKey(self.key_id, seed))

    @property
    def algorithm(self) -> str:
        return ALGORITHM

    @property
    def public_key_bytes(self) -> bytes:
        return self._key.public_key_bytes

    @property
    def public_key(self) -> str:
        """The public key as unpadded base64url."""
        return self._key.public_key

    @property
    def signing_key(self) -> SigningKey:
        """The native key (what the codec signs with, without calling back into Python)."""
        return self._key

    def sign(self, message: bytes) -> bytes:
        return self._key.sign(message)


@dataclass(frozen=True)
class ProtocolDocumentConfig:
    """Deployment metadata: the Organization, the Agent Card ``endpoints`` (``wss://`` URIs,
    at least one) and ``maxConcurrency`` (> 0), the Registry's card signer and the Principals'
    signers (one per Principal). Raises ``ValueError``."""

    organization_id: str
    endpoints: Tuple[str, ...]
    max_concurrency: int
    registry_signer: DocumentSigner
    principal_signers: Tuple[DocumentSigner, ...] = ()

    def __post_init__(self) -> None:
        _identifier(self.organization_id, "organization_id")
        endpoints = tuple(self.endpoints)
        if not endpoints:
            raise ValueError("endpoints must name at least one wss:// endpoint")
        for endpoint in endpoints:
            if not (isinstance(endpoint, str) and endpoint.startswith("wss://")):
                raise ValueError(f"endpoint {endpoint!r} is not a wss:// URI")
            _identifier(endpoint, "endpoint")
        object.__setattr__(self, "endpoints", endpoints)
        if isinstance(self.max_concurrency, bool) or not isinstance(self.max_concurrency, int):
            raise ValueError("max_concurrency must be an integer")
        if self.max_concurrency <= 0:
            raise ValueError("max_concurrency must be positive")
        if not isinstance(self.registry_signer, DocumentSigner):
            raise ValueError("registry_signer must be a DocumentSigner")
        signers = tuple(self.principal_signers)
        if not all(isinstance(s, DocumentSigner) for s in signers):
            raise ValueError("principal_signers must be DocumentSigners")
        principals = [s.principal_id for s in signers]
        if len(set(principals)) != len(principals):
            raise ValueError("principal_signers must name each Principal once")
        object.__setattr__(self, "principal_signers", signers)


@dataclass(frozen=True)
class ArtifactLocation:
    """Where an Artifact's bytes are: ``uri`` (absolute) and ``size_bytes`` (≥ 0)."""

    uri: str
    size_bytes: int

    def __post_init__(self) -> None:
        _identifier(self.uri, "uri")
        if isinstance(self.size_bytes, bool) or not isinstance(self.size_bytes, int):
            raise ValueError("size_bytes must be an integer")
        if self.size_bytes < 0:
            raise ValueError("size_bytes must not be negative")


def _json_default(value: object) -> object:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, (tuple, frozenset)):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def _plain(value: object, what: str) -> ProtocolDocument:
    """The projection as a fresh ``dict`` of JSON values."""
    if isinstance(value, QueryResult):
        value = value.value
    elif isinstance(value, BaseModel):
        value = value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if not isinstance(value, Mapping):
        raise DocumentMappingError(
            f"{what}: the projection must be a JSON object, got {type(value).__name__}",
            reason="not-an-object",
        )
    try:
        text = json.dumps(value, default=_json_default, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as error:
        raise DocumentMappingError(f"{what}: {error}", reason="not-json") from error
    plain: ProtocolDocument = json.loads(text)
    return plain


def _instant(value: Union[datetime, str], what: str) -> str:
    if isinstance(value, str):
        return value
    # The core's one renderer, in the reference's form (six fraction digits, none for a whole
    # second); a naive datetime has no instant (nor has one outside years 0001-9999 in UTC a
    # timestamp): reason ``naive-timestamp``, the core's text.
    try:
        return _native.render_instant(value, fraction="micros")
    except InvalidInputError as error:
        raise DocumentMappingError(f"{what}: {error}", reason="naive-timestamp",
                                   member=what) from error


def _supply(document: ProtocolDocument, member: str, value: Any, what: str) -> None:
    """Puts the explicit deployment/context ``value`` in ``member``; a projection that already
    has the member must agree."""
    if member in document and document[member] != value:
        raise DocumentMappingError(
            f"{what}: member {member!r} is {document[member]!r}, the context says {value!r}",
            reason="mismatch",
            member=member,
        )
    document[member] = value


def _agree(document: ProtocolDocument, context: Mapping[str, Any], pairs: Iterable[Tuple[str, str]],
           what: str) -> None:
    """Cross-checks ``document[mine]`` against ``context[theirs]`` where both are present."""
    for mine, theirs in pairs:
        if mine in document and theirs in context and document[mine] != context[theirs]:
            raise DocumentMappingError(
                f"{what}: member {mine!r} is {document[mine]!r}, the context has "
                f"{context[theirs]!r}",
                reason="mismatch",
                member=mine,
            )


def _schema_failure(error: MissionWeaveError, what: str) -> DocumentMappingError:
    return DocumentMappingError(
        f"{what}: {error.detail or error}",
        code=error.code.value,
        reason="schema-invalid",
        stage=error.stage.value if error.stage is not None else None,
        keyword=error.reason if isinstance(error, SchemaValidationError) else None,
        instance_path=getattr(error, "instance_path", ""),
    )


class ProtocolDocumentAdapter:
    """Projection → normative (signed) document, and back (:meth:`projection`).

    ``schemas`` (a :class:`SchemaCatalog`) and ``codec`` (a :class:`SignedDocumentCodec`)
    default to the pinned ones. ``key_resolver`` (our addition; any :class:`KeyResolver`, e.g.
    an :class:`AgentRegistryKeyResolver`): when given, every signed document is verified (six
    stages) before it is returned, so a signer the Registry does not bind to the expected
    Principal is refused here rather than by the receiver; :meth:`projection` uses it too.

    Argument types differ from the reference's: every projection argument is a
    :data:`ProjectionLike` in the *schema's* shape (our query answers are normative already),
    not the reference's compact pydantic projections.
    """

    def __init__(
        self,
        config: ProtocolDocumentConfig,
        *,
        schemas: Optional[SchemaCatalog] = None,
        codec: Optional[SignedDocumentCodec] = None,
        key_resolver: Optional[KeyResolver] = None,
    ) -> None:
        if not isinstance(config, ProtocolDocumentConfig):
            raise TypeError("config must be a ProtocolDocumentConfig")
        self.config = config
        self.schemas = schemas if schemas is not None else SchemaCatalog()
        self.codec = codec if codec is not None else SignedDocumentCodec()
        self.key_resolver = key_resolver
        self._signers = {s.principal_id: s for s in config.principal_signers}

    # -- composition -----------------------------------------------------------------------

    def _validated(self, schema: str, document: ProtocolDocument) -> ProtocolDocument:
        try:
            self.schemas.validate(schema, document)
        except SchemaValidationError as error:
            raise _schema_failure(error, schema) from error
        return document

    def _signer_for(self, principal_id: object, pointer: str) -> DocumentSigner:
        signer = self._signers.get(principal_id) if isinstance(principal_id, str) else None
        if signer is None:
            raise DocumentMappingError(
                f"no signer is configured for {pointer} = {principal_id!r}",
                code="AUTH_INVALID_SIGNATURE",
                reason="no-signer",
                member=pointer,
            )
        return signer

    def _expected_signer(self, kind: SignedDocumentKind,
                         document: ProtocolDocument) -> DocumentSigner:
        """The configured signer of the Principal ``document`` names as its signer, by the
        profile's expected-signer rule as the Rust verifier reads it (§6.4)."""
        named = expected_signer(kind.value, document)
        if named is None:  # any service Principal: the Registry's signer
            return self.config.registry_signer
        pointer, _principal_type, principal_id = named
        return self._signer_for(principal_id, pointer)

    def _signed(self, kind: SignedDocumentKind, document: ProtocolDocument,
                signer: DocumentSigner) -> ProtocolDocument:
        existing = document.pop("signature", None)
        if existing is not None and (
            not isinstance(existing, Mapping) or existing.get("keyId") != signer.key_id
        ):
            # Re-signing with another key would replace its signer; signing is deterministic,
            # so the same key reproduces the same signature.
            raise DocumentMappingError(
                f"{kind.value}: signed by {existing!r}, the expected signer's "
                f"key is {signer.key_id!r}",
                code="AUTH_INVALID_SIGNATURE",
                reason="signed-by-another-key",
                member="/signature/keyId",
            )
        try:
            signed = self.codec.sign(kind, document, signer.signing_key)
        except SignedDocumentSigningError as error:
            raise _schema_failure(error, kind.value) from error
        raw = signed.canonical_document_bytes
        if self.key_resolver is not None:
            try:
                self.codec.verify(kind, raw, self.key_resolver)
            except SignedDocumentVerificationError as error:
                protected = error.protected_error
                raise DocumentMappingError(
                    f"{kind.value}: the Registry refuses the signature "
                    f"({protected.stage}: {protected.reason})",
                    code=error.wire_error.code.value,
                    reason="signer-not-bound",
                    stage=protected.stage.value,
                ) from error
        result: ProtocolDocument = json.loads(raw)
        return result

    # -- signed kinds ----------------------------------------------------------------------

    def agent_card(self, card: ProjectionLike) -> ProtocolDocument:
        """The signed Agent Card (``agent-card.schema.json``), signed by ``registry_signer``.
        ``organizationId``, ``endpoints`` and ``maxConcurrency`` come from the config (a card
        that has them must agree)."""
        document = _plain(card, "agent-card")
        config = self.config
        _supply(document, "organizationId", config.organization_id, "agent-card")
        endpoints = [{"transport": "wss", "uri": uri} for uri in config.endpoints]
        _supply(document, "endpoints", endpoints, "agent-card")
        _supply(document, "maxConcurrency", config.max_concurrency, "agent-card")
        return self._signed(SignedDocumentKind.AGENT_CARD, document, config.registry_signer)

    def artifact(
        self,
        artifact: ProjectionLike,
        producer_card: Optional[ProjectionLike] = None,
        location: Optional[ArtifactLocation] = None,
    ) -> ProtocolDocument:
        """The signed Artifact manifest, signed by the producer Agent (``producer.agentId``).
        ``location`` supplies ``uri``/``sizeBytes``; ``producer_card`` (an Agent Card) must be
        the producer's (``agentId``, ``cardVersion``). Both optional: our Artifact query answer
        already holds them."""
        document = _plain(artifact, "artifact")
        if location is not None:
            _supply(document, "uri", location.uri, "artifact")
            _supply(document, "sizeBytes", location.size_bytes, "artifact")
        producer = document.get("producer")
        producer = producer if isinstance(producer, dict) else {}
        if producer_card is not None:
            card = _plain(producer_card, "producer_card")
            _agree(producer, card, (("agentId", "agentId"), ("agentCardVersion", "cardVersion")),
                   "artifact producer")
        return self._signed(SignedDocumentKind.ARTIFACT, document,
                            self._expected_signer(SignedDocumentKind.ARTIFACT, document))

    def evidence(
        self,
        evidence: ProjectionLike,
        work: Optional[ProjectionLike] = None,
        *,
        generated_by: Optional[Union[Mapping[str, Any], BaseModel]] = None,
        created_at: Optional[Union[datetime, str]] = None,
    ) -> ProtocolDocument:
        """The signed Evidence (``evidence.schema.json``), signed by ``generatedBy``.

        ``work`` (a WorkItem) must agree on ``workItemId``/``missionId``/``groupId``;
        ``generated_by`` (a Principal ``{type, id}`` or :class:`~missionweaveprotocol.models.
        Principal`) and ``created_at`` (aware datetime or RFC 3339 text) supply those members.
        The reference's ``phase``/``index`` (which invented the ``evidenceId``) are not taken:
        the projection names its own ``evidenceId``."""
        document = _plain(evidence, "evidence")
        if work is not None:
            _agree(document, _plain(work, "work"),
                   (("workItemId", "workItemId"), ("missionId", "missionId"),
                    ("groupId", "groupId")), "evidence")
        if generated_by is not None:
            _supply(document, "generatedBy", _plain(generated_by, "generated_by"), "evidence")
        if created_at is not None:
            _supply(document, "createdAt", _instant(created_at, "created_at"), "evidence")
        return self._signed(SignedDocumentKind.EVIDENCE, document,
                            self._expected_signer(SignedDocumentKind.EVIDENCE, document))

    def approval(self, approval: ProjectionLike,
                 mission: Optional[ProjectionLike] = None) -> ProtocolDocument:
        """The signed Approval (``approval.schema.json``, any ``kind`` including
        ``work_execution``), signed by ``approver``. ``mission`` must agree on
        ``missionId``/``groupId``. Unlike the reference, an execution approval is not built
        from an ``ExecutionApproval`` projection with invented ``conditions`` strings: the
        projection carries its own ``conditions``."""
        document = _plain(approval, "approval")
        if mission is not None:
            _agree(document, _plain(mission, "mission"),
                   (("missionId", "missionId"), ("groupId", "groupId")), "approval")
        return self._signed(SignedDocumentKind.APPROVAL, document,
                            self._expected_signer(SignedDocumentKind.APPROVAL, document))

    # -- unsigned kinds --------------------------------------------------------------------

    def membership(self, membership: ProjectionLike,
                   mission: Optional[ProjectionLike] = None) -> ProtocolDocument:
        """``membership.schema.json``; ``mission`` must agree on ``missionId``/``groupId``."""
        document = _plain(membership, "membership")
        if mission is not None:
            _agree(document, _plain(mission, "mission"),
                   (("missionId", "missionId"), ("groupId", "groupId")), "membership")
        return self._validated("membership", document)

    def mission(self, mission: ProjectionLike,
                coordinator_card: Optional[ProjectionLike] = None) -> ProtocolDocument:
        """``mission.schema.json``; ``coordinator_card`` (an Agent Card) must be the
        coordinator's (``agentId``, ``cardVersion``)."""
        document = _plain(mission, "mission")
        coordinator = document.get("coordinator")
        if coordinator_card is not None and isinstance(coordinator, dict):
            _agree(coordinator, _plain(coordinator_card, "coordinator_card"),
                   (("agentId", "agentId"), ("agentCardVersion", "cardVersion")),
                   "mission coordinator")
        return self._validated("mission", document)

    def group(self, group: ProjectionLike) -> ProtocolDocument:
        """``group.schema.json``."""
        return self._validated("group", _plain(group, "group"))

    def conversation(
        self,
        conversation: ProjectionLike,
        mission: Optional[ProjectionLike] = None,
        *,
        work_item: Optional[ProjectionLike] = None,
    ) -> ProtocolDocument:
        """``conversation.schema.json``; ``mission`` must agree on ``missionId``/``groupId``,
        ``work_item`` on ``primaryWorkItemId``."""
        document = _plain(conversation, "conversation")
        if mission is not None:
            _agree(document, _plain(mission, "mission"),
                   (("missionId", "missionId"), ("groupId", "groupId")), "conversation")
        if work_item is not None:
            _supply(document, "primaryWorkItemId",
                    _plain(work_item, "work_item").get("workItemId"), "conversation")
        return self._validated("conversation", document)

    def message(self, message: ProjectionLike,
                mission: Optional[ProjectionLike] = None) -> ProtocolDocument:
        """``message.schema.json``; ``mission`` must agree on ``missionId``/``groupId``."""
        document = _plain(message, "message")
        if mission is not None:
            _agree(document, _plain(mission, "mission"),
                   (("missionId", "missionId"), ("groupId", "groupId")), "message")
        return self._validated("message", document)

    def work_contract(self, contract: ProjectionLike, *,
                      dependency_ids: Sequence[str] = ()) -> ProtocolDocument:
        """``work-contract.schema.json``, with the contract's own ``sideEffectRisk`` and
        ``executionApproval`` (never derived). ``dependency_ids``, if given, must be its
        ``dependencyWorkItemIds``."""
        document = _plain(contract, "work-contract")
        if dependency_ids:
            _supply(document, "dependencyWorkItemIds", list(dependency_ids), "work-contract")
        return self._validated("work-contract", document)

    def work_item(self, work: ProjectionLike, *,
                  artifacts: Sequence[ProjectionLike] = ()) -> ProtocolDocument:
        """``work-item.schema.json``; each of ``artifacts`` (Artifact manifests) must belong to
        it (``workItemId``, ``missionId``, ``groupId``)."""
        document = _plain(work, "work-item")
        for artifact in artifacts:
            _agree(_plain(artifact, "artifact"), document,
                   (("workItemId", "workItemId"), ("missionId", "missionId"),
                    ("groupId", "groupId")), "work-item artifact")
        return self._validated("work-item", document)

    # -- the inverse -----------------------------------------------------------------------

    def projection(
        self,
        kind: str,
        document: Union[bytes, bytearray, memoryview, ProjectionLike],
        *,
        key_resolver: Optional[KeyResolver] = None,
    ) -> ProtocolDocument:
        """The plain projection of a received normative document of ``kind`` (a schema name:
        ``"approval"``, ``"work-item"``, …), without its top-level ``signature``.

        A signature-required kind is verified with the six stages against ``key_resolver``
        (default: the adapter's); without one it is refused (``no-registry``), and a failing
        document raises the codec's :class:`SignedDocumentVerificationError`. Other kinds are
        schema-validated (raw bytes strictly parsed first). Pass the received bytes when you
        have them: a mapping is re-serialized, which verifies the same as its canonical form."""
        if kind not in self.schemas.names() or kind == "common":
            raise DocumentMappingError(f"unknown document kind {kind!r}", reason="unknown-kind")
        signed_kinds = {member.value: member for member in SignedDocumentKind}
        raw: Optional[bytes] = None
        if isinstance(document, (bytes, bytearray, memoryview)):
            raw = bytes(document)
        if kind in signed_kinds:
            resolver = key_resolver if key_resolver is not None else self.key_resolver
            if resolver is None:
                raise DocumentMappingError(
                    f"{kind} is a signed document: verifying it needs a Registry (key_resolver)",
                    code="AUTH_INVALID_SIGNATURE",
                    reason="no-registry",
                )
            if raw is None:
                raw = json.dumps(_plain(document, kind), ensure_ascii=False).encode()
            verified = self.codec.verify(signed_kinds[kind], raw, resolver)
            result = _plain(verified.document, kind)
            result.pop("signature", None)
            return result
        if raw is not None:
            try:
                value = self.schemas.validate_bytes(kind, raw)
            except (SchemaValidationError, MissionWeaveError) as error:
                raise _schema_failure(error, kind) from error
            return _plain(value, kind)
        return self._validated(kind, _plain(document, kind))


__all__ = [
    "ArtifactLocation",
    "DocumentMappingError",
    "DocumentSigner",
    "ProjectionLike",
    "ProtocolDocument",
    "ProtocolDocumentAdapter",
    "ProtocolDocumentConfig",
]
