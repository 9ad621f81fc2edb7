"""The reference's compact projections (``reference-python.md`` §1.1): pydantic v2 models with
its field names, types, defaults and class kinds, re-exported by :mod:`missionweaveprotocol.models`.

They are *views*, as in the reference ("not normative wire objects"): our
:class:`~missionweaveprotocol.core.Core` answers queries with the normative documents
(``mission.schema.json``, …), and ``Mission.from_document(doc)`` / ``.protocol_document()``
(:mod:`missionweaveprotocol._conversions`) convert between the two. Nothing here signs.

Deliberate differences from the reference, each for a stated reason:

- strings are kept as given (no ``str_strip_whitespace``, reference gap §7.18) and text is not
  capped at 512 characters (``content``, ``title``, ``reason``, …): the wire has no such cap;
- cross-field checks that are rules of the core (budget containment, unique roles, lease
  windows) are not re-decided here: the core refuses the Command or document that carries them.
"""

from __future__ import annotations

from typing import Annotated, Any, Dict, Literal, Optional, Tuple, Union

from pydantic import AwareDatetime, ConfigDict, Field, PlainSerializer, PrivateAttr, field_validator

from . import _native
from ._protocol_model import ProtocolModel
from ._types import _StrEnum
from .models import (
    CommandKind,
    JsonValue,
    MembershipStatus,
    MessageAmendmentKind,
    MissionStatus,
    Principal,
    Role,
    SignatureEnvelope,
    WorkItemStatus,
    render_timestamp,
)

#: An aware instant, rendered by the core's one renderer (UTC, ``Z``, shortest fraction).
Instant = Annotated[AwareDatetime, PlainSerializer(render_timestamp, when_used="json")]
#: The reference's internal ``Identifier``: any non-empty string.
Identifier = Annotated[str, Field(min_length=1)]
#: ``sha256:`` + 64 lowercase hex digits.
ContentHash = Annotated[str, Field(pattern=r"^sha256:[0-9a-f]{64}$")]
PositiveInt = Annotated[int, Field(gt=0)]
NonNegativeInt = Annotated[int, Field(ge=0)]
#: 1 second .. 1 year, as the reference's ``PositiveSeconds``.
PositiveSeconds = Annotated[int, Field(ge=1, le=31_536_000)]

DataClassification = Literal["public", "internal", "confidential", "restricted"]
SideEffectRisk = Literal["none", "reversible", "external", "high_risk", "destructive"]
ExecutionApprovalMode = Literal["not_required", "policy_required", "human_required"]


class WorkProposalStatus(_StrEnum):
    OPEN = "open"
    AUTHORIZED = "authorized"
    WITHDRAWN = "withdrawn"


class ChildFailurePolicy(_StrEnum):
    """What a failed child Mission does to its parent (``mission.create_child``'s
    ``failurePolicy``)."""

    BLOCK_PARENT_WORK_ITEM = "block_parent_work_item"
    FAIL_PARENT_WORK_ITEM = "fail_parent_work_item"
    FAIL_PARENT_MISSION = "fail_parent_mission"


class CooperationPolicyName(_StrEnum):
    """The §20 limits a Cooperation Override Grant may lift (the core's vocabulary
    ``cooperation_policy_name``)."""

    MESSAGE_RATE = "message_rate"
    PROPOSAL_RATE = "proposal_rate"
    DELEGATION_DEPTH = "delegation_depth"
    QUEUED_WORK_ITEMS = "queued_work_items"
    ACTIVE_WORK_ITEMS = "active_work_items"


class _FromDocument(ProtocolModel):
    """A projection of a normative document (:mod:`missionweaveprotocol._conversions`):
    ``from_document(doc)`` reads it, ``protocol_document()`` writes it back."""

    _document: Optional[Dict[str, Any]] = PrivateAttr(default=None)

    @property
    def source_document(self) -> Optional[Dict[str, Any]]:
        """A copy of the normative document this projection was read from, if any."""
        import copy

        return copy.deepcopy(self._document)


class _Frozen(ProtocolModel):
    model_config = ConfigDict(frozen=True)


