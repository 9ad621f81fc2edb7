"""Content-addressed Artifact bytes and their signed manifest (§13.1): the reference's
``artifacts`` module (``ArtifactError``, ``ArtifactManifest``, ``LocalArtifactStore``), served by
the Rust core (``missionweaveprotocol_engine::artifact::content`` and ``local_store``).

Differences from the reference (``reference-python.md`` §1.3 and §7 item 2), each deliberate:

- **The manifest is the protocol's Artifact document** (``artifact.schema.json``), the one
  ``artifact.publish`` carries, not the reference's second shape. Its members are the schema's:
  ``producer`` is an object (``agent_id``, ``agent_card_version`` an integer, ``capabilities``)
  instead of the reference's ``producer_agent_id`` / ``producer_agent_card_version`` /
  ``capability`` / ``capability_version``; ``tool_versions`` and ``model_versions`` are lists of
  objects instead of dicts; ``artifact_id``, ``uri`` and ``schema_uri`` are required by the
  schema; the manifest never holds the content (no inline bytes, §13.1).
- **One signing scheme.** The manifest is signed with the normative scheme
  (``SignedDocumentCodec``, Artifact profile: the signer is ``producer.agentId``, the protected
  time ``createdAt``) and :meth:`ArtifactManifest.verify` runs the six-stage verifier against
  the Organization's Registry, not a bare public key. ``signature`` is the §6.4 envelope.
- No ``signed_by(identity)``: :meth:`LocalArtifactStore.put` builds and signs the manifest in one
  step (signing an existing manifest again would change what the producer attested).
- Hashing, the path layout, the size check, manifest building, signing and verification are
  all in Rust; this module converts arguments.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from pydantic import AwareDatetime, ConfigDict, Field, PrivateAttr, ValidationError, field_serializer

from ._protocol_model import ProtocolModel
from ._types import SigningKeyProtocol
from .errors import ArtifactError
from .models import SignatureEnvelope, render_timestamp
from .signed_documents import VerifiedSignedDocument

if TYPE_CHECKING:
    from .auth import AgentIdentity


class ArtifactCapability(ProtocolModel):
    """A capability the producer used (``common.schema.json#/$defs/capabilityRef``)."""

    model_config = ConfigDict(frozen=True)

    id: str
    version: str


class ArtifactProducer(ProtocolModel):
    """The manifest's ``producer``: the Agent, its Agent Card version and capabilities."""

    model_config = ConfigDict(frozen=True)

    agent_id: str
    agent_card_version: int = Field(ge=1)
    capabilities: Tuple[ArtifactCapability, ...] = Field(min_length=1)


class ToolVersion(ProtocolModel):
    """One ``toolVersions`` item."""

    model_config = ConfigDict(frozen=True)

    name: str
    version: str


class ModelVersion(ProtocolModel):
    """One ``modelVersions`` item."""

    model_config = ConfigDict(frozen=True)

    provider: str
    model: str
    version: str


class ArtifactManifest(ProtocolModel):
    """The signed Artifact manifest (``artifact.schema.json``), frozen.

    Field names are snake_case with the schema's camelCase aliases; the members are the
    schema's (see the module docstring for how they differ from the reference's). A manifest
    made by :meth:`LocalArtifactStore.put` or :meth:`from_wire` keeps its exact signed bytes
    (:attr:`signed_bytes`); :meth:`to_wire` is the document, ready to be the ``manifest`` of an
    ``artifact.publish`` payload.
    """

    model_config = ConfigDict(frozen=True)

    artifact_id: str
    content_hash: str = Field(pattern=r"^sha256:[0-9a-f]{64}$")
    uri: str
    size_bytes: int = Field(ge=0)
    media_type: str
    schema_uri: str
    producer: ArtifactProducer
    mission_id: str
    group_id: str
    work_item_id: str
    source_artifact_hashes: Tuple[str, ...] = ()
    tool_versions: Tuple[ToolVersion, ...] = ()
    model_versions: Tuple[ModelVersion, ...] = ()
    classification: str
    created_at: AwareDatetime
    extensions: Optional[Dict[str, Any]] = None
    signature: SignatureEnvelope

    _signed_bytes: Optional[bytes] = PrivateAttr(default=None)

    @field_serializer("created_at")
    def _created_at(self, value: datetime) -> str:
        return render_timestamp(value)

    @classmethod
    def from_wire(cls, raw: Union[bytes, bytearray, memoryview]) -> "ArtifactManifest":
        """The manifest of signed wire bytes (strict JSON), keeping the bytes. Not verified:
        call :meth:`verify`."""
        from ._native import parse_json

        raw = bytes(raw)
        document = parse_json(raw)
        if not isinstance(document, dict):
            raise ArtifactError(
                "an Artifact manifest is a JSON object",
                code="SCHEMA_VALIDATION_FAILED",
                reason="invalid_metadata",
            )
        try:
            manifest = cls.model_validate(document)
        except ValidationError as error:
            raise ArtifactError(
                f"not an Artifact manifest: {error.errors()[0]['msg']}",
                code="SCHEMA_VALIDATION_FAILED",
                reason="invalid_metadata",
            ) from error
        manifest._signed_bytes = raw
        return manifest

    def to_wire(self) -> Dict[str, Any]:
        """The signed document (camelCase members, no ``None`` members)."""
        if self._signed_bytes is not None:
            from ._native import parse_json

            document = parse_json(self._signed_bytes)
            assert isinstance(document, dict)
            return document
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    @property
    def signed_bytes(self) -> bytes:
        """The exact signed bytes (the JCS of the signed document for a manifest built here)."""
        if self._signed_bytes is not None:
            return self._signed_bytes
        from ._native import canonical_bytes

        return canonical_bytes(self.to_wire())

    def signing_bytes(self) -> bytes:
        """What the signature covers (§6.4 stage 5): the JCS of the document without
        ``signature``."""
        from ._native import SignedDocumentCodec

        return SignedDocumentCodec().signing_bytes(self.signed_bytes)

    def verify(self, registry: Any) -> VerifiedSignedDocument:
        """Six-stage verification (Artifact profile) of :attr:`signed_bytes` against the
        Organization's Registry (an ``AgentRegistryKeyResolver`` or any key resolver): the
        signer must be ``producer.agent_id``'s valid key. Raises :class:`ArtifactError`
        (``manifest_rejected``, with the verifier's wire code and ``stage``). The reference's
        ``verify(public_key)`` checks a bare key instead (gap §7 item 2)."""
        from ._native import verify_artifact_manifest

        return verify_artifact_manifest(self.signed_bytes, registry)

    def check_content(self, content: Union[bytes, bytearray, memoryview]) -> None:
        """Checks ``content`` against :attr:`size_bytes` and the re-computed
        :attr:`content_hash`; raises :class:`ArtifactError`."""
        from ._native import artifact_check_content

        artifact_check_content(self.to_wire(), content)


def content_hash(content: Union[bytes, bytearray, memoryview]) -> str:
    """``sha256:<hex>`` of ``content`` (the Artifact's content hash)."""
    from ._native import artifact_content_hash

    return artifact_content_hash(content)


_ToolVersions = Union[Mapping[str, str], Iterable[ToolVersion]]
_ModelVersions = Iterable[Union[ModelVersion, Tuple[str, str, str]]]


def _tool_versions(value: Optional[_ToolVersions]) -> List[Dict[str, str]]:
    if value is None:
        return []
    if isinstance(value, Mapping):
        return [{"name": name, "version": version} for name, version in value.items()]
    return [ToolVersion.model_validate(item).model_dump(by_alias=True) for item in value]


def _model_versions(value: Optional[_ModelVersions]) -> List[Dict[str, str]]:
    items: List[Dict[str, str]] = []
    for item in value or ():
        if isinstance(item, tuple):
            provider, model, version = item
            item = ModelVersion(provider=provider, model=model, version=version)
        items.append(ModelVersion.model_validate(item).model_dump(by_alias=True))
    return items


class LocalArtifactStore:
    """Artifact bytes on the local filesystem under ``root``, keyed by SHA-256:
    ``<root>/<hex[:2]>/<hex[2:]>``, written to a temporary file in the same directory, fsynced
    and linked into place without replacing anything. Putting the same bytes again keeps them;
    other bytes already at the path raise :class:`ArtifactError` (``stored_bytes_conflict``)
    and are not overwritten."""

    def __init__(self, root: Union[str, "os.PathLike[str]"]) -> None:
        from ._native import NativeArtifactStore

        self._native = NativeArtifactStore(root)
        self.root = Path(root)

    def path_of(self, content_hash: str) -> Path:
        """Where the bytes of ``content_hash`` are stored."""
        return Path(self._native.path_of(content_hash))

    def put(
        self,
        content: Union[bytes, bytearray, memoryview],
        *,
        key: Optional[SigningKeyProtocol] = None,
        producer: Optional[str] = None,
        agent_card_version: int,
        capability: str,
        capability_version: str,
        mission_id: str,
        group_id: str,
        work_item_id: str,
        media_type: str,
        classification: str,
        schema_uri: Optional[str] = None,
        source_artifact_hashes: Sequence[str] = (),
        tool_versions: Optional[_ToolVersions] = None,
        model_versions: Optional[_ModelVersions] = None,
        created_at: Optional[datetime] = None,
        uri: Optional[str] = None,
        artifact_id: Optional[str] = None,
        extensions: Optional[Mapping[str, Any]] = None,
        identity: Optional["AgentIdentity"] = None,
    ) -> ArtifactManifest:
        """Signs the manifest of ``content`` and stores the bytes; returns the manifest.

        Keyword names are the reference's where it has them: ``identity`` (an
        ``auth.AgentIdentity``) signs as that Agent, as there; or ``key`` (a ``SigningKey`` or
        any object of the ``SigningKey`` protocol, e.g. an HSM: the producer's Registry key)
        plus ``producer`` (the producer's Agent ID). Differences: ``agent_card_version`` is an
        integer; ``schema_uri`` (the content's schema) is required by the Artifact schema
        (omitted, the manifest is refused naming it, ``SCHEMA_VALIDATION_FAILED``); ``tool_versions`` is a
        ``{name: version}`` mapping or ``ToolVersion`` items, ``model_versions`` ``ModelVersion``
        items or ``(provider, model, version)`` tuples. New: ``uri`` (default: the RFC 6920
        ``ni:///sha-256;…`` name of the bytes), ``artifact_id`` (default: derived from
        ``work_item_id`` and the content hash, so the same bytes for the same WorkItem name the
        same Artifact), ``extensions``. ``created_at`` defaults to now (UTC, whole seconds).

        Refused metadata stores nothing and raises :class:`ArtifactError`
        (``unsignable_manifest`` with the failing stage's code, e.g.
        ``SCHEMA_VALIDATION_FAILED``).
        """
        if identity is not None:
            if key is not None or (producer is not None and producer != identity.agent_id):
                raise ArtifactError(
                    "put takes identity, or key and producer, not both",
                    code="SCHEMA_VALIDATION_FAILED",
                    reason="invalid_metadata",
                )
            key, producer = identity.signing_key, identity.agent_id
        if key is None or producer is None:
            raise ArtifactError(
                "put needs the producer's identity (or key and producer)",
                code="SCHEMA_VALIDATION_FAILED",
                reason="invalid_metadata",
            )
        when = created_at if created_at is not None else datetime.now(timezone.utc).replace(microsecond=0)
        if when.tzinfo is None:
            raise ArtifactError(
                "created_at must be an aware datetime",
                code="SCHEMA_VALIDATION_FAILED",
                reason="invalid_metadata",
            )
        metadata: Dict[str, Any] = {
            "mediaType": media_type,
            "producer": {
                "agentId": producer,
                "agentCardVersion": agent_card_version,
                "capabilities": [{"id": capability, "version": capability_version}],
            },
            "missionId": mission_id,
            "groupId": group_id,
            "workItemId": work_item_id,
            "sourceArtifactHashes": list(source_artifact_hashes),
            "toolVersions": _tool_versions(tool_versions),
            "modelVersions": _model_versions(model_versions),
            "classification": classification,
            "createdAt": render_timestamp(when),
        }
        if schema_uri is not None:
            metadata["schemaUri"] = schema_uri
        if uri is not None:
            metadata["uri"] = uri
        if artifact_id is not None:
            metadata["artifactId"] = artifact_id
        if extensions is not None:
            metadata["extensions"] = dict(extensions)
        signed = self._native.put(content, metadata, key)
        return ArtifactManifest.from_wire(signed.canonical_document_bytes)

    def get(self, manifest: Union[ArtifactManifest, Mapping[str, Any]]) -> bytes:
        """The bytes of ``manifest``, re-hashed and size-checked against it. Raises
        :class:`ArtifactError`: ``hash_mismatch``/``size_mismatch`` (tampered or corrupt bytes),
        ``content_missing``. Does not verify the manifest's signature (:meth:`ArtifactManifest.verify`)."""
        document = manifest.to_wire() if isinstance(manifest, ArtifactManifest) else dict(manifest)
        return self._native.get(document)

    def __repr__(self) -> str:
        return f"LocalArtifactStore({str(self.root)!r})"


__all__ = [
    "ArtifactCapability",
    "ArtifactError",
    "ArtifactManifest",
    "ArtifactProducer",
    "LocalArtifactStore",
    "ModelVersion",
    "ToolVersion",
    "content_hash",
]
