"""The vocabulary shared by :class:`~missionweaveprotocol.core.Core`, its store and ingress: the
reference runtime's enums and its ``Command`` / ``Event`` / ``Query`` models (pydantic v2, the
reference's snake_case field names, camelCase aliases), on the wire's own shapes.

Differences from the reference (``reference-python.md`` §1.1), each deliberate:

- **``Command.payload`` is the wire payload** of the protocol (the members the engine reads,
  ``docs/engine.md`` "Payloads" and ``docs/work.md`` "Engine wiring"). The wire payload models
  are in :mod:`missionweaveprotocol.payloads` (``MissionCreateWirePayload``, …). The
  reference's compact payload models (``CreateMissionPayload(mission_id, title, …)``, one per
  Command kind) are here too, with its fields; they describe a request in the reference's
  vocabulary and are never signed as they are (one signing scheme, §6.4).
- **The reference's compact projections** (``Mission``, ``Group``, ``Membership``,
  ``WorkItem``, ``WorkContract``, ``ResourceBudget``, ``ResourceUsage``, …) are here with its
  fields (``_projections``); ``Mission.from_document(doc)`` / ``.protocol_document()`` convert
  from and to the Core's normative query documents (``_conversions``).
- **Commands and Events are normative signed documents.** ``Command.signature`` is the §6.4
  signature envelope over the JCS of the wire document; ``signing_payload()`` has no ``null``
  members (reference gap §7.2, §7.3). The reference's legacy string ``signature`` is read as
  it reads it (an envelope with key ID ``"<actor id>:legacy-command-key"``) and refused by our
  Core like any signature that does not verify. A compact payload model
  (``payload=CreateMissionPayload(…)``) is kept and converted explicitly to the wire payload
  whenever the wire form is needed (:meth:`Command.to_wire`, ``supplement`` for the wire
  members it lacks; ``_compact_wire``).
  A Command built from wire bytes (:meth:`Command.from_wire`, ``CommandIngress.project_verified``)
  keeps those exact bytes and is performed with them; assigning any field drops them, and the
  model is then dumped by alias without ``None`` members.
- **``ActorType``** is the wire's ``agent | human | service``; the reference's ``SYSTEM`` is an
  alias of ``SERVICE`` (value ``"service"``; ``"system"`` is read as it; ``Principal.system()``
  builds one).
- **``Event``** carries every member of the signed Event (``aggregateRevision``, ``cause``,
  ``acceptedBy``, ``signature`` …) and keeps its exact signed bytes (:attr:`Event.signed_bytes`);
  the reference's ``action_id`` is the ``cause`` of a Command-caused Event.
- **``QueryResult``** wraps the answer: the aggregate's normative document (``mission.schema.json``,
  ``work-item.schema.json``, …), not the reference's compact projections.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, Dict, Mapping, Optional, Union

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    field_serializer,
    model_validator,
)

from . import _native
from ._protocol_model import ProtocolModel
from ._types import _StrEnum

# The instance attribute dictionary of a pydantic model (a slot of ``BaseModel``), read and
# written past ``Event``'s lazy ``__dict__`` property.
_INSTANCE_DICT: Any = BaseModel.__dict__["__dict__"]
_object_setattr = object.__setattr__

JsonValue = Any
"""Any JSON value (the wire's ``payload`` and extension ``data``)."""


class ActorType(_StrEnum):
    """Principal types of the wire (``common.schema.json#/$defs/actor``).

    The reference's ``SYSTEM`` is the wire's ``service``: ``ActorType.SYSTEM`` is an alias of
    ``ActorType.SERVICE`` (value ``"service"``), and ``ActorType("system")`` reads as it."""

    AGENT = "agent"
    HUMAN = "human"
    SERVICE = "service"
    SYSTEM = "service"

    @classmethod
    def _missing_(cls, value: object) -> "Optional[ActorType]":
        return cls.SERVICE if value == "system" else None


class Role(_StrEnum):
    MISSION_OWNER = "mission_owner"
    COORDINATOR = "coordinator"
    WORKER = "worker"
    REVIEWER = "reviewer"
    OBSERVER = "observer"
    WORK_DELEGATE = "work_delegate"


class MembershipStatus(_StrEnum):
    PROVISIONAL = "provisional"
    ACTIVE = "active"
    ENDED = "ended"


class MessageAmendmentKind(_StrEnum):
    """The ``kind`` of a Message that amends another (``message.schema.json``; §9.1: a
    correction, retraction or redaction is a new Message referencing the original)."""

    CORRECTION = "correction"
    RETRACTION = "retraction"
    REDACTION = "redaction"


class MissionStatus(_StrEnum):
    ACTIVE = "active"
    AWAITING_APPROVAL = "awaiting_approval"
    APPROVED = "approved"
    FAILED = "failed"
    CANCELLED = "cancelled"


class WorkItemStatus(_StrEnum):
    OPEN = "open"
    OFFERED = "offered"
    QUEUED = "queued"
    ACTIVE = "active"
    BLOCKED = "blocked"
    SUBMITTED = "submitted"
    VERIFIED = "verified"
    FAILED = "failed"
    CANCELLED = "cancelled"


class QueryKind(_StrEnum):
    """The reference's 21 query kinds (spelled by the Rust core, ``engine/query.rs``; which ones
    are served is the core's answer, :data:`SERVED_QUERY_KINDS`)."""

    COMMAND = "command"
    AGENT_CARD = "agent_card"
    SESSION_EPOCH = "session_epoch"
    MISSION = "mission"
    GROUP = "group"
    MEMBERSHIP = "membership"
    CONVERSATION = "conversation"
    MESSAGE = "message"
    MESSAGE_AMENDMENT = "message_amendment"
    WORK_PROPOSAL = "work_proposal"
    WORK_ITEM = "work_item"
    MISSION_WORK_ITEMS = "mission_work_items"
    ARTIFACT = "artifact"
    APPROVAL = "approval"
    EXECUTION_APPROVAL = "execution_approval"
    COOPERATION_OVERRIDE_GRANT = "cooperation_override_grant"
    POLICY_LOG = "policy_log"
    GROUP_SNAPSHOT = "group_snapshot"
    DELEGATION_GRANT = "delegation_grant"
    EXECUTION_LEASE = "execution_lease"
    BUDGET_REMAINING = "budget_remaining"


class CommandKind(_StrEnum):
    """The reference's 38 Command kinds (member names) with their wire ``kind`` strings."""

    REGISTER_AGENT_CARD = "ext.missionweaveprotocol.registry.agent_card_register"
    OPEN_AGENT_SESSION = "ext.missionweaveprotocol.identity.session_open"
    CREATE_MISSION = "mission.create"
    CREATE_FOLLOW_UP_MISSION = "mission.create_follow_up"
    CREATE_CHILD_MISSION = "mission.create_child"
    ADD_MEMBERSHIP = "membership.change"
    END_MEMBERSHIP = "membership.end"
    GRANT_DELEGATION = "membership.grant_delegation"
    REPLACE_COORDINATOR = "mission.assign_coordinator"
    RENEW_COORDINATOR_LEASE = "mission.renew_coordinator"
    POST_MESSAGE = "message.post"
    CORRECT_MESSAGE = "message.correct"
    RETRACT_MESSAGE = "message.retract"
    REDACT_MESSAGE = "message.redact"
    PROPOSE_WORK_ITEM = "work.propose"
    CREATE_WORK_ITEM = "work.authorize"
    ADD_WORK_ITEM_DEPENDENCY = "ext.missionweaveprotocol.core.work_dependency_add"
    OFFER_WORK_ITEM = "work.offer"
    ACCEPT_WORK_OFFER = "work.accept_offer"
    START_WORK_ITEM = "work.start"
    RENEW_EXECUTION_LEASE = "ext.missionweaveprotocol.core.work_execution_lease_renew"
    RECORD_RESOURCE_USAGE = "ext.missionweaveprotocol.core.resource_usage_record"
    CHECKPOINT_WORK_ITEM = "work.checkpoint"
    BLOCK_WORK_ITEM = "work.block"
    UNBLOCK_WORK_ITEM = "work.unblock"
    PUBLISH_ARTIFACT = "artifact.publish"
    SUBMIT_WORK_ITEM = "work.submit"
    VERIFY_WORK_ITEM = "work.accept_result"
    FAIL_WORK_ITEM = "work.fail"
    CANCEL_WORK_ITEM = "work.cancel"
    SUBMIT_MISSION = "mission.submit_for_approval"
    APPROVE_MISSION = "mission.approve"
    GRANT_EXECUTION_APPROVAL = "approval.grant_execution"
    GRANT_COOPERATION_OVERRIDE = "policy.grant_cooperation_override"
    REQUEST_MISSION_CHANGES = "mission.request_changes"
    FAIL_MISSION = "mission.terminate"
    CANCEL_MISSION = "mission.cancel"
    ARCHIVE_GROUP = "ext.missionweaveprotocol.core.group_archive"


class EventKind(_StrEnum):
    """The reference's 40 Event kinds (member names) with their wire ``kind`` strings.

    ``EXECUTION_LEASE_REVOKED``'s wire string is this package's (an ``ext.`` kind, as the
    reference's other service Events), taken from the engine that writes it (a session that
    replaces an earlier one revokes its Execution Leases, §11.3).
    """

    AGENT_CARD_REGISTERED = "ext.missionweaveprotocol.registry.agent_card_registered"
    AGENT_SESSION_OPENED = "ext.missionweaveprotocol.identity.session_opened"
    EXECUTION_LEASE_REVOKED = _native.EXECUTION_LEASE_REVOKED_EVENT
    MISSION_CREATED = "mission.created"
    FOLLOW_UP_MISSION_CREATED = "mission.follow_up.created"
    CHILD_MISSION_CREATED = "mission.child.created"
    MEMBERSHIP_ADDED = "membership.changed"
    MEMBERSHIP_ENDED = "membership.ended"
    DELEGATION_GRANTED = "membership.delegation.granted"
    COORDINATOR_REPLACED = "mission.coordinator.assigned"
    COORDINATOR_LEASE_RENEWED = "mission.coordinator.renewed"
    MESSAGE_POSTED = "message.posted"
    MESSAGE_CORRECTED = "message.corrected"
    MESSAGE_RETRACTED = "message.retracted"
    MESSAGE_REDACTED = "message.redacted"
    WORK_ITEM_PROPOSED = "work.proposed"
    WORK_ITEM_CREATED = "work.authorized"
    WORK_ITEM_DEPENDENCY_ADDED = "work.contract.revised"
    WORK_ITEM_OFFERED = "work.offer.created"
    WORK_OFFER_ACCEPTED = "work.offer.accepted"
    WORK_ITEM_STARTED = "work.started"
    EXECUTION_LEASE_RENEWED = "work.progressed"
    RESOURCE_USAGE_RECORDED = "ext.missionweaveprotocol.core.resource_usage_recorded"
    WORK_ITEM_CHECKPOINTED = "work.checkpointed"
    WORK_ITEM_BLOCKED = "work.blocked"
    WORK_ITEM_UNBLOCKED = "work.unblocked"
    ARTIFACT_PUBLISHED = "artifact.published"
    WORK_ITEM_SUBMITTED = "work.submitted"
    WORK_ITEM_VERIFIED = "work.result.accepted"
    WORK_ITEM_FAILED = "work.failed"
    WORK_ITEM_CANCELLED = "work.cancelled"
    MISSION_SUBMITTED = "mission.submitted_for_approval"
    MISSION_APPROVED = "mission.approved"
    EXECUTION_APPROVAL_GRANTED = "approval.execution.granted"
    COOPERATION_OVERRIDE_GRANTED = "policy.cooperation_override.granted"
    MISSION_CHANGES_REQUESTED = "mission.changes_requested"
    MISSION_FAILED = "mission.terminated"
    MISSION_CANCELLED = "mission.cancelled"
    GROUP_SNAPSHOT_CREATED = "group.snapshot.created"
    GROUP_ARCHIVED = "group.archived"


def render_timestamp(value: datetime) -> str:
    """An aware instant in the wire's RFC 3339 profile: UTC, ``Z``, the shortest fraction
    (none for whole seconds), so that a wire text re-renders to itself. The core's one
    renderer (``fraction="shortest"``); a naive datetime is :class:`InvalidInputError`."""
    return _native.render_instant(value, fraction="shortest")


class Principal(ProtocolModel):
    """An actor: ``type`` and ``id`` (frozen)."""

    model_config = ConfigDict(frozen=True)

    type: ActorType
    id: str = Field(min_length=1)

    @classmethod
    def agent(cls, id: str) -> "Principal":
        return cls(type=ActorType.AGENT, id=id)

    @classmethod
    def human(cls, id: str) -> "Principal":
        return cls(type=ActorType.HUMAN, id=id)

    @classmethod
    def service(cls, id: str) -> "Principal":
        return cls(type=ActorType.SERVICE, id=id)

    @classmethod
    def system(cls, id: str = "organization") -> "Principal":
        """The reference's ``SYSTEM`` principal: a wire ``service``."""
        return cls(type=ActorType.SERVICE, id=id)


class SignatureEnvelope(ProtocolModel):
    """The §6.4 signature envelope (``common.schema.json#/$defs/signature``)."""

    algorithm: str = "Ed25519"
    key_id: str
    created_at: AwareDatetime
    value: str

    @field_serializer("created_at")
    def _created_at(self, value: datetime) -> str:
        return render_timestamp(value)


class ExtensionEnvelope(ProtocolModel):
    """One extension member: ``version``, ``critical``, ``data`` (§18)."""

    version: str
    critical: bool
    data: JsonValue = None


class EventCause(ProtocolModel):
    """What caused an Event: ``command`` (its Action ID), ``event``, ``timer`` or ``policy``."""

    model_config = ConfigDict(frozen=True)

    type: str
    id: str


def _legacy_signature(actor_id: Any, issued_at: Any, value: str) -> Dict[str, Any]:
    """The reference's reading of a legacy string Command signature: an envelope under key ID
    ``"<actor id>:legacy-command-key"``, created at ``issuedAt``."""
    return {
        "algorithm": "Ed25519",
        "keyId": f"{actor_id}:legacy-command-key",
        "createdAt": issued_at,
        "value": value,
    }


class Command(ProtocolModel):
    """A wire Command (``command.schema.json``), with the reference's field names.

    ``payload`` is the protocol's wire payload (see the module docstring); ``signature`` the
    §6.4 envelope. :meth:`to_wire` is the document (by alias, no ``None`` members) that
    ``SignedDocumentCodec.sign(COMMAND, …)`` signs; a Command made by :meth:`from_wire` keeps
    the exact signed bytes (:attr:`signed_bytes`) until a field is assigned.
    """

    protocol_version: str = _native.PROTOCOL_VERSION
    action_id: str
    kind: CommandKind
    actor: Principal
    group_id: Optional[str] = None
    session_epoch: Optional[int] = Field(default=None, ge=1)
    membership_epoch: Optional[int] = Field(default=None, ge=1)
    coordinator_epoch: Optional[int] = Field(default=None, ge=1)
    correlation_id: Optional[str] = None
    caused_by_event_id: Optional[str] = None
    conversation_id: Optional[str] = None
    work_item_id: Optional[str] = None
    cooperation_override_grant_id: Optional[str] = None
    expected_revision: Optional[int] = Field(default=None, ge=0)
    issued_at: AwareDatetime
    payload: Dict[str, JsonValue] = Field(default_factory=dict)
    extensions: Dict[str, ExtensionEnvelope] = Field(default_factory=dict)
    signature: Optional[SignatureEnvelope] = None
    verified_signing_hash: Optional[str] = None

    _signed_bytes: Optional[bytes] = PrivateAttr(default=None)
    _compact: Optional[BaseModel] = PrivateAttr(default=None)

    _NOT_WIRE: ClassVar[frozenset[str]] = frozenset({"verified_signing_hash"})

    if TYPE_CHECKING:
        # For type checkers: ``payload`` also takes a compact payload model (the reference's
        # call shape); the attribute is always the dict.
        def __init__(
            self, *, payload: Union[Dict[str, JsonValue], BaseModel] = ..., **data: Any
        ) -> None: ...

    @model_validator(mode="wrap")
    @classmethod
    def _reference_shapes(cls, data: Any, handler: Any) -> "Command":
        """The reference's two input shapes: a compact payload model (kept, converted to the
        wire payload when the wire form is needed, ``_compact_wire``) and a legacy string
        ``signature`` (an envelope with key ID ``"<actor id>:legacy-command-key"``, as the
        reference builds it; our Core refuses it, it signs nothing of the wire form)."""
        compact: Optional[BaseModel] = None
        if isinstance(data, dict):
            payload = data.get("payload")
            if isinstance(payload, BaseModel):
                from ._compact_wire import is_compact

                if not is_compact(payload):
                    raise ValueError(
                        f"payload: {type(payload).__name__} is not a compact payload model; "
                        "pass the wire payload as a dict"
                    )
                compact = payload
                data = {**data, "payload": payload.model_dump(mode="json", by_alias=True)}
            signature = data.get("signature")
            if isinstance(signature, str):
                actor = data.get("actor")
                actor_id = actor.id if isinstance(actor, Principal) else (
                    actor.get("id") if isinstance(actor, dict) else None
                )
                issued = data.get("issued_at", data.get("issuedAt"))
                data = {**data, "signature": _legacy_signature(actor_id, issued, signature)}
        command: Command = handler(data)
        if compact is not None:
            command._compact = compact
        return command

    @field_serializer("issued_at")
    def _issued_at(self, value: datetime) -> str:
        return render_timestamp(value)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "signature" and isinstance(value, str):
            value = _legacy_signature(self.actor.id, self.issued_at, value)
        if name == "payload" and isinstance(value, BaseModel):
            rebuilt = type(self).model_validate({**dict(self), "payload": value})
            super().__setattr__(name, rebuilt.payload)
            super().__setattr__("_compact", rebuilt._compact)
        else:
            super().__setattr__(name, value)
            if name == "payload":
                super().__setattr__("_compact", None)
        if name in type(self).model_fields and name != "verified_signing_hash":
            # The model no longer says what was signed.
            super().__setattr__("_signed_bytes", None)

    def model_copy(self, *, update: Optional[Dict[str, Any]] = None, deep: bool = False) -> "Command":  # type: ignore[override]
        copy = super().model_copy(update=update, deep=deep)
        if update:
            copy._signed_bytes = None
            if "payload" in update:
                copy._compact = None
        return copy

    @property
    def compact_payload(self) -> Optional[BaseModel]:
        """The reference's compact payload model this Command was built with (``None`` for a
        wire payload): converted explicitly whenever the wire form is needed."""
        return self._compact

    def to_wire(self, supplement: Optional[Mapping[str, Any]] = None) -> Dict[str, JsonValue]:
        """The wire document: by alias, without ``None`` members, without empty
        ``extensions``, without ``verifiedSigningHash``.

        A Command built with a compact payload model (``payload=CreateMissionPayload(…)``)
        has its payload converted to the wire payload (``_compact_wire``): ``supplement``
        gives the wire members (camelCase) the compact form does not carry; a member the wire
        requires and neither provides is :class:`~._compact_wire.CompactPayloadError` naming
        it (``/payload/…``). A wire-payload Command takes no ``supplement``."""
        document: Dict[str, JsonValue] = self.model_dump(
            mode="json", by_alias=True, exclude_none=True, exclude=set(self._NOT_WIRE)
        )
        if self._compact is not None:
            from ._compact_wire import wire_payload

            document["payload"] = wire_payload(self.kind.value, self._compact, supplement)
        elif supplement:
            raise ValueError("a supplement completes a compact payload; this Command has a wire payload")
        if not document.get("extensions"):
            document.pop("extensions", None)
        return document

    def to_wire_command(self, supplement: Optional[Mapping[str, Any]] = None) -> "Command":
        """This Command with its wire payload (see :meth:`to_wire`): what is signed."""
        document = self.to_wire(supplement)
        if self.verified_signing_hash is not None:
            document["verifiedSigningHash"] = self.verified_signing_hash
        return type(self).model_validate(document)

    def signing_payload(self, supplement: Optional[Mapping[str, Any]] = None) -> Dict[str, JsonValue]:
        """What the signature covers (§6.4): :meth:`to_wire` without ``signature``. Unlike the
        reference's, it has no ``null`` members, and a compact payload is its wire payload."""
        document = self.to_wire(supplement)
        document.pop("signature", None)
        return document

    @property
    def signed_bytes(self) -> Optional[bytes]:
        """The exact wire bytes this Command was made from, while no field was assigned."""
        return self._signed_bytes

    def wire_bytes(self) -> bytes:
        """The bytes :meth:`Core.perform` sends: :attr:`signed_bytes`, else the canonical JSON
        of :meth:`to_wire`."""
        if self._signed_bytes is not None:
            return self._signed_bytes
        from ._native import canonical_bytes

        return canonical_bytes(self.to_wire())

    @classmethod
    def from_wire(cls, raw: bytes, *, verified_signing_hash: Optional[str] = None) -> "Command":
        """The Command of wire bytes (strict JSON), keeping the bytes."""
        from ._native import parse_json

        document = parse_json(bytes(raw))
        if not isinstance(document, dict):
            raise ValueError("a wire Command is a JSON object")
        if verified_signing_hash is not None:
            document["verifiedSigningHash"] = verified_signing_hash
        command = cls.model_validate(document)
        command._signed_bytes = bytes(raw)
        return command


class Event(ProtocolModel):
    """A signed Group Event (``event.schema.json``), frozen, with its exact signed bytes.

    Reference field names where the reference has them (``id`` is the wire's ``eventId``);
    plus every signed member: ``aggregate_revision``, ``cause``, ``accepted_by``,
    ``signature``, ``conversation_id``, ``work_item_id``.

    Built by hand with the reference's fields, ``Event(id=…, kind=…, actor=…, action_id=…,
    command_hash=…, payload=…, occurred_at=…)`` works as there: ``action_id`` becomes the
    ``cause`` (``{"type": "command", "id": action_id}``), ``caused_by_event_id`` an Event
    cause when no Action ID is given; ``correlation_id``, ``accepted_by`` and ``signature`` are
    optional as in the reference (such an Event is unsigned: :attr:`signed_bytes` is empty).

    The Events a :class:`~missionweaveprotocol.core.Core` returns (``perform``, ``replay``) are
    *lazy* (issue 27, items 2-3): made over their signed bytes, which the Core has already
    verified and schema-checked, their fields are validated on first access (an attribute,
    ``model_dump``, ``==``, ``repr``, ``hash``, ``copy``, ``pickle``), once, into the same
    values :meth:`from_signed_bytes` gives; :attr:`signed_bytes` never parses. A replay of
    many Events a caller only forwards or counts therefore costs no JSON parsing in Python.
    """

    model_config = ConfigDict(frozen=True)

    protocol_version: str = _native.PROTOCOL_VERSION
    id: str = Field(alias="eventId")
    kind: EventKind
    group_id: Optional[str] = None
    sequence: Optional[int] = Field(default=None, ge=1)
    aggregate_revision: Optional[int] = None
    actor: Principal
    cause: EventCause
    correlation_id: Optional[str] = None
    conversation_id: Optional[str] = None
    work_item_id: Optional[str] = None
    occurred_at: AwareDatetime
    payload: Dict[str, JsonValue] = Field(default_factory=dict)
    accepted_by: Optional[Principal] = None
    command_hash: Optional[str] = None
    extensions: Dict[str, ExtensionEnvelope] = Field(default_factory=dict)
    signature: Optional[SignatureEnvelope] = None

    _signed_bytes: bytes = PrivateAttr(default=b"")

    @model_validator(mode="before")
    @classmethod
    def _reference_cause(cls, data: Any) -> Any:
        """The reference's ``action_id`` / ``caused_by_event_id`` as the wire's ``cause``."""
        if not isinstance(data, dict):
            return data
        action_id = data.get("action_id", data.get("actionId"))
        event_id = data.get("caused_by_event_id", data.get("causedByEventId"))
        if action_id is None and event_id is None:
            return data
        data = {k: v for k, v in data.items()
                if k not in ("action_id", "actionId", "caused_by_event_id", "causedByEventId")}
        cause = {"type": "command", "id": action_id} if action_id is not None else {
            "type": "event", "id": event_id}
        given = data.get("cause")
        if given is not None:
            given_cause = EventCause.model_validate(given)
            if (given_cause.type, given_cause.id) != (cause["type"], cause["id"]):
                raise ValueError(f"cause {given_cause!r} disagrees with the reference's {cause}")
        data["cause"] = cause
        return data

    @field_serializer("occurred_at")
    def _occurred_at(self, value: datetime) -> str:
        return render_timestamp(value)

    @property
    def action_id(self) -> Optional[str]:
        """The causing Command's Action ID (the reference's ``Event.action_id``)."""
        return self.cause.id if self.cause.type == "command" else None

    @property
    def signed_bytes(self) -> bytes:
        """The Event's canonical signed JSON bytes, exactly as the Group Authority signed them
        (verify them with ``SignedDocumentCodec.verify(EVENT, …)``)."""
        return self._signed_bytes

    @classmethod
    def from_signed_bytes(cls, raw: bytes) -> "Event":
        """The Event of its signed bytes, validated now (``ValidationError`` if they are not
        an Event); :meth:`_over_signed_bytes` is the lazy form the Core returns."""
        event = cls.model_validate_json(raw)
        event._signed_bytes = bytes(raw)
        return event

    @classmethod
    def _over_signed_bytes(cls, raw: bytes) -> "Event":
        """An Event over signed bytes the Core produced or served (already verified against
        ``event.schema.json``): nothing is parsed until a field is read. ``raw`` is kept as
        given, so ``signed_bytes`` is the very ``bytes`` object, no copy."""
        event = cls.__new__(cls)
        _object_setattr(event, "__pydantic_private__", {"_signed_bytes": raw})
        _object_setattr(event, "__pydantic_extra__", None)
        return event

    def _materialize(self) -> Dict[str, Any]:
        """Validates the signed bytes once, as :meth:`from_signed_bytes` does, into this
        instance (two threads racing here store equal values)."""
        fields = _INSTANCE_DICT.__get__(self)
        if not fields:
            raw = self.__pydantic_private__["_signed_bytes"]  # type: ignore[index]
            full = type(self).model_validate_json(raw)
            fields.update(_INSTANCE_DICT.__get__(full))
            _object_setattr(self, "__pydantic_fields_set__", full.__pydantic_fields_set__)
        return fields  # type: ignore[no-any-return]

    if not TYPE_CHECKING:
        # pydantic reads a model's values through ``__dict__`` (serializers, ``==``, ``hash``,
        # ``repr``, copies, pickling), and plain attribute access finds them in the instance
        # dictionary or falls through to ``__getattr__``: so these two are every way in. A
        # materialized (or eagerly built) Event pays one property call per ``__dict__`` read.
        @property
        def __dict__(self) -> Dict[str, Any]:
            fields = _INSTANCE_DICT.__get__(self)
            return fields if fields else self._materialize()

        @__dict__.setter
        def __dict__(self, value: Dict[str, Any]) -> None:
            _INSTANCE_DICT.__set__(self, value)

        def __getattr__(self, name: str) -> Any:
            if name in _EVENT_LAZY_NAMES and not _INSTANCE_DICT.__get__(self):
                self._materialize()
                return object.__getattribute__(self, name)
            return super().__getattr__(name)


_EVENT_LAZY_NAMES = frozenset(Event.model_fields) | {"__pydantic_fields_set__"}


class Query(ProtocolModel):
    """``Query(kind, entity_id, group_id=None, actor_type=None)`` (the reference's).

    ``entity_id``: a Mission, Group, WorkItem, Work Proposal or Artifact ID; the member's ID for
    ``membership`` (with ``group_id`` and ``actor_type``); the Mission ID for
    ``mission_work_items``; the WorkItem ID for ``execution_lease`` (an Execution Lease lives in
    its WorkItem, §11.3).
    """

    kind: QueryKind
    entity_id: str
    group_id: Optional[str] = None
    actor_type: Optional[ActorType] = None


class QueryResult(ProtocolModel):
    """A query's answer: the normative document of the entity (``mission.schema.json``,
    ``group.schema.json``, ``membership.schema.json``, ``work-item.schema.json``, the Work
    Proposal, the signed Artifact manifest, ``lease.schema.json`` with its state projected at the
    query's time), or the list of ``work-item.schema.json`` documents for
    ``mission_work_items``."""

    model_config = ConfigDict(frozen=True)

    kind: QueryKind
    entity_id: str
    value: JsonValue


CommandLike = Union[Command, bytes, bytearray, memoryview]
"""What :meth:`Core.perform` accepts: a :class:`Command` or raw wire bytes."""

# The reference's compact projections and payload models (its ``models`` module holds them),
# loaded on first use: they are built on the vocabulary above (and import this module).
_PROJECTIONS = (
    "AgentCard", "Approval", "Artifact", "Capability", "CapabilityRequirement", "Checkpoint",
    "ChildFailurePolicy", "Conversation", "CooperationOverrideGrant", "CooperationPolicyName",
    "Evidence", "ExecutionApproval", "Group", "GroupSnapshot", "Membership", "Message",
    "MessageAmendment", "Mission", "PolicyLogEntry", "PresenceRecord", "ResourceBudget",
    "ResourceUsage", "RetryPolicy", "SelectionBasis", "WorkContract", "WorkItem", "WorkProposal",
    "WorkProposalStatus",
)
_DELEGATION = ("DelegationBudget", "DelegationGrant")

if TYPE_CHECKING:
    from ._projections import (
        AgentCard as AgentCard,
        Approval as Approval,
        Artifact as Artifact,
        Capability as Capability,
        CapabilityRequirement as CapabilityRequirement,
        Checkpoint as Checkpoint,
        ChildFailurePolicy as ChildFailurePolicy,
        Conversation as Conversation,
        CooperationOverrideGrant as CooperationOverrideGrant,
        CooperationPolicyName as CooperationPolicyName,
        Evidence as Evidence,
        ExecutionApproval as ExecutionApproval,
        Group as Group,
        GroupSnapshot as GroupSnapshot,
        Membership as Membership,
        Message as Message,
        MessageAmendment as MessageAmendment,
        Mission as Mission,
        PolicyLogEntry as PolicyLogEntry,
        PresenceRecord as PresenceRecord,
        ResourceBudget as ResourceBudget,
        ResourceUsage as ResourceUsage,
        RetryPolicy as RetryPolicy,
        SelectionBasis as SelectionBasis,
        WorkContract as WorkContract,
        WorkItem as WorkItem,
        WorkProposal as WorkProposal,
        WorkProposalStatus as WorkProposalStatus,
    )
    from ._compact_payloads import *
    from .delegation import DelegationBudget as DelegationBudget
    from .delegation import DelegationGrant as DelegationGrant


def __getattr__(name: str) -> Any:
    from importlib import import_module

    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name in _PROJECTIONS:
        module = "_projections"
    elif name in _DELEGATION:
        module = "delegation"
    else:
        payloads = import_module(f"{__package__}._compact_payloads")
        if name not in payloads.__all__:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        module = "_compact_payloads"
    value = getattr(import_module(f"{__package__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "AcceptWorkOfferPayload",
    "ActorType",
    "AddMembershipPayload",
    "AddWorkItemDependencyPayload",
    "AgentCard",
    "Approval",
    "ApproveMissionPayload",
    "ArchiveGroupPayload",
    "Artifact",
    "BlockWorkItemPayload",
    "CancelMissionPayload",
    "CancelWorkItemPayload",
    "Capability",
    "CapabilityRequirement",
    "Checkpoint",
    "CheckpointWorkItemPayload",
    "ChildFailurePolicy",
    "Command",
    "CommandKind",
    "CommandLike",
    "CommandPayload",
    "Conversation",
    "CooperationOverrideGrant",
    "CooperationPolicyName",
    "CorrectMessagePayload",
    "CreateChildMissionPayload",
    "CreateMissionPayload",
    "CreateWorkItemPayload",
    "DelegationBudget",
    "DelegationGrant",
    "EndMembershipPayload",
    "Event",
    "EventCause",
    "EventKind",
    "Evidence",
    "ExecutionApproval",
    "ExtensionEnvelope",
    "FailMissionPayload",
    "FailWorkItemPayload",
    "GrantCooperationOverridePayload",
    "GrantDelegationPayload",
    "GrantExecutionApprovalPayload",
    "Group",
    "GroupSnapshot",
    "JsonValue",
    "Membership",
    "MembershipStatus",
    "Message",
    "MessageAmendment",
    "MessageAmendmentKind",
    "Mission",
    "MissionStatus",
    "OfferWorkItemPayload",
    "OpenAgentSessionPayload",
    "PAYLOAD_MODELS",
    "PolicyLogEntry",
    "PostMessagePayload",
    "PresenceRecord",
    "Principal",
    "ProposeWorkItemPayload",
    "PublishArtifactPayload",
    "Query",
    "QueryKind",
    "QueryResult",
    "RecordResourceUsagePayload",
    "RedactMessagePayload",
    "RegisterAgentCardPayload",
    "RenewCoordinatorLeasePayload",
    "RenewExecutionLeasePayload",
    "ReplaceCoordinatorPayload",
    "RequestMissionChangesPayload",
    "ResourceBudget",
    "ResourceUsage",
    "RetractMessagePayload",
    "RetryPolicy",
    "Role",
    "SelectionBasis",
    "SignatureEnvelope",
    "StartWorkItemPayload",
    "SubmitMissionPayload",
    "SubmitWorkItemPayload",
    "UnblockWorkItemPayload",
    "VerifyWorkItemPayload",
    "WorkContract",
    "WorkItem",
    "WorkItemStatus",
    "WorkProposal",
    "WorkProposalStatus",
    "render_timestamp",
]