class _Signed(_Frozen):
    """A signed document: its wire form without ``null`` members is what is signed."""

    def signing_payload(self) -> Dict[str, JsonValue]:
        """The wire document without ``signature`` and without ``null`` members (the bytes the
        signature covers, before RFC 8785)."""
        wire: Dict[str, JsonValue] = self.model_dump(mode="json", by_alias=True, exclude_none=True)
        wire.pop("signature", None)
        return wire

    def to_wire(self) -> Dict[str, JsonValue]:
        """The signed wire document."""
        wire: Dict[str, JsonValue] = self.model_dump(mode="json", by_alias=True, exclude_none=True)
        return wire


class CapabilityRequirement(ProtocolModel):
    """One allowed capability: ``id`` and ``minimum_version`` (the reference's integer version
    n, read as SemVer ``n.0.0``, or a SemVer string)."""

    model_config = ConfigDict(frozen=True)

    id: str
    minimum_version: Union[int, str] = 1

    @property
    def semver(self) -> str:
        return _native.capability_reference_version(self.minimum_version)

    def __eq__(self, other: object) -> bool:
        """Equal when the core reads the same requirement: the reference's integer ``1`` and
        the wire's ``"1.0.0"`` are one minimum version (``capability_reference_version``)."""
        if not isinstance(other, CapabilityRequirement):
            return NotImplemented
        return (self.id, self.semver) == (other.id, other.semver)

    def __hash__(self) -> int:
        return hash((self.id, self.semver))


class PolicyLogEntry(ProtocolModel):
    """One policy decision of a Group (``group-snapshot.schema.json`` ``policyLog`` item)."""

    entry_id: Identifier
    decision: str = Field(min_length=1, max_length=4000)
    actor: Principal
    details: Dict[str, JsonValue] = Field(default_factory=dict)
    occurred_at: Instant


class GroupSnapshot(_Signed):
    """A signed Group Snapshot (``group-snapshot.schema.json``, §7.4).

    ``policy_log`` items are the signed JSON objects as given (a :class:`PolicyLogEntry` is
    accepted and kept as its wire object): re-rendering a timestamp would change the signed
    bytes."""

    snapshot_id: str
    group_id: str
    through_sequence: int = Field(ge=1)
    event_ids: Tuple[str, ...] = Field(min_length=1)
    state_hash: str
    policy_log: Tuple[Dict[str, JsonValue], ...] = Field(min_length=1)
    created_by: Principal
    created_at: Instant
    signature: SignatureEnvelope

    _document: Optional[Dict[str, Any]] = PrivateAttr(default=None)

    @classmethod
    def from_document(cls, document: Any) -> "GroupSnapshot":
        """The projection of a signed ``group-snapshot.schema.json`` Snapshot (the Core's
        ``group_snapshot`` answer)."""
        from . import _conversions as c

        return c.read(cls, c.GROUP_SNAPSHOT_ROWS, document, {})

    def protocol_document(self) -> Dict[str, Any]:
        """The signed Snapshot this projection was read from, unchanged (a changed member
        would void its signature: ``DocumentMappingError`` ``signed-document-changed``)."""
        from . import _conversions as c

        return c.write(self, c.GROUP_SNAPSHOT_ROWS, "group-snapshot", signed=True)

    @field_validator("policy_log", mode="before")
    @classmethod
    def _entries(cls, value: Any) -> Any:
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            return value
        return tuple(
            e.model_dump(mode="json", by_alias=True) if isinstance(e, PolicyLogEntry) else e
            for e in value
        )


class ResourceBudget(ProtocolModel):
    """Six optional ceilings (``None`` = not set)."""

    financial_microunits: Optional[NonNegativeInt] = None
    model_tokens: Optional[NonNegativeInt] = None
    tool_calls: Optional[NonNegativeInt] = None
    compute_seconds: Optional[NonNegativeInt] = None
    wall_clock_seconds: Optional[NonNegativeInt] = None
    external_actions: Optional[NonNegativeInt] = None

    def contains(self, child: Optional["ResourceBudget"]) -> bool:
        """Every dimension ``child`` sets is set here and at least as large (the core's rule,
        ``delegation_budget_contains``)."""
        if child is None:
            return True
        mine = tuple(getattr(self, name) for name in _DIMENSIONS)
        wanted = [getattr(child, name, None) for name in _DIMENSIONS]
        return _native.delegation_budget_contains(mine, wanted)


