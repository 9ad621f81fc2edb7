"""Context Packages, knowledge publication and Group Snapshots (§13.3, §7.4): the reference's
``context`` module.

Every rule runs in the Rust core (``authority::context``); this module converts its models to
the core's one call shape and back.

- :class:`ContextPackageService` publishes signed, versioned, Group-scoped packages whose
  source Events are one contiguous range of one Group's log; each decision cites Events of that
  range; an update (version ≥ 2) names the package it supersedes. :meth:`~ContextPackageService.verify`
  runs the six-stage verifier of the ``context-package`` profile, then those rules;
  :meth:`~ContextPackageService.install` gives the package to one Group of an Agent session only.
- :class:`KnowledgePublisher` publishes a classified summary of a verified package for a wider
  scope, its provenance being exactly the package's Event range.
- :class:`SnapshotArchive` signs Group Snapshots covering a Group's Events ``1..n`` in order, as
  the archival service (the Group Authority, whose snapshots the Core accepts for
  ``group_archive``).

Reference gaps fixed on purpose (documented in ``docs/context.md``):

- the reference signs its model dump **with** ``null`` members, so a package without
  ``work_item_id`` or ``previous_context_package_id`` fails the normative codec at stage
  ``signature``; here the wire document never carries ``null`` and every package verifies;
- the reference accepts any Event tuple and any decision citation; here a gap, a foreign Group,
  a duplicate Event or a decision citing an Event outside the range is refused
  (:class:`~missionweaveprotocol.errors.ContextPackageError`, ``PROTOCOL_VIOLATION``);
- ``verify`` is the strict §6.4 verifier, not the permissive ``verify_canonical``;
- the reference's snapshot authority must be ``SYSTEM``; here it is the Group Authority's
  service Principal, the only creator the Core accepts for archival.

Refusals are :class:`~missionweaveprotocol.errors.ContextPackageError` (a ``ValueError``, with
``code``, ``reason`` and ``fields``), or the codec's ``SignedDocumentSigningError`` /
``SignedDocumentVerificationError`` with their stage.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, List, Literal, Mapping, Optional, Sequence, Tuple

from pydantic import AwareDatetime, ConfigDict, Field, field_serializer

from . import _native
from ._projections import GroupSnapshot, PolicyLogEntry, _Frozen, _Signed
from .crypto import PrivateKeyLike, PublicKeyLike, encode_public_key, load_private_key
from .models import Event, JsonValue, Principal, SignatureEnvelope, render_timestamp

#: The reference's classification alias, least to most restricted.
Classification = Literal["public", "internal", "confidential", "restricted"]
#: A ``sha256:`` digest text.
Sha256 = str


class SourceEventRange(_Frozen):
    """``from_sequence..=to_sequence`` of one Group's log and its Event IDs, in order."""

    from_sequence: int = Field(ge=1)
    to_sequence: int = Field(ge=1)
    event_ids: Tuple[str, ...] = Field(min_length=1)


class ContextDecision(_Frozen):
    """A decision the package records, with the Events it was decided in."""

    description: str
    source_event_ids: Tuple[str, ...] = Field(min_length=1)


class ContextPackage(_Signed):
    """A signed Context Package (``context-package.schema.json``)."""

    context_package_id: str
    version: int = Field(ge=1)
    previous_context_package_id: Optional[str] = None
    mission_id: str
    group_id: str
    work_item_id: Optional[str] = None
    source_event_range: SourceEventRange
    artifact_hashes: Tuple[Sha256, ...] = ()
    summary: str
    decisions: Tuple[ContextDecision, ...] = ()
    constraints: Tuple[str, ...] = ()
    unresolved_questions: Tuple[str, ...] = ()
    generated_by: Principal
    generated_at: AwareDatetime
    signature: SignatureEnvelope

    @field_serializer("generated_at")
    def _generated_at(self, value: datetime) -> str:
        return render_timestamp(value)


class KnowledgePublication(_Signed):
    """A classified knowledge publication from a Context Package (reference fields, plus
    ``source_context_package_hash``: the package's bytes, not only its ID, are its provenance)."""

    publication_id: str
    source_context_package_id: str
    source_context_package_hash: Sha256
    source_group_id: str
    target_scope: str
    artifact_hash: Sha256
    classification: Classification
    summary: str
    provenance_event_ids: Tuple[str, ...] = Field(min_length=1)
    published_by: Principal
    published_at: AwareDatetime
    signature: SignatureEnvelope

    @field_serializer("published_at")
    def _published_at(self, value: datetime) -> str:
        return render_timestamp(value)


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _ms(value: Optional[datetime], what: str) -> int:
    """Unix milliseconds of an aware instant (floored: the core keeps milliseconds)."""
    if value is None:
        value = datetime.now(timezone.utc)
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise TypeError(f"{what} must be an aware datetime")
    return (value - _EPOCH) // timedelta(milliseconds=1)