_DIMENSIONS = (
    "financial_microunits",
    "model_tokens",
    "tool_calls",
    "compute_seconds",
    "wall_clock_seconds",
    "external_actions",
)


class ResourceUsage(ProtocolModel):
    """Six consumed amounts (default 0). Accepted wherever the package's budget, delegation,
    execution and offline APIs take a usage (they read the six dimensions)."""

    financial_microunits: NonNegativeInt = 0
    model_tokens: NonNegativeInt = 0
    tool_calls: NonNegativeInt = 0
    compute_seconds: NonNegativeInt = 0
    wall_clock_seconds: NonNegativeInt = 0
    external_actions: NonNegativeInt = 0

    def is_zero(self) -> bool:
        return all(getattr(self, name) == 0 for name in _DIMENSIONS)

    def to_dict(self) -> Dict[str, int]:
        return {name: int(getattr(self, name)) for name in _DIMENSIONS}


class RetryPolicy(ProtocolModel):
    max_attempts: int = Field(default=1, ge=1)
    initial_backoff_seconds: NonNegativeInt = 0
    maximum_backoff_seconds: NonNegativeInt = 0


class Capability(ProtocolModel):
    id: Identifier
    version: PositiveInt
    input_schema: Optional[str] = None
    output_schema: Optional[str] = None
    constraints: Dict[str, JsonValue] = Field(default_factory=dict)
    verified_evidence: Tuple[str, ...] = ()


class AgentCard(_FromDocument):
    agent_id: Identifier
    version: PositiveInt
    display_name: str
    owner: Identifier
    public_key: str
    capabilities: Tuple[Capability, ...]
    issued_at: Instant
    signature: str

    @classmethod
    def from_document(cls, document: Any) -> "AgentCard":
        """The projection of a signed ``agent-card.schema.json`` card (the Core's ``agent_card``
        answer): ``owner`` is the owner's ID, ``public_key`` the first key's, a capability's
        ``version`` its major version, ``signature`` the signature's ``value``."""
        from . import _conversions as c

        return c.read(cls, c.AGENT_CARD_ROWS, document, {})

    def protocol_document(self) -> Dict[str, Any]:
        """The signed card this projection was read from, unchanged (a changed member would
        void its signature: ``DocumentMappingError`` ``signed-document-changed``)."""
        from . import _conversions as c

        return c.write(self, c.AGENT_CARD_ROWS, "agent-card", signed=True)

    def supports(self, requirements: Any) -> bool:
        """Every requirement (``id``, ``minimum_version``) has a capability of that id whose
        version is at least the minimum."""
        available = {c.id: c.version for c in self.capabilities}
        for requirement in requirements:
            version = available.get(requirement.id)
            if version is None or version < int(requirement.minimum_version):
                return False
        return True


class PresenceRecord(ProtocolModel):
    agent_id: Identifier
    online: bool
    available_capacity: NonNegativeInt
    available_capabilities: Tuple[str, ...] = ()
    estimated_response_seconds: Optional[NonNegativeInt] = None
    last_heartbeat_at: Instant


class Evidence(ProtocolModel):
    kind: str
    description: str
    success: bool = True
    artifact_hash: Optional[ContentHash] = None
    data: Dict[str, JsonValue] = Field(default_factory=dict)


class Checkpoint(ProtocolModel):
    phase: str
    completed_milestones: Tuple[str, ...] = ()
    next_step: Optional[str] = None
    state_artifact_hash: Optional[ContentHash] = None
    created_at: Instant


class Mission(_FromDocument):
    id: Identifier
    group_id: Identifier
    title: str
    objective: str
    definition_of_done: Tuple[str, ...] = Field(min_length=1)
    owner: Principal
    coordinator_id: Identifier
    coordinator_epoch: PositiveInt
    # Not carried by the normative Mission (None when read from one).
    coordinator_lease_expires_at: Optional[Instant] = None
    budget: ResourceBudget
    deadline: Instant
    permissions: Tuple[str, ...] = ()
    status: MissionStatus = MissionStatus.ACTIVE
    revision: PositiveInt = 1
    parent_mission_id: Optional[Identifier] = None
    parent_work_item_id: Optional[Identifier] = None
    follow_up_of_mission_id: Optional[Identifier] = None
    child_failure_policy: ChildFailurePolicy = ChildFailurePolicy.BLOCK_PARENT_WORK_ITEM
    submitted_revision: Optional[PositiveInt] = None
    submitted_artifact_hashes: Tuple[ContentHash, ...] = ()
    approved_artifact_hashes: Tuple[ContentHash, ...] = ()
    failure_reason: Optional[str] = None
    created_at: Instant
    # Not carried by the normative Mission (None when read from one).
    updated_at: Optional[Instant] = None

    @classmethod
    def from_document(cls, document: Any) -> "Mission":
        """The projection of a ``mission.schema.json`` document (a Core ``mission`` query answer) (a mapping, or the
        Core's :class:`~missionweaveprotocol.models.QueryResult`); see
        :mod:`missionweaveprotocol._conversions` for each member's reading."""
        from . import _conversions as c

        return c.read(cls, c.MISSION_ROWS, document, c.MISSION_DEFAULTS)

    def protocol_document(self) -> Dict[str, Any]:
        """The normative ``mission.schema.json`` document: the source document with this
        projection's fields written over it, schema-validated by the core
        (:class:`~missionweaveprotocol.documents.DocumentMappingError` names a member it
        cannot write or the schema misses)."""
        from . import _conversions as c

        return c.write(self, c.MISSION_ROWS, "mission")


class Group(_FromDocument):
    id: Identifier
    mission_id: Identifier
    main_conversation_id: Identifier
    created_at: Instant
    archived_at: Optional[Instant] = None
    archive_snapshot_id: Optional[Identifier] = None

    @classmethod
    def from_document(cls, document: Any) -> "Group":
        """The projection of a ``group.schema.json`` document (a mapping, or the
        Core's :class:`~missionweaveprotocol.models.QueryResult`); see
        :mod:`missionweaveprotocol._conversions` for each member's reading."""
        from . import _conversions as c

        return c.read(cls, c.GROUP_ROWS, document, {})

    def protocol_document(self) -> Dict[str, Any]:
        """The normative ``group.schema.json`` document: the source document with this
        projection's fields written over it, schema-validated by the core
        (:class:`~missionweaveprotocol.documents.DocumentMappingError` names a member it
        cannot write or the schema misses)."""
        from . import _conversions as c

        return c.write(self, c.GROUP_WRITE_ROWS, "group")


class Membership(_FromDocument):
    group_id: Identifier
    principal: Principal
    roles: Tuple[Role, ...] = Field(min_length=1)
    status: MembershipStatus
    epoch: PositiveInt = 1
    visibility_after_sequence: NonNegativeInt = 0
    joined_at: Instant
    ended_at: Optional[Instant] = None

    @classmethod
    def from_document(cls, document: Any) -> "Membership":
        """The projection of a ``membership.schema.json`` document (a mapping, or the
        Core's :class:`~missionweaveprotocol.models.QueryResult`); see
        :mod:`missionweaveprotocol._conversions` for each member's reading."""
        from . import _conversions as c

        return c.read(cls, c.MEMBERSHIP_ROWS, document, {})

    def protocol_document(self) -> Dict[str, Any]:
        """The normative ``membership.schema.json`` document: the source document with this
        projection's fields written over it, schema-validated by the core
        (:class:`~missionweaveprotocol.documents.DocumentMappingError` names a member it
        cannot write or the schema misses)."""
        from . import _conversions as c

        return c.write(self, c.MEMBERSHIP_ROWS, "membership")


class CooperationOverrideGrant(_FromDocument):
    id: Identifier
    mission_id: Identifier
    group_id: Identifier
    policy_name: CooperationPolicyName
    beneficiary: Principal
    target_command_kind: CommandKind
    target_action_id: Identifier
    approver: Principal
    reason: str
    granted_at: Instant
    expires_at: Instant
    signature: str
    consumed_at: Optional[Instant] = None
    consumed_event_id: Optional[Identifier] = None

    @classmethod
    def from_document(cls, document: Any) -> "CooperationOverrideGrant":
        """The projection of the Core's ``cooperation_override_grant`` answer (``{grant, consumed?}``;
        no schema exists for it). The grant is the Event of a signed Command, so ``signature``
        reads as ``""``; ``consumed_event_id`` is not recorded (``None``)."""
        from . import _conversions as c

        return c.read(cls, c.COOPERATION_OVERRIDE_ROWS, document, c.UNSIGNED_DEFAULTS)

    def protocol_document(self) -> Dict[str, Any]:
        """The answer this projection was read from, with the fields written back (not
        schema-validated: no schema exists for it)."""
        from . import _conversions as c

        return c.write(self, c.COOPERATION_OVERRIDE_ROWS, "cooperation-override-grant", validate=False)