def _named_key(private_key: PrivateKeyLike, key_id: str) -> _native.SigningKey:
    """The signing key under ``key_id`` (a ``SigningKey`` given under another ID is renamed)."""
    key = load_private_key(private_key, key_id)
    return key if key.key_id == key_id else _native.SigningKey(key_id, key.seed_bytes())


def _principal(p: Principal) -> Dict[str, Any]:
    return {"type": str(p.type), "id": p.id}


def _events(events: Sequence[Event]) -> List[Dict[str, Any]]:
    out: List[Dict[str, Any]] = []
    for event in events:
        if not isinstance(event, Event):
            raise TypeError(f"events must be Events, not {type(event).__name__}")
        out.append({"eventId": event.id, "groupId": event.group_id, "sequence": event.sequence})
    return out


def _canonical_text(document: Mapping[str, Any]) -> str:
    return _native.canonical_bytes(document).decode("utf-8")


class ContextPackageService:
    """``ContextPackageService(*, agent_id, key_id, private_key, public_key, schemas=None)``:
    publishes, verifies and installs the Context Packages of one generating Agent.

    ``schemas`` is accepted for the reference's signature (the core embeds the pinned schemas).
    """

    __slots__ = ("_agent_id", "_key", "_public_key")

    def __init__(
        self,
        *,
        agent_id: str,
        key_id: str,
        private_key: PrivateKeyLike,
        public_key: PublicKeyLike,
        schemas: object = None,
    ) -> None:
        del schemas
        self._agent_id = agent_id
        self._key = _named_key(private_key, key_id)
        self._public_key = encode_public_key(public_key)

    @property
    def agent_id(self) -> str:
        return self._agent_id

    def _resolver(self) -> Dict[str, Any]:
        return {"key": {"principal": {"type": "agent", "id": self._agent_id},
                        "keyId": self._key.key_id, "publicKey": self._public_key}}

    def publish(
        self,
        *,
        mission_id: str,
        group_id: str,
        version: int,
        events: Sequence[Event],
        summary: str,
        artifact_hashes: Sequence[str] = (),
        decisions: Sequence[ContextDecision] = (),
        constraints: Sequence[str] = (),
        unresolved_questions: Sequence[str] = (),
        work_item_id: Optional[str] = None,
        previous_context_package_id: Optional[str] = None,
        generated_at: Optional[datetime] = None,
        context_package_id: Optional[str] = None,
    ) -> ContextPackage:
        """Signs a package of ``events`` (one contiguous range of ``group_id``'s log)."""
        draft = {
            "contextPackageId": context_package_id
            or f"urn:missionweaveprotocol:context-package:{uuid.uuid4()}",
            "version": version,
            "previousContextPackageId": previous_context_package_id,
            "missionId": mission_id,
            "groupId": group_id,
            "workItemId": work_item_id,
            "events": _events(events),
            "artifactHashes": list(artifact_hashes),
            "summary": summary,
            "decisions": [
                {"description": d.description, "sourceEventIds": list(d.source_event_ids)}
                for d in decisions
            ],
            "constraints": list(constraints),
            "unresolvedQuestions": list(unresolved_questions),
            "generatedBy": self._agent_id,
            "generatedAtMs": _ms(generated_at, "generated_at"),
        }
        out = _native.context_call("publish", {"draft": draft}, self._key)
        return ContextPackage.model_validate(out["document"])

    def verify(self, package: ContextPackage, *, key_resolver: object = None) -> None:
        """Verifies ``package``: the six stages against this service's key (or, when given,
        ``key_resolver``, an ``AgentRegistryKeyResolver`` of the Organization's Registry), its
        generator, and the package rules. Raises on any failure."""
        _verified(package, self._agent_id, self._resolver_for(key_resolver))

    def _resolver_for(self, key_resolver: object) -> Dict[str, Any]:
        if key_resolver is None:
            return self._resolver()
        registry = getattr(key_resolver, "registry_bytes", None)
        if not isinstance(registry, (bytes, bytearray)):
            raise TypeError("key_resolver must be an AgentRegistryKeyResolver (registry_bytes)")
        return {"registry": bytes(registry).decode("utf-8")}

    def install(self, package: ContextPackage, session: Any, *, expected_mission_id: str) -> None:
        """Verifies ``package`` and installs it into its Group of ``session`` (an
        ``agent.AgentRuntimeSession``), revision = package version. A package of another Mission
        is refused: Group content never enters another Mission's context (§13.3)."""
        document = _verified(package, self._agent_id, self._resolver())
        out = _native.context_call(
            "install", {"document": document, "expectedMissionId": expected_mission_id}
        )
        session.install_group_context(out["groupId"], out["values"], revision=out["revision"])


def _verified(package: ContextPackage, generator: str, resolver: Dict[str, Any]) -> Dict[str, Any]:
    if not isinstance(package, ContextPackage):
        raise TypeError(f"package must be a ContextPackage, not {type(package).__name__}")
    text = _canonical_text(package.to_wire())
    out = _native.context_call(
        "verify", {"text": text, "resolver": resolver, "generator": generator}
    )
    document: Dict[str, Any] = out["document"]
    return document