class Conversation(_FromDocument):
    id: Identifier
    group_id: Identifier
    work_item_id: Optional[Identifier] = None
    title: str
    created_at: Instant

    @classmethod
    def from_document(cls, document: Any) -> "Conversation":
        """The projection of a ``conversation.schema.json`` document (``primaryWorkItemId`` is
        ``work_item_id``)."""
        from . import _conversions as c

        return c.read(cls, c.CONVERSATION_ROWS, document, {})

    def protocol_document(self) -> Dict[str, Any]:
        """The ``conversation.schema.json`` document (members without a field — ``type``,
        ``access``, ``state`` … — from the source document), validated against the schema."""
        from . import _conversions as c

        return c.write(self, c.CONVERSATION_ROWS, "conversation")


class Message(_FromDocument):
    id: Identifier
    group_id: Identifier
    conversation_id: Identifier
    author: Principal
    content: str
    mentions: Tuple[str, ...] = ()
    created_at: Instant

    @classmethod
    def from_document(cls, document: Any) -> "Message":
        """The projection of a ``message.schema.json`` document (or the Core's ``message``
        answer ``{message, state, …}``): ``content`` is the text of its text parts."""
        from . import _conversions as c

        return c.read(cls, c.MESSAGE_ROWS, document, {})

    def protocol_document(self) -> Dict[str, Any]:
        """The normative ``message.schema.json`` document (``content`` written as one text
        part), schema-validated by the core."""
        from . import _conversions as c

        return c.write(self, c.MESSAGE_ROWS, "message")


class MessageAmendment(_FromDocument):
    id: Identifier
    group_id: Identifier
    message_id: Identifier
    kind: MessageAmendmentKind
    actor: Principal
    replacement_content: Optional[str] = None
    reason: str
    created_at: Instant

    @classmethod
    def from_document(cls, document: Any) -> "MessageAmendment":
        """The projection of a ``message.schema.json`` document (or the Core's ``message``
        answer ``{message, state, …}``): ``content`` is the text of its text parts."""
        from . import _conversions as c

        return c.read(cls, c.AMENDMENT_ROWS, document, {})

    def protocol_document(self) -> Dict[str, Any]:
        """The normative ``message.schema.json`` document (``content`` written as one text
        part), schema-validated by the core."""
        from . import _conversions as c

        return c.write(self, c.AMENDMENT_ROWS, "message")


class WorkContract(_FromDocument):
    goal: str
    deliverables: Tuple[str, ...] = Field(min_length=1)
    acceptance_criteria: Tuple[str, ...] = Field(min_length=1)
    inputs: Tuple[str, ...] = ()
    allowed_tools: Tuple[str, ...] = ()
    allowed_resources: Tuple[str, ...] = ()
    deadline: Instant
    requested_priority: int = Field(default=50, ge=0, le=100)
    estimated_duration_seconds: Optional[PositiveSeconds] = None
    required_capabilities: Tuple[CapabilityRequirement, ...] = ()
    budget: ResourceBudget = Field(default_factory=ResourceBudget)
    retry_policy: RetryPolicy = Field(default_factory=RetryPolicy)
    exclusive: bool = True
    side_effect_risk: SideEffectRisk = "none"
    execution_approval: ExecutionApprovalMode = "not_required"

    @classmethod
    def from_document(cls, document: Any) -> "WorkContract":
        """The projection of a ``work-contract.schema.json`` document (a mapping, or the
        Core's :class:`~missionweaveprotocol.models.QueryResult`); see
        :mod:`missionweaveprotocol._conversions` for each member's reading."""
        from . import _conversions as c

        return c.read(cls, c.CONTRACT_ROWS, document, {})

    def protocol_document(self) -> Dict[str, Any]:
        """The normative ``work-contract.schema.json`` document: the source document with this
        projection's fields written over it, schema-validated by the core
        (:class:`~missionweaveprotocol.documents.DocumentMappingError` names a member it
        cannot write or the schema misses)."""
        from . import _conversions as c

        return c.write(self, c.CONTRACT_ROWS, "work-contract")


class SelectionBasis(ProtocolModel):
    required_capabilities: Tuple[CapabilityRequirement, ...] = ()
    verified_capability_matches: Tuple[str, ...] = ()
    authorization_eligible: bool = True
    availability_estimate: Optional[str] = None
    expected_cost_microunits: Optional[NonNegativeInt] = None
    reliability_evidence: Tuple[str, ...] = ()
    policy_rules_applied: Tuple[str, ...] = ()


class WorkProposal(_FromDocument):
    id: Identifier
    mission_id: Identifier
    group_id: Identifier
    proposed_by: Principal
    contract: WorkContract
    dependency_ids: Tuple[Identifier, ...] = ()
    parent_work_item_id: Optional[Identifier] = None
    status: WorkProposalStatus = WorkProposalStatus.OPEN
    authorized_work_item_id: Optional[Identifier] = None
    created_at: Instant
    updated_at: Instant

    @classmethod
    def from_document(cls, document: Any) -> "WorkProposal":
        """The projection of the Core's ``work_proposal`` answer (no schema exists for a Work
        Proposal; its members mirror this model in camelCase, the contract is a
        ``work-contract.schema.json`` document)."""
        from . import _conversions as c

        return c.read(cls, c.WORK_PROPOSAL_ROWS, document, {})

    def protocol_document(self) -> Dict[str, Any]:
        """The answer this projection was read from, with the fields written back; the
        contract is validated as a Work Contract."""
        from . import _conversions as c

        return c.write(self, c.WORK_PROPOSAL_ROWS, "work-proposal", validate=False)


class WorkItem(_FromDocument):
    id: Identifier
    mission_id: Identifier
    group_id: Identifier
    conversation_id: Identifier
    created_by: Principal
    contract: WorkContract
    status: WorkItemStatus
    revision: PositiveInt = 1
    dependency_ids: Tuple[Identifier, ...] = ()
    offered_agent_ids: Tuple[Identifier, ...] = ()
    offer_expires_at: Optional[Instant] = None
    assignee_id: Optional[Identifier] = None
    assigned_agent_card_version: Optional[PositiveInt] = None
    assigned_capability_versions: Dict[str, int] = Field(default_factory=dict)
    selection_basis: Optional[SelectionBasis] = None
    ownership_epoch: NonNegativeInt = 0
    ownership_lease_expires_at: Optional[Instant] = None
    execution_lease_id: Optional[Identifier] = None
    execution_lease_expires_at: Optional[Instant] = None
    checkpoints: Tuple[Checkpoint, ...] = ()
    blocker: Optional[str] = None
    artifact_ids: Tuple[Identifier, ...] = ()
    submission_evidence: Tuple[Evidence, ...] = ()
    verification_evidence: Tuple[Evidence, ...] = ()
    child_mission_id: Optional[Identifier] = None
    parent_work_item_id: Optional[Identifier] = None
    delegation_grant_id: Optional[Identifier] = None
    delegation_depth: NonNegativeInt = 0
    failure_reason: Optional[str] = None
    created_at: Instant
    updated_at: Instant

    @classmethod
    def from_document(cls, document: Any) -> "WorkItem":
        """The projection of a ``work-item.schema.json`` document (a mapping, or the
        Core's :class:`~missionweaveprotocol.models.QueryResult`); see
        :mod:`missionweaveprotocol._conversions` for each member's reading."""
        from . import _conversions as c

        return c.read(cls, c.WORK_ITEM_ROWS, document, c.WORK_ITEM_DEFAULTS)

    def protocol_document(self) -> Dict[str, Any]:
        """The normative ``work-item.schema.json`` document: the source document with this
        projection's fields written over it, schema-validated by the core
        (:class:`~missionweaveprotocol.documents.DocumentMappingError` names a member it
        cannot write or the schema misses)."""
        from . import _conversions as c

        return c.write(self, c.WORK_ITEM_ROWS, "work-item")