class KnowledgePublisher:
    """``KnowledgePublisher(*, publisher, key_id, private_key, public_key)``: publishes and
    verifies knowledge publications."""

    __slots__ = ("_publisher", "_key", "_public_key")

    def __init__(
        self,
        *,
        publisher: Principal,
        key_id: str,
        private_key: PrivateKeyLike,
        public_key: PublicKeyLike,
    ) -> None:
        self._publisher = publisher
        self._key = _named_key(private_key, key_id)
        self._public_key = encode_public_key(public_key)

    def publish(
        self,
        *,
        context: ContextPackage,
        artifact_hash: str,
        target_scope: str,
        classification: Classification,
        summary: str,
        published_at: Optional[datetime] = None,
        publication_id: Optional[str] = None,
    ) -> KnowledgePublication:
        """Signs a publication of ``context`` (its provenance: the package's Event range)."""
        if not isinstance(context, ContextPackage):
            raise TypeError(f"context must be a ContextPackage, not {type(context).__name__}")
        draft = {
            "publicationId": publication_id
            or f"urn:missionweaveprotocol:knowledge:{uuid.uuid4()}",
            "targetScope": target_scope,
            "artifactHash": artifact_hash,
            "classification": classification,
            "summary": summary,
            "publishedBy": _principal(self._publisher),
            "publishedAtMs": _ms(published_at, "published_at"),
        }
        out = _native.context_call(
            "knowledgePublish", {"source": context.to_wire(), "draft": draft}, self._key
        )
        return KnowledgePublication.model_validate(out)

    def verify(
        self, publication: KnowledgePublication, *, context: Optional[ContextPackage] = None
    ) -> None:
        """Verifies the signature under this publisher's key and, given ``context``, that the
        publication's package, Group and provenance are that package's."""
        if not isinstance(publication, KnowledgePublication):
            raise TypeError("publication must be a KnowledgePublication")
        _native.context_call(
            "knowledgeVerify",
            {
                "publication": publication.to_wire(),
                "publicKey": self._public_key,
                "source": None if context is None else context.to_wire(),
            },
        )


class SnapshotArchive:
    """``SnapshotArchive(*, authority, key_id, private_key, public_key)``: the archival
    service's signed Group Snapshots, kept by ID."""

    __slots__ = ("_authority", "_key", "_public_key", "_snapshots")

    def __init__(
        self,
        *,
        authority: Principal,
        key_id: str,
        private_key: PrivateKeyLike,
        public_key: PublicKeyLike,
    ) -> None:
        self._authority = authority
        self._key = _named_key(private_key, key_id)
        self._public_key = encode_public_key(public_key)
        self._snapshots: Dict[str, GroupSnapshot] = {}

    def archive(
        self,
        *,
        group_id: str,
        events: Sequence[Event],
        state: object,
        policy_log: Sequence[Mapping[str, JsonValue]],
        created_at: Optional[datetime] = None,
        snapshot_id: Optional[str] = None,
    ) -> GroupSnapshot:
        """Signs the snapshot of ``events`` (the Group's sequences ``1..n``, in order);
        ``state_hash`` is the RFC 8785 ``sha256:`` of ``state`` (a JSON value or a model)."""
        if hasattr(state, "model_dump"):
            state = state.model_dump(mode="json", by_alias=True, exclude_none=True)
        request = {
            "snapshotId": snapshot_id or f"urn:missionweaveprotocol:snapshot:{uuid.uuid4()}",
            "groupId": group_id,
            "events": _events(events),
            "state": state,
            "policyLog": [dict(entry) for entry in policy_log],
            "createdAtMs": _ms(created_at, "created_at"),
        }
        out = _native.context_call(
            "snapshotArchive",
            {"request": request, "authority": _principal(self._authority)},
            self._key,
        )
        snapshot = GroupSnapshot.model_validate(out["document"])
        self._snapshots[snapshot.snapshot_id] = snapshot
        return snapshot

    def get(self, snapshot_id: str) -> GroupSnapshot:
        """The snapshot archived under ``snapshot_id`` (``KeyError`` otherwise)."""
        return self._snapshots[snapshot_id]

    def verify(self, snapshot: GroupSnapshot) -> None:
        """Verifies the snapshot's signature under the authority's key and its coverage."""
        if not isinstance(snapshot, GroupSnapshot):
            raise TypeError("snapshot must be a GroupSnapshot")
        resolver = {"key": {"principal": _principal(self._authority),
                            "keyId": self._key.key_id, "publicKey": self._public_key}}
        _native.context_call(
            "snapshotVerify",
            {"text": _canonical_text(snapshot.to_wire()), "resolver": resolver,
             "authority": _principal(self._authority)},
        )


__all__ = [
    "PolicyLogEntry",
    "Classification",
    "ContextDecision",
    "ContextPackage",
    "ContextPackageService",
    "GroupSnapshot",
    "KnowledgePublication",
    "KnowledgePublisher",
    "Sha256",
    "SnapshotArchive",
    "SourceEventRange",
]