class Artifact(_FromDocument):
    id: Identifier
    content_hash: ContentHash
    media_type: str
    schema_uri: Optional[str] = None
    producing_agent_id: Identifier
    agent_card_version: PositiveInt
    mission_id: Identifier
    group_id: Identifier
    work_item_id: Identifier
    source_artifact_hashes: Tuple[ContentHash, ...]
    tool_versions: Dict[str, str] = Field(default_factory=dict)
    model_versions: Dict[str, str] = Field(default_factory=dict)
    created_at: Instant
    data_classification: DataClassification
    signature: str

    @classmethod
    def from_document(cls, document: Any) -> "Artifact":
        """The projection of a signed Artifact manifest (``artifact.schema.json``; the Core's
        ``artifact`` query answer): ``signature`` is the signature's ``value``, tool and model
        versions a name → version mapping."""
        from . import _conversions as c

        return c.read(cls, c.ARTIFACT_ROWS, document, {})

    def protocol_document(self) -> Dict[str, Any]:
        """The signed manifest this projection was read from, unchanged (a changed member would
        void its signature: :class:`~missionweaveprotocol.documents.DocumentMappingError`,
        ``signed-document-changed``; sign a new manifest with ``ProtocolDocumentAdapter``)."""
        from . import _conversions as c

        return c.write(self, c.ARTIFACT_ROWS, "artifact", signed=True)

    def signing_payload(self) -> Dict[str, JsonValue]:
        """The json-mode dump without ``signature`` (the reference's)."""
        payload: Dict[str, JsonValue] = self.model_dump(mode="json", by_alias=True)
        payload.pop("signature", None)
        return payload


class Approval(_FromDocument):
    id: Identifier
    mission_id: Identifier
    mission_revision: PositiveInt
    artifact_hashes: Tuple[ContentHash, ...]
    acceptance_policy_version: str
    approver: Principal
    approved_at: Instant
    comments: Optional[str] = None
    signature: str

    @classmethod
    def from_document(cls, document: Any) -> "Approval":
        """The projection of a signed ``approval.schema.json`` Mission acceptance (``occurredAt``
        is ``approved_at``; ``signature`` the signature's ``value``)."""
        from . import _conversions as c

        return c.read(cls, c.APPROVAL_ROWS, document, {})

    def protocol_document(self) -> Dict[str, Any]:
        """The signed Approval this projection was read from, unchanged (a changed member
        would void its signature: ``DocumentMappingError`` ``signed-document-changed``)."""
        from . import _conversions as c

        return c.write(self, c.APPROVAL_ROWS, "approval", signed=True)


class ExecutionApproval(_FromDocument):
    id: Identifier
    mission_id: Identifier
    group_id: Identifier
    work_item_id: Identifier
    ownership_epoch: PositiveInt
    operations: Tuple[str, ...]
    resources: Tuple[str, ...] = ()
    budget: ResourceBudget = Field(default_factory=ResourceBudget)
    approver: Principal
    approved_at: Instant
    expires_at: Instant
    comments: Optional[str] = None
    signature: str

    @classmethod
    def from_document(cls, document: Any) -> "ExecutionApproval":
        """The projection of the Core's ``execution_approval`` answer (the
        ``approval.execution.granted`` payload; the approval is the Event of a signed Command, so
        ``signature`` reads as ``""``)."""
        from . import _conversions as c

        return c.read(cls, c.EXECUTION_APPROVAL_ROWS, document, c.UNSIGNED_DEFAULTS)

    def protocol_document(self) -> Dict[str, Any]:
        """The answer this projection was read from, with the fields written back (the
        instants are kept: the record also holds them in milliseconds)."""
        from . import _conversions as c

        return c.write(self, c.EXECUTION_APPROVAL_ROWS, "execution-approval", validate=False)


__all__ = [
    "AgentCard",
    "Approval",
    "Artifact",
    "Capability",
    "CapabilityRequirement",
    "Checkpoint",
    "ChildFailurePolicy",
    "ContentHash",
    "Conversation",
    "CooperationOverrideGrant",
    "CooperationPolicyName",
    "Evidence",
    "ExecutionApproval",
    "Group",
    "GroupSnapshot",
    "Identifier",
    "Instant",
    "Membership",
    "Message",
    "MessageAmendment",
    "Mission",
    "PolicyLogEntry",
    "PresenceRecord",
    "ResourceBudget",
    "ResourceUsage",
    "RetryPolicy",
    "SelectionBasis",
    "WorkContract",
    "WorkItem",
    "WorkProposal",
    "WorkProposalStatus",
]
